package elfsym

import (
	"path/filepath"
	"testing"
)

// AArch64 nodes (Graviton, Kunpeng, Ampere) run the same databases; their
// files are read here by the same code, and answered as Debian's cross
// binutils for aarch64-linux-gnu (2.40) answer. BFD's AArch64 back end
// differs from its generic ELF code in what it takes for a function: no
// mapping symbol ($x marks where code starts, often a function's first
// instruction) and no type but untyped and function; nm hides the mapping
// symbols too. Without that, "$x" named main and most of the program.

// TestAddr2LineAArch64 compares every record with aarch64-linux-gnu-addr2line
// over whole images: the test program (PIE and not), its library and a
// stripped copy of it, Debian's arm64 libjemalloc and libstdc++ (read
// through .dynsym) and libc from libc6-dbg:arm64's debug file.
func TestAddr2LineAArch64(t *testing.T) {
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	const arm64Lib = "/usr/lib/aarch64-linux-gnu"
	dir := t.TempDir()
	lib := filepath.Join(dir, "libsymtest.so")
	run(t, nil, "aarch64-linux-gnu-gcc", "-g", "-O2", "-shared", "-fPIC", "-o", lib, filepath.Join(src, "lib.c"))
	stripped := filepath.Join(dir, "libsymtest-stripped.so")
	run(t, nil, "aarch64-linux-gnu-strip", "--strip-all", "-o", stripped, lib)
	images := []addrImage{{"lib", lib, false}, {"stripped-lib", stripped, true}}
	for _, shape := range []struct {
		name  string
		flags []string
	}{
		{"O2-pie", []string{"-O2", "-fPIE", "-pie"}},
		{"O0-nopie", []string{"-O0", "-fno-pie", "-no-pie"}},
	} {
		bin := filepath.Join(dir, "prog-"+shape.name)
		args := append([]string{"-g"}, shape.flags...)
		args = append(args, "-o", bin, filepath.Join(src, "prog.cc"), "-L"+dir, "-lsymtest",
			arm64Lib+"/libjemalloc.so.2", "-Wl,-rpath-link,"+arm64Lib)
		run(t, nil, "aarch64-linux-gnu-g++", args...)
		images = append(images, addrImage{shape.name, bin, false})
	}
	images = append(images,
		addrImage{"libjemalloc", arm64Lib + "/libjemalloc.so.2", true},
		addrImage{"libstdc++", arm64Lib + "/libstdc++.so.6", true},
		addrImage{"libc-debug", debugFileOf(t, arm64Lib+"/libc.so.6"), false},
	)
	checkAddr2Line(t, images)
}

// TestAArch64SpecialSymbols: the names BFD's AArch64 back end treats as
// special (bfd_is_aarch64_special_symbol_name in bfd/cpu-aarch64.c).
func TestAArch64SpecialSymbols(t *testing.T) {
	for name, want := range map[string]bool{
		"$x": true, "$d": true, "$x.12": true, "$d.0": true, "$m": true, "$f": true, "$p.x": true,
		"$a": false, "$t": false, "$xy": false, "$": false, "x": false, "": false, "main": false, "$$x": false,
	} {
		if got := aarch64Special([]byte(name)); got != want {
			t.Errorf("aarch64Special(%q) = %v, want %v", name, got, want)
		}
	}
}
