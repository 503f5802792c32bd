package elfsym

import (
	"cmp"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortPacked checks the integer sort of symbol tables against the
// comparison sort it replaces: same order, file order among equal keys,
// and no change when key and index do not fit in 64 bits together.
func TestSortPacked(t *testing.T) {
	type rec struct {
		value uint64
		sym   int32
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		n      int
		values func() uint64
		packed bool
	}{
		{"empty", 0, func() uint64 { return 0 }, true},
		{"one", 1, func() uint64 { return 42 }, true},
		{"distinct", 1000, func() uint64 { return rng.Uint64N(1 << 28) }, true},
		{"many equal (aliases)", 5000, func() uint64 { return 0x1000 + 16*rng.Uint64N(50) }, true},
		{"all equal", 300, func() uint64 { return 7 }, true},
		{"wide values", 100, func() uint64 { return rng.Uint64() | 1<<63 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := make([]rec, tt.n)
			var maxValue uint64
			for i := range in {
				in[i] = rec{value: tt.values(), sym: int32(i)}
				maxValue = max(maxValue, in[i].value)
			}
			want := slices.Clone(in)
			slices.SortFunc(want, func(a, b rec) int {
				if c := cmp.Compare(a.value, b.value); c != 0 {
					return c
				}
				return cmp.Compare(a.sym, b.sym)
			})
			got := slices.Clone(in)
			packed := sortPacked(got, bits.Len64(maxValue), func(r *rec) uint64 { return r.value })
			if packed != tt.packed {
				t.Fatalf("sortPacked reported %v, want %v", packed, tt.packed)
			}
			if !packed {
				want = in // untouched
			}
			if !slices.Equal(got, want) {
				t.Errorf("order differs from SortFunc's")
			}
		})
	}
}
