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
	names := make([]string, 0, len(m.cum))
	for k := range m.cum {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		fi, fj := m.flat[names[i]], m.flat[names[j]]
		if fi != fj {
			return fi > fj
		}
		return names[i] < names[j]
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
			m.unparse(c), percent(c, m.localTotal), k)
	}
	return bw.Flush()
}

// WriteFolded writes folded stacks (root first, frames joined by ';',
// then a space and the value), the format of jeprof --collapsed and of
// flamegraph.pl / speedscope. Names are full (demangled) names; inlined
// frames carry jeprof's "[inline]" suffix. Values are truncated to
// integers like jeprof's %d. Lines are sorted for stable output.
func WriteFolded(w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(p, opt)
	if err != nil {
		return err
	}
	agg := map[string]float64{}
	for k, v := range m.raw {
		if k == "" {
			continue
		}
		keys := strings.Split(k, "\n")
		var names []string
		for i := len(keys) - 1; i >= 0; i-- {
			fr := m.syms[keys[i]]
			if len(fr) == 0 {
				names = append(names, keys[i])
				continue
			}
			// fr is containing function first; root-first output wants
			// exactly that order.
			for j, f := range fr {
				n := f.full
				if n == "??" {
					n = "??:0"
				}
				if j > 0 {
					n += "[inline]"
				}
				names = append(names, n)
			}
		}
		agg[strings.Join(names, ";")] += v
	}
	bw := bufio.NewWriter(w)
	for _, k := range sortedKeys(agg) {
		bw.WriteString(k)
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(int64(agg[k]), 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
