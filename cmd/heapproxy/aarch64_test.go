package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// aarch64Jemalloc is jemalloc built for aarch64 with its heap profiler
// (testdata/aarch64/jemalloc.sh; Debian ships none).
func aarch64Jemalloc(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("HEAPPROXY_JEMALLOC_AARCH64")
	if dir == "" {
		dir = "/opt/heapproxy-ci/jemalloc-aarch64"
	}
	if _, err := os.Stat(filepath.Join(dir, "lib", "libjemalloc.so.2")); err != nil {
		t.Fatalf("no jemalloc with the profiler for aarch64 in %s: run testdata/aarch64/jemalloc.sh (.ci/run does): %v", dir, err)
	}
	return dir
}

// qemuGuestMaps runs qemu-aarch64 "$1" "$2" so that jemalloc writes the
// guest's memory map into its dump, as on an AArch64 kernel. jemalloc 5.3
// reads /proc/<pid>/task/<pid>/maps, falling back to /proc/<pid>/maps
// (src/prof_sys.c); qemu-user 7.2 answers only the latter for the guest
// and passes the former to the host, whose map of the emulator shows the
// guest's code as not executable and the emulator's own x86-64
// libraries. So, in a mount namespace of its own, an empty tmpfs hides
// the task directory of the shell that execs qemu (same pid).
const qemuGuestMaps = `mount -t tmpfs none /proc/$$/task && exec qemu-aarch64 "$1" "$2"`

// TestRenderAArch64MatchesJeprof profiles AArch64 programs (PIE, with
// shared libraries: jemalloc with DWARF, libstdc++, libc with its debug
// file), run under qemu-user with jemalloc's profiler, and compares
// heapproxy dot and text with jeprof's, which reads them with Debian's
// aarch64 binutils (JEPROF_TOOLS). Before heapproxy knew BFD's AArch64
// rules, "$x", a mapping symbol, named main and most of the graph.
func TestRenderAArch64MatchesJeprof(t *testing.T) {
	je := aarch64Jemalloc(t)
	progs, err := filepath.Abs("../../testdata/progs")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src, compiler string
		flags               []string
	}{
		{"templates", "templates.cc", "aarch64-linux-gnu-g++", []string{"-g", "-O2"}},
		{"inline", "inline.cc", "aarch64-linux-gnu-g++", []string{"-g", "-O2"}},
		// -O0, as heapprof's tests build it: at -O2 gcc drops mallocs
		// whose blocks are never read.
		{"shallow", "shallow.c", "aarch64-linux-gnu-gcc", []string{"-g", "-O0"}},
		// No DWARF: every name comes from the symbol table, where
		// nm and addr2line leave the mapping symbols out.
		{"templates-symtab", "templates.cc", "aarch64-linux-gnu-g++", []string{"-g0", "-O2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			bin := filepath.Join(dir, strings.TrimSuffix(c.src, filepath.Ext(c.src)))
			args := append(append([]string(nil), c.flags...),
				"-I", filepath.Join(je, "include"), "-I", progs, "-o", bin, filepath.Join(progs, c.src),
				filepath.Join(je, "lib", "libjemalloc.so.2"), "-Wl,-rpath,"+filepath.Join(je, "lib"),
				"-Wl,-rpath-link,/usr/lib/aarch64-linux-gnu")
			build := exec.CommandContext(ctx, c.compiler, args...)
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", c.compiler, err, out)
			}
			heap := filepath.Join(dir, "0.heap")
			prof := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "sh", "-c",
				qemuGuestMaps, "sh", bin, heap)
			prof.Env = append(os.Environ(), "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10")
			if out, err := prof.CombinedOutput(); err != nil {
				t.Fatalf("qemu-aarch64 %s: %v\n%s", bin, err, out)
			}
			// The guest's map, as an AArch64 kernel writes it: the program's
			// code executable, no x86-64 library of the emulator.
			if data, err := os.ReadFile(heap); err != nil || !strings.Contains(string(data), " r-xp 00000000 ") ||
				strings.Contains(string(data), "x86_64-linux-gnu") {
				t.Fatalf("%s: want the guest's maps in MAPPED_LIBRARIES (%v):\n%s", heap, err, data)
			}
			got := renderMatchesJeprof(t, []string{"JEPROF_TOOLS=/usr/bin/aarch64-linux-gnu-"}, bin, heap)
			if !strings.Contains(got, `label="main\n`) || strings.Contains(got, "$x") || strings.Contains(got, `label="0x`) {
				t.Errorf("the graph should name main and every frame, and no mapping symbol:\n%s", got)
			}
		})
	}
}

// TestRenderWithoutMappedLibraries: a jemalloc dump whose
// MAPPED_LIBRARIES section is empty (jemalloc could not read the
// process's maps) is named like jeprof names it, every address from the
// program unrelocated, instead of passing for symbolized.
func TestRenderWithoutMappedLibraries(t *testing.T) {
	bin, heaps := buildProfiled(t, "templates.cc", "g++", 1, "-fno-pie", "-no-pie")
	data, err := os.ReadFile(heaps[0])
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(data), "\nMAPPED_LIBRARIES:\n")
	if i < 0 {
		t.Fatalf("%s has no MAPPED_LIBRARIES section", heaps[0])
	}
	heap := filepath.Join(t.TempDir(), "nomaps.heap")
	if err := os.WriteFile(heap, append(data[:i:i], "\nMAPPED_LIBRARIES:\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := renderMatchesJeprof(t, nil, bin, heap); !strings.Contains(got, `label="main\n`) {
		t.Errorf("the graph should name main:\n%s", got)
	}
}

// TestAArch64BinaryUnderQemu runs heapproxy built for linux/arm64 under
// qemu-user, in front of a real MariaDB: a forwarded query answers what
// MariaDB answers directly, and ADMIN EXECUTE ON FRONTEND dumps heapproxy
// itself as a DOT graph Graphviz accepts. Emulated, not an ARM machine:
// it shows the event loops, the raw socket I/O and the profiler build and
// run for arm64, not how fast.
func TestAArch64BinaryUnderQemu(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "heapproxy-arm64")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build for arm64: %v\n%s", err, out)
	}
	srv, err := mariadbtest.Start(mariadbtest.Options{TCP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	addrs, _ := startAddrs(t, 1, exec.Command("qemu-aarch64", bin, "--listen", "127.0.0.1:0",
		"--upstream", srv.Addr, "--data-dir", t.TempDir()))
	mariadb := func(addr, sql string) string {
		t.Helper()
		host, port, _ := strings.Cut(addr, ":")
		out, err := exec.Command("mariadb", "--no-defaults", "-h", host, "-P", port, "-uroot", "-D", "mysql",
			"-N", "-r", "-e", sql).CombinedOutput()
		if err != nil {
			t.Fatalf("mariadb -P %s -e %q: %v\n%s", port, sql, err, out)
		}
		return string(out)
	}
	const q = "SELECT @@version, SUM(seq), MAX(seq) FROM seq_1_to_200000; SELECT seq, REPEAT('x', seq % 97) FROM seq_1_to_20000"
	if got, want := mariadb(addrs["listening"], q), mariadb(srv.Addr, q); got != want {
		t.Fatalf("through heapproxy on arm64 (%d bytes) differs from MariaDB directly (%d bytes):\n%.300s", len(got), len(want), got)
	}
	out := mariadb(addrs["listening"], "ADMIN EXECUTE ON FRONTEND 'System.print(HeapProf.getInstance().dump_dot_snapshot())'")
	if !strings.HasPrefix(out, "digraph \"heapproxy-node-1; ") {
		t.Fatalf("dump_dot_snapshot on arm64:\n%.500s", out)
	}
	graphvizAccepts(t, out)
}
