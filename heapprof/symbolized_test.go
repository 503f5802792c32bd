package heapprof

import (
	"testing"

	"github.com/google/pprof/profile"
)

func TestSymbolized(t *testing.T) {
	named := &profile.Mapping{ID: 1, HasFunctions: true}
	bare := &profile.Mapping{ID: 2}
	line := []profile.Line{{Function: &profile.Function{ID: 1, Name: "main"}}}
	for _, c := range []struct {
		name string
		locs []*profile.Location
		want bool
	}{
		{"go profile: every location named", []*profile.Location{{Line: line, Mapping: named}, {Line: line}}, true},
		{"named mapping, an address without a symbol", []*profile.Location{{Mapping: named}}, true},
		{"jemalloc dump", []*profile.Location{{Mapping: bare}}, false},
		// pprof's HasFunctions holds here: no location has a mapping.
		{"jemalloc dump, no mapping holds its addresses", []*profile.Location{{}, {}}, false},
		{"one bare location among named ones", []*profile.Location{{Line: line, Mapping: named}, {}}, false},
		{"no locations", nil, true},
	} {
		p := &profile.Profile{Location: c.locs}
		if got := Symbolized(p); got != c.want {
			t.Errorf("%s: Symbolized = %v, want %v", c.name, got, c.want)
		}
	}
}
