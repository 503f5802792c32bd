package heapprof

import (
	"bufio"
	"context"
	"encoding/xml"
	"fmt"
	"hash/fnv"
	"io"
	"sort"
	"strings"

	"github.com/google/pprof/profile"
)

// Flame graph geometry, close to flamegraph.pl's defaults.
const (
	flameWidth     = 1200.0
	flameFrameH    = 16
	flamePadX      = 10.0
	flamePadTop    = 40
	flamePadBottom = 10
	flameFontSize  = 12
	flameCharWidth = 0.59 * flameFontSize // flamegraph.pl's fontwidth
	flameMinWidth  = 0.1                  // px; narrower frames are omitted
)

// flameNode is one frame of the merged call tree.
type flameNode struct {
	name     string
	v        float64
	children map[string]*flameNode
}

func (n *flameNode) child(name string) *flameNode {
	c := n.children[name]
	if c == nil {
		if n.children == nil {
			n.children = map[string]*flameNode{}
		}
		c = &flameNode{name: name}
		n.children[name] = c
	}
	return c
}

// WriteFlameGraph writes a static SVG flame graph of p: the stacks of
// WriteFolded merged into a tree, roots at the bottom, each frame as wide
// as its share of the total, children in name order like flamegraph.pl,
// a tooltip (<title>) with the value and percentage on every frame.
// Stacks whose value is not positive (possible with Options.Base) are left
// out: a flame graph has no negative widths.
func WriteFlameGraph(w io.Writer, p *profile.Profile, opt Options) error {
	return WriteFlameGraphContext(context.Background(), w, p, opt)
}

// WriteFlameGraphContext is WriteFlameGraph stopping with ctx's error
// (wrapped) when ctx ends.
func WriteFlameGraphContext(ctx context.Context, w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(ctx, p, opt)
	if err != nil {
		return err
	}
	return m.writeFlameGraph(ctx, w, opt)
}

// writeFlameGraph is WriteFlameGraph of a built model.
func (m *model) writeFlameGraph(ctx context.Context, w io.Writer, opt Options) error {
	stacks, err := m.foldedStacks(ctx)
	if err != nil {
		return err
	}
	root := &flameNode{name: "all"}
	depth := 0
	for _, st := range stacks {
		if !(st.v > 0) {
			continue
		}
		root.v += st.v
		n := root
		for _, f := range st.frames {
			n = n.child(f)
			n.v += st.v
		}
		depth = max(depth, len(st.frames))
	}
	height := flamePadTop + (depth+1)*flameFrameH + flamePadBottom
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="%d" height="%d" viewBox="0 0 %d %d" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="100%%" height="100%%" fill="#f8f8f8"/>
<text x="%.1f" y="24" font-size="17" font-family="Verdana" text-anchor="middle">`,
		int(flameWidth), height, int(flameWidth), height, flameWidth/2)
	title := opt.Program
	if title == "" {
		title = "heap profile"
	}
	xmlText(bw, fmt.Sprintf("%s: %s %s", title, m.unparse(root.v), m.units()))
	bw.WriteString("</text>\n")
	if root.v > 0 {
		scale := (flameWidth - 2*flamePadX) / root.v
		m.writeFlameNode(bw, root, flamePadX, 0, height, scale, root.v)
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

func (m *model) writeFlameNode(bw *bufio.Writer, n *flameNode, x float64, level, height int, scale, total float64) {
	width := n.v * scale
	if width < flameMinWidth {
		return
	}
	y := height - flamePadBottom - (level+1)*flameFrameH
	bw.WriteString("<g><title>")
	xmlText(bw, fmt.Sprintf("%s (%s %s, %s)", n.name, m.unparse(n.v), m.units(), percent(n.v, total)))
	fmt.Fprintf(bw, "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
		x, y, width, flameFrameH-1, flameColor(n.name))
	if label := flameLabel(n.name, width); label != "" {
		fmt.Fprintf(bw, "<text x=\"%.1f\" y=\"%d\" font-size=\"%d\" font-family=\"Verdana\">", x+3, y+flameFrameH-4, flameFontSize)
		xmlText(bw, label)
		bw.WriteString("</text>")
	}
	bw.WriteString("</g>\n")
	names := make([]string, 0, len(n.children))
	for name := range n.children {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := n.children[name]
		m.writeFlameNode(bw, c, x, level+1, height, scale, total)
		x += c.v * scale
	}
}

// flameLabel fits a frame name into width pixels the way flamegraph.pl
// does: the whole name, or a prefix and "..", or nothing.
func flameLabel(name string, width float64) string {
	chars := int((width - 6) / flameCharWidth)
	switch {
	case chars < 3:
		return ""
	case len(name) <= chars:
		return name
	}
	return name[:chars-2] + ".."
}

// flameColor is flamegraph.pl's "hot" palette, seeded by the name so a
// function has the same color in every graph.
func flameColor(name string) string {
	h := fnv.New32a()
	h.Write([]byte(name))
	v := h.Sum32()
	r := 205 + int(v%50)
	g := int((v >> 8) % 230)
	b := int((v >> 16) % 55)
	return fmt.Sprintf("rgb(%d,%d,%d)", r, g, b)
}

func xmlText(bw *bufio.Writer, s string) {
	// EscapeText only fails when the writer does; bufio reports that at
	// Flush.
	_ = xml.EscapeText(bw, []byte(strings.ToValidUTF8(s, "\uFFFD")))
}
