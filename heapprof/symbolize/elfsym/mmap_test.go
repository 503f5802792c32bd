package elfsym

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMappingLivesWithItsHolders: a file's mapping stays mapped as long as
// a symbol table or a DWARF section read from it is held, even when
// nothing holds the mappedFile itself, and is unmapped once they are
// dropped. The collector does not see memory outside its heap, so a slice
// of the mapping alone would not keep it: an image dropped from the cache
// (Cache.ForgetBuildID) while background decoding still read its sections
// was unmapped under the reader, which died of a fault (CI, a5ae2bc, in
// TestDynamicSymbolVersions, whose table outlived its mappedFile).
func TestMappingLivesWithItsHolders(t *testing.T) {
	src, versionScript := filepath.Join(progsDir(t), "versioned.c"), filepath.Join(progsDir(t), "versioned.map")
	for _, c := range []struct{ name, gz string }{
		{"plain-dwarf", "-gz=none"},
		{"zlib-dwarf", "-gz=zlib"}, // .debug_info inflated from the mapping on demand
	} {
		t.Run(c.name, func(t *testing.T) {
			lib := filepath.Join(t.TempDir(), "libversioned.so")
			run(t, nil, "gcc", "-g", c.gz, "-O2", "-shared", "-fPIC", "-o", lib, src, "-Wl,--version-script="+versionScript)
			f, err := elf.Open(lib)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			wantInfo, err := f.Section(".debug_info").Data()
			if err != nil {
				t.Fatal(err)
			}
			tab, info, names := readHolders(t, f, lib)
			if len(names) == 0 {
				t.Fatal("no dynamic symbols read")
			}

			collectGarbage(t)
			if !isMapped(t, lib) {
				t.Fatal("the file was unmapped while a symbol table and a DWARF section read from it were held")
			}
			var again []string
			for i := range tab.len() {
				again = append(again, tab.nmName(i))
			}
			if !slices.Equal(again, names) {
				t.Errorf("symbol names changed after a collection: %q, were %q", again, names)
			}
			gotInfo, err := info.all()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(gotInfo, wantInfo) {
				t.Errorf(".debug_info read in place differs from debug/elf's (%d against %d bytes)", len(gotInfo), len(wantInfo))
			}

			runtime.KeepAlive(tab)
			runtime.KeepAlive(info)
			tab, info = nil, nil
			for deadline := time.Now().Add(10 * time.Second); isMapped(t, lib); {
				if time.Now().After(deadline) {
					t.Fatal("the file stays mapped after everything read from it was dropped")
				}
				collectGarbage(t)
			}
		})
	}
}

// readHolders maps path and returns its dynamic symbol table, its
// .debug_info section and the table's names, holding nothing else of the
// mapping: the mappedFile is unreachable once it returns.
func readHolders(t *testing.T, f *elf.File, path string) (*symTab, *debugSection, []string) {
	t.Helper()
	m, err := mapFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tab, err := readSymTab(f, m, elf.SHT_DYNSYM)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := mappedDWARF(f, m)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := range tab.len() {
		names = append(names, tab.nmName(i))
	}
	return tab, raw.info, names
}

// collectGarbage runs collections until cleanups queued by the first have
// run: a sentinel's cleanup, queued with the others, has.
func collectGarbage(t *testing.T) {
	t.Helper()
	for range 2 {
		done := make(chan struct{})
		func() {
			sentinel := new([64]byte)
			runtime.AddCleanup(sentinel, func(ch chan struct{}) { close(ch) }, done)
		}()
		for deadline := time.Now().Add(10 * time.Second); ; {
			runtime.GC()
			select {
			case <-done:
			case <-time.After(10 * time.Millisecond):
				if time.Now().After(deadline) {
					t.Fatal("a collection did not run an unreachable object's cleanup in 10 s")
				}
				continue
			}
			break
		}
	}
}

// isMapped reports whether the process maps path (/proc/self/maps).
func isMapped(t *testing.T, path string) bool {
	t.Helper()
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(maps), "\n") {
		if strings.HasSuffix(line, " "+path) {
			return true
		}
	}
	return false
}
