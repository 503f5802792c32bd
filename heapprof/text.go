package heapprof

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// WriteText writes p as jeprof --text does (FilterAndPrint + PrintText):
// a "Total:" line, then one line per function sorted by flat value
// (descending, then name) with flat, flat%, running sum%, cum and cum%.
func WriteText(w io.Writer, p *profile.Profile, opt Options) error {
	return WriteTextContext(context.Background(), w, p, opt)
}

// WriteTextContext is WriteText stopping with ctx's error (wrapped) when
// ctx ends.
func WriteTextContext(ctx context.Context, w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(ctx, p, opt)
	if err != nil {
		return err
	}
	return m.writeText(ctx, w)
}

// writeText is WriteText of a built model.
func (m *model) writeText(ctx context.Context, w io.Writer) error {
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
	for i, k := range names {
		if i%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: text: %w", err)
			}
		}
		f, c := m.flat[k], m.cum[k]
		running += f
		if f == 0 && c == 0 {
			continue
		}
		fmt.Fprintf(bw, "%8s %6s %6s %8s %6s %s\n",
			m.unparse(f), percent(f, m.localTotal), percent(running, m.localTotal),
			m.unparse(c), percent(c, m.localTotal), textEscape(m.names[k]))
	}
	return bw.Flush()
}

// WriteFolded writes folded stacks, one line per stack: frames root first
// joined by ';', a space, and the value truncated to an integer. This is
// jeprof --collapsed (flamegraph.pl / speedscope input) with three
// differences: lines are sorted instead of in Perl's hash order, nm's
// "<address>" tags are cut from names, a stack made only of allocator
// frames (jeprof prints it with no frames) is left out, and a ';' or a
// control character in a name (which would split a frame or a line)
// becomes ':' or a space. Names are full
// demangled names; inlined frames end in "[inline]"; a frame without a
// name shows its file:line, as in jeprof.
func WriteFolded(w io.Writer, p *profile.Profile, opt Options) error {
	return WriteFoldedContext(context.Background(), w, p, opt)
}

// WriteFoldedContext is WriteFolded stopping with ctx's error (wrapped)
// when ctx ends.
func WriteFoldedContext(ctx context.Context, w io.Writer, p *profile.Profile, opt Options) error {
	m, err := buildModel(ctx, p, opt)
	if err != nil {
		return err
	}
	return m.writeFolded(ctx, w)
}

// writeFolded is WriteFolded of a built model.
func (m *model) writeFolded(ctx context.Context, w io.Writer) error {
	stacks, err := m.foldedStacks(ctx)
	if err != nil {
		return err
	}
	// Sorted as the joined lines would sort, without building them: a large
	// profile's folded text is tens of megabytes.
	slices.SortFunc(stacks, compareFoldedLines)
	bw := bufio.NewWriter(w)
	for si, st := range stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: folded: %w", err)
			}
		}
		for i, f := range st.frames {
			if i > 0 {
				bw.WriteByte(';')
			}
			bw.WriteString(f)
		}
		bw.WriteByte(' ')
		bw.WriteString(strconv.FormatInt(int64(st.v), 10))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// compareFoldedLines compares two stacks the way their folded lines
// ("f1;f2;...;fn value") compare as strings, reading the lines byte by
// byte from the first frame that differs.
func compareFoldedLines(a, b foldedStack) int {
	k := 0
	for k < len(a.frames) && k < len(b.frames) && a.frames[k] == b.frames[k] {
		k++
	}
	// Frames before k are equal, and so is what precedes the separator
	// ahead of frame k.
	ca, cb := foldedCursor{st: a, k: k, sep: k > 0}, foldedCursor{st: b, k: k, sep: k > 0}
	for {
		x, okA := ca.next()
		y, okB := cb.next()
		switch {
		case !okA || !okB:
			return cmp.Compare(b2i(okA), b2i(okB))
		case x != y:
			return cmp.Compare(x, y)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// foldedCursor reads a stack's folded line a byte at a time from frame k.
type foldedCursor struct {
	st    foldedStack
	k, i  int    // frame and offset in it; k == len(frames): in the value
	sep   bool   // the separator before frame k comes first
	value string // the value's digits, once reached
}

func (c *foldedCursor) next() (byte, bool) {
	if c.sep {
		c.sep = false
		if c.k < len(c.st.frames) {
			return ';', true
		}
		c.value = strconv.FormatInt(int64(c.st.v), 10)
		return ' ', true
	}
	if c.k < len(c.st.frames) {
		f := c.st.frames[c.k]
		if c.i < len(f) {
			c.i++
			return f[c.i-1], true
		}
		c.k, c.i = c.k+1, 0
		if c.k < len(c.st.frames) {
			return ';', true
		}
		c.value = strconv.FormatInt(int64(c.st.v), 10)
		return ' ', true
	}
	if c.i < len(c.value) {
		c.i++
		return c.value[c.i-1], true
	}
	return 0, false
}

// foldedStack is one stack as jeprof --collapsed names it, root first.
type foldedStack struct {
	frames []string
	v      float64
}

// foldedStacks names every non-empty stack the way jeprof's
// PrintCollapsedStacks does (ExtractSymbolNameInlineStack). Names are
// computed once per location and shared by the stacks.
func (m *model) foldedStacks(ctx context.Context) ([]foldedStack, error) {
	names := make([][]string, len(m.locKeys)) // never empty once computed
	out := make([]foldedStack, 0, len(m.stacks))
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("heapprof: folded stacks: %w", err)
			}
		}
		if len(st.locs) == 0 {
			continue
		}
		n := 0
		for _, l := range st.locs {
			if names[l] == nil {
				names[l] = m.foldedNames(l)
			}
			n += len(names[l])
		}
		frames := make([]string, 0, n)
		for i := len(st.locs) - 1; i >= 0; i-- {
			frames = append(frames, names[st.locs[i]]...)
		}
		out = append(out, foldedStack{frames, st.v})
	}
	return out, nil
}

// foldedNames is one location's part of a folded stack, root first.
func (m *model) foldedNames(l int32) []string {
	fr := m.frames[l]
	if len(fr) == 0 {
		return []string{m.locKeys[l]}
	}
	// fr holds the containing function first: root-first order.
	out := make([]string, 0, len(fr))
	for j, f := range fr {
		n := cutNMTag(f.full)
		if n == "??" {
			n = f.fileLine()
		}
		n = foldedEscape(n)
		if j > 0 {
			n += "[inline]"
		}
		out = append(out, n)
	}
	return out
}

// cutNMTag removes the address tag nm's names carry in jeprof ("name"
// followed by "<%016x>", see symbolizer.go). Only a tag of exactly 16 hex
// digits is one: "_M_invoke<0>" keeps its template argument.
func cutNMTag(s string) string {
	const tag = 1 + 16 + 1
	if len(s) <= tag || s[len(s)-1] != '>' || s[len(s)-tag] != '<' {
		return s
	}
	for i := len(s) - tag + 1; i < len(s)-1; i++ {
		if hexDigits[s[i]] == 0xff {
			return s
		}
	}
	return s[:len(s)-tag]
}

// foldedEscape keeps a name from changing the shape of a folded line:
// ';' separates frames and a line ends at '\n', so ';' becomes ':' and
// control characters become spaces. Names of real programs have none.
func foldedEscape(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == ';' || r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == ';':
			return ':'
		case r < 0x20 || r == 0x7f:
			return ' '
		}
		return r
	}, s)
}

// textEscape keeps a name on its line of WriteText: control characters
// (a newline would start a made-up line) become spaces.
func textEscape(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
