package heapprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// The test process allocates along these and keeps the memory, so its own
// heap profile has methods of two types sharing a name.
var summaryKept [][]byte

type summaryA struct{}
type summaryB struct{}

//go:noinline
func (summaryA) grow() { summaryKept = append(summaryKept, make([]byte, 1<<20)) }

//go:noinline
func (summaryB) grow() {
	for range 100 {
		summaryKept = append(summaryKept, make([]byte, 5000))
	}
}

//go:noinline
func summaryBoth() {
	summaryA{}.grow()
	summaryB{}.grow()
}

// ownHeapProfile returns the test process's heap profile, every
// allocation sampled.
func ownHeapProfile(t *testing.T) *profile.Profile {
	t.Helper()
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	summaryBoth()
	summaryA{}.grow()
	runtime.GC()
	var b bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&b, 0); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(summaryKept)
	p, err := Parse(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !IsGoProfile(p) {
		t.Fatal("own heap profile: IsGoProfile false")
	}
	return p
}

func near9(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// TestSummarizeMatchesGraph checks Summarize against the model WriteDOT
// and WriteText draw, on a Go program's heap profile (where a node is one
// function): the same total, every function's flat and cum equal to its
// node's, and the same stacks of node names, for bytes and for objects.
func TestSummarizeMatchesGraph(t *testing.T) {
	ctx := context.Background()
	p := ownHeapProfile(t)
	sum, err := Summarize(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ       string
		total     float64
		flat, cum func(FunctionSummary) float64
		stack     func(StackSummary) float64
	}{
		{"inuse_space", sum.Bytes, func(f FunctionSummary) float64 { return f.FlatBytes },
			func(f FunctionSummary) float64 { return f.CumBytes }, func(s StackSummary) float64 { return s.Bytes }},
		{"inuse_objects", sum.Objects, func(f FunctionSummary) float64 { return f.FlatObjects },
			func(f FunctionSummary) float64 { return f.CumObjects }, func(s StackSummary) float64 { return s.Objects }},
	} {
		t.Run(c.typ, func(t *testing.T) {
			m, err := buildModel(ctx, p, Options{SampleType: c.typ})
			if err != nil {
				t.Fatal(err)
			}
			if !near9(c.total, m.total) {
				t.Errorf("total %v, graph %v", c.total, m.total)
			}
			rows := map[string]bool{}
			for _, f := range sum.Functions {
				id, ok := m.nameIdx[f.ShortName]
				if !ok {
					t.Errorf("%s (%s): no node", f.Name, f.ShortName)
					continue
				}
				rows[f.ShortName] = true
				if !near9(c.flat(f), m.flat[id]) || !near9(c.cum(f), m.cum[id]) {
					t.Errorf("%s: flat %v cum %v, node flat %v cum %v", f.ShortName, c.flat(f), c.cum(f), m.flat[id], m.cum[id])
				}
			}
			for id, name := range m.names {
				// Nodes only on stacks whose allocations were all freed
				// have no row.
				if m.cum[id] != 0 && !rows[name] {
					t.Errorf("node %q (cum %v) has no row", name, m.cum[id])
				}
			}
			want := map[string]float64{}
			for si := range m.stacks {
				var fr []string
				for _, id := range m.translate(m.stacks[si].locs, nil) { // the stack's node names, once reduce has named every location
					fr = append(fr, m.names[id])
				}
				slices.Reverse(fr)
				want[strings.Join(fr, ";")] += m.stacks[si].v
			}
			for _, st := range sum.Stacks {
				var fr []string
				for _, id := range st.Frames {
					fr = append(fr, sum.Names[id])
				}
				k := strings.Join(fr, ";")
				if w, ok := want[k]; !ok || !near9(c.stack(st), w) {
					t.Errorf("stack %q: %v, graph %v (%v)", k, c.stack(st), w, ok)
				}
				delete(want, k)
			}
			for k, v := range want {
				if v != 0 {
					t.Errorf("graph stack %q (%v) not summarized", k, v)
				}
			}
		})
	}
	const pkg = "github.com/heapproxy/heapproxy/heapprof."
	for _, c := range []struct {
		name, short string
		minFlat     float64
	}{
		{pkg + "summaryA.grow", "heapprof.summaryA.grow", 2 << 20},
		{pkg + "summaryB.grow", "heapprof.summaryB.grow", 500_000},
	} {
		i := slices.IndexFunc(sum.Functions, func(f FunctionSummary) bool { return f.Name == c.name })
		if i < 0 {
			t.Errorf("no function %s", c.name)
			continue
		}
		if f := sum.Functions[i]; f.ShortName != c.short || f.FlatBytes < c.minFlat {
			t.Errorf("%s: short %q flat %v; want %q, at least %v", c.name, f.ShortName, f.FlatBytes, c.short, c.minFlat)
		}
	}
}

// summaryRows prints a summary's functions and stacks for comparison.
func summaryRows(s *Summary) (funcs, stacks []string) {
	for _, f := range s.Functions {
		funcs = append(funcs, fmt.Sprintf("%s/%s %g %g %g %g", f.Name, f.ShortName, f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects))
	}
	for _, st := range s.Stacks {
		var fr []string
		for _, id := range st.Frames {
			fr = append(fr, s.Names[id])
		}
		stacks = append(stacks, fmt.Sprintf("%s %g %g", strings.Join(fr, ";"), st.Bytes, st.Objects))
	}
	return funcs, stacks
}

// TestSummarizeCases covers what real profiles rarely show.
func TestSummarizeCases(t *testing.T) {
	fn := func(id uint64, name, system string) *profile.Function {
		return &profile.Function{ID: id, Name: name, SystemName: system}
	}
	fA, fB := fn(1, "a", ""), fn(2, "b", "")
	fMalloc := fn(3, "malloc", "malloc<0000000000001000>")
	fInt, fDbl := fn(4, "ns::f(int)", "ns::f(int)<0000000000002000>"), fn(5, "ns::f(double)", "ns::f(double)<0000000000003000>")
	fSys := fn(6, "", "sys_only")
	loc := func(id, addr uint64, fns ...*profile.Function) *profile.Location {
		l := &profile.Location{ID: id, Address: addr}
		for _, f := range fns {
			l.Line = append(l.Line, profile.Line{Function: f})
		}
		return l
	}
	lA, lA2, lB := loc(1, 0x10, fA), loc(2, 0x20, fA), loc(3, 0x30, fB)
	lM, lInl := loc(4, 0x40, fMalloc), loc(5, 0x50, fB, fA) // b inlined into a
	lInt, lDbl, lSys := loc(6, 0x60, fInt), loc(7, 0x70, fDbl), loc(8, 0x80, fSys)
	lRaw, lFake, lNil := loc(9, 0x1234), loc(10, 0xffffffffffffffff), loc(11, 0x90, nil)
	heap := []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}
	sample := func(v []int64, locs ...*profile.Location) *profile.Sample {
		return &profile.Sample{Location: locs, Value: v}
	}
	// jeprof's estimate of one sampled 1000-byte object, 1 KiB period: not
	// the rounded 2 objects, 2000 bytes the sample's Value says.
	jeO, jeB := AdjustSamples(1024, 1, 1000)
	for _, c := range []struct {
		name    string
		types   []*profile.ValueType
		period  int64
		samples []*profile.Sample
		funcs   []string // name/short flatB flatO cumB cumO, first seen first
		stacks  []string // root first, then bytes and objects
	}{
		{
			name:  "recursion counts once in cum; stacks of equal names are one",
			types: heap,
			samples: []*profile.Sample{
				sample([]int64{1, 100}, lA, lB, lA),
				sample([]int64{2, 200}, lA2, lB, lA2),
			},
			funcs:  []string{"a/a 300 3 300 3", "b/b 0 0 300 3"},
			stacks: []string{"a;b;a 300 3"},
		},
		{
			name:  "allocator cut; inlined frames innermost first; all-allocator stack kept",
			types: heap,
			samples: []*profile.Sample{
				sample([]int64{3, 300}, lA, lM, lInl),
				sample([]int64{1, 50}, lM),
			},
			funcs:  []string{"a/a 0 0 300 3", "b/b 300 3 300 3"},
			stacks: []string{"a;b 300 3", " 50 1"},
		},
		{
			name:  "unsymbolized, fake and nameless locations keep their rows",
			types: heap,
			samples: []*profile.Sample{
				sample([]int64{1, 10}, lRaw, lB),
				sample([]int64{1, 20}, lFake, lB),
				sample([]int64{1, 40}, lNil, lB),
			},
			funcs:  []string{"0x1234/0x1234 10 1 10 1", "b/b 0 0 70 3", "0xffffffffffffffff/0xffffffffffffffff 20 1 20 1", "??/?? 40 1 40 1"},
			stacks: []string{"b;0x1234 10 1", "b;0xffffffffffffffff 20 1", "b;?? 40 1"},
		},
		{
			name:  "overloads are two functions of one short name; SystemName when Name is empty",
			types: heap,
			samples: []*profile.Sample{
				sample([]int64{1, 10}, lInt, lSys),
				sample([]int64{1, 20}, lDbl, lSys),
			},
			funcs:  []string{"ns::f(int)/ns::f 10 1 10 1", "sys_only/sys_only 0 0 30 2", "ns::f(double)/ns::f 20 1 20 1"},
			stacks: []string{"sys_only;ns::f 30 2"},
		},
		{
			name:  "zero samples left out",
			types: heap,
			samples: []*profile.Sample{
				sample([]int64{0, 0}, lA),
				sample([]int64{1, 8}, lB),
			},
			funcs:  []string{"b/b 8 1 8 1"},
			stacks: []string{"b 8 1"},
		},
		{
			name:  "not a heap profile: the last bytes and count types",
			types: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "samples", Unit: "count"}},
			samples: []*profile.Sample{
				sample([]int64{50, 2}, lB),
			},
			funcs:  []string{"b/b 50 2 50 2"},
			stacks: []string{"b 50 2"},
		},
		{
			name:    "no sample types",
			samples: []*profile.Sample{sample(nil, lB)},
		},
		{
			name: "jemalloc: unrounded estimates from the raw counts",
			types: append(slices.Clone(heap), &profile.ValueType{Type: LabelSampledObjects, Unit: "count"},
				&profile.ValueType{Type: LabelSampledBytes, Unit: "bytes"}),
			period: 1024,
			samples: []*profile.Sample{
				sample([]int64{2, 2000, 1, 1000}, lB),
			},
			funcs:  []string{fmt.Sprintf("b/b %g %g %g %g", jeB, jeO, jeB, jeO)},
			stacks: []string{fmt.Sprintf("b %g %g", jeB, jeO)},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &profile.Profile{SampleType: c.types, Sample: c.samples, Period: c.period,
				Location: []*profile.Location{lA, lA2, lB, lM, lInl, lInt, lDbl, lSys, lRaw, lFake, lNil},
				Function: []*profile.Function{fA, fB, fMalloc, fInt, fDbl, fSys}}
			s, err := Summarize(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			funcs, stacks := summaryRows(s)
			if !slices.Equal(funcs, c.funcs) {
				t.Errorf("functions\n got %q\nwant %q", funcs, c.funcs)
			}
			if !slices.Equal(stacks, c.stacks) {
				t.Errorf("stacks\n got %q\nwant %q", stacks, c.stacks)
			}
			var b, o float64
			for _, st := range s.Stacks {
				b, o = b+st.Bytes, o+st.Objects
			}
			if b != s.Bytes || o != s.Objects {
				t.Errorf("stacks sum to %v bytes %v objects, totals %v %v", b, o, s.Bytes, s.Objects)
			}
		})
	}
}

// TestSummarizeErrors: a nil profile and an ended context are errors.
func TestSummarizeErrors(t *testing.T) {
	p, err := Parse(genHeapV2(100, 8, 3))
	if err != nil {
		t.Fatal(err)
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		ctx  context.Context
		p    *profile.Profile
		is   error
	}{
		{"nil profile", context.Background(), nil, nil},
		{"canceled", canceled, p, context.Canceled},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Summarize(c.ctx, c.p)
			if err == nil || s != nil {
				t.Fatalf("Summarize = %v, %v; want an error", s, err)
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("error %v, want %v", err, c.is)
			}
		})
	}
}

// TestSummarizeMemoryBound measures Summarize's peak heap on
// TestDumpMemoryBound's dump and names (every PC distinct, 250-byte names)
// against the same multiple of its input the text renderer is held to.
func TestSummarizeMemoryBound(t *testing.T) {
	const multiple = 6.0 // measured 4.3-4.8 on Go 1.26 (the rows code it replaced: 5.9-6.1)
	ctx := context.Background()
	data := genHeapV2(2500, 128, 1)
	p, err := ParseLimit(ctx, data, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := (longNameSymbolizer{250}).Symbolize(ctx, p); err != nil {
		t.Fatal(err)
	}
	names := 0
	for _, f := range p.Function {
		names += len(f.Name)
		if f.SystemName != f.Name {
			names += len(f.SystemName)
		}
	}
	input := float64(len(data) + names)
	var s *Summary
	peak := heapPeak(func() { s, err = Summarize(ctx, p) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("summary of %d stacks, %d functions: peak %.1f MB = %.1fx the dump and its %d bytes of names",
		len(s.Stacks), len(s.Functions), float64(peak)/1e6, float64(peak)/input, names)
	if limit := multiple * input; float64(peak) > limit {
		t.Errorf("Summarize peak heap %d bytes, over %.1fx the input (%.0f)", peak, multiple, limit)
	}
}

func BenchmarkSummarize(b *testing.B) {
	p := synthProfile(39538, 8499)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := Summarize(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}
