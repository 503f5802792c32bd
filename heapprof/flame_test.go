package heapprof

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWriteFlameGraph renders real profiles, checks the SVG is well-formed
// XML whose frames nest (children never wider than their parent, the root
// spanning the drawing), names every frame of the widest folded stack, and
// that the real rsvg-convert renders it.
func TestWriteFlameGraph(t *testing.T) {
	for _, c := range dotCases {
		if c.flags != nil {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p, opt, _ := c.setup(t)
			var svg bytes.Buffer
			if err := WriteFlameGraph(&svg, p, opt); err != nil {
				t.Fatal(err)
			}
			frames := parseFlameSVG(t, svg.Bytes())
			if len(frames) == 0 {
				t.Fatal("no frames")
			}
			if frames[0].title[:3] != "all" || frames[0].width < flameWidth-2*flamePadX-0.1 {
				t.Errorf("first frame %+v is not the full-width root", frames[0])
			}
			// Frames come depth first: a frame's parent is the last frame
			// one level (one frame height) below it.
			parents := map[int]flameRect{}
			for _, f := range frames {
				if par, ok := parents[f.y+flameFrameH]; ok && f.width > par.width+0.15 {
					t.Errorf("frame %q (%.1f px) wider than its parent %q (%.1f px)", f.title, f.width, par.title, par.width)
				}
				parents[f.y] = f
			}
			m, err := buildModel(context.Background(), p, opt)
			if err != nil {
				t.Fatal(err)
			}
			stacks, err := m.foldedStacks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var widest foldedStack
			for _, st := range stacks {
				if st.v > widest.v {
					widest = st
				}
			}
			for _, name := range widest.frames {
				if !strings.Contains(svg.String(), xmlEscape(name)) {
					t.Errorf("frame %q of the widest stack is missing", name)
				}
			}
			checkRsvgRenders(t, svg.Bytes())
		})
	}
}

type flameRect struct {
	title string
	y     int
	width float64
}

func parseFlameSVG(t *testing.T, svg []byte) []flameRect {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var out []flameRect
	var title string
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			switch tk.Name.Local {
			case "title":
				inTitle, title = true, ""
			case "rect":
				if title == "" {
					continue // background
				}
				r := flameRect{title: title}
				for _, a := range tk.Attr {
					switch a.Name.Local {
					case "y":
						r.y, _ = strconv.Atoi(a.Value)
					case "width":
						r.width, _ = strconv.ParseFloat(a.Value, 64)
					}
				}
				out = append(out, r)
				title = ""
			}
		case xml.CharData:
			if inTitle {
				title += string(tk)
			}
		case xml.EndElement:
			if tk.Name.Local == "title" {
				inTitle = false
			}
		}
	}
	return out
}

func xmlEscape(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// checkRsvgRenders renders an SVG with the real rsvg-convert (librsvg).
func checkRsvgRenders(t *testing.T, svg []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "rsvg-convert", "-f", "png")
	cmd.Stdin = bytes.NewReader(svg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !bytes.HasPrefix(out, []byte("\x89PNG")) {
		t.Errorf("rsvg-convert rejected the flame graph: %v %s", err, stderr.String())
	}
}

// TestCompareFoldedLines checks the comparison WriteFolded sorts with
// against comparing the joined lines, on frames that are prefixes of each
// other and hold the separators themselves.
func TestCompareFoldedLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "ab", "a b", "a;b", "b", "", "std::f(int)", "std::f"}
	gen := func() foldedStack {
		st := foldedStack{v: float64(rng.IntN(30))}
		for range 1 + rng.IntN(4) {
			st.frames = append(st.frames, parts[rng.IntN(len(parts))])
		}
		return st
	}
	line := func(st foldedStack) string {
		return strings.Join(st.frames, ";") + " " + strconv.FormatInt(int64(st.v), 10)
	}
	for range 20000 {
		a, b := gen(), gen()
		if got, want := compareFoldedLines(a, b), strings.Compare(line(a), line(b)); got != want {
			t.Fatalf("compareFoldedLines(%q, %q) = %d, want %d", line(a), line(b), got, want)
		}
	}
}
