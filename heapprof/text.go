package heapprof

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// WriteText writes p as jeprof --text does (FilterAndPrint + PrintText):
// a "Total:" line, then one line per function sorted by flat value
// (descending, then name) with flat, flat%, running sum%, cum and cum%.
func WriteText(w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(p, opt)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	if m.total != 0 {
		fmt.Fprintf(bw, "Total: %s %s\n", m.unparse(m.total), m.units())
	}
	names := make([]int32, 0, len(m.names))
	for id := range m.names {
		if m.inCum[id] {
			names = append(names, int32(id))
		}
	}
	sort.Slice(names, func(i, j int) bool {
		fi, fj := m.flat[names[i]], m.flat[names[j]]
		if fi != fj {
			return fi > fj
		}
		return m.names[names[i]] < m.names[names[j]]
	})
	running := 0.0
	for _, k := range names {
		f, c := m.flat[k], m.cum[k]
		running += f
		if f == 0 && c == 0 {
			continue
		}
		fmt.Fprintf(bw, "%8s %6s %6s %8s %6s %s\n",
			m.unparse(f), percent(f, m.localTotal), percent(running, m.localTotal),
			m.unparse(c), percent(c, m.localTotal), m.names[k])
	}
	return bw.Flush()
}

// WriteFolded writes folded stacks, one line per stack: frames root first
// joined by ';', a space, and the value truncated to an integer. This is
// jeprof --collapsed (flamegraph.pl / speedscope input) with three
// differences: lines are sorted instead of in Perl's hash order, nm's
// "<address>" tags are cut from names, and a stack made only of allocator
// frames (jeprof prints it with no frames) is left out. Names are full
// demangled names; inlined frames end in "[inline]"; a frame without a
// name shows its file:line, as in jeprof.
func WriteFolded(w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(p, opt)
	if err != nil {
		return err
	}
	stacks := m.foldedStacks()
	lines := make([]string, 0, len(stacks))
	for _, st := range stacks {
		lines = append(lines, strings.Join(st.frames, ";")+" "+strconv.FormatInt(int64(st.v), 10))
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// foldedStack is one stack as jeprof --collapsed names it, root first.
type foldedStack struct {
	frames []string
	v      float64
}

// foldedStacks names every non-empty stack the way jeprof's
// PrintCollapsedStacks does (ExtractSymbolNameInlineStack).
func (m *model) foldedStacks() []foldedStack {
	out := make([]foldedStack, 0, len(m.stacks))
	for _, st := range m.stacks {
		if len(st.locs) == 0 {
			continue
		}
		var names []string
		for i := len(st.locs) - 1; i >= 0; i-- {
			fr := m.frames[st.locs[i]]
			if len(fr) == 0 {
				names = append(names, m.locKeys[st.locs[i]])
				continue
			}
			// fr holds the containing function first: root-first order.
			for j, f := range fr {
				n := fullAddrRE.ReplaceAllString(f.full, "")
				if n == "??" {
					n = f.fileLine()
				}
				if j > 0 {
					n += "[inline]"
				}
				names = append(names, n)
			}
		}
		out = append(out, foldedStack{names, st.v})
	}
	return out
}
