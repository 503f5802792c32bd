package heapprof

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"io"

	"github.com/google/pprof/profile"
)

// The markers that end a heap_v2 dump's stacks (Parse's and ScanHeapV2's).
var mapsMarkers = [][]byte{[]byte("\nMAPPED_LIBRARIES:"), []byte("\n--- Memory map:")}

// ScanHeapV2 returns the executable mappings of the jemalloc heap_v2 dump
// in r (size bytes) and the distinct addresses of its stacks as Parse makes
// them (the leaf PC as written, every caller's minus one), reading the
// mappings from the end first and then only what differs between
// consecutive stack lines; nothing when r is not such a dump or ctx ends.
// It lets a symbolizer start on the addresses while Parse reads the same
// dump; Parse remains the one that reports what is wrong with it.
func ScanHeapV2(ctx context.Context, r io.ReaderAt, size int64) ([]*profile.Mapping, []uint64) {
	head := make([]byte, 8)
	if _, err := r.ReadAt(head, 0); err != nil || !bytes.Equal(head, []byte("heap_v2/")) {
		return nil, nil
	}
	end, maps := scanMaps(r, size)
	if end < 0 {
		return nil, nil
	}
	return maps, scanStacks(ctx, io.NewSectionReader(r, 0, end))
}

// scanMaps finds the mappings section from the end of the dump (it is
// last, and short next to the stacks) and returns its offset and its
// executable mappings (parseMaps); -1 when there is none.
func scanMaps(r io.ReaderAt, size int64) (int64, []*profile.Mapping) {
	for n := int64(64 << 10); ; n *= 4 {
		n = min(n, size)
		buf := make([]byte, n)
		if _, err := r.ReadAt(buf, size-n); err != nil && err != io.EOF {
			return -1, nil
		}
		at := -1
		for _, m := range mapsMarkers {
			if i := bytes.LastIndex(buf, m); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at >= 0 {
			lines := splitLines(string(buf[at+1:]))
			maps, err := parseMaps(lines[1:], 0) // after the marker's line
			if err != nil {
				return -1, nil
			}
			return size - n + int64(at), maps
		}
		if n == size {
			return -1, nil
		}
	}
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
	body := line[i+1:]
	for len(body) > 0 && (isSep(body[len(body)-1]) || body[len(body)-1] == '\r' || body[len(body)-1] == '\n') {
		body = body[:len(body)-1]
	}
	pre := commonPrefix(body, sc.prev)
	// The leaf, unless the previous line starts with the same one (its
	// text and the separator after it).
	end := sc.prevLeaf
	if pre <= end {
		leaf := 0
		for leaf < len(body) && isSep(body[leaf]) {
			leaf++
		}
		var a uint64
		var ok bool
		if a, end, ok = readAddress(body, leaf); !ok {
			return // not an address: left to the parse to report
		}
		sc.set.add(a)
	}
	// Then the callers between the common prefix and the common suffix,
	// widened to whole addresses.
	from, to := pre, len(body)-commonSuffix(body, sc.prev, len(sc.prev)-sc.prevLeaf)
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
		a, next, ok := readAddress(body, from)
		if !ok {
			break
		}
		sc.set.add(a - 1)
		from = next
	}
	sc.prev, sc.prevLeaf = append(sc.prev[:0], body...), end
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
