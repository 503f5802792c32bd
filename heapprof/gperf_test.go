package heapprof

import (
	"math"
	"testing"
)

// TestParseGperfHeap checks what jeprof's ReadHeapProfile does with a
// gperftools heap profile: the leaf address as written and the callers
// minus one (FixCallerAddresses), all four sample types even without
// frees, and its sampling adjustment per header type.
func TestParseGperfHeap(t *testing.T) {
	const maps = "\nMAPPED_LIBRARIES:\n" +
		"55d0a0000000-55d0a0001000 r-xp 00001000 fe:00 42 /opt/prog\n"
	for _, c := range []struct {
		name, header string
		// want is alloc_objects, alloc_space, inuse_objects, inuse_space
		// of the single stack "2: 4096 [3: 8192]".
		want   [4]float64
		period int64
	}{
		{name: "heapprofile", header: "heap profile:    2:  4096 [    3:  8192] @ heapprofile",
			want: [4]float64{3, 8192, 2, 4096}, period: 1},
		{name: "growth", header: "heap profile:    2:  4096 [    3:  8192] @ growth",
			want: [4]float64{3, 8192, 2, 4096}, period: 1},
		{name: "v2", header: "heap profile:    2:  4096 [    3:  8192] @ heap_v2/524288",
			want: [4]float64{
				3 / (1 - math.Exp(-8192.0/3/524288)), 8192 / (1 - math.Exp(-8192.0/3/524288)),
				2 / (1 - math.Exp(-4096.0/2/524288)), 4096 / (1 - math.Exp(-4096.0/2/524288))},
			period: 524288},
		{name: "v1", header: "heap profile:    2:  4096 [    3:  8192] @ heap/524288",
			// ratio = avg size / (period/2); counts divided by it when < 1
			want:   [4]float64{3 / (8192.0 / 3 / 262144), 8192 / (8192.0 / 3 / 262144), 2 / (2048.0 / 262144), 4096 / (2048.0 / 262144)},
			period: 262144},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := c.header + "\n   2:  4096 [    3:  8192] @ 0x55d0a0000100 0x55d0a0000200 0x55d0a0000300\n" + maps
			p, err := Parse([]byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Sample) != 1 || len(p.SampleType) < 4 {
				t.Fatalf("%d samples, %d sample types", len(p.Sample), len(p.SampleType))
			}
			s := p.Sample[0]
			for i, want := range []uint64{0x55d0a0000100, 0x55d0a00001ff, 0x55d0a00002ff} {
				if got := s.Location[i].Address; got != want {
					t.Errorf("location %d: address %#x, want %#x", i, got, want)
				}
				if m := s.Location[i].Mapping; m == nil || m.File != "/opt/prog" {
					t.Errorf("location %d: mapping %v", i, m)
				}
			}
			for i, typ := range []string{"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"} {
				if p.SampleType[i].Type != typ {
					t.Errorf("sample type %d is %q, want %q", i, p.SampleType[i].Type, typ)
				}
				if got, want := s.Value[i], int64(math.Round(c.want[i])); got != want {
					t.Errorf("%s = %d, want %d", typ, got, want)
				}
			}
			if p.Period != c.period {
				t.Errorf("period %d, want %d", p.Period, c.period)
			}
			// jeprof renders the unrounded in-use estimates.
			u := NewUnrounded(p)
			if objects, bytes, ok := u.Values(s); ok != (c.name == "v2") ||
				ok && (math.Abs(objects-c.want[2]) > 1e-9 || math.Abs(bytes-c.want[3]) > 1e-6) {
				t.Errorf("unrounded in-use: %v %v %v, want %v %v", objects, bytes, ok, c.want[2], c.want[3])
			}
		})
	}
}
