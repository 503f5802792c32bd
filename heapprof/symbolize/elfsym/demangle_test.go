package elfsym

import (
	"fmt"
	"os"
	"path/filepath"
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

// demangleGuarded is demangleBFD(name), failing the test if it takes
// more than 10 s (a doubling name used to print without end).
func demangleGuarded(t *testing.T, name string) string {
	t.Helper()
	done := make(chan string, 1)
	go func() { done <- demangleBFD(name) }()
	select {
	case got := <-done:
		return got
	case <-time.After(10 * time.Second):
		t.Fatalf("demangleBFD(%.40s...) did not return in 10 s", name)
		return ""
	}
}

// TestDemangleExponential: a 400-byte name whose substitutions double the
// printed text at each of 40 levels (2^40 bytes; c++filt does not finish
// it) is left mangled, promptly, on both paths; one of 8 levels (8.6 KB
// printed) is still demangled, as c++filt prints it.
func TestDemangleExponential(t *testing.T) {
	if huge := doublingName(40); demangleGuarded(t, huge) != huge {
		t.Error("40 doubling levels were demangled, want the name left mangled")
	}
	eight := doublingName(8)
	got := demangleBFD(eight)
	if want := cxxfilt(t, []string{eight})[0]; got != want || len(got) < 8000 {
		t.Errorf("8 levels: %d bytes, c++filt %d; equal: %v", len(got), len(want), got == want)
	}
}

// rustDoubling is a Rust v0 name, a::f::<T>, whose type argument is a
// tuple of the previous level's tuple twice, nested levels deep, the
// second copy a back-reference to the first: printed, the name of k
// levels is 7*2^k+4 bytes (13 levels: 57,348; 14: 114,692), mangled 5
// bytes more per level.
func rustDoubling(levels int) string {
	const path = "INvC1a1f" // a::f::<...>, from after "_R", where back-references count from
	var b strings.Builder
	b.WriteString("_R" + path + strings.Repeat("T", levels) + "l")
	for k := 1; k <= levels; k++ {
		// Level k-1 starts levels-k+1 bytes after the path.
		b.WriteString("B" + base62(len(path)+levels-k+1) + "E")
	}
	b.WriteString("E")
	return b.String()
}

// base62 is the v0 mangling's <base-62-number> for n: "_" for 0, else n-1
// in digits 0-9a-zA-Z, then "_".
func base62(n int) string {
	if n == 0 {
		return "_"
	}
	const digits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var s []byte
	for n--; ; n /= 62 {
		s = append([]byte{digits[n%62]}, s...)
		if n < 62 {
			break
		}
	}
	return string(s) + "_"
}

// TestDemangleRustExponential: the 64 KiB bound holds on the Rust path
// too, whose back-references double the printed text as C++
// substitutions do. A name that prints under the bound (13 levels, 57 KB)
// is demangled as nm --demangle (BFD) prints it, from an object that
// defines it; one over the bound (14 levels) and one of 40 levels (2^40
// bytes, 212 bytes mangled) are left mangled, the latter promptly.
func TestDemangleRustExponential(t *testing.T) {
	dir := t.TempDir()
	var asm strings.Builder
	for _, l := range []int{1, 13} {
		fmt.Fprintf(&asm, ".globl %[1]s\n%[1]s:\n", rustDoubling(l))
	}
	src, obj := filepath.Join(dir, "rust.s"), filepath.Join(dir, "rust.o")
	if err := os.WriteFile(src, []byte(asm.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "as", "-o", obj, src)
	names, want := nmDemangled(t, "_R", obj)
	if len(names) != 2 {
		t.Fatalf("nm lists %d Rust names in %s, want 2", len(names), obj)
	}
	for i, name := range names {
		if got := demangleBFD(name); got != want[i] {
			t.Errorf("demangleBFD(%.60s...) = %d bytes %.60q..., nm --demangle %d bytes %.60q...", name, len(got), got, len(want[i]), want[i])
		}
	}
	if n := len(demangleBFD(rustDoubling(13))); n != 57348 {
		t.Errorf("13 levels print %d bytes, want 57,348", n)
	}
	if over := rustDoubling(14); demangleBFD(over) != over {
		t.Error("14 levels (114,692 bytes) were demangled past the 64 KiB bound")
	}
	if huge := rustDoubling(40); demangleGuarded(t, huge) != huge {
		t.Error("40 doubling levels were demangled, want the name left mangled")
	}
}
