package elfsym

import (
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFallbackInputs builds the inputs fallbackToDebugDWARF's comment
// lists, in the shapes that need debug/dwarf and in those that do not,
// checks which ones go through the fallback, and compares every answer
// over addresses spread across each image with the real addr2line.
func TestFallbackInputs(t *testing.T) {
	dir := t.TempDir()
	progs := progsDir(t)
	gcc := func(out, src string, flags ...string) func(t *testing.T) string {
		return func(t *testing.T) string {
			cc := "g++"
			if strings.HasSuffix(src, ".c") {
				cc = "gcc"
			}
			bin := filepath.Join(dir, out)
			args := append(append([]string{}, flags...), "-o", bin, filepath.Join(progs, src), "-ljemalloc")
			run(t, nil, cc, args...)
			return bin
		}
	}
	zstd := func(t *testing.T) string {
		bin := gcc("inline-for-zstd", "inline.cc", "-g", "-O2")(t)
		out := bin + "-zstd"
		run(t, nil, "objcopy", "--compress-debug-sections=zstd", bin, out)
		return out
	}
	rust := func(version string) func(t *testing.T) string {
		return func(t *testing.T) string {
			src := filepath.Join(dir, "alloc.rs")
			prog := "use std::collections::HashMap;\n#[inline(never)]\nfn build(n: usize) -> HashMap<usize, String> {\n" +
				"    (0..n).map(|i| (i, format!(\"v{}\", i))).collect()\n}\n" +
				"fn main() { println!(\"{}\", build(std::env::args().count() * 1000).len()); }\n"
			if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
				t.Fatal(err)
			}
			bin := filepath.Join(dir, "rust-dwarf"+version)
			run(t, nil, "rustc", "-g", "-C", "opt-level=2", "-C", "dwarf-version="+version, "-o", bin, src)
			return bin
		}
	}
	goBinary := func(t *testing.T) string { return buildGoProgram(t, dir) }
	cases := []struct {
		name     string
		build    func(t *testing.T) string
		fallback bool // whether fallbackToDebugDWARF is used
		// functionsOnly: compare the outermost function only. addr2line
		// 2.40 misreads Go 1.26's DWARF 5 (go.go:0 for every address, no
		// inlined frames).
		functionsOnly bool
		// differ bounds the addresses known to differ from addr2line for
		// reasons that are not the fallback's (see the report); 0 for
		// exact agreement.
		differ int
	}{
		{name: "gcc-dwarf5-O2", build: gcc("inline-dwarf5", "inline.cc", "-g", "-O2")},
		{name: "gcc-dwarf4-O2", build: gcc("inline-dwarf4", "inline.cc", "-g", "-gdwarf-4", "-O2")},
		{name: "gcc-dwarf3-O2", build: gcc("inline-dwarf3", "inline.cc", "-g", "-gdwarf-3", "-O2")},
		{name: "gcc-dwarf2-O2", build: gcc("inline-dwarf2", "inline.cc", "-g", "-gdwarf-2", "-O2")},
		{name: "gcc-split-dwarf5", build: gcc("inline-split5", "inline.cc", "-g", "-gsplit-dwarf", "-O2")},
		{name: "gcc-split-dwarf4", build: gcc("inline-split4", "inline.cc", "-g", "-gdwarf-4", "-gsplit-dwarf", "-O2")},
		{name: "gcc-gz-zlib", build: gcc("inline-gz", "inline.cc", "-g", "-gz=zlib", "-O2")},
		{name: "gcc-types-dwarf4", build: gcc("templates-types4", "templates.cc", "-g", "-gdwarf-4", "-fdebug-types-section", "-O2")},
		{name: "gcc-lto", build: gcc("templates-lto", "templates.cc", "-g", "-flto", "-O2")},
		{name: "gcc-lto-dwarf4", build: gcc("deep-lto4", "deep.c", "-g", "-gdwarf-4", "-flto", "-O2")},
		{name: "objcopy-zstd", build: zstd, fallback: true},
		{name: "rustc-dwarf4", build: rust("4"), differ: 40},
		{name: "rustc-dwarf5", build: rust("5"), fallback: true, differ: 60},
		{name: "go-1.26", build: goBinary, fallback: true, functionsOnly: true, differ: 5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := c.build(t)
			pcs := samplePCs(t, bin, false, 3000)
			want := addr2line(t, bin, pcs)
			o, err := openObject(bin, nil)
			if err != nil {
				t.Fatal(err)
			}
			if o.dw == nil {
				t.Fatalf("%s: no DWARF read", bin)
			}
			seen := map[fnKey]bool{}
			got := map[uint64][]Frame{}
			o.dw.inBatches(pcs, 0, func(uint64) bool { return false }, func(pc uint64) {
				got[pc] = o.lookupRun(pc, seen)
			})
			if used := o.dw.usedDebugDWARF(); used != c.fallback {
				t.Errorf("fallback to debug/dwarf used: %v, want %v", used, c.fallback)
			}
			bad := 0
			for _, pc := range pcs {
				g, w := got[pc], want[pc]
				same := sameFrames(g, w)
				if c.functionsOnly {
					same = len(g) > 0 && len(w) > 0 && g[len(g)-1].Function == w[len(w)-1].Function
				}
				if !same {
					bad++
					if bad <= 5 && bad > c.differ {
						t.Errorf("%#x:\n got %v\nwant %v", pc, g, w)
					}
				}
			}
			t.Logf("%d of %d addresses differ from addr2line", bad, len(pcs))
			if bad > c.differ {
				t.Errorf("%d of %d addresses differ from addr2line, at most %d expected", bad, len(pcs), c.differ)
			}
		})
	}
}

// buildGoProgram builds a small Go program in dir: Go 1.26's linker writes
// DWARF 5 with DW_FORM_addrx in every unit, zlib-compressed.
func buildGoProgram(t testing.TB, dir string) string {
	t.Helper()
	mod := filepath.Join(dir, "gomod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"go.mod":  "module alloc\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(make([]byte, 1<<20)[0]) }\n",
	} {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "go-binary")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestPrimeUnits: primeUnits enters as many units as readelf lists, in
// plain, zstd-compressed (read through debug/elf's stream) and Go-built
// DWARF 5, so no unit is left for parallel decoders to enter first.
func TestPrimeUnits(t *testing.T) {
	dir := t.TempDir()
	extra := filepath.Join(dir, "extra.cc") // a second unit
	if err := os.WriteFile(extra, []byte("int extra_unit(int x) { return 3 * x; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "inline")
	run(t, nil, "g++", "-g", "-O2", "-o", plain, filepath.Join(progsDir(t), "inline.cc"), extra, "-ljemalloc")
	zstd := plain + "-zstd"
	run(t, nil, "objcopy", "--compress-debug-sections=zstd", plain, zstd)
	for _, bin := range []string{plain, zstd, buildGoProgram(t, dir)} {
		t.Run(filepath.Base(bin), func(t *testing.T) {
			want := strings.Count(string(run(t, nil, "readelf", "--debug-dump=info", bin)), "Compilation Unit @ offset")
			if want < 2 {
				t.Fatalf("readelf lists %d units", want)
			}
			f, err := elf.Open(bin)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			d, err := f.DWARF()
			if err != nil {
				t.Fatal(err)
			}
			if got := primeUnits(d, f.Section(".debug_info").Open()); got != want {
				t.Errorf("entered %d units, readelf lists %d", got, want)
			}
		})
	}
}
