package backends

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// selfTestKept holds what allocSelfTest allocates until the dump is taken.
var selfTestKept [][]byte

//go:noinline
func allocSelfTest(blocks, size int) {
	for range blocks {
		selfTestKept = append(selfTestKept, make([]byte, size))
	}
}

// inuseOf sums the in-use bytes of the samples allocated in fn.
func inuseOf(t *testing.T, p *profile.Profile, fn string) int64 {
	t.Helper()
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "inuse_space" {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("no inuse_space in %v", p.SampleType)
	}
	var sum int64
	for _, s := range p.Sample {
		if len(s.Location) == 0 || len(s.Location[0].Line) == 0 {
			continue
		}
		if l := s.Location[0].Line; strings.HasSuffix(l[len(l)-1].Function.Name, fn) {
			sum += s.Value[idx]
		}
	}
	return sum
}

// TestSelfDumpScalesByTheSamplingRate allocates a known amount with
// profiling on, optionally turns it off (disable_prof), dumps the process's
// own heap and checks that the in-use bytes of the allocating function
// come out as what was allocated, not the raw samples runtime/pprof writes
// with MemProfileRate 0 (a quarter of it at 64 KiB, 3% at Go's default).
func TestSelfDumpScalesByTheSamplingRate(t *testing.T) {
	saved := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = saved })
	const blocks, size = 2048, 16 << 10 // 32 MiB
	for _, c := range []struct {
		name    string
		rate    int
		disable bool
		lo, hi  float64 // accepted in-use bytes, as a fraction of the allocation
	}{
		{"64KiB, disabled before dump", 64 << 10, true, 0.8, 1.2},
		{"64KiB, still enabled", 64 << 10, false, 0.8, 1.2},
		{"every allocation, disabled before dump", 1, true, 1, 1.01},
		{"Go's default, disabled before dump", DefaultSelfMemProfileRate, true, 0.6, 1.4},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			d := newSelfDriver(c.rate)
			node := SelfNode(1)
			if err := d.Enable(ctx, node); err != nil {
				t.Fatal(err)
			}
			allocSelfTest(blocks, size)
			if c.disable {
				if err := d.Disable(ctx, node); err != nil {
					t.Fatal(err)
				}
				if on, _ := d.Status(ctx, node); on {
					t.Fatal("Status says on after Disable")
				}
			}
			dump, err := d.Dump(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			selfTestKept = nil
			runtime.MemProfileRate = 0 // what allocSelfTest left in use is freed; sample nothing more
			runtime.GC()
			p, err := profile.ParseData(dump.Data)
			if err != nil {
				t.Fatal(err)
			}
			if p.Period != int64(c.rate) {
				t.Errorf("profile period %d, want the sampling rate %d", p.Period, c.rate)
			}
			got := inuseOf(t, p, ".allocSelfTest")
			want := float64(blocks * size)
			if f := float64(got) / want; f < c.lo || f > c.hi {
				t.Errorf("in-use bytes of allocSelfTest: %d, %.2f of the %d allocated (want %.2f..%.2f)",
					got, f, blocks*size, c.lo, c.hi)
			}
		})
	}
}
