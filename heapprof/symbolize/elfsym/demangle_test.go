package elfsym

import "testing"

// BenchmarkDemangle times the names demangleSimple takes, through it and
// through the demangle package (demangleTree), as demangleCxx did before
// the fast path.
func BenchmarkDemangle(b *testing.B) {
	names := []string{
		"_ZN3ns14f311Ei", "_ZN3ns13BoxIlLi505EE4fillEi", "_ZNK3ns13BoxIiLin3EE3sumEv",
		"_ZN3ns15FlagsILb1ELj7ELl9ELm11EE5valueEi", "_ZN3ns15inner7CounterC2Ei",
		"_ZN3ns14stepILi1EEEPvi", "_ZN3ns14ptrsEPKcPPcRiRKiOiPvPKvPKPi", "_Z9global_fnd",
	}
	for _, n := range names {
		if _, ok := demangleSimple(n); !ok {
			b.Fatalf("demangleSimple declines %s", n)
		}
	}
	for _, c := range []struct {
		name string
		f    func(string)
	}{
		{"simple", func(n string) { demangleSimple(n) }},
		{"tree", func(n string) { demangleTree(n) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, n := range names {
					c.f(n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(names)), "ns/name")
		})
	}
}
