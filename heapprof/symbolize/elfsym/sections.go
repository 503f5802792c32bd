package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"sync"
	"syscall"
	"unsafe"

	"github.com/klauspost/compress/flate"
	"golang.org/x/sys/unix"
)

// debugSection is one DWARF section of a mapped image: used in place when
// stored plainly, inflated on demand when zlib-compressed (SHF_COMPRESSED,
// as in Debian's libc6-dbg). Inflation stops at the furthest offset asked
// for: the units a profile needs from libc usually lie in its first few
// hundred KB, while the whole .debug_info is 6 MB and takes most of a
// cold lookup's time to inflate.
//
// A section told which units will be read (plan: .debug_info, from the
// addresses a profile holds) keeps only those and the ranges asked for;
// the bytes in between are inflated into a scratch buffer and dropped.
// A threaded program's stacks end in clone3, whose unit (an assembly
// file's, 86 bytes) lies 4.2 MB into the 5.8 MB .debug_info of Debian 12's
// libc6-dbg (2.36-9+deb12u14, unit 0x3f5e9d): keeping the prefix took
// 4 MB of memory for it.
type debugSection struct {
	plain []byte // an uncompressed section, mapped
	// file keeps the mapping plain and raw lie in: a slice of it does not
	// keep it from being unmapped.
	file *mappedFile

	mu    sync.Mutex
	size  int              // uncompressed size
	order binary.ByteOrder // the file's, for unit lengths
	z     io.ReadCloser    // inflater; nil once done
	in    *bytes.Reader    // z's input, the compressed bytes (mapped)
	raw   []byte           // the compressed bytes in
	buf   []byte           // inflated bytes at their offsets; cap == size, never reallocated
	pos   int              // how far the stream is inflated
	err   error

	// sparse: only planned units and asked ranges are kept below pos,
	// listed in valid; otherwise everything below pos is kept (valid then
	// lists ranges kept before a restart, which are not written again:
	// readers may hold them).
	sparse    bool
	restarted bool // inflated again after dropping bytes: keeps everything from then on
	valid     []span
	planned   []int // starts of planned units at or after pos, ascending
	keepTo    int   // end of the kept unit pos is in
	unitAt    int   // start of a planned unit whose length is not read yet; -1 if none
	scratch   []byte
}

// span is a range [start, end): of a section, or of demangleSimple's
// printed text.
type span struct{ start, end int }

// maxInflated bounds a compressed section's claimed size: zlib cannot
// expand more than ~1032x, and no debug section of interest nears 4 GB.
const maxInflated = 1 << 32

// newDebugSection returns the section s of the mapped file m.
func newDebugSection(f *elf.File, s *elf.Section, m *mappedFile) (*debugSection, error) {
	data := m.data
	end := s.Offset + s.FileSize
	if end < s.Offset || end > uint64(len(data)) {
		return nil, fmt.Errorf("section %s outside the file", s.Name)
	}
	raw := data[s.Offset:end:end]
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		return &debugSection{plain: raw, file: m}, nil
	}
	// Elf64_Chdr / Elf32_Chdr: type, (reserved,) size, alignment.
	var typ uint32
	var size uint64
	hdr := 24
	if f.Class == elf.ELFCLASS32 {
		hdr = 12
	}
	if len(raw) < hdr {
		return nil, fmt.Errorf("section %s: short compression header", s.Name)
	}
	typ = f.ByteOrder.Uint32(raw)
	if f.Class == elf.ELFCLASS32 {
		size = uint64(f.ByteOrder.Uint32(raw[4:]))
	} else {
		size = f.ByteOrder.Uint64(raw[8:])
	}
	switch elf.CompressionType(typ) {
	case elf.COMPRESS_ZLIB:
	case elf.COMPRESS_ZSTD:
		return nil, fmt.Errorf("section %s: %w", s.Name, errZstd)
	default:
		return nil, fmt.Errorf("section %s: compression %v not read", s.Name, elf.CompressionType(typ))
	}
	if size > maxInflated || size > uint64(len(raw))*1100+1024 {
		return nil, fmt.Errorf("section %s: implausible size %d", s.Name, size)
	}
	// The zlib stream's 2-byte header is checked here and its deflate data
	// inflated by klauspost/compress's flate, whose decoder reads a
	// *bytes.Reader without an interface call per byte (inflating what
	// bench/heapprof's o2 profile needs of libc: 124M -> 80M instructions,
	// callgrind). The trailing Adler-32 is not checked: a section is mostly
	// inflated only in part, where there is no checksum to check.
	zs := raw[hdr:]
	if len(zs) < 2 || zs[0]&0x0f != 8 || zs[0]>>4 > 7 || (uint(zs[0])<<8|uint(zs[1]))%31 != 0 || zs[1]&0x20 != 0 {
		return nil, fmt.Errorf("section %s: invalid zlib header", s.Name)
	}
	in := bytes.NewReader(zs[2:])
	z := flate.NewReader(in)
	buf, err := anonymousMap(int(size))
	if err != nil {
		return nil, fmt.Errorf("section %s: %w", s.Name, err)
	}
	ds := &debugSection{file: m, size: int(size), order: f.ByteOrder, z: z, in: in, raw: zs[2:], buf: buf, unitAt: -1}
	if len(buf) > 0 {
		// Everything that holds a slice of buf also holds ds (rawDWARF).
		runtime.AddCleanup(ds, func(b []byte) { _ = syscall.Munmap(b) }, buf)
	}
	return ds, nil
}

// anonymousMap returns n bytes of fresh anonymous memory, outside the Go
// heap: only the pages inflation writes become resident (libc's 6 MB
// .debug_info is mostly never reached), and the GC neither zeroes nor
// scans it. It is unmapped when the slice's holder is collected.
func anonymousMap(n int) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	b, err := unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
	if err != nil {
		return nil, fmt.Errorf("map %d bytes: %w", n, err)
	}
	return b, nil
}

// len is the section's (uncompressed) size.
func (s *debugSection) len() int {
	if s.plain != nil {
		return len(s.plain)
	}
	return s.size
}

// prefix returns the section's first n bytes at least (all of it when
// n exceeds its size); shorter only when inflation failed. The slice
// stays valid: inflation writes within the buffer's capacity.
func (s *debugSection) prefix(n int) []byte { return s.slice(0, n) }

// slice returns a slice of the section, from its start, that holds the
// bytes [start, end) (to the section's end at most); shorter than end
// only when inflation failed. Only what lies from start to the slice's
// end may be read: in a sparse section, the bytes before start may be
// ranges never inflated (zeros).
func (s *debugSection) slice(start, end int) []byte {
	if s.plain != nil {
		return s.plain
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	end = min(end, s.size)
	start = min(max(start, 0), end)
	if !s.sparse {
		s.inflate(end, 0)
		return s.buf[:s.pos]
	}
	if e := s.keptFrom(start); e >= end {
		return s.buf[:e]
	} else if e < s.pos && start < s.pos {
		// Bytes behind the stream that were dropped: inflate again from
		// the start, keeping everything this time (planned units cover
		// the addresses a profile holds, so this is rare).
		s.restart()
		s.inflate(end, 0)
		return s.buf[:s.pos]
	}
	s.inflate(end, start)
	if e := s.keptFrom(start); e >= end {
		return s.buf[:e]
	}
	return s.buf[:start] // inflation failed
}

// plan tells a compressed section that the units starting at these
// offsets will be read: from now on, it keeps them and what slice asks for,
// and drops the rest (see debugSection).
func (s *debugSection) plan(starts []int) {
	if s == nil || s.plain != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pos == s.size || s.err != nil || s.restarted {
		return
	}
	if !s.sparse {
		s.sparse = true
		s.valid = s.valid[:0]
		if s.pos > 0 {
			s.valid = append(s.valid, span{0, s.pos})
		}
	}
	for _, st := range starts {
		if st < s.pos || st >= s.size {
			continue // behind the stream: a request restarts it
		}
		if i, found := slices.BinarySearch(s.planned, st); !found {
			s.planned = slices.Insert(s.planned, i, st)
		}
	}
}

// keptFrom returns the end of the kept bytes that run from start without
// a gap, or start when the byte at start is not kept.
func (s *debugSection) keptFrom(start int) int {
	i := sort.Search(len(s.valid), func(i int) bool { return s.valid[i].end > start })
	if i < len(s.valid) && s.valid[i].start <= start {
		return s.valid[i].end
	}
	return start
}

// restart inflates the section again from its start, keeping everything.
func (s *debugSection) restart() {
	if s.z != nil {
		s.z.Close()
	}
	s.in = bytes.NewReader(s.raw)
	s.z = flate.NewReader(s.in)
	s.pos, s.sparse, s.restarted, s.planned, s.keepTo, s.unitAt = 0, false, true, nil, 0, -1
}

// inflateStep is how far a call inflates at least (each call costs a
// lock), and the scratch buffer's size.
const inflateStep = 256 << 10

// inflate runs the stream to end at least. A sparse section keeps what
// lies in planned units and from keepFrom on, and drops the rest;
// otherwise everything is kept, read past end in steps of inflateStep.
func (s *debugSection) inflate(end, keepFrom int) {
	if s.pos < end && s.z != nil && s.err == nil && s.scratch == nil && (s.sparse || len(s.valid) > 0) {
		s.scratch = make([]byte, inflateStep)
	}
	for s.pos < end && s.z != nil && s.err == nil {
		to, keep := s.chunk(end, keepFrom)
		// Straight into buf, unless dropped or over bytes kept before a
		// restart.
		direct := keep && !s.overlaps(s.pos, to)
		dst := s.buf[s.pos:to]
		if !direct {
			dst = s.scratch[:min(to-s.pos, len(s.scratch))]
		}
		got, err := io.ReadFull(s.z, dst)
		if keep && !direct {
			s.copyUnkept(s.pos, dst[:got])
		}
		if keep && s.sparse {
			s.addKept(s.pos, s.pos+got)
		}
		s.pos += got
		if err != nil {
			s.err = fmt.Errorf("inflate: %w", err)
		}
		if s.unitAt >= 0 && s.pos >= s.keepTo {
			s.keepTo = max(s.keepTo, s.unitEnd(s.unitAt))
			s.unitAt = -1
		}
		if s.pos == s.size {
			s.z.Close()
			s.z = nil
		}
	}
	if s.z == nil || s.err != nil {
		s.scratch = nil
	}
	// The compressed bytes read so far are not read again: their mapped
	// pages are dropped (a flate reader over an io.ByteReader reads no
	// further than it decodes).
	consumed := len(s.raw) - s.in.Len()
	releaseMapped(s.raw, 0, consumed-4096)
}

// chunk returns where the next read of the stream ends and whether its
// bytes are kept. A sparse section's chunks end where kept and dropped
// bytes meet: at planned units' starts and ends, and at keepFrom.
func (s *debugSection) chunk(end, keepFrom int) (to int, keep bool) {
	if !s.sparse {
		return min(max(end, s.pos+inflateStep), s.size), true
	}
	if len(s.planned) > 0 && s.planned[0] == s.pos {
		// A planned unit: its length first (4 bytes, or 12 for 64-bit
		// DWARF), then all of it (inflate sets keepTo to its end).
		s.planned = s.planned[1:]
		s.unitAt = s.pos
		s.keepTo = max(s.keepTo, min(s.pos+12, s.size))
	}
	to = min(end, s.pos+inflateStep)
	if s.unitAt >= 0 {
		to = s.keepTo // the length, even past end
	}
	keep = s.pos < s.keepTo || s.pos >= keepFrom
	for _, b := range []int{s.keepTo, keepFrom} {
		if b > s.pos {
			to = min(to, b)
		}
	}
	if len(s.planned) > 0 {
		to = min(to, s.planned[0])
	}
	if !keep {
		to = min(to, s.pos+len(s.scratch))
	}
	return to, keep
}

// unitEnd is the end of the unit whose header starts at start (its first
// 12 bytes inflated), within the section.
func (s *debugSection) unitEnd(start int) int {
	b := s.buf[start:min(start+12, s.pos)]
	if len(b) < 4 {
		return s.pos
	}
	n := uint64(s.order.Uint32(b))
	hdr := uint64(4)
	if n == 0xffffffff {
		if len(b) < 12 {
			return s.pos
		}
		n, hdr = s.order.Uint64(b[4:]), 12
	}
	if n > uint64(s.size-start) {
		return s.size
	}
	return start + int(hdr+n)
}

// overlaps reports whether [start, end) meets a kept range.
func (s *debugSection) overlaps(start, end int) bool {
	i := sort.Search(len(s.valid), func(i int) bool { return s.valid[i].end > start })
	return i < len(s.valid) && s.valid[i].start < end
}

// copyUnkept writes b to buf at off, except where buf holds kept bytes
// already (readers may be reading them).
func (s *debugSection) copyUnkept(off int, b []byte) {
	end := off + len(b)
	for p := off; p < end; {
		i := sort.Search(len(s.valid), func(i int) bool { return s.valid[i].end > p })
		if i < len(s.valid) && s.valid[i].start <= p {
			p = s.valid[i].end
			continue
		}
		q := end
		if i < len(s.valid) {
			q = min(q, s.valid[i].start)
		}
		copy(s.buf[p:q], b[p-off:q-off])
		p = q
	}
}

// addKept records [start, end), which lies at the stream's end, as kept.
func (s *debugSection) addKept(start, end int) {
	if start == end {
		return
	}
	if n := len(s.valid); n > 0 && s.valid[n-1].end == start {
		s.valid[n-1].end = end
		return
	}
	s.valid = append(s.valid, span{start, end})
}

// all returns the whole section, or an error when it cannot be inflated.
func (s *debugSection) all() ([]byte, error) {
	b := s.prefix(s.len())
	if len(b) < s.len() {
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err == nil {
			err = errors.New("short section")
		}
		return nil, err
	}
	return b, nil
}

// faultAround is how far beyond the bytes read the kernel may have mapped
// a file's pages: fault-around maps 64 KB per fault, more with large
// folios (64-280 KB measured for heapproxy's binary).
const faultAround = 256 << 10

// releaseAround is release of [start, end) and the faultAround bytes on
// either side: the pages fault-around mapped with the range's, which no
// unit needs unless it is being decoded (it then faults them back).
func (s *debugSection) releaseAround(start, end int) {
	s.release(max(start-faultAround, 0), min(end+faultAround, len(s.plain)))
}

// releaseAll is release over the whole section.
func (s *debugSection) releaseAll() {
	if s != nil {
		s.release(0, len(s.plain))
	}
}

// release drops the mapped pages that lie wholly inside [start, end) of a
// plain section from the process's resident set: a decoded unit's DIEs
// and line program are not read again (and would be paged back in from
// the page cache if they were). Compressed sections keep their buffer.
func (s *debugSection) release(start, end int) {
	if s.plain == nil {
		return
	}
	releaseMapped(s.plain, start, end)
}

// releaseMapped drops the pages wholly inside [start, end) of b, a slice
// of a file mapping, from the resident set.
func releaseMapped(b []byte, start, end int) {
	if start < 0 || end > len(b) || start >= end {
		return
	}
	page := syscall.Getpagesize()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (base + uintptr(start) + uintptr(page) - 1) &^ uintptr(page-1)
	hi := (base + uintptr(end)) &^ uintptr(page-1)
	if hi <= lo {
		return
	}
	_ = unix.Madvise(b[lo-base:hi-base], unix.MADV_DONTNEED)
}
