package jeprofcmd

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/heapproxy/heapproxy/heapprof"
)

// The prefetch's scan finds the addresses and executable mappings
// heapprof.Parse finds (a difference would only cost time, but the scan
// skips what consecutive stacks share, which is easy to get wrong).
func TestScanHeapV2(t *testing.T) {
	const maps = "MAPPED_LIBRARIES:\n" +
		"55d0c0a00000-55d0c0a01000 r--p 00000000 fe:00 1 /opt/prog\n" +
		"55d0c0a01000-55d0c0a09000 r-xp 00001000 fe:00 1 /opt/prog\n" +
		"7f0000000000-7f0000100000 r-xp 00020000 fe:00 2 /usr/lib/libc.so.6\n" +
		"7ffd00000000-7ffd00001000 r-xp 00000000 00:00 0 [vdso]\n"
	stack := func(addrs string) string { return "@ " + addrs + "\n  t*: 1: 64 [0: 0]\n" }
	for _, c := range []struct {
		name   string
		stacks []string
	}{
		{"one", []string{stack("0x55d0c0a01010 0x55d0c0a01020 0x7f0000000100")}},
		// The previous leaf is this stack's caller: the same text, not the
		// same address.
		{"leaf becomes caller", []string{stack("0x55d0c0a01020 0x7f0000000100"),
			stack("0x55d0c0a01010 0x55d0c0a01020 0x7f0000000100")}},
		{"caller becomes leaf", []string{stack("0x55d0c0a01010 0x55d0c0a01020 0x7f0000000100"),
			stack("0x55d0c0a01020 0x7f0000000100")}},
		// Addresses that share digits across the common prefix and suffix.
		{"partial tokens", []string{stack("0x55d0c0a01011 0x55d0c0a01123 0x7f0000000100"),
			stack("0x55d0c0a01011 0x55d0c0a0112 0x7f0000000100"),
			stack("0x55d0c0a0101 0x55d0c0a01123 0x7f00000001000"),
			stack("0x55d0c0a01011 0x5d0c0a01123 0x7f0000000100")}},
		// The previous leaf's text is where this one starts (a leaf the
		// same as the previous one is not read again).
		{"leaf extends", []string{stack("0x55d0c0a0101 0x7f0000000100"), stack("0x55d0c0a01011 0x7f0000000100"),
			stack("0x55d0c0a01011\t0x7f0000000100"), stack("0x55d0c0a01011")}},
		{"carriage returns", []string{stack("0x55d0c0a01010 0x7f0000000100\r"), stack("0x55d0c0a01020 0x7f0000000100 \r")}},
		{"same stack twice", []string{stack("0x55d0c0a01010 0x7f0000000100"), stack("0x55d0c0a01010 0x7f0000000100")}},
		{"tabs and no 0x", []string{stack("55d0c0a01010\t0x55d0c0a01020  7f0000000100"),
			stack("0x55d0c0a01030\t55d0c0a01020  7f0000000100 ")}},
		{"deep", []string{stack(strings.Repeat("0x55d0c0a01040 ", 60) + "0x7f0000000100"),
			stack("0x55d0c0a01050 " + strings.Repeat("0x55d0c0a01040 ", 59) + "0x7f0000000100")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := "heap_v2/524288\n  t*: 9: 576 [0: 0]\n  t0: 9: 576 [0: 0]\n" + strings.Join(c.stacks, "") + "\n" + maps
			checkScan(t, text)
		})
	}
}

// Random stacks over a few addresses, each sharing a random part of the
// previous one's start or end.
func TestScanHeapV2Random(t *testing.T) {
	checkScan(t, randomDump(2000, 7))
}

// randomDump is a heap_v2 dump of n stacks.
func randomDump(n int, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed))
	pool := make([]string, 64)
	for i := range pool {
		pool[i] = fmt.Sprintf("%#x", 0x55d0c0a01000+uint64(rng.IntN(0x8000)))
		if i%5 == 0 {
			pool[i] = fmt.Sprintf("%#x", 0x7f0000000000+uint64(rng.IntN(0x100000)))
		}
	}
	var b strings.Builder
	b.WriteString("heap_v2/524288\n  t*: 9: 576 [0: 0]\n")
	var prev []string
	for range n {
		var st []string
		if rng.IntN(2) == 0 { // the previous start, another end
			st = append(st, prev[:rng.IntN(len(prev)+1)]...)
		}
		for range 1 + rng.IntN(12) {
			st = append(st, pool[rng.IntN(len(pool))])
		}
		if len(prev) > 0 && rng.IntN(2) == 0 {
			st = append(st, prev[rng.IntN(len(prev)):]...)
		}
		fmt.Fprintf(&b, "@ %s\n  t*: 1: 64 [0: 0]\n", strings.Join(st, " "))
		prev = st
	}
	b.WriteString("\nMAPPED_LIBRARIES:\n55d0c0a01000-55d0c0a09000 r-xp 00001000 fe:00 1 /opt/prog\n" +
		"7f0000000000-7f0000100000 r-xp 00020000 fe:00 2 /usr/lib/libc.so.6\n")
	return b.String()
}

// checkScan compares scanHeapV2 on the dump text with heapprof.Parse.
func checkScan(t *testing.T, text string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "prof.heap")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := heapprof.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, loc := range p.Location {
		want = append(want, loc.Address)
	}
	gotMaps, got := scanHeapV2(context.Background(), file)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("addresses:\n got %x\nwant %x", got, want)
	}
	if len(gotMaps) != len(p.Mapping) {
		t.Fatalf("%d mappings, Parse has %d", len(gotMaps), len(p.Mapping))
	}
	for i, m := range p.Mapping {
		g := gotMaps[i]
		if g.Start != m.Start || g.Limit != m.Limit || g.Offset != m.Offset || g.File != m.File {
			t.Errorf("mapping %d: got %+v, Parse has %+v", i, *g, *m)
		}
	}
}

// Not a heap_v2 dump (or not a regular file): nothing, and no error.
func TestScanOtherInputs(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"gperftools": "heap profile:    1:    64 [     1:    64] @ heapprofile\n",
		"empty":      "",
		"no maps":    "heap_v2/524288\n  t*: 1: 64 [0: 0]\n@ 0x1 0x2\n  t*: 1: 64 [0: 0]\n",
	} {
		file := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if maps, addrs := scanHeapV2(context.Background(), file); len(maps)+len(addrs) != 0 {
			t.Errorf("%s: %d mappings, %d addresses", name, len(maps), len(addrs))
		}
	}
	if maps, addrs := scanHeapV2(context.Background(), dir); len(maps)+len(addrs) != 0 {
		t.Errorf("a directory: %d mappings, %d addresses", len(maps), len(addrs))
	}
}

// BenchmarkScan scans a dump of 40,000 random stacks (bench/heapprof
// measures it on a real one, inside heapproxy dot).
func BenchmarkScan(b *testing.B) {
	file := filepath.Join(b.TempDir(), "prof.heap")
	if err := os.WriteFile(file, []byte(randomDump(40000, 1)), 0o644); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if maps, addrs := scanHeapV2(context.Background(), file); len(maps) == 0 || len(addrs) == 0 {
			b.Fatal("nothing scanned")
		}
	}
}
