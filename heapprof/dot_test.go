package heapprof

import (
	"math/rand"
	"slices"
	"testing"
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
