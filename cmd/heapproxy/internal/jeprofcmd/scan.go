package jeprofcmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym"
)

// prefetch hands the symbolizer the addresses and executable mappings of
// the jemalloc heap_v2 dump in file while heapprof parses it, so the
// DWARF they need is decoded on the other core meanwhile (elfsym's
// Prefetch). It reads the file on its own, the mappings from its end
// first. It is only a head start: a file it cannot read this way (another
// format, not a regular file) or a ctx that ends (the parse is done) stops
// it quietly, and Symbolize does what is left.
func prefetch(ctx context.Context, file string, sym *elfsym.Local) {
	maps, addrs := scanHeapV2(ctx, file)
	if len(maps) == 0 || len(addrs) == 0 || ctx.Err() != nil {
		return
	}
	sym.Prefetch(ctx, maps, addrs)
}

// The markers that end a heap_v2 dump's stacks (as heapprof reads them).
var mapsMarkers = [][]byte{[]byte("\nMAPPED_LIBRARIES:"), []byte("\n--- Memory map:")}

// scanHeapV2 returns the executable mappings of a heap_v2 dump and the
// distinct addresses of its stacks as heapprof.Parse makes them (every
// caller PC minus one), or nothing when file is not such a dump.
func scanHeapV2(ctx context.Context, file string) ([]*profile.Mapping, []uint64) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	size := st.Size()
	head := make([]byte, 8)
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, []byte("heap_v2/")) {
		return nil, nil
	}
	end, maps := readMaps(f, size)
	if end < 0 {
		return nil, nil
	}
	return maps, scanStacks(ctx, io.NewSectionReader(f, 0, end))
}

// readMaps finds the mappings section from the end of the file (it is
// last, and short next to the stacks) and returns its offset and its
// executable mappings; -1 when there is none.
func readMaps(f *os.File, size int64) (int64, []*profile.Mapping) {
	for n := int64(64 << 10); ; n *= 4 {
		n = min(n, size)
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return -1, nil
		}
		at := -1
		for _, m := range mapsMarkers {
			if i := bytes.LastIndex(buf, m); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at >= 0 {
			return size - n + int64(at), parseMaps(buf[at+1:])
		}
		if n == size {
			return -1, nil
		}
	}
}

// parseMaps reads the executable file mappings of /proc/self/maps lines
// (start-limit perms offset dev inode path), the first line being the
// marker's.
func parseMaps(b []byte) []*profile.Mapping {
	var maps []*profile.Mapping
	for i, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if i == 0 || len(f) < 6 || len(f[1]) != 4 || f[1][2] != 'x' {
			continue
		}
		lo, hi, ok := strings.Cut(strings.TrimPrefix(f[0], "0x"), "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		limit, err2 := strconv.ParseUint(hi, 16, 64)
		offset, err3 := strconv.ParseUint(f[2], 16, 64)
		if err1 != nil || err2 != nil || err3 != nil || limit < start {
			continue
		}
		maps = append(maps, &profile.Mapping{ID: uint64(len(maps) + 1), Start: start, Limit: limit, Offset: offset,
			File: strings.Join(f[5:], " ")})
	}
	return maps
}

// scanStacks collects the distinct addresses of the "@ 0x... 0x..." lines
// of r, the leaf PC as written and every caller's minus one.
func scanStacks(ctx context.Context, r io.Reader) []uint64 {
	var sc stackScanner
	br := bufio.NewReaderSize(r, 256<<10)
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return nil
		}
		line, err := br.ReadSlice('\n')
		for err == bufio.ErrBufferFull { // longer than any stack line: skipped
			_, err = br.ReadSlice('\n')
			line = nil
		}
		sc.line(line)
		if err != nil {
			return sc.set.list()
		}
	}
}

// stackScanner reads stack lines. Consecutive stacks of a dump share most
// of their text (the allocator's frames at the start, the program's outer
// frames at the end), so only the part of a line that differs from the
// previous one is parsed: the addresses of the rest are in the set.
type stackScanner struct {
	set  addrSet
	prev []byte // the previous stack line's addresses
	// prevLeaf is where its first address ends: that one is the leaf, the
	// same text later in a line is a caller's, which is another address.
	prevLeaf int
}

func (sc *stackScanner) line(line []byte) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i == len(line) || line[i] != '@' {
		return
	}
	body := bytes.TrimRight(line[i+1:], " \t\r\n")
	// The leaf, always.
	leaf := 0
	for leaf < len(body) && isSep(body[leaf]) {
		leaf++
	}
	a, end, ok := hexAt(body, leaf)
	if !ok {
		return // not an address: left to the parse to report
	}
	sc.set.add(a)
	// Then the callers between the common prefix and the common suffix,
	// widened to whole addresses.
	from, to := commonPrefix(body, sc.prev), len(body)-commonSuffix(body, sc.prev, len(sc.prev)-sc.prevLeaf)
	for from > 0 && !isSep(body[from-1]) {
		from--
	}
	for to < len(body) && !isSep(body[to]) {
		to++
	}
	for from = max(from, end); from < to; {
		if isSep(body[from]) {
			from++
			continue
		}
		a, from, ok = hexAt(body, from)
		if !ok {
			break
		}
		sc.set.add(a - 1)
	}
	sc.prev, sc.prevLeaf = append(sc.prev[:0], body...), end
}

func isSep(c byte) bool { return c == ' ' || c == '\t' }

// hexAt reads the address at i ("0x" and 1 to 16 hex digits) and returns
// it and where it ends.
func hexAt(b []byte, i int) (uint64, int, bool) {
	if i+1 < len(b) && b[i] == '0' && b[i+1] == 'x' {
		i += 2
	}
	var a uint64
	start := i
	for ; i < len(b); i++ {
		d := hexValue[b[i]]
		if d > 15 {
			break
		}
		a = a<<4 | uint64(d)
	}
	if n := i - start; n == 0 || n > 16 || i < len(b) && !isSep(b[i]) {
		return 0, i, false
	}
	return a, i, true
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b, at
// most limit.
func commonSuffix(a, b []byte, limit int) int {
	n := min(len(a), len(b), limit)
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[len(a)-i-8:]) == binary.LittleEndian.Uint64(b[len(b)-i-8:]) {
		i += 8
	}
	for i < n && a[len(a)-1-i] == b[len(b)-1-i] {
		i++
	}
	return i
}

// hexValue maps a byte to its hex digit's value, 16 for anything else.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 16
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// addrSet is a set of addresses: open addressing, linear probing. A dump
// repeats a few thousand addresses in hundreds of thousands of frames.
type addrSet struct {
	slots []uint64 // a+1; 0 is free
	n     int
}

func (s *addrSet) add(a uint64) {
	if 2*(s.n+1) > len(s.slots) {
		old := s.slots
		s.slots = make([]uint64, max(1024, 2*len(old)))
		s.n = 0
		for _, v := range old {
			if v != 0 {
				s.add(v - 1)
			}
		}
	}
	mask := uint64(len(s.slots) - 1)
	for i := (a * 0x9E3779B97F4A7C15) >> 20 & mask; ; i = (i + 1) & mask {
		switch s.slots[i] {
		case a + 1:
			return
		case 0:
			s.slots[i] = a + 1
			s.n++
			return
		}
	}
}

func (s *addrSet) list() []uint64 {
	out := make([]uint64, 0, s.n)
	for _, v := range s.slots {
		if v != 0 {
			out = append(out, v-1)
		}
	}
	return out
}
