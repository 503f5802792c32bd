package elfsym

import (
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// progsDir is the repository's testdata/progs, the programs the tests
// build and compare with binutils and jeprof.
func progsDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs("../../../testdata/progs")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// openMapped opens the image at path as Symbolize does and fails unless
// its DWARF is read in place (the scanner's mapped sections).
func openMapped(t *testing.T, path string) *object {
	t.Helper()
	o, err := openObject(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.dw == nil || o.dw.raw == nil {
		t.Fatalf("%s: no mapped DWARF", path)
	}
	return o
}

// hostLibc is this machine's libc.
const hostLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6"

// libcDebugFile is libc6-dbg's separate debug file for this machine's libc.
func libcDebugFile(t *testing.T) string {
	t.Helper()
	return debugFileOf(t, hostLibc)
}

// debugFileOf is the separate debug file Debian's -dbg package installs
// for libc, under /usr/lib/debug/.build-id.
func debugFileOf(t *testing.T, libc string) string {
	t.Helper()
	id, err := readBuildID(libc)
	if err != nil || len(id) < 3 {
		t.Fatalf("build-id of %s: %q, %v", libc, id, err)
	}
	dbg := filepath.Join("/usr/lib/debug/.build-id", id[:2], id[2:]+".debug")
	if !isFile(dbg) {
		t.Fatalf("%s missing: install libc6-dbg for %s (.ci/run)", dbg, libc)
	}
	return dbg
}

// symbolPCs returns every address of the named function, from nm -S.
func symbolPCs(t *testing.T, image, name string) []uint64 {
	t.Helper()
	for _, line := range strings.Split(string(run(t, nil, "nm", "-S", "--defined-only", image)), "\n") {
		f := strings.Fields(line)
		if len(f) != 4 || f[3] != name {
			continue
		}
		start, err1 := strconv.ParseUint(f[0], 16, 64)
		size, err2 := strconv.ParseUint(f[1], 16, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("nm line %q", line)
		}
		var pcs []uint64
		for a := start; a < start+size; a++ {
			pcs = append(pcs, a)
		}
		return pcs
	}
	t.Fatalf("nm lists no %s in %s", name, image)
	return nil
}

// TestAssemblyAliases checks names in DWARF units of assembly
// (DW_LANG_Mips_Assembler), where one function has several
// DW_TAG_subprograms with equal ranges: addr2line prints the last one's
// DW_AT_name (clone3, not the ELF alias __clone3). Every address of the
// functions is compared with the real addr2line.
func TestAssemblyAliases(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "aliases")
	run(t, nil, "gcc", "-g", "-o", bin, filepath.Join(progsDir(t), "aliases.S"))
	libc := libcDebugFile(t)
	cases := []struct {
		name, image, function, want string
	}{
		{"aliases.S", bin, "aliased", "aliased"},
		{"aliases.S-main", bin, "main", "main"},
		{"libc-clone3", libc, "clone3", "clone3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pcs := symbolPCs(t, c.image, c.function)
			want := addr2line(t, c.image, pcs)
			o, err := openObject(c.image, nil)
			if err != nil {
				t.Fatal(err)
			}
			seen := map[fnKey]bool{}
			for _, pc := range pcs {
				got := o.lookupRun(pc, seen)
				if !sameFrames(got, want[pc]) {
					t.Errorf("%#x:\n got %v\nwant %v", pc, got, want[pc])
				}
				if len(want[pc]) == 0 || want[pc][0].Function != c.want {
					t.Errorf("%#x: addr2line says %v, the test expects %s", pc, want[pc], c.want)
				}
			}
		})
	}
}

// nmDynamicNames is `nm -D --defined-only` on image: address -> names.
func nmDynamicNames(t *testing.T, image string) map[uint64][]string {
	t.Helper()
	names := map[uint64][]string{}
	for _, line := range strings.Split(string(run(t, nil, "nm", "-D", "--defined-only", image)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			t.Fatalf("nm line %q", line)
		}
		names[a] = append(names[a], f[2])
	}
	return names
}

// TestDynamicSymbolVersions compares the names of defined dynamic symbols
// with `nm -D`: @@ for default versions, @ for hidden ones and for versions
// from .gnu.version_r (copy-relocated stdin@GLIBC_2.2.5 in executables),
// none for a version definition's own symbol (VER_1). It also checks that
// the symbol table jeprof reads from a stripped image names nm's symbols.
func TestDynamicSymbolVersions(t *testing.T) {
	dir := t.TempDir()
	src, versionScript := filepath.Join(progsDir(t), "versioned.c"), filepath.Join(progsDir(t), "versioned.map")
	lib := filepath.Join(dir, "libversioned.so")
	run(t, nil, "gcc", "-g", "-O2", "-shared", "-fPIC", "-o", lib, src, "-Wl,--version-script="+versionScript)
	exe := filepath.Join(dir, "versioned")
	run(t, nil, "gcc", "-g", "-O2", "-DVERSIONED_MAIN", "-o", exe, src, "-Wl,--version-script="+versionScript, "-Wl,-E")
	stripped := filepath.Join(dir, "versioned-stripped")
	run(t, nil, "strip", "--strip-all", "-o", stripped, exe)
	cases := []struct {
		name, image string
		expect      []string // names nm prints, checked to be there
	}{
		{"built-library", lib, []string{"VER_1", "VER_2", "versioned_api@VER_1", "versioned_api@@VER_2", "versioned_plain@@VER_1"}},
		{"built-executable", exe, []string{"VER_1", "main@@VER_1", "stdin@GLIBC_2.2.5", "stdout@GLIBC_2.2.5"}},
		{"built-executable-stripped", stripped, []string{"stderr@GLIBC_2.2.5"}},
		// coreutils: stripped, its only defined dynamic symbols are copies
		// of glibc's data.
		{"debian-sort", "/usr/bin/sort", []string{"stdin@GLIBC_2.2.5", "program_invocation_name@GLIBC_2.2.5"}},
		{"debian-libc", "/usr/lib/x86_64-linux-gnu/libc.so.6", []string{"GLIBC_2.2.5", "malloc@@GLIBC_2.2.5"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := nmDynamicNames(t, c.image)
			var all []string
			for _, ns := range want {
				all = append(all, ns...)
			}
			for _, e := range c.expect {
				if !slices.Contains(all, e) {
					t.Errorf("nm -D does not print %s (the test program changed?)", e)
				}
			}
			f, err := elf.Open(c.image)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			m, err := mapFile(c.image)
			if err != nil {
				t.Fatal(err)
			}
			syms, err := readSymTab(f, m, elf.SHT_DYNSYM)
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64][]string{}
			for i := range syms.len() {
				s := syms.at(i)
				typ := elf.ST_TYPE(s.info)
				if s.section == elf.SHN_UNDEF || len(syms.nameBytes(s.name)) == 0 || typ == elf.STT_SECTION || typ == elf.STT_FILE {
					continue
				}
				got[s.value] = append(got[s.value], syms.nmName(i))
			}
			for a, ns := range want {
				g := slices.Sorted(slices.Values(got[a]))
				w := slices.Sorted(slices.Values(ns))
				if !slices.Equal(g, w) {
					t.Errorf("%#x: got %q, nm -D prints %q", a, g, w)
				}
			}
			for a, ns := range got {
				if _, ok := want[a]; !ok {
					t.Errorf("%#x: got %q, nm -D prints nothing there", a, ns)
				}
			}
			// Without .symtab, jeprof's table is nm -D's.
			if static, _ := f.Symbols(); len(static) == 0 {
				o, err := openObject(c.image, nil)
				if err != nil {
					t.Fatal(err)
				}
				for i := range o.nm.syms {
					s := &o.nm.syms[i]
					if name := o.nm.name(s); !slices.Contains(want[s.start], name) {
						t.Errorf("nm table: %#x %s, nm -D prints %q there", s.start, name, want[s.start])
					}
				}
			}
		})
	}
}

// TestSymlinkedBinary symbolizes a profile of a program started through a
// symbolic link, given by the link's path as jeprof would be: jeprof
// resolves the link (Cwd::abs_path) to match the profile's mappings, which
// name the target, and the program's frames get names, not addresses.
func TestSymlinkedBinary(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real", "symlinked-check")
	if err := os.MkdirAll(filepath.Dir(real), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, nil, "gcc", "-g", "-O2", "-fPIE", "-pie", "-I", progsDir(t), "-o", real,
		filepath.Join(progsDir(t), "symlinked.c"), "-ljemalloc")
	links := []struct {
		name, link, target string
	}{
		// A link beside its target with another name, as Debian's
		// redis-server -> redis-check-rdb.
		{"relative-link", filepath.Join(dir, "real", "symlinked-server"), "symlinked-check"},
		{"absolute-link-elsewhere", filepath.Join(dir, "bin", "symlinked-server"), real},
		// A link to the link.
		{"chained-link", filepath.Join(dir, "bin", "server"), filepath.Join(dir, "real", "symlinked-server")},
	}
	for _, l := range links {
		if err := os.MkdirAll(filepath.Dir(l.link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(l.target, l.link); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range links {
		t.Run(l.name, func(t *testing.T) {
			prof := filepath.Join(t.TempDir(), "symlinked.heap")
			run(t, []string{"MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0"}, l.link, prof)
			want := jeprofSymbols(t, l.link, prof)
			named := false
			for _, names := range want {
				named = named || strings.Contains(names, "symlinked_alloc")
			}
			if !named {
				t.Fatalf("jeprof names no symlinked_alloc frame: %v", want)
			}
			p := readHeapProfile(t, prof)
			if err := (&Local{Binary: l.link}).Symbolize(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, loc := range p.Location {
				var names []string
				for i := len(loc.Line) - 1; i >= 0; i-- {
					names = append(names, loc.Line[i].Function.SystemName)
				}
				if w, ok := want[loc.Address]; ok {
					checked++
					if got := strings.Join(names, "--"); got != w {
						t.Errorf("pc %#x:\n got %s\nwant %s", loc.Address, got, w)
					}
				}
			}
			if checked == 0 {
				t.Error("no PC of the profile was in jeprof's symbol table")
			}
		})
	}
}

// TestSymlinkedBinaryMissing reports a link to nothing with its path.
func TestSymlinkedBinaryMissing(t *testing.T) {
	link := filepath.Join(t.TempDir(), "dangling")
	if err := os.Symlink("nowhere", link); err != nil {
		t.Fatal(err)
	}
	fx := getFixtures(t)[1]
	p := readHeapProfile(t, fx.profile)
	err := (&Local{Binary: link}).Symbolize(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), link) {
		t.Fatalf("Symbolize with a dangling link: %v, want an error naming %s", err, link)
	}
}

// TestDemangleCxxfilt compares the demangler with c++filt on every C++
// name of a program built from testdata/progs/packs.cc (libstdc++'s
// std::thread and std::tuple, with empty template argument packs), and
// with nm --demangle (BFD's demangling, as jeprof reads it) on every
// dynamic C++ name of libstdc++. c++filt itself is not the reference for
// libstdc++: it expands std::string to std::basic_string<...>
// (DMGL_VERBOSE), which nm and addr2line do not.
func TestDemangleCxxfilt(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "packs")
	run(t, nil, "g++", "-g", "-O0", "-pthread", "-o", bin, filepath.Join(progsDir(t), "packs.cc"))
	const libstdcxx = "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"
	cases := []struct {
		name string
		// pairs returns mangled names and the reference's demangling.
		pairs  func(t *testing.T) (names, want []string)
		expect []string // demangled names the reference must print
	}{
		{"packs.cc/c++filt", func(t *testing.T) ([]string, []string) {
			names := mangledNames(run(t, nil, "nm", bin))
			return names, cxxfilt(t, names)
		}, []string{
			"std::thread::thread<void (&)(), , void>(void (&)())",
			"std::thread::thread<void (&)(int), int, void>(void (&)(int), int&&)",
			// Empty packs at the end: no comma, and no space between '>'s.
			"int& std::__get_helper<1ul, int>(std::_Tuple_impl<1ul, int>&)",
			"std::default_delete<std::thread::_State>& std::__get_helper<1ul, std::default_delete<std::thread::_State>>(std::_Tuple_impl<1ul, std::default_delete<std::thread::_State>>&)",
			"void (*&std::__get_helper<0ul, void (*)()>(std::_Tuple_impl<0ul, void (*)()>&))()",
			// An inheriting constructor, named after its base.
			"std::__uniq_ptr_data<std::thread::_State, std::default_delete<std::thread::_State>, true, true>::__uniq_ptr_impl(std::thread::_State*)",
		}},
		{"packs.cc/nm-demangle", func(t *testing.T) ([]string, []string) {
			return nmDemangled(t, "_Z", bin)
		}, nil},
		{"libstdc++/nm-demangle", func(t *testing.T) ([]string, []string) {
			return nmDemangled(t, "_Z", "-D", "--defined-only", libstdcxx)
		}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			names, want := c.pairs(t)
			if len(want) != len(names) || len(names) < 50 {
				t.Fatalf("%d names, %d demangled", len(names), len(want))
			}
			bad := 0
			for i, n := range names {
				if got := demangleBFD(n); got != want[i] {
					bad++
					if bad <= 10 {
						t.Errorf("%s:\n got %s\nwant %s", n, got, want[i])
					}
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d names differ", bad, len(names))
			}
			for _, e := range c.expect {
				if !slices.Contains(want, e) {
					t.Errorf("the reference does not print %q (the test program changed?)", e)
				}
			}
		})
	}
}

// simpleTaken checks every name of names (nm's, with any @VERSION) that
// demangleSimple takes against want, what nm --demangle printed for it,
// and returns the demangled names it took and how many names those were.
func simpleTaken(t *testing.T, label string, names, want []string) (took map[string]bool, n int) {
	t.Helper()
	took = map[string]bool{}
	for i, name := range names {
		plain, version, versioned := strings.Cut(name, "@")
		got, ok := demangleSimple(plain)
		if !ok {
			continue
		}
		took[want[i]] = true
		n++
		if versioned {
			got += "@" + version
		}
		if got != want[i] {
			t.Errorf("%s: demangleSimple(%s) = %s, nm prints %s", label, plain, got, want[i])
		}
	}
	return took, n
}

// mangledNames returns the C++ names (_Z...) nm printed, in order.
func mangledNames(nmOut []byte) []string {
	var out []string
	for _, line := range strings.Split(string(nmOut), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && strings.HasPrefix(f[len(f)-1], "_Z") {
			out = append(out, f[len(f)-1])
		}
	}
	return out
}

// cxxfilt runs the real c++filt on names, one per line.
func cxxfilt(t *testing.T, names []string) []string {
	t.Helper()
	cmd := exec.Command("c++filt")
	cmd.Stdin = strings.NewReader(strings.Join(names, "\n") + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("c++filt: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
}

// nmDemangled runs nm with args twice, without and with --demangle (both
// list symbols in the same order), and returns the names mangled with
// prefix ("_Z": C++, "_R": Rust v0) and what nm printed for them.
func nmDemangled(t *testing.T, prefix string, args ...string) (names, want []string) {
	t.Helper()
	raw := strings.Split(string(run(t, nil, "nm", args...)), "\n")
	dem := strings.Split(string(run(t, nil, "nm", append([]string{"--demangle"}, args...)...)), "\n")
	if len(raw) != len(dem) {
		t.Fatalf("nm printed %d lines, nm --demangle %d", len(raw), len(dem))
	}
	for i, line := range raw {
		// "<address or spaces> <type> <name>": the name starts at a fixed
		// column, after 16 digits (or spaces), a space, a letter, a space.
		if len(line) < 20 || !strings.HasPrefix(line[19:], prefix) {
			continue
		}
		names = append(names, line[19:])
		want = append(want, dem[i][19:])
	}
	return names, want
}

// TestDemangleSimple checks demangleSimple, the fast path for plainer C++
// names, against nm --demangle (BFD's demangler, as jeprof reads it) on
// every C++ name of testdata/progs/simple.cc and every exported one of
// mariadbd, and that it takes the shapes it was written for and leaves
// the others to the demangle package.
// (TestDemangleCxxfilt runs it on libstdc++'s and packs.cc's names too,
// through demangleBFD.)
func TestDemangleSimple(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "simple")
	run(t, nil, "g++", "-g", "-O0", "-o", bin, filepath.Join(progsDir(t), "simple.cc"))
	names, want := nmDemangled(t, "_Z", bin)
	for i, n := range names {
		if got := demangleBFD(n); got != want[i] {
			t.Errorf("%s:\n got %s\nwant %s", n, got, want[i])
		}
	}
	took, _ := simpleTaken(t, "simple.cc", names, want)
	for _, name := range []string{
		"global_fn(double)",
		"ns1::none()",
		"ns1::f311(int)",
		"ns1::mix(char, unsigned char, signed char, short, unsigned short, unsigned int, long, unsigned long, long long, unsigned long long, bool, wchar_t, float, double, long double)",
		"ns1::ptrs(char const*, char**, int&, int const&, int&&, void*, void const*, int* const*)",
		"ns1::varargs(int, ...)",
		"ns1::wide(__int128, unsigned __int128)",
		"ns1::inner::Counter::Counter(int)",
		"ns1::inner::Counter::~Counter()",
		"ns1::inner::Counter::get() const",
		"ns1::Box<long, 505>::fill(int)",
		"ns1::Box<int, -3>::sum() const",
		"ns1::Box<char, 1>::fill(int)",
		"ns1::Flags<true, 7u, 9l, 11ul>::value(int)",
		"ns1::Flags<false, 0u, -2l, 0ul>::value(int)",
		"void* ns1::step<1>(int)",
		"long ns1::conv<char, true>(int)",
		"ns1::inner::Counter::merge(ns1::inner::Counter const&)",
		"ns1::merge(ns1::inner::Counter const&, ns1::inner::Counter*, ns1::Box<int, -3> const&, ns1::Box<int, -3>*)",
		"ns1::Wrap<ns1::Wrap<int> >::get() const",
		"ns1::Wrap<ns1::inner::Counter*>::get() const",
		"ns1::inner::Counter* ns1::counter_at<0>(ns1::inner::Counter*)",
		"take(Outer, Outer::In)",
	} {
		if !took[name] {
			t.Errorf("demangleSimple did not take %s", name)
		}
	}
	for _, name := range []string{
		"unsigned long long ns1::wrap<int>(int)",  // T_: a template parameter
		"int ns1::twice<int>(int)",                // T_ and S1_
		"ns1::(anonymous namespace)::hidden(int)", // _GLOBAL__N_1
		"typeinfo for ns1::inner::Counter",        // special names
		"operator delete(void*, unsigned long)",   // operators
	} {
		if took[name] {
			t.Errorf("demangleSimple took %s, which it should leave to the demangle package", name)
		}
	}
	if !slices.Contains(want, "ns1::(anonymous namespace)::hidden(int)") {
		t.Errorf("nm does not print ns1::(anonymous namespace)::hidden(int) (the test program changed?)")
	}

	// A real C++ server's names: Debian's mariadbd (the tests' upstream),
	// every exported C++ name it takes, against nm --demangle.
	names, want = nmDemangled(t, "_Z", "-D", "--defined-only", "/usr/sbin/mariadbd")
	_, taken := simpleTaken(t, "mariadbd", names, want)
	// It must take a real share, or the comparison above proves little.
	if taken < len(names)/2 {
		t.Errorf("demangleSimple took %d of mariadbd's %d C++ names, want at least half", taken, len(names))
	}
	t.Logf("mariadbd: demangleSimple took %d of %d C++ names, each as nm --demangle prints it", taken, len(names))
}
