package heapprof

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"
)

// The tests compile the C/C++ programs in testdata/progs, run them under
// jemalloc's profiler to get real heap_v2 dumps, and compare our output
// with the real jeprof run on the same binary and dump.

// progSpec describes one test program and how to build and run it.
type progSpec struct {
	name     string
	src      string
	cxx      bool
	opt      string // optimization flag
	lgSample int    // MALLOC_CONF lg_prof_sample
	dumps    int    // number of profiles the program writes
	shlib    bool   // links against libshapes.so
	// gperf: linked with gperftools' tcmalloc instead of jemalloc; the
	// program gets a HeapProfilerStart prefix and writes dumps
	// <prefix>.0001.heap, <prefix>.0002.heap, ... ("heap profile:" text).
	gperf bool
}

var progSpecs = []progSpec{
	{name: "shallow", src: "shallow.c", opt: "-O0", lgSample: 10, dumps: 1},
	{name: "deep", src: "deep.c", opt: "-O0", lgSample: 12, dumps: 1},
	{name: "inline", src: "inline.cc", cxx: true, opt: "-O2", lgSample: 11, dumps: 1},
	{name: "templates", src: "templates.cc", cxx: true, opt: "-O0", lgSample: 10, dumps: 1},
	{name: "shlib", src: "shlib.c", opt: "-O0", lgSample: 12, dumps: 1, shlib: true},
	{name: "growth", src: "growth.c", opt: "-O0", lgSample: 12, dumps: 2},
	{name: "wide", src: "wide.c", opt: "-O0", lgSample: 9, dumps: 1},
	{name: "gperf", src: "gperf.cc", cxx: true, opt: "-O2", dumps: 2, gperf: true},
}

// builtProg is a compiled program and the profiles it dumped.
type builtProg struct {
	bin      string
	profiles []string
}

// progs is filled on first use (test-only state): building and running
// the programs takes seconds, which fuzz workers should not pay.
var (
	progsOnce sync.Once
	progs     = map[string]builtProg{}
	progsErr  error
	progsRoot string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if progsRoot != "" {
		os.RemoveAll(progsRoot)
	}
	os.Exit(code)
}

func buildProgsOnce() error {
	progsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "heapprof-test-")
		if err != nil {
			progsErr = err
			return
		}
		progsRoot = dir
		progsErr = buildProgs(dir)
	})
	return progsErr
}

func run(ctx context.Context, env []string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

func buildProgs(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	src, err := filepath.Abs("../testdata/progs")
	if err != nil {
		return err
	}
	lib := filepath.Join(dir, "libshapes.so")
	if _, err := run(ctx, nil, "gcc", "-g", "-O0", "-shared", "-fPIC", "-o", lib,
		filepath.Join(src, "libshapes.c")); err != nil {
		return err
	}
	for _, ps := range progSpecs {
		bin := filepath.Join(dir, ps.name)
		cc := "gcc"
		if ps.cxx {
			cc = "g++"
		}
		args := []string{"-g", ps.opt, "-I", src, "-o", bin, filepath.Join(src, ps.src)}
		if ps.shlib {
			args = append(args, "-L", dir, "-lshapes", "-Wl,-rpath,"+dir)
		}
		if ps.gperf {
			args = append(args, "-ltcmalloc")
		} else {
			args = append(args, "-ljemalloc")
		}
		if _, err := run(ctx, nil, cc, args...); err != nil {
			return err
		}
		bp := builtProg{bin: bin}
		if ps.gperf {
			prefix := filepath.Join(dir, ps.name)
			for i := 1; i <= ps.dumps; i++ {
				bp.profiles = append(bp.profiles, fmt.Sprintf("%s.%04d.heap", prefix, i))
			}
			if _, err := run(ctx, nil, bin, prefix); err != nil {
				return err
			}
			for _, f := range bp.profiles {
				if _, err := os.Stat(f); err != nil {
					return fmt.Errorf("%s wrote no heap profile: %w", bin, err)
				}
			}
			progs[ps.name] = bp
			continue
		}
		for i := 0; i < ps.dumps; i++ {
			bp.profiles = append(bp.profiles, filepath.Join(dir, fmt.Sprintf("%s.%d.heap", ps.name, i)))
		}
		env := []string{fmt.Sprintf("MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:%d", ps.lgSample)}
		if _, err := run(ctx, env, bin, bp.profiles...); err != nil {
			return err
		}
		progs[ps.name] = bp
	}
	return nil
}

func prog(t testing.TB, name string) builtProg {
	t.Helper()
	if err := buildProgsOnce(); err != nil {
		t.Fatalf("building test programs: %v", err)
	}
	bp, ok := progs[name]
	if !ok {
		t.Fatalf("no test program %q", name)
	}
	return bp
}

// jeprofCtx bounds each jeprof run.
func jeprofCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// rawSymbolizer is a test-only Symbolizer built from jeprof's own
// symbolization: `jeprof --raw` prints, per PC, the full names jeprof
// resolved (containing function first, inlined callees after, joined by
// "--"), nm-derived names ending in "<address>". It translates them into
// the contract of symbolizer.go so the renderer can be tested on its own.
type rawSymbolizer struct {
	syms map[uint64][]string
}

// rawSymbolizers caches jeprof --raw results per argument list: the DOT,
// text, folded and protobuf tests symbolize the same files.
var rawSymbolizers sync.Map

func newRawSymbolizer(t testing.TB, args ...string) *rawSymbolizer {
	t.Helper()
	key := strings.Join(args, "\x00")
	if rs, ok := rawSymbolizers.Load(key); ok {
		return rs.(*rawSymbolizer)
	}
	rs := loadRawSymbolizer(t, args...)
	rawSymbolizers.Store(key, rs)
	return rs
}

func loadRawSymbolizer(t testing.TB, args ...string) *rawSymbolizer {
	t.Helper()
	// jeprof --raw exits non-zero after printing the symbol section
	// ("can only dump remote profiles"); the section is what we need.
	out, _ := run(jeprofCtx(t), nil, "jeprof", append([]string{"--raw"}, args...)...)
	rs := &rawSymbolizer{syms: map[uint64][]string{}}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "--- symbol":
			in = true
		case line == "---":
			in = false
		case in && strings.HasPrefix(line, "0x"):
			addr, names, ok := strings.Cut(line, " ")
			if !ok {
				continue
			}
			a, err := strconv.ParseUint(addr[2:], 16, 64)
			if err != nil {
				t.Fatalf("jeprof --raw: bad address in %q", line)
			}
			rs.syms[a] = strings.Split(names, "--")
		}
	}
	if len(rs.syms) == 0 {
		t.Fatalf("jeprof --raw %v printed no symbols:\n%s", args, out)
	}
	return rs
}

var (
	nmSuffixRE = regexp.MustCompile(`<[0-9a-fA-F]+>$`)
	// nmTagRE is the address tag of jeprof's nm names, "<%016x>".
	nmTagRE = regexp.MustCompile(`<[0-9a-fA-F]{16}>$`)
)

func (rs *rawSymbolizer) Symbolize(_ context.Context, p *profile.Profile) error {
	funcs := map[[2]string]*profile.Function{}
	fn := func(name, sys string) *profile.Function {
		k := [2]string{name, sys}
		if f := funcs[k]; f != nil {
			return f
		}
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: sys}
		funcs[k] = f
		p.Function = append(p.Function, f)
		return f
	}
	for _, loc := range p.Location {
		names, ok := rs.syms[loc.Address]
		if !ok {
			continue
		}
		loc.Line = loc.Line[:0]
		for i := len(names) - 1; i >= 0; i-- {
			full := names[i]
			loc.Line = append(loc.Line, profile.Line{Function: fn(nmSuffixRE.ReplaceAllString(full, ""), full)})
		}
	}
	return nil
}

func parseFile(t testing.TB, path string) *profile.Profile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(%s): %v", path, err)
	}
	return p
}

// dotCase is one jeprof invocation to reproduce.
type dotCase struct {
	name  string
	prog  string
	flags []string                       // extra jeprof flags
	opt   func(o *Options, bp builtProg) // the same settings for us
	base  bool                           // profile 1 with profile 0 as --base
	// reverse: profile 0 with profile 1 as --base (mostly negative values)
	reverse bool
}

var dotCases = []dotCase{
	{name: "shallow", prog: "shallow"},
	{name: "deep", prog: "deep"},
	{name: "inline", prog: "inline"},
	{name: "templates", prog: "templates"},
	{name: "shlib", prog: "shlib"},
	{name: "growth0", prog: "growth"},
	{name: "wide", prog: "wide"},
	{name: "wide_nodecount10", prog: "wide", flags: []string{"--nodecount=10"},
		opt: func(o *Options, _ builtProg) { o.NodeCount = 10 }},
	{name: "wide_fractions", prog: "wide", flags: []string{"--nodefraction=0.02", "--edgefraction=0.01"},
		opt: func(o *Options, _ builtProg) { o.NodeFraction, o.EdgeFraction = 0.02, 0.01 }},
	{name: "wide_maxdegree3", prog: "wide", flags: []string{"--maxdegree=3"},
		opt: func(o *Options, _ builtProg) { o.MaxDegree = 3 }},
	{name: "deep_objects", prog: "deep", flags: []string{"--inuse_objects"},
		opt: func(o *Options, _ builtProg) { o.SampleType = "inuse_objects" }},
	{name: "growth_base", prog: "growth", base: true},
	{name: "growth_base_negative", prog: "growth", base: true, reverse: true},
	// gperftools heap profiles: profile 0 has no frees (in-use equals
	// allocated in every stack), profile 1 has.
	{name: "gperf_nofrees", prog: "gperf"},
	{name: "gperf_nofrees_objects", prog: "gperf", flags: []string{"--inuse_objects"},
		opt: func(o *Options, _ builtProg) { o.SampleType = "inuse_objects" }},
	{name: "gperf_base", prog: "gperf", base: true},
	{name: "gperf_base_negative", prog: "gperf", base: true, reverse: true},
	{name: "gperf_base_objects", prog: "gperf", base: true, flags: []string{"--inuse_objects"},
		opt: func(o *Options, _ builtProg) { o.SampleType = "inuse_objects" }},
}

// setup parses and symbolizes the case's profile(s) and returns the
// jeprof arguments after the output flag.
func (c dotCase) setup(t *testing.T) (*profile.Profile, Options, []string) {
	bp := prog(t, c.prog)
	opt := DefaultOptions()
	opt.Program = bp.bin
	if c.opt != nil {
		c.opt(&opt, bp)
	}
	args := append([]string{}, c.flags...)
	target, base := bp.profiles[0], ""
	if c.base {
		target, base = bp.profiles[1], bp.profiles[0]
		if c.reverse {
			target, base = base, target
		}
		args = append(args, "--base="+base)
	}
	args = append(args, bp.bin, target)
	rs := newRawSymbolizer(t, args...)
	p := parseFile(t, target)
	if err := rs.Symbolize(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if c.base {
		opt.Base = parseFile(t, base)
		if err := rs.Symbolize(context.Background(), opt.Base); err != nil {
			t.Fatal(err)
		}
	}
	return p, opt, args
}

func TestWriteDOTMatchesJeprof(t *testing.T) {
	for _, c := range dotCases {
		t.Run(c.name, func(t *testing.T) {
			p, opt, args := c.setup(t)
			want, err := run(jeprofCtx(t), nil, "jeprof", append([]string{"--dot"}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteDOT(&got, p, opt); err != nil {
				t.Fatalf("WriteDOT: %v", err)
			}
			compareDOT(t, got.String(), string(want))
			checkDotAccepts(t, got.Bytes())
		})
	}
}

func TestWriteTextMatchesJeprof(t *testing.T) {
	for _, c := range dotCases {
		t.Run(c.name, func(t *testing.T) {
			p, opt, args := c.setup(t)
			want, err := run(jeprofCtx(t), nil, "jeprof", append([]string{"--text"}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			if err := WriteText(&got, p, opt); err != nil {
				t.Fatalf("WriteText: %v", err)
			}
			if got.String() != string(want) {
				t.Errorf("WriteText differs from jeprof --text %s\n%s", strings.Join(args, " "), lineDiff(got.String(), string(want)))
			}
		})
	}
}

var edgeLineRE = regexp.MustCompile(`^N\d+ -> N\d+ \[label=([-0-9.]+),`)

// compareDOT requires byte equality, except where jeprof follows Perl's
// randomized hash order among edges of equal weight: it prints them in
// that order, and when more of them lead into a node than --maxdegree
// keeps, it keeps the ones that order puts first (sub PrintDot; two jeprof
// runs on one profile differ that way). So edge lines must be the same
// set; failing that, the same set once their source nodes are left out,
// which bench/heapprof/run.sh's DOT check also accepts.
func compareDOT(t *testing.T, got, want string) {
	t.Helper()
	if got == want {
		return
	}
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	split := func(lines []string) (other, edges []string) {
		for _, l := range lines {
			if edgeLineRE.MatchString(l) {
				edges = append(edges, l)
			} else {
				other = append(other, l)
			}
		}
		return other, edges
	}
	go1, ge := split(gl)
	wo1, we := split(wl)
	if strings.Join(go1, "\n") != strings.Join(wo1, "\n") {
		t.Fatalf("DOT differs from jeprof (non-edge lines):\n%s", lineDiff(got, want))
	}
	sort.Strings(ge)
	sort.Strings(we)
	if slices.Equal(ge, we) {
		t.Logf("DOT equal to jeprof up to the order of equal-weight edges")
		return
	}
	sourceless := func(edges []string) []string {
		out := make([]string, len(edges))
		for i, e := range edges {
			out[i] = edgeSourceRE.ReplaceAllString(e, "")
		}
		sort.Strings(out)
		return out
	}
	if !slices.Equal(sourceless(ge), sourceless(we)) {
		t.Fatalf("DOT edges differ from jeprof:\nonly heapproxy's:\n%s\nonly jeprof's:\n%s",
			strings.Join(setMinus(ge, we), "\n"), strings.Join(setMinus(we, ge), "\n"))
	}
	t.Logf("DOT equal to jeprof up to the order of equal-weight edges and, into the same node, their sources "+
		"(jeprof's hash-order choice at --maxdegree): heapproxy %q, jeprof %q", setMinus(ge, we), setMinus(we, ge))
}

// edgeSourceRE is an edge line's source node.
var edgeSourceRE = regexp.MustCompile(`^N\d+ `)

// setMinus lists the lines of a not in b (both sorted), with repeats.
func setMinus(a, b []string) []string {
	var out []string
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			j++
			continue
		}
		out = append(out, x)
	}
	return out
}

// lineDiff shows the first differing lines.
func lineDiff(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	var b strings.Builder
	n := 0
	for i := 0; i < len(gl) || i < len(wl); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			fmt.Fprintf(&b, "line %d:\n  got:  %s\n  want: %s\n", i+1, g, w)
			if n++; n >= 8 {
				break
			}
		}
	}
	return b.String()
}

// checkDotAccepts pipes a DOT graph through the real `dot -Tsvg`.
func checkDotAccepts(t *testing.T, dot []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "dot", "-Tsvg")
	cmd.Stdin = bytes.NewReader(dot)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("</svg>")) {
		t.Errorf("dot -Tsvg rejected our output: %v %s", err, stderr.String())
	}
}

// TestWriteFoldedMatchesJeprof compares with jeprof --collapsed after
// removing what WriteFolded documents it does differently (line order, nm
// address tags, the frameless allocator-only line).
func TestWriteFoldedMatchesJeprof(t *testing.T) {
	for _, c := range dotCases {
		if c.flags != nil {
			continue // --collapsed ignores graph pruning flags
		}
		t.Run(c.name, func(t *testing.T) {
			p, opt, args := c.setup(t)
			out, err := run(jeprofCtx(t), nil, "jeprof", append([]string{"--collapsed"}, args...)...)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
				if strings.HasPrefix(l, " ") || l == "" {
					continue
				}
				sp := strings.LastIndexByte(l, ' ')
				frames, n := l[:sp], l[sp+1:]
				parts := strings.Split(frames, ";")
				for i, f := range parts {
					inl := strings.HasSuffix(f, "[inline]")
					f = nmTagRE.ReplaceAllString(strings.TrimSuffix(f, "[inline]"), "")
					if inl {
						f += "[inline]"
					}
					parts[i] = f
				}
				want = append(want, strings.Join(parts, ";")+" "+n)
			}
			sort.Strings(want)
			var got bytes.Buffer
			if err := WriteFolded(&got, p, opt); err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(want, "\n") + "\n"; got.String() != w {
				t.Errorf("WriteFolded differs from jeprof --collapsed:\n%s", lineDiff(got.String(), w))
			}
		})
	}
}
