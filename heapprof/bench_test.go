package heapprof

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"testing"

	"github.com/google/pprof/profile"
)

// synthProfile builds a symbolized heap_v2-like profile of the size the
// issue's benchmark describes (39,538 stacks over 8,499 PCs): stacks of
// depth 10-40 drawn from a call tree, a quarter of PCs with inlined
// frames, C++-style names. Rendering cost does not depend on where the
// names came from, so synthetic names measure it faithfully.
func synthProfile(stacks, pcs int) *profile.Profile {
	rng := rand.New(rand.NewSource(1))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"},
			{Type: LabelSampledObjects, Unit: "count"}, {Type: LabelSampledBytes, Unit: "bytes"}},
		DefaultSampleType: "inuse_space",
		Period:            524288,
	}
	funcs := make([]*profile.Function, pcs/3)
	for i := range funcs {
		name := fmt.Sprintf("ns%d::Class%d<int>::method%d(std::vector<int, std::allocator<int> > const&)", i%17, i%211, i)
		funcs[i] = &profile.Function{ID: uint64(i + 1), Name: name, SystemName: name}
	}
	p.Function = funcs
	for i := 0; i < pcs; i++ {
		loc := &profile.Location{ID: uint64(i + 1), Address: 0x400000 + uint64(i)*16}
		loc.Line = append(loc.Line, profile.Line{Function: funcs[rng.Intn(len(funcs))], Line: 1})
		if i%4 == 0 {
			loc.Line = append([]profile.Line{{Function: funcs[rng.Intn(len(funcs))], Line: 2}}, loc.Line...)
		}
		p.Location = append(p.Location, loc)
	}
	for i := 0; i < stacks; i++ {
		depth := 10 + rng.Intn(31)
		s := &profile.Sample{}
		// Roots are shared (a few entry points), leaves vary.
		for d := 0; d < depth; d++ {
			var idx int
			if d > depth-5 {
				idx = rng.Intn(20)
			} else {
				idx = rng.Intn(pcs)
			}
			s.Location = append(s.Location, p.Location[idx])
		}
		n, b := int64(1+rng.Intn(50)), int64(64+rng.Intn(1<<20))
		s.Value = []int64{n, b, n, b}
		p.Sample = append(p.Sample, s)
	}
	return p
}

func BenchmarkWriteDOT(b *testing.B) {
	p := synthProfile(39538, 8499)
	opt := DefaultOptions()
	opt.Program = "bench"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := WriteDOT(io.Discard, p, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// synthHeapV2 is synthProfile as heap_v2 text.
func synthHeapV2(p *profile.Profile) []byte {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "heap_v2/%d\n  t*: 1: 1 [0: 0]\n", p.Period)
	for _, s := range p.Sample {
		buf.WriteString("@")
		for _, l := range s.Location {
			fmt.Fprintf(&buf, " 0x%x", l.Address)
		}
		fmt.Fprintf(&buf, "\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n", s.Value[2], s.Value[3], s.Value[2], s.Value[3])
	}
	buf.WriteString("\nMAPPED_LIBRARIES:\n00400000-00600000 r-xp 00000000 fe:00 1   /bin/bench\n")
	return buf.Bytes()
}

func BenchmarkParseHeapV2(b *testing.B) {
	data := synthHeapV2(synthProfile(39538, 8499))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseDump is BenchmarkParseHeapV2 for heapproxy dot's
// ParseDump.
func BenchmarkParseDump(b *testing.B) {
	data := synthHeapV2(synthProfile(39538, 8499))
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := ParseDump(context.Background(), bytes.NewReader(data), 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDumpWriteDOT is BenchmarkWriteDOT for heapproxy dot's Dump,
// symbolized as synthProfile is.
func BenchmarkDumpWriteDOT(b *testing.B) {
	p := synthProfile(39538, 8499)
	d, err := ParseDump(context.Background(), bytes.NewReader(synthHeapV2(p)), 0)
	if err != nil {
		b.Fatal(err)
	}
	// The symbolizer's part: synthProfile's lines on the same addresses.
	byAddr := map[uint64]*profile.Location{}
	for _, loc := range p.Location {
		byAddr[loc.Address] = loc
	}
	for i, loc := range d.Profile().Location {
		src := byAddr[loc.Address]
		if i > 0 && src == nil {
			src = byAddr[loc.Address+1] // a caller's address, minus one
		}
		if src != nil {
			loc.Line = src.Line
		}
	}
	d.Profile().Function = p.Function
	opt := DefaultOptions()
	opt.Program = "bench"
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := d.WriteDOT(context.Background(), io.Discard, opt); err != nil {
			b.Fatal(err)
		}
	}
}
