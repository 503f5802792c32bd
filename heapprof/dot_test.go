package heapprof

import (
	"bytes"
	"context"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestEdgeSums: the array edgeSums keeps for a few shown nodes sums and
// marks inlined edges as its map does for many.
func TestEdgeSums(t *testing.T) {
	for _, c := range []struct {
		name        string
		names       int
		shown       int
		trackInline bool
	}{
		{"jeprof names", 40, 12, false},
		{"go names", 40, 12, true},
		{"every name shown", 9, 9, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(1))
			node := make([]int, c.names)
			shown := make([]int32, 0, c.shown)
			for _, id := range rng.Perm(c.names)[:c.shown] {
				shown = append(shown, int32(id))
				node[id] = len(shown)
			}
			dense := newEdgeSums(shown, node, c.trackInline)
			sparse := &edgeSums{shown: shown, node: node, trackInline: c.trackInline,
				sparse: map[uint64]float64{}, sparseInl: map[uint64]bool{}}
			if !dense.dense {
				t.Fatal("few shown nodes, not kept in an array")
			}
			for range 2000 {
				src, dst := shown[rng.Intn(len(shown))], shown[rng.Intn(len(shown))]
				v, inl := rng.NormFloat64()*1e6, rng.Intn(8) != 0
				dense.add(src, dst, v, inl)
				sparse.add(src, dst, v, inl)
			}
			byEnds := func(a, b dotEdge) int {
				if a.src != b.src {
					return int(a.src - b.src)
				}
				return int(a.dst - b.dst)
			}
			got, want := dense.edges(), sparse.edges()
			slices.SortFunc(got, byEnds)
			slices.SortFunc(want, byEnds)
			if !slices.Equal(got, want) {
				t.Fatalf("array edges %v\nmap edges %v", got, want)
			}
			inlined := 0
			for _, e := range got {
				if dense.inlined(e) != sparse.inlined(e) {
					t.Errorf("edge %v: inlined %v in the array, %v in the map", e, dense.inlined(e), sparse.inlined(e))
				}
				if dense.inlined(e) {
					inlined++
				}
			}
			if c.trackInline && inlined == 0 {
				t.Error("no edge inlined at every call: the test does not test that")
			}
		})
	}
}

// TestDOTNaming: the graph of a dump whose stacks name nodes every way
// the model does (dotCaseDump), drawn from a heapprof.Dump and from
// Parse's profile, by bytes and by objects, under jeprof's and Go's
// naming, with and without a base: both the same, and two of them as
// golden graphs (by objects: the MB values of so small a dump all print
// 0.0).
func TestDOTNaming(t *testing.T) {
	base, err := Parse([]byte(dotCaseBase))
	if err != nil {
		t.Fatal(err)
	}
	symbolizeCase(base)
	for _, c := range []struct {
		name  string
		names Names
		base  bool
		typ   string
		want  string // "": only the Dump's graph against the profile's
	}{
		{"jeprof", NamesJeprof, false, "", ""},
		{"jeprof objects", NamesJeprof, false, "inuse_objects", dotNamingJeprof},
		{"jeprof base", NamesJeprof, true, "", ""},
		{"jeprof base objects", NamesJeprof, true, "inuse_objects", ""},
		{"go", NamesGo, false, "", ""},
		{"go objects", NamesGo, false, "inuse_objects", ""},
		{"go base", NamesGo, true, "", ""},
		{"go base objects", NamesGo, true, "inuse_objects", dotNamingGoBase},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Program = "case"
			opt.NodeFraction, opt.EdgeFraction = 0, 0
			opt.Names, opt.SampleType = c.names, c.typ
			if c.base {
				opt.Base = base
			}
			p, err := Parse([]byte(dotCaseDump))
			if err != nil {
				t.Fatal(err)
			}
			symbolizeCase(p)
			d, err := ParseDump(context.Background(), strings.NewReader(dotCaseDump), 0)
			if err != nil {
				t.Fatal(err)
			}
			symbolizeCase(d.Profile())
			var want, got bytes.Buffer
			if err := WriteDOT(&want, p, opt); err != nil {
				t.Fatal(err)
			}
			if err := d.WriteDOT(context.Background(), &got, opt); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("the Dump's graph differs from the profile's:\n%s", lineDiff(got.String(), want.String()))
			}
			if c.want != "" && want.String() != c.want {
				t.Errorf("graph differs from before:\n%s", lineDiff(want.String(), c.want))
			}
		})
	}
}

// dotNamingJeprof is dotCaseDump's graph by objects under jeprof's naming:
// the allocator cut, "(inline)" nodes and dashed edges to them, Run#1 and
// Run#2 for the Callback::Run each caller reaches, the nameless function
// by its address, "dup@7000" and "dup@7100" for the nm-tagged names that
// share a short name, no node for the address above 0x7fffffffffffffff.
const dotNamingJeprof = `digraph "case; 10 objects" {
node [width=0.375,height=0.25];
Legend [shape=box,fontsize=24,shape=plaintext,label="case\lTotal objects: 10\lFocusing on: 10\lDropped nodes with <= 0 abs(objects)\lDropped edges with <= 0 objects\l"];
N1 [label="main\n0 (0.0%)\rof 10 (100.0%)\r",shape=box,fontsize=8.0];
N2 [label="Foo\nbar\n0 (0.0%)\rof 7 (70.0%)\r",shape=box,fontsize=8.0];
N3 [label="Foo\ninl\n(inline)\n6 (60.0%)\rof 7 (70.0%)\r",shape=box,fontsize=46.7];
N4 [label="caller1\n0 (0.0%)\rof 6 (60.0%)\r",shape=box,fontsize=8.0];
N5 [label="Run#1\n0 (0.0%)\rof 4 (40.0%)\r",shape=box,fontsize=8.0];
N6 [label="Run#2\n2 (20.0%)\r",shape=box,fontsize=30.4];
N7 [label="caller2\n0 (0.0%)\rof 2 (20.0%)\r",shape=box,fontsize=8.0];
N8 [label="000000000000600f\n1 (10.0%)\r",shape=box,fontsize=23.8];
N9 [label="dup@7000\n0 (0.0%)\rof 1 (10.0%)\r",shape=box,fontsize=8.0];
N10 [label="dup@7100\n1 (10.0%)\r",shape=box,fontsize=23.8];
N2 -> N3 [label=9, weight=4, style="setlinewidth(2.000000),dashed"];
N1 -> N4 [label=4, weight=2, style="setlinewidth(2.000000)"];
N4 -> N5 [label=4, weight=2, style="setlinewidth(2.000000)"];
N5 -> N2 [label=4, weight=2, style="setlinewidth(2.000000)"];
N1 -> N2 [label=3, weight=2, style="setlinewidth(1.800000)"];
N1 -> N7 [label=2, weight=1, style="setlinewidth(1.200000)"];
N3 -> N4 [label=2, weight=1, style="setlinewidth(1.200000)"];
N4 -> N2 [label=2, weight=1, style="setlinewidth(1.200000)"];
N7 -> N6 [label=2, weight=1, style="setlinewidth(1.200000)"];
N1 -> N9 [label=1, weight=1, style="setlinewidth(0.600000)"];
N3 -> N10 [label=1, weight=1, style="setlinewidth(0.600000)"];
N9 -> N8 [label=1, weight=1, style="setlinewidth(0.600000)"];
}
`

// dotNamingGoBase is dotCaseDump's graph by objects less dotCaseBase's
// under Go's naming: full names, Callback::Run one node, inlined frames
// their function's node.
const dotNamingGoBase = `digraph "case; 8 objects" {
node [width=0.375,height=0.25];
Legend [shape=box,fontsize=24,shape=plaintext,label="case\lTotal objects: 8\lFocusing on: 8\lDropped nodes with <= 0 abs(objects)\lDropped edges with <= 0 objects\l"];
N1 [label="main\n0 (0.0%)\rof 8 (100.0%)\r",shape=box,fontsize=8.0];
N2 [label="Foo\nbar(std\nvector<int,\nstd\nallocator<int>\n>&)\n0 (0.0%)\rof 6 (75.0%)\r",shape=box,fontsize=8.0];
N3 [label="Foo\ninl(int)\nconst\n5 (62.5%)\rof 6 (75.0%)\r",shape=box,fontsize=47.5];
N4 [label="base\ninternal\nCallback<void\n()>\nRun()\nconst\n2 (25.0%)\rof 5 (62.5%)\r",shape=box,fontsize=33.0];
N5 [label="caller1()\n0 (0.0%)\rof 5 (62.5%)\r",shape=box,fontsize=8.0];
N6 [label="caller2()\n0 (0.0%)\rof 2 (25.0%)\r",shape=box,fontsize=8.0];
N7 [label="dup<0000000000007100>\n1 (12.5%)\r",shape=box,fontsize=25.7];
N2 -> N3 [label=8, weight=4, style="setlinewidth(2.000000),dashed"];
N1 -> N2 [label=3, weight=2, style="setlinewidth(2.000000)"];
N1 -> N5 [label=3, weight=2, style="setlinewidth(2.000000)"];
N4 -> N2 [label=3, weight=2, style="setlinewidth(2.000000)"];
N5 -> N4 [label=3, weight=2, style="setlinewidth(2.000000)"];
N1 -> N6 [label=2, weight=1, style="setlinewidth(1.500000)"];
N3 -> N5 [label=2, weight=1, style="setlinewidth(1.500000)"];
N5 -> N2 [label=2, weight=1, style="setlinewidth(1.500000)"];
N6 -> N4 [label=2, weight=1, style="setlinewidth(1.500000)"];
N3 -> N7 [label=1, weight=1, style="setlinewidth(0.750000)"];
}
`

// dotCaseDump is a heap_v2 dump whose stacks (leaf first) exercise the
// graph's naming: an allocator frame to cut, inlined frames, a
// Callback::Run reached from two callers, a function without a name, two
// nm-tagged functions sharing a short name, recursion and an address
// above 0x7fffffffffffffff (dropped, as jeprof does).
const dotCaseDump = `heap_v2/1
  t*: 10: 10240 [0: 0]
@ 0x1010 0x2010 0x3010 0x4010 0x9010
  t*: 4: 4096 [0: 0]
@ 0x1010 0x3020 0x5010 0x9010
  t*: 2: 3072 [0: 0]
@ 0x1010 0x6010 0x7010 0x9010
  t*: 1: 2048 [0: 0]
@ 0x1010 0x7110 0x2020 0x9010 0xffffffff00000010
  t*: 1: 1024 [0: 0]
@ 0x1010 0x2010 0x4020 0x2030 0x9010
  t*: 2: 512 [0: 0]

MAPPED_LIBRARIES:
00001000-0000a000 r-xp 00000000 fe:00 1   /bin/case
`

// dotCaseBase is a base for dotCaseDump: some of its stacks, smaller.
const dotCaseBase = `heap_v2/1
  t*: 2: 1024 [0: 0]
@ 0x1010 0x2010 0x3010 0x4010 0x9010
  t*: 1: 1024 [0: 0]
@ 0x1010 0x6010 0x7010 0x9010
  t*: 1: 1024 [0: 0]
`

// symbolizeCase symbolizes a profile of dotCaseDump's addresses: the
// functions by address & ^0xff, each location's lines innermost first.
func symbolizeCase(p *profile.Profile) {
	funcs := map[string]*profile.Function{}
	fn := func(name string) *profile.Function {
		if f, ok := funcs[name]; ok {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "case.cc"}
		if name == "" {
			f.Filename = ""
		}
		funcs[name] = f
		p.Function = append(p.Function, f)
		return f
	}
	lines := map[uint64][]string{
		0x1000: {"malloc"},
		0x2000: {"Foo::inl(int) const", "Foo::bar(std::vector<int, std::allocator<int> >&)"},
		0x3000: {"base::internal::Callback<void ()>::Run() const"},
		0x4000: {"caller1()"},
		0x5000: {"caller2()"},
		0x6000: {""},
		0x7000: {"dup<0000000000007000>"},
		0x7100: {"dup<0000000000007100>"},
		0x9000: {"main"},
	}
	for _, loc := range p.Location {
		for _, name := range lines[loc.Address&^0xff] {
			loc.Line = append(loc.Line, profile.Line{Function: fn(name), Line: int64(loc.Address & 0xff)})
		}
	}
}
