package elfsym

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
)

// fixture is a program built and run by the tests: its binary, the shared
// library it loads and the jemalloc heap profile it wrote at exit.
type fixture struct {
	name    string
	binary  string
	lib     string
	profile string
}

var (
	fixturesOnce sync.Once
	fixtures     []fixture
	fixturesErr  error
	buildDir     string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "symbolize-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	buildDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func run(t testing.TB, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// getFixtures compiles testdata/prog.cc and testdata/lib.c in several
// shapes (-O0/-O2, PIE/non-PIE, a stripped library) and runs each binary
// under jemalloc's heap profiler.
func getFixtures(t *testing.T) []fixture {
	t.Helper()
	fixturesOnce.Do(func() {
		fixtures, fixturesErr = buildFixtures(t)
	})
	if fixturesErr != nil {
		t.Fatal(fixturesErr)
	}
	return fixtures
}

func buildFixtures(t *testing.T) ([]fixture, error) {
	src, err := filepath.Abs("testdata")
	if err != nil {
		return nil, err
	}
	full := filepath.Join(buildDir, "full")
	stripped := filepath.Join(buildDir, "stripped")
	for _, d := range []string{full, stripped} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	run(t, nil, "gcc", "-g", "-O2", "-shared", "-fPIC", "-o", filepath.Join(full, "libsymtest.so"), filepath.Join(src, "lib.c"))
	run(t, nil, "strip", "--strip-all", "-o", filepath.Join(stripped, "libsymtest.so"), filepath.Join(full, "libsymtest.so"))
	shapes := []struct {
		name   string
		flags  []string
		libDir string
	}{
		{"O0-pie", []string{"-O0", "-fPIE", "-pie"}, full},
		{"O2-pie", []string{"-O2", "-fPIE", "-pie"}, full},
		{"O2-nopie", []string{"-O2", "-fno-pie", "-no-pie"}, full},
		{"O2-stripped-lib", []string{"-O2", "-fPIE", "-pie"}, stripped},
	}
	var out []fixture
	for _, s := range shapes {
		bin := filepath.Join(buildDir, "prog-"+s.name)
		args := append([]string{"-g"}, s.flags...)
		args = append(args, "-o", bin, filepath.Join(src, "prog.cc"), "-L"+s.libDir, "-lsymtest", "-ljemalloc", "-Wl,-rpath,"+s.libDir)
		run(t, nil, "g++", args...)
		prefix := filepath.Join(buildDir, "heap-"+s.name)
		run(t, []string{"MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0,prof_final:true,prof_prefix:" + prefix}, bin)
		matches, _ := filepath.Glob(prefix + ".*.heap")
		if len(matches) != 1 {
			return nil, fmt.Errorf("%s: want one heap profile, got %v", s.name, matches)
		}
		out = append(out, fixture{name: s.name, binary: bin, lib: filepath.Join(s.libDir, "libsymtest.so"), profile: matches[0]})
	}
	return out, nil
}

// readHeapProfile parses a real heap_v2 profile with package heapprof, as
// heapproxy does: every Location.Address is the PC jeprof looks up.
func readHeapProfile(t *testing.T, path string) *profile.Profile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := heapprof.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// jeprofSymbols runs the real jeprof --raw, which prints its symbol table
// ("0x<pc> caller--...--callee", full names as jeprof keeps them) before
// it gives up on dumping a local profile.
func jeprofSymbols(t *testing.T, binary, prof string) map[uint64]string {
	t.Helper()
	cmd := exec.Command("jeprof", "--raw", binary, prof)
	out, _ := cmd.Output() // exits non-zero by design after the symbols
	syms := map[uint64]string{}
	in := false
	for _, line := range strings.Split(string(out), "\n") {
		switch {
		case strings.HasPrefix(line, "--- symbol"):
			in = true
		case line == "---":
			in = false
		case in && strings.HasPrefix(line, "0x"):
			a, names, _ := strings.Cut(line, " ")
			pc, err := strconv.ParseUint(a[2:], 16, 64)
			if err != nil {
				t.Fatalf("jeprof symbol line %q", line)
			}
			syms[pc] = names
		}
	}
	if len(syms) == 0 {
		t.Fatalf("jeprof --raw printed no symbols:\n%s", out)
	}
	return syms
}

// TestJeprofNames checks, for every PC of real jemalloc profiles, that the
// full names (and inline frames, in order) equal the ones the real jeprof
// derives from nm and addr2line.
func TestJeprofNames(t *testing.T) {
	cache := NewCache()
	for _, fx := range getFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			want := jeprofSymbols(t, fx.binary, fx.profile)
			p := readHeapProfile(t, fx.profile)
			l := &Local{Binary: fx.binary, Cache: cache}
			if err := l.Symbolize(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, loc := range p.Location {
				var names []string
				for i := len(loc.Line) - 1; i >= 0; i-- {
					names = append(names, loc.Line[i].Function.SystemName)
				}
				got := strings.Join(names, "--")
				if w, ok := want[loc.Address]; ok && got != w {
					bad++
					if bad <= 20 {
						t.Errorf("pc %#x:\n got %s\nwant %s", loc.Address, got, w)
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d PCs differ", bad, len(p.Location))
			}
		})
	}
}

var discriminator = regexp.MustCompile(` \(discriminator \d+\)$`)

// addr2line runs the real `addr2line -a -f -C -i` on addrs and splits its
// answer per address.
func addr2line(t *testing.T, image string, addrs []uint64) map[uint64][]Frame {
	t.Helper()
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%x\n", a)
	}
	cmd := exec.Command(binutil(t, image, "addr2line"), "-a", "-f", "-C", "-i", "-e", image)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("addr2line %s: %v", image, err)
	}
	res := map[uint64][]Frame{}
	var cur uint64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "0x") {
			cur, _ = strconv.ParseUint(line[2:], 16, 64)
			continue
		}
		if !sc.Scan() {
			t.Fatalf("addr2line output ends after %q", line)
		}
		fl := discriminator.ReplaceAllString(sc.Text(), "")
		i := strings.LastIndexByte(fl, ':')
		n, _ := strconv.Atoi(fl[i+1:]) // "?" reads as 0
		res[cur] = append(res[cur], Frame{Function: line, File: fl[:i], Line: n})
	}
	return res
}

// binutil names the binutils program that reads image: the host's, or
// Debian's cross binutils for an AArch64 file (binutils-aarch64-linux-gnu),
// as jeprof would be told with JEPROF_TOOLS.
func binutil(t testing.TB, image, tool string) string {
	t.Helper()
	f, err := elf.Open(image)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine == elf.EM_AARCH64 {
		return "aarch64-linux-gnu-" + tool
	}
	return tool
}

// samplePCs returns addresses spread over every function nm lists with a
// size, at most limit of them.
func samplePCs(t *testing.T, image string, dynamic bool, limit int) []uint64 {
	t.Helper()
	args := []string{"-S", "--defined-only"}
	if dynamic {
		args = append(args, "-D")
	}
	out := run(t, nil, binutil(t, image, "nm"), append(args, image)...)
	type fn struct{ start, size uint64 }
	var fns []fn
	var total uint64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.ContainsAny(f[2], "tTwW") {
			continue
		}
		start, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 16, 64)
		if err1 != nil || err2 != nil || size == 0 {
			continue
		}
		fns = append(fns, fn{start, size})
		total += size
	}
	step := total/uint64(limit) + 1
	var pcs []uint64
	for _, f := range fns {
		for a := f.start; a < f.start+f.size; a += step {
			pcs = append(pcs, a)
		}
		pcs = append(pcs, f.start+f.size-1)
	}
	return sortedUnique(pcs)
}

// TestAddr2Line compares every record (function, file, line, inline
// order) with the real addr2line, over addresses spread across whole
// images: the test programs, their shared library, a stripped copy of it
// and libjemalloc (both read through .dynsym).
func TestAddr2Line(t *testing.T) {
	fxs := getFixtures(t)
	// The same program with zlib-compressed debug sections, as Debian
	// ships its debug files: read through debugSection's inflater.
	zlibBin := filepath.Join(buildDir, "prog-O2-pie-zlib")
	run(t, nil, "objcopy", "--compress-debug-sections=zlib", fxs[1].binary, zlibBin)
	checkAddr2Line(t, []addrImage{
		{"O0-pie", fxs[0].binary, false},
		{"O2-pie", fxs[1].binary, false},
		{"O2-pie-zlib", zlibBin, false},
		{"O2-dwarf4", dwarf4Binary(t), false},
		{"O2-nopie", fxs[2].binary, false},
		{"lib", fxs[0].lib, false},
		{"stripped-lib", fxs[3].lib, true},
		{"libjemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", true},
		// libc, from its separate debug file: TestAddr2LineLibc.
	})
}

// carriedOver tells the one answer of addr2line that depends on the
// addresses asked before, which lookupRun does not reproduce:
// _bfd_elf_find_function (bfd/dwarf2.c, binutils 2.40) keeps the function
// it found last and answers it again for an address inside its size,
// though a closer symbol without a size starts in between (glibc's aarch64
// start.S: the label __wrap_main inside _start). It holds when addr2line
// asked pc alone answers got, and the answer it gave in the run (want) is
// the one it gave for the address before (prev). No return address lies
// there: __wrap_main is a branch to main.
func carriedOver(t *testing.T, image string, pc uint64, got, want, prev []Frame) bool {
	t.Helper()
	if len(want) != 1 || len(prev) == 0 || want[0].Function != prev[len(prev)-1].Function {
		return false
	}
	return sameFrames(got, addr2line(t, image, []uint64{pc})[pc])
}

// addrImage is an ELF file whose answers checkAddr2Line compares;
// dynamic: sample its addresses from .dynsym (a stripped file).
type addrImage struct {
	name    string
	path    string
	dynamic bool
}

// checkAddr2Line compares every record (function, file, line, inline
// order) with the real addr2line's (the binutils for the file's machine),
// over addresses spread across each whole image.
func checkAddr2Line(t *testing.T, images []addrImage) {
	t.Helper()
	for _, im := range images {
		pcs := samplePCs(t, im.path, im.dynamic, 4000)
		want := addr2line(t, im.path, pcs)
		// Both DIE decoders: the scanner over mapped sections and the
		// debug/dwarf fallback; "partial" decodes units the way Symbolize
		// does, keeping only what answers the sampled addresses.
		for _, decoder := range []string{"scanner", "partial", "debug-dwarf"} {
			t.Run(im.name+"/"+decoder, func(t *testing.T) {
				o, err := openObject(im.path, []string{"/usr/lib/debug"})
				if err != nil {
					t.Fatal(err)
				}
				if o.dw != nil && o.dw.raw == nil {
					t.Fatalf("%s: debug sections not read in place", im.path)
				}
				if decoder == "debug-dwarf" && o.dw != nil {
					o.dw.onlyGo = true
				}
				bad := 0
				seen := map[fnKey]bool{}
				answers := make(map[uint64][]Frame)
				if decoder == "partial" && o.dw != nil {
					o.dw.inBatches(pcs, 0, func(uint64) bool { return false }, func(pc uint64) {
						answers[pc] = o.lookupRun(pc, seen)
					})
				}
				carried := 0
				for i, pc := range pcs {
					got, ok := answers[pc]
					if !ok {
						got = o.lookupRun(pc, seen)
					}
					if sameFrames(got, want[pc]) {
						continue
					}
					if i > 0 && carriedOver(t, im.path, pc, got, want[pc], want[pcs[i-1]]) {
						carried++
						continue
					}
					bad++
					if bad <= 10 {
						t.Errorf("%#x:\n got %v\nwant %v", pc, got, want[pc])
					}
				}
				if bad > 0 {
					t.Errorf("%d of %d addresses differ", bad, len(pcs))
				}
				if carried > 0 {
					t.Logf("%d of %d addresses answered as addr2line answers them alone, not after the address before (BFD's function cache)",
						carried, len(pcs))
				}
			})
		}
	}
}

// TestCacheShared symbolizes one profile from several goroutines through one
// Cache, then again warm, and expects the answers of a fresh cache.
func TestCacheShared(t *testing.T) {
	fx := getFixtures(t)[1]
	names := func(p *profile.Profile) []string {
		var out []string
		for _, loc := range p.Location {
			var fr []string
			for _, l := range loc.Line {
				fr = append(fr, l.Function.SystemName)
			}
			out = append(out, strings.Join(fr, "|"))
		}
		return out
	}
	ref := readHeapProfile(t, fx.profile)
	if err := (&Local{Binary: fx.binary}).Symbolize(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	want := names(ref)
	cache := NewCache()
	for _, round := range []string{"cold", "warm"} {
		var wg sync.WaitGroup
		results := make([][]string, 4)
		errs := make([]error, 4)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := readHeapProfile(t, fx.profile)
				errs[i] = (&Local{Binary: fx.binary, Cache: cache}).Symbolize(context.Background(), p)
				results[i] = names(p)
			}()
		}
		wg.Wait()
		for i := range results {
			if errs[i] != nil {
				t.Fatalf("%s %d: %v", round, i, errs[i])
			}
			if strings.Join(results[i], "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %d: answers differ from a fresh cache", round, i)
			}
		}
	}
}

// TestOnePassCache: a one-pass cache answers a profile as NewCache does,
// and keeps no answers once it is symbolized; NewCache keeps one per
// address asked.
func TestOnePassCache(t *testing.T) {
	fx := getFixtures(t)[1]
	symbolized := func(cache *Cache) (*profile.Profile, int) {
		p := readHeapProfile(t, fx.profile)
		if err := (&Local{Binary: fx.binary, Cache: cache}).Symbolize(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		kept := 0
		for _, e := range cache.objects {
			kept += len(e.obj.memo)
		}
		return p, kept
	}
	want, keptByCache := symbolized(NewCache())
	got, keptByOnePass := symbolized(NewOnePassCache())
	if keptByCache == 0 || keptByOnePass != 0 {
		t.Errorf("answers kept: %d by NewCache (want some), %d by NewOnePassCache (want 0)", keptByCache, keptByOnePass)
	}
	if len(got.Location) != len(want.Location) {
		t.Fatalf("%d locations, want %d", len(got.Location), len(want.Location))
	}
	for i, loc := range got.Location {
		g, w := loc.Line, want.Location[i].Line
		same := len(g) == len(w)
		for j := 0; same && j < len(g); j++ {
			same = g[j].Function.Name == w[j].Function.Name && g[j].Function.SystemName == w[j].Function.SystemName &&
				g[j].Function.Filename == w[j].Function.Filename && g[j].Line == w[j].Line
		}
		if !same {
			t.Errorf("%#x: one-pass answer differs from NewCache's", loc.Address)
		}
	}
}

func sameFrames(a, b []Frame) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		// BFD joins a relative directory to the compilation directory
		// without cleaning ("./stdlib/./stdlib/abort.c"); debug/dwarf
		// joins and cleans ("stdlib/abort.c"). Compare the file names.
		x, y := a[i], b[i]
		x.File, y.File = path.Base(x.File), path.Base(y.File)
		if x != y {
			return false
		}
	}
	return true
}

// TestAddr2LineLibc compares libc's answers, from its zlib-compressed
// separate debug file (libc6-dbg), with addr2line's, exactly: including
// libc's assembly functions, where several equal-size aliases share an
// address and BFD names them after the last DW_TAG_subprogram of their
// DW_LANG_Mips_Assembler unit (clone3, not __clone3).
func TestAddr2LineLibc(t *testing.T) {
	dbg := libcDebugFile(t)
	pcs := samplePCs(t, hostLibc, true, 3000)
	want := addr2line(t, dbg, pcs)
	for _, decoder := range []string{"scanner", "partial", "debug-dwarf"} {
		t.Run(decoder, func(t *testing.T) {
			o := openMapped(t, dbg)
			o.dw.onlyGo = decoder == "debug-dwarf"
			seen := map[fnKey]bool{}
			answers := map[uint64][]Frame{}
			if decoder == "partial" {
				o.dw.inBatches(pcs, 0, func(uint64) bool { return false }, func(pc uint64) {
					answers[pc] = o.lookupRun(pc, seen)
				})
			}
			bad := 0
			for _, pc := range pcs {
				got, ok := answers[pc]
				if !ok {
					got = o.lookupRun(pc, seen)
				}
				if !sameFrames(got, want[pc]) {
					bad++
					if bad <= 10 {
						t.Errorf("%#x:\n got %v\nwant %v", pc, got, want[pc])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d addresses differ", bad, len(pcs))
			}
		})
	}
}

var (
	dwarf4Once sync.Once
	dwarf4Path string
)

// dwarf4Binary builds the test program with DWARF 4 (the line table header
// and .debug_ranges of older compilers) instead of gcc 12's DWARF 5.
func dwarf4Binary(t *testing.T) string {
	t.Helper()
	fx := getFixtures(t)[1]
	dwarf4Once.Do(func() {
		src, err := filepath.Abs("testdata")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(buildDir, "prog-O2-dwarf4")
		libDir := filepath.Dir(fx.lib)
		run(t, nil, "g++", "-g", "-gdwarf-4", "-O2", "-o", bin, filepath.Join(src, "prog.cc"),
			"-L"+libDir, "-lsymtest", "-ljemalloc", "-Wl,-rpath,"+libDir)
		dwarf4Path = bin
	})
	if dwarf4Path == "" {
		t.Fatal("DWARF 4 build failed earlier")
	}
	return dwarf4Path
}
