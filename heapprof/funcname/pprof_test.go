package funcname

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// goFuncNames returns the names of every function in a Go binary, read
// from its pclntab (Debian strips the symbol table, not the pclntab).
func goFuncNames(t *testing.T, bin string) []string {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("%s: %v (install the Debian package)", bin, err)
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		t.Fatalf("%s: no .gopclntab or .text", bin)
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	names := make([]string, 0, len(tab.Funcs))
	for _, fn := range tab.Funcs {
		names = append(names, fn.Name)
	}
	return names
}

// cxxNames returns the demangled names nm prints for a shared library.
func cxxNames(t *testing.T, img string) []string {
	t.Helper()
	out, err := exec.Command("nm", "-D", "-C", "--defined-only", img).Output()
	if err != nil {
		t.Fatalf("nm %s: %v", img, err)
	}
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.SplitN(line, " ", 3); len(f) == 3 {
			names = append(names, f[2])
		}
	}
	return names
}

// dotNodes returns the label and the tooltip's function name of each node
// of pprof's DOT output (the names tested have no double quotes).
func dotNodes(t *testing.T, dot string) (labels, names []string) {
	for _, line := range strings.Split(dot, "\n") {
		label, rest, ok := strings.Cut(line, `" id="node`)
		if !ok || !strings.HasPrefix(line, "N") {
			continue
		}
		_, label, _ = strings.Cut(label, `[label="`)
		_, tip, _ := strings.Cut(rest, ` tooltip="`)
		tip, _, _ = strings.Cut(tip, `" color=`)
		i := strings.LastIndex(tip, " (")
		if i < 0 {
			t.Fatalf("no value in tooltip: %s", line)
		}
		labels = append(labels, label)
		names = append(names, strings.NewReplacer(`\\`, `\`, `\"`, `"`, `\l`, "\n").Replace(tip[:i]))
	}
	return labels, names
}

// pprofDOTLabel is how `go tool pprof -dot` lays a short name out in a
// node label (internal/graph's multilinePrintableName).
func pprofDOTLabel(short string) string {
	s := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`).Replace(short)
	s = strings.ReplaceAll(s, "::", `\n`)
	s = strings.ReplaceAll(s, "[...]", "[…]")
	return strings.ReplaceAll(s, ".", `\n`) + `\n`
}

// TestPprofAgainstGoTool gives every function name of Debian's Prometheus
// and etcd binaries, libstdc++'s demangled names, hand-picked cases and
// random strings to the real `go tool pprof -dot` (one sample each) and
// checks that each node's label is Pprof's name laid out as pprof does.
func TestPprofAgainstGoTool(t *testing.T) {
	names := append(goFuncNames(t, "/usr/bin/prometheus"), goFuncNames(t, "/usr/bin/etcd")...)
	names = append(names, cxxNames(t, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6")...)
	names = append(names,
		"root", "syscall.Syscall", "net/http.(*conn).serve", "github.com/blahBlah/foo.Foo",
		"github.com/BlahBlah/foo.Foo[...]", "github.com/blah-blah/foo_bar.(*FooBar).Foo",
		"encoding/json.(*structEncoder).(encoding/json.encode)-fm",
		"github.com/foo/bar/v4.(*Foo).Bar", "github.com/foo/bar/v4/baz.Foo.Bar", "github.com/foo/bar/v123.(*Foo).Bar",
		"github.com/foobar/v0.(*Foo).Bar", "github.com/foobar/v1.(*Foo).Bar", "example.org/v2xyz.Foo",
		"github.com/foo/bar/v4/v4.(*Foo).Bar", "github.com/foo/bar/v4/foo/bar/v4.(*Foo).Bar", "a/v02.F", "a/v10/b.F",
		"java.util.concurrent.ThreadPoolExecutor$Worker.run", "java.bar.foo.FooBar.run(java.lang.Runnable)",
		"com.google.Foo.<init>", "com.google.Foo.<init>(int)", "Foo.bar$12", "main.T.m", "main.T.M",
		"(anonymous namespace)::Foo::bar", "a::B::c::d", "ns::_Foo::~_Foo", "ns::Foo::~", "ns::Foo::bar<int>::baz",
		"ns::Foo::bar<a>b>c", "ns::Foo::bar<", "_::X::y", "a/b/.c", "a//b.c", "/a/b.c", "a/b.", "a/b.c/d.e",
		"tsdb.(*Head).appender", "github.com/prometheus/prometheus/tsdb.(*Head).appender",
		"github.com/prometheus/prometheus/tsdb.(*headAppender).Append", "gopkg.in/yaml%2ev3.(*parser).node",
		"a/v2.F\nx", "a/b.c\nd", "a/b.\nd", "ns::Foo::bar<a\n>", "ns::Foo::bar<a>\n>", "x/\n.y", "a/b\n/c.d")
	rng := rand.New(rand.NewPCG(3, 4))
	const alphabet = "/./.v2v1v0910_aAzZ:::<>()~$-[] e"
	for range 20000 {
		b := make([]byte, 1+rng.IntN(20))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		names = append(names, string(b))
	}

	// One function, location and sample per distinct name.
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
	}
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] || strings.TrimSpace(n) == "" {
			continue
		}
		seen[n] = true
		id := uint64(len(p.Function) + 1)
		// No SystemName: pprof then takes Name as demangled and leaves it
		// to ShortenFunctionName alone.
		fn := &profile.Function{ID: id, Name: n}
		loc := &profile.Location{ID: id, Address: 0x1000 + id, Line: []profile.Line{{Function: fn}}}
		p.Function = append(p.Function, fn)
		p.Location = append(p.Location, loc)
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{loc}, Value: []int64{1 << 20}})
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "names.pb.gz")
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "tool", "pprof", "-dot", "-nodecount="+strconv.Itoa(len(p.Function)+1),
		"-nodefraction=0", "-edgefraction=0", path)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, stderr.String())
	}
	labels, fulls := dotNodes(t, string(out))
	if len(labels) != len(p.Function) {
		t.Fatalf("go tool pprof printed %d nodes for %d functions", len(labels), len(p.Function))
	}
	bad := 0
	for i, label := range labels {
		full := fulls[i]
		if !seen[full] {
			t.Fatalf("tooltip %q names no function", full)
		}
		want := pprofDOTLabel(Pprof(full))
		if !strings.HasPrefix(label, want) || strings.Contains(label[len(want):], `\n`) {
			bad++
			if bad <= 10 {
				t.Errorf("%q: go tool pprof labels it %q; Pprof gives %q (label %q)", full, label, Pprof(full), want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d names differ from go tool pprof", bad, len(labels))
	}
	t.Logf("%d names agree with go tool pprof", len(labels))
}

// TestPprof pins the names that matter for heap graphs: Go receivers,
// closures and type parameters stay, so distinct methods keep distinct
// names (jeprof's Short merges them).
func TestPprof(t *testing.T) {
	for _, c := range []struct{ in, want, jeprof string }{
		{"github.com/prometheus/prometheus/tsdb.(*Head).appender", "tsdb.(*Head).appender", "github.com/prometheus/prometheus/tsdb..appender"},
		{"github.com/prometheus/prometheus/tsdb.(*RangeHead).appender", "tsdb.(*RangeHead).appender", "github.com/prometheus/prometheus/tsdb..appender"},
		{"go.etcd.io/etcd/server/v3/mvcc.(*store).Range", "mvcc.(*store).Range", "go.etcd.io/etcd/server/v3/mvcc..Range"},
		{"runtime.main", "runtime.main", "runtime.main"},
		{"net/http.(*conn).serve.func1", "http.(*conn).serve.func1", "net/http..serve.func1"},
		{"slices.SortFunc[go.shape.[]string,go.shape.string]", "slices.SortFunc[go.shape.[]string,go.shape.string]", "slices.SortFunc[go.shape.[]string,go.shape.string]"},
		{"github.com/a/b.F[...]", "b.F[...]", "github.com/a/b.F[...]"},
		{"std::vector<int, std::allocator<int> >::_M_realloc_insert(int const&)", "std::vector<int, std::allocator<int> >::_M_realloc_insert(int const&)", "std::vector::_M_realloc_insert"},
		{"rocksdb::Arena::AllocateAligned(unsigned long)", "Arena::AllocateAligned", "rocksdb::Arena::AllocateAligned"},
		{"malloc", "malloc", "malloc"},
		{"a/v2.F\nx", "v2.F", "a/v2.F\nx"},
	} {
		if got := Pprof(c.in); got != c.want {
			t.Errorf("Pprof(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := Short(c.in); got != c.jeprof {
			t.Errorf("Short(%q) = %q, want %q", c.in, got, c.jeprof)
		}
	}
}
