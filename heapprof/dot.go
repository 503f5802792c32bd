package heapprof

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/pprof/profile"
)

// WriteDOT writes p as jeprof --dot does (sub PrintDot): same title,
// legend, node numbering, labels, font sizes, edge selection and styles.
// p must be symbolized (see symbolizer.go). When no node passes the node
// limit it writes nothing and returns ErrNoNodes.
//
// jeprof orders edges of equal weight by Perl's randomized hash order, so
// two jeprof runs may list such edges in different orders, and keep
// different ones of them where more lead into a node than --maxdegree
// allows; WriteDOT breaks those ties by source then destination node
// number.
func WriteDOT(w io.Writer, p *profile.Profile, opt Options) error {
	return WriteDOTContext(context.Background(), w, p, opt)
}

// WriteDOTContext is WriteDOT stopping with ctx's error (wrapped) when ctx
// ends; it looks at ctx every few thousand samples, stacks and edges.
func WriteDOTContext(ctx context.Context, w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(ctx, p, opt)
	if err != nil {
		return err
	}
	return m.writeDOT(ctx, w, opt)
}

type dotEdge struct {
	src, dst int32 // name ids
	v        float64
}

func (m *model) writeDOT(ctx context.Context, w io.Writer, opt Options) error {
	local := m.localTotal
	nodeLimit := perlInt(opt.NodeFraction * local)
	edgeLimit := perlInt(opt.EdgeFraction * local)

	list := make([]int32, 0, len(m.names))
	for id := range m.names {
		if m.inCum[id] {
			list = append(list, int32(id))
		}
	}
	sort.Slice(list, func(i, j int) bool {
		ci, cj := math.Abs(m.cum[list[i]]), math.Abs(m.cum[list[j]])
		if ci != cj {
			return ci > cj
		}
		return m.names[list[i]] < m.names[list[j]]
	})
	last := opt.NodeCount - 1
	if last > len(list)-1 {
		last = len(list) - 1
	}
	for last >= 0 && math.Abs(m.cum[list[last]]) <= nodeLimit {
		last--
	}
	if last < 0 {
		return ErrNoNodes
	}

	bw := bufio.NewWriter(w)
	program := dotEscape(opt.Program)
	fmt.Fprintf(bw, "digraph \"%s; %s %s\" {\n", program, m.unparse(m.total), m.units())
	bw.WriteString("node [width=0.375,height=0.25];\n")
	fmt.Fprintf(bw, "Legend [shape=box,fontsize=24,shape=plaintext,label=\"%s\\l%s\\l%s\\l%s\\l%s\\l\"];\n",
		program,
		fmt.Sprintf("Total %s: %s", m.units(), m.unparse(m.total)),
		fmt.Sprintf("Focusing on: %s", m.unparse(local)),
		fmt.Sprintf("Dropped nodes with <= %s abs(%s)", m.unparse(nodeLimit), m.units()),
		fmt.Sprintf("Dropped edges with <= %s %s", m.unparse(edgeLimit), m.units()))

	node := make([]int, len(m.names)) // node number by name id; 0: not shown
	for i, a := range list[:last+1] {
		f, c := m.flat[a], m.cum[a]
		fs := 8.0
		if local > 0 {
			fs = 8 + 50.0*math.Sqrt(math.Abs(f*1.0/local))
		}
		node[a] = i + 1
		sym := dotLabelName(m.names[a])
		extra := ""
		if f != c {
			extra = fmt.Sprintf("\\rof %s (%s)", m.unparse(c), percent(c, local))
		}
		fmt.Fprintf(bw, "N%d [label=\"%s\\n%s (%s)%s\\r\",shape=box,fontsize=%s];\n",
			node[a], sym, m.unparse(f), percent(f, local), extra, strconv.FormatFloat(fs, 'f', 1, 64))
	}

	// Edges come from the stacks before ReduceProfile: recursion yields
	// self-edges and repeated edges, as in jeprof. Under NamesGo an edge is
	// inlined (dashed) when its callee was inlined at every call along it,
	// as in pprof.
	es := newEdgeSums(list[:last+1], node, m.goNames)
	if err := m.sumEdges(ctx, es, node); err != nil {
		return err
	}
	sorted := es.edges()
	sort.Slice(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if a.v != b.v {
			return a.v > b.v
		}
		if node[a.src] != node[b.src] {
			return node[a.src] < node[b.src]
		}
		return node[a.dst] < node[b.dst]
	})

	indeg, outdeg := make([]int, len(m.names)), make([]int, len(m.names))
	for _, e := range sorted {
		keep := true
		switch {
		case indeg[e.dst] == 0:
			// Keep the first edge into a node so it stays reachable.
		case math.Abs(e.v) <= edgeLimit:
			keep = false
		case outdeg[e.src] >= opt.MaxDegree || indeg[e.dst] >= opt.MaxDegree:
			keep = false
		}
		if !keep {
			continue
		}
		outdeg[e.src]++
		indeg[e.dst]++
		fraction := 0.0
		if local != 0 {
			fraction = math.Abs(3 * (e.v / local))
		}
		if fraction > 1 {
			fraction = 1
		}
		weight := math.Pow(math.Abs(e.v), 0.7)
		if weight > 100000 {
			weight = 100000
		}
		style := fmt.Sprintf("setlinewidth(%f)", fraction*2)
		if m.goNames && es.inlined(e) || !m.goNames && strings.Contains(m.names[e.dst], "(inline)") {
			style += ",dashed"
		}
		fmt.Fprintf(bw, "N%d -> N%d [label=%s, weight=%d, style=\"%s\"];\n",
			node[e.src], node[e.dst], m.unparse(e.v), int64(weight), style)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// sumEdges adds every stack's edges between shown nodes to es. A
// stack's names are walked as translate gives them (callee first), each
// one with the one before it: its callee, inlined into it when it is not
// the last name of its location. The edges within a location are the
// same in every stack: they are listed once per location, between shown
// nodes only (locEdges).
func (m *model) sumEdges(ctx context.Context, es *edgeSums, node []int) error {
	locs, edges, keys := m.locEdges(node, es)
	if keys != nil {
		return m.sumDenseEdges(ctx, es, locs, keys)
	}
	var buf []int32
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: dot edges: %w", err)
			}
		}
		// The last name so far (never inlined into the next one), and
		// whether it is shown.
		dst, dstShown := int32(-1), false
		for i, l := range st.locs {
			le := &locs[l]
			if le.first < 0 {
				if le.first == locPerCaller {
					names := m.locationNames(st.locs, i, &buf)
					dstInlined := false
					for j, src := range names {
						if dst >= 0 && node[src] != 0 && node[dst] != 0 {
							es.add(src, dst, st.v, m.goNames && dstInlined)
						}
						dst, dstInlined = src, j < len(names)-1
					}
					dstShown = dst >= 0 && node[dst] != 0
				}
				continue
			}
			if dstShown && le.firstShown {
				es.add(le.first, dst, st.v, false)
			}
			for k := le.start; k < le.end; k++ {
				es.add(edges[k].src, edges[k].dst, st.v, m.goNames)
			}
			dst, dstShown = le.last, le.lastShown
		}
	}
	return nil
}

// sumDenseEdges is sumEdges into es's arrays when no location is named
// per caller: by node numbers and array keys, without a call.
func (m *model) sumDenseEdges(ctx context.Context, es *edgeSums, locs []locEdge, keys []int32) error {
	n := len(es.shown)
	sums, has, inl, track := es.sums, es.has, es.inl, es.trackInline
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: dot edges: %w", err)
			}
		}
		v := st.v
		dst := int32(0) // the node of the last name so far; 0: not shown
		for _, l := range st.locs {
			le := &locs[l]
			if le.first < 0 {
				continue // no names
			}
			if dst != 0 && le.firstNode != 0 {
				// Into the last name of the location before: not inlined.
				k := int(le.firstNode-1)*n + int(dst-1)
				if track {
					inl[k] = false
				}
				has[k] = true
				sums[k] += v
			}
			for _, k := range keys[le.start:le.end] {
				if track {
					inl[k] = !has[k] || inl[k]
				}
				has[k] = true
				sums[k] += v
			}
			dst = le.lastNode
		}
	}
	return nil
}

// locEdge is what writeDOT's edges need of a location: its first and
// last node names, whether their nodes are shown, and the edges between
// its names whose nodes are both shown, each from a name to the one
// inlined into it (edges[start:end]): the same in every stack. first is
// locNoNames for a location without names, locPerCaller for one with
// Callback::Run frames (named per caller).
type locEdge struct {
	first, last           int32
	start, end            int32
	firstShown, lastShown bool
	// firstNode and lastNode are first's and last's node numbers (0: not
	// shown).
	firstNode, lastNode int32
}

const (
	locNoNames   = -1
	locPerCaller = -2
)

// locEdges lists every location's locEdge and the edges they share,
// and, when es keeps its sums in arrays and no location is named per
// caller, each edge's key in them.
func (m *model) locEdges(node []int, es *edgeSums) ([]locEdge, []dotEdge, []int32) {
	locs := make([]locEdge, len(m.locKeys))
	var edges []dotEdge
	perCaller := false
	for l := range locs {
		le := &locs[l]
		names := m.locNames[l]
		switch {
		case m.perCaller[l]:
			le.first = locPerCaller
			perCaller = true
			continue
		case !m.locDone[l] || len(names) == 0:
			le.first = locNoNames
			continue
		}
		le.first, le.last = names[0], names[len(names)-1]
		le.firstNode, le.lastNode = int32(node[le.first]), int32(node[le.last])
		le.firstShown, le.lastShown = le.firstNode != 0, le.lastNode != 0
		le.start = int32(len(edges))
		for j := 1; j < len(names); j++ {
			if src, dst := names[j], names[j-1]; node[src] != 0 && node[dst] != 0 {
				edges = append(edges, dotEdge{src: src, dst: dst})
			}
		}
		le.end = int32(len(edges))
	}
	if !es.dense || perCaller {
		return locs, edges, nil
	}
	keys := make([]int32, len(edges))
	for i, e := range edges {
		keys[i] = int32((node[e.src]-1)*len(es.shown) + node[e.dst] - 1)
	}
	return locs, edges, keys
}

// edgeSums sums the values of the edges between shown nodes, stack by
// stack, and under NamesGo tells whether an edge's callee was inlined at
// every call along it. With the few nodes a graph shows (jeprof's
// --nodecount, 80), a square array by node number does what a map would
// at a fraction of the cost (a frame pair of every stack is looked up:
// 883,208 on bench/heapprof's o2).
type edgeSums struct {
	shown []int32 // name id by node number - 1
	node  []int   // node number by name id
	// dense: sums, has and inl by (node number - 1) * len(shown) + (node
	// number - 1); else the maps, by source and destination name id.
	dense       bool
	sums        []float64
	has, inl    []bool
	sparse      map[uint64]float64
	sparseInl   map[uint64]bool
	trackInline bool
}

// maxDenseNodes is how many shown nodes edgeSums keeps in an array:
// 64 Ki edges, 640 KB.
const maxDenseNodes = 256

func newEdgeSums(shown []int32, node []int, trackInline bool) *edgeSums {
	es := &edgeSums{shown: shown, node: node, trackInline: trackInline, dense: len(shown) <= maxDenseNodes}
	if es.dense {
		n := len(shown) * len(shown)
		es.sums, es.has = make([]float64, n), make([]bool, n)
		if trackInline {
			es.inl = make([]bool, n)
		}
	} else {
		es.sparse = map[uint64]float64{}
		if trackInline {
			es.sparseInl = map[uint64]bool{}
		}
	}
	return es
}

func (es *edgeSums) add(src, dst int32, v float64, inlined bool) {
	if es.dense {
		k := (es.node[src]-1)*len(es.shown) + es.node[dst] - 1
		if es.trackInline {
			es.inl[k] = inlined && (!es.has[k] || es.inl[k])
		}
		es.has[k] = true
		es.sums[k] += v
		return
	}
	k := uint64(src)<<32 | uint64(dst)
	if es.trackInline {
		if prev, ok := es.sparseInl[k]; ok {
			es.sparseInl[k] = prev && inlined
		} else {
			es.sparseInl[k] = inlined
		}
	}
	es.sparse[k] += v
}

// edges lists the edges with their sums, in no particular order.
func (es *edgeSums) edges() []dotEdge {
	if !es.dense {
		out := make([]dotEdge, 0, len(es.sparse))
		for e, v := range es.sparse {
			out = append(out, dotEdge{int32(e >> 32), int32(uint32(e)), v})
		}
		return out
	}
	var out []dotEdge
	n := len(es.shown)
	for k, ok := range es.has {
		if ok {
			out = append(out, dotEdge{es.shown[k/n], es.shown[k%n], es.sums[k]})
		}
	}
	return out
}

// inlined tells whether e's callee was inlined at every call along e.
func (es *edgeSums) inlined(e dotEdge) bool {
	if !es.trackInline {
		return false
	}
	if es.dense {
		return es.inl[(es.node[e.src]-1)*len(es.shown)+es.node[e.dst]-1]
	}
	return es.sparseInl[uint64(e.src)<<32|uint64(e.dst)]
}

// dotLabelName splits a node name into label lines the way PrintDot does:
// whitespace runs and "::" become "\n". The name is escaped first
// (dotEscape), so a name cannot end the quoted label or add layout escapes
// of its own; jeprof's ordinary names have neither and come out as jeprof
// prints them.
func dotLabelName(s string) string {
	s = perlSpaceRE.ReplaceAllString(dotEscape(s), "\\n")
	return strings.ReplaceAll(s, "::", "\\n")
}

// dotEscape makes s the text of a DOT double-quoted string that Graphviz
// shows as s: a backslash becomes "\\" (so "\l", "\N" and the like in a
// name stay literal), a double quote "\"", other control characters a
// space, and invalid UTF-8 U+FFFD. Whitespace is left for dotLabelName to
// lay out. Names of real programs have none of these and are returned as
// they are.
func dotEscape(s string) string {
	clean := utf8.ValidString(s)
	for i := 0; clean && i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '"' || (c < 0x20 && !isPerlSpace(c)) || c == 0x7f {
			clean = false
		}
	}
	if clean {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case (c < 0x20 && !isPerlSpace(c)) || c == 0x7f:
			b.WriteByte(' ')
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// isPerlSpace is a byte of Perl's \s on ASCII text.
func isPerlSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// perlSpaceRE is Perl's \s+ on ASCII text (RE2's \s lacks \v).
var perlSpaceRE = regexp.MustCompile(`[ \t\n\r\f\v]+`)
