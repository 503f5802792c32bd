package heapprof

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// genHeapV2 writes a valid jemalloc heap_v2 dump of stacks stacks, each
// frames deep. The outermost genRoots frames of every stack come from a
// small set of entry points (so a graph has nodes above the node limit);
// every other PC is distinct, the worst case for memory: nothing is
// shared. Addresses lie inside one executable mapping.
func genHeapV2(stacks, frames int, seed int64) []byte {
	rng := rand.New(rand.NewSource(seed))
	var b bytes.Buffer
	b.WriteString("heap_v2/524288\n  t*: 1: 1 [0: 0]\n  t0: 1: 1 [0: 0]\n")
	pc := uint64(0x55d0c0100000)
	for i := 0; i < stacks; i++ {
		b.WriteByte('@')
		for j := 0; j < frames; j++ {
			if j >= frames-genRoots {
				fmt.Fprintf(&b, " 0x%x", 0x55d0c0000000+uint64(j-frames+genRoots)*0x100+uint64(rng.Intn(3))*0x1000)
				continue
			}
			pc += 16 + uint64(rng.Intn(64))
			fmt.Fprintf(&b, " 0x%x", pc)
		}
		n := 1 + rng.Intn(50)
		s := n * (64 + rng.Intn(1<<16))
		fmt.Fprintf(&b, "\n  t*: %d: %d [0: 0]\n  t0: %d: %d [0: 0]\n", n, s, n, s)
	}
	fmt.Fprintf(&b, "MAPPED_LIBRARIES:\n55d0c0000000-%x r-xp 00000000 fe:00 1   /opt/big/bin/server\n", pc+4096)
	return b.Bytes()
}

// genRoots is how many outer frames of genHeapV2's stacks are shared.
const genRoots = 6

// longNameSymbolizer gives every location its own function with a C++
// name of about nameLen bytes, as a hostile or very template-heavy node's
// symbolizer does. Every fourth location gets an inlined frame too.
type longNameSymbolizer struct{ nameLen int }

func (s longNameSymbolizer) Symbolize(ctx context.Context, p *profile.Profile) error {
	pad := strings.Repeat("x", max(0, s.nameLen-60))
	for i, loc := range p.Location {
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		name := fmt.Sprintf("ns%d::Widget%d<std::pair<int, long> >::method_%s_%08d(int, char const*) const", i%13, i%97, pad, i)
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name, Filename: "/src/widget.cc"}
		p.Function = append(p.Function, f)
		loc.Line = []profile.Line{{Function: f, Line: int64(i)}}
		if i%4 == 0 {
			g := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name + "_inl", SystemName: name + "_inl", Filename: "/src/widget.h"}
			p.Function = append(p.Function, g)
			loc.Line = append([]profile.Line{{Function: g, Line: 7}}, loc.Line...)
		}
	}
	return nil
}

// heapPeak samples the heap in use while f runs and returns the largest
// value seen above the heap in use when it started (after a GC).
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapAlloc)
	return peak - base
}

// countingWriter counts what is written and keeps nothing, so measuring
// a renderer's heap does not count its output.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// TestDumpMemoryBound generates a 2,500 x 128-frame heap_v2 dump (every
// PC but the outer few distinct, about 4.9 MB; the multiples are the same
// at 5,000 x 128) and a symbolizer giving
// every PC its own 250-byte name, then measures the peak heap of each
// stage this package owns over the heap before it. The bounds are
// multiples of the dump's size (parse) and of the dump plus the symbol
// names the symbolizer returned (render), measured on Go 1.26 with
// GOGC=100 and rounded up; a regression past them fails.
func TestDumpMemoryBound(t *testing.T) {
	const parseMultiple = 14.0 // measured 11.4-11.7
	data := genHeapV2(2500, 128, 1)
	ctx := context.Background()
	var p *profile.Profile
	var err error
	peak := heapPeak(func() { p, err = ParseLimit(ctx, data, int64(len(data))) })
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("dump %d bytes, %d samples, %d locations: parse peak %.1f MB (%.1fx)",
		len(data), len(p.Sample), len(p.Location), float64(peak)/1e6, float64(peak)/float64(len(data)))
	if limit := parseMultiple * float64(len(data)); float64(peak) > limit {
		t.Errorf("parse peak heap %d bytes, over %.0fx the dump (%.0f)", peak, parseMultiple, limit)
	}
	if err := (longNameSymbolizer{250}).Symbolize(ctx, p); err != nil {
		t.Fatal(err)
	}
	names := 0
	for _, f := range p.Function {
		// Name and SystemName share their bytes here; file names are one
		// constant.
		names += len(f.Name)
		if f.SystemName != f.Name {
			names += len(f.SystemName)
		}
	}
	input := float64(len(data) + names)
	opt := DefaultOptions()
	opt.Program = "/opt/big/bin/server"
	for _, r := range []struct {
		name     string
		multiple float64 // of the dump and names; measured in the comment
		f        func(w io.Writer) error
	}{
		{"dot", 5.5, func(w io.Writer) error { return WriteDOTContext(ctx, w, p, opt) }},        // 3.9-4.0
		{"text", 6, func(w io.Writer) error { return WriteTextContext(ctx, w, p, opt) }},        // 4.3-4.5
		{"folded", 6, func(w io.Writer) error { return WriteFoldedContext(ctx, w, p, opt) }},    // 4.3-4.4
		{"flame", 9, func(w io.Writer) error { return WriteFlameGraphContext(ctx, w, p, opt) }}, // 5.3-6.4
		{"proto", 8, func(w io.Writer) error { return WriteProtoContext(ctx, w, p) }},           // 3.8-7.3 (pprof's encoder; varies with GC timing)
	} {
		t.Run(r.name, func(t *testing.T) {
			var out countingWriter
			start := time.Now()
			peak := heapPeak(func() { err = r.f(&out) })
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: peak %.1f MB = %.1fx the dump and its %d bytes of names; %d bytes out in %v",
				r.name, float64(peak)/1e6, float64(peak)/input, names, out.n, time.Since(start).Round(time.Millisecond))
			if limit := r.multiple * input; float64(peak) > limit {
				t.Errorf("%s peak heap %d bytes, over %.1fx the input (%.0f)", r.name, peak, r.multiple, limit)
			}
		})
	}
}

// TestRenderContext: every renderer stops with its context's error.
func TestRenderContext(t *testing.T) {
	p, err := Parse(genHeapV2(3000, 32, 2))
	if err != nil {
		t.Fatal(err)
	}
	if err := (longNameSymbolizer{40}).Symbolize(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	opt := DefaultOptions()
	for _, c := range []struct {
		name string
		f    func() error
	}{
		{"dot", func() error { return WriteDOTContext(ctx, io.Discard, p, opt) }},
		{"text", func() error { return WriteTextContext(ctx, io.Discard, p, opt) }},
		{"folded", func() error { return WriteFoldedContext(ctx, io.Discard, p, opt) }},
		{"flame", func() error { return WriteFlameGraphContext(ctx, io.Discard, p, opt) }},
		{"proto", func() error { return WriteProtoContext(ctx, io.Discard, p) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.f(); !errors.Is(err, context.Canceled) {
				t.Errorf("%s with a canceled context = %v", c.name, err)
			}
		})
	}
}
