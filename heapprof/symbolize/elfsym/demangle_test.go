package elfsym

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

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

// doublingName is f(W<int, int>, ...) with levels more parameters, each
// a W of the previous one twice (named by substitution): 400 bytes at 40
// levels print 2^40.
func doublingName(levels int) string {
	name, subs := "_Z1f1WIiiE", 2 // candidates: W, W<int, int>
	for range levels {
		s := "S" + strings.ToUpper(strconv.FormatInt(int64(subs-2), 36)) + "_"
		name += "1WI" + s + s + "E"
		subs += 2
	}
	return name
}

// TestDemangleSimpleBounded: demangleSimple declines doubling
// substitutions once its text passes maxSimpleText, rather than printing
// them to gigabytes, and still takes a small one.
func TestDemangleSimpleBounded(t *testing.T) {
	if _, ok := demangleSimple(doublingName(40)); ok {
		t.Fatal("demangleSimple took 40 doubling levels")
	}
	small := doublingName(1)
	got, ok := demangleSimple(small)
	if want := "f(W<int, int>, W<W<int, int>, W<int, int> >)"; !ok || got != want {
		t.Fatalf("demangleSimple(%s) = %q, %v; want %q", small, got, ok, want)
	}
}

// TestDemangleExponential: a 400-byte name whose substitutions double the
// printed text at each of 40 levels (2^40 bytes; c++filt does not finish
// it) is left mangled, promptly, on both paths; one of 8 levels (8.6 KB
// printed) is still demangled, as c++filt prints it.
func TestDemangleExponential(t *testing.T) {
	done := make(chan string, 1)
	huge := doublingName(40)
	go func() { done <- demangleBFD(huge) }()
	select {
	case got := <-done:
		if got != huge {
			t.Errorf("demangleBFD of 40 doubling levels = %.80q..., want the name left mangled", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("demangleBFD of 40 doubling levels did not return in 10 s")
	}
	eight := doublingName(8)
	got := demangleBFD(eight)
	if want := cxxfilt(t, []string{eight})[0]; got != want || len(got) < 8000 {
		t.Errorf("8 levels: %d bytes, c++filt %d; equal: %v", len(got), len(want), got == want)
	}
}
