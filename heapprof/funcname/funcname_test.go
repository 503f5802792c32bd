package funcname

import (
	"math/rand/v2"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// jeprofShortName is jeprof's ShortFunctionName as written there: three
// regular expressions, the first two applied until nothing changes.
func jeprofShortName(s string) string {
	args := regexp.MustCompile(`\([^()]*\)(\s*const)?`)
	templ := regexp.MustCompile(`<[^<>]*>`)
	lead := regexp.MustCompile(`^.*\s+(\w+::)`)
	for t := args.ReplaceAllString(s, ""); t != s; t = args.ReplaceAllString(s, "") {
		s = t
	}
	for t := templ.ReplaceAllString(s, ""); t != s; t = templ.ReplaceAllString(s, "") {
		s = t
	}
	return lead.ReplaceAllString(s, "$1")
}

// TestShort compares Short with the regular expressions on the demangled
// names of libstdc++, libc and libjemalloc, and on random strings over the
// characters that matter.
func TestShort(t *testing.T) {
	var names []string
	for _, img := range []string{"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"} {
		out, err := exec.Command("nm", "-D", "-C", "--defined-only", img).Output()
		if err != nil {
			t.Fatalf("nm %s: %v", img, err)
		}
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.SplitN(line, " ", 3); len(f) == 3 {
				names = append(names, f[2])
			}
		}
	}
	if len(names) < 1000 {
		t.Fatalf("only %d names from nm", len(names))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "()<>  \t\nconst:ab_1"
	for range 20000 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			if rng.IntN(6) == 0 {
				b[i] = "const"[rng.IntN(5)]
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		names = append(names, string(b))
	}
	names = append(names, "std::map<int, std::string>::operator[](int const&) const",
		"void ns::f<(anonymous namespace)::X>(int (*)(char)) const", "operator<<(std::ostream&, A const&)",
		"a) const", "((a)) const", "(a)(b)const", "int main", "unsigned long ns::x::y", "x\n y::z", "x y\n z::w")
	bad := 0
	for _, n := range names {
		if got, want := Short(n), jeprofShortName(n); got != want {
			bad++
			if bad <= 10 {
				t.Errorf("Short(%q) = %q, want %q", n, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d names differ", bad, len(names))
	}
}
