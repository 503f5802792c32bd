package elfsym

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"runtime"
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
type debugSection struct {
	plain []byte // an uncompressed section, mapped

	mu   sync.Mutex
	size int           // uncompressed size
	z    io.ReadCloser // inflater; nil once done
	in   *bytes.Reader // z's input, the compressed bytes (mapped)
	raw  []byte        // the compressed bytes in
	buf  []byte        // inflated prefix; cap(buf) == size, never reallocated
	err  error
}

// maxInflated bounds a compressed section's claimed size: zlib cannot
// expand more than ~1032x, and no debug section of interest nears 4 GB.
const maxInflated = 1 << 32

// newDebugSection returns the section s of the mapped file data.
func newDebugSection(f *elf.File, s *elf.Section, data []byte) (*debugSection, error) {
	end := s.Offset + s.FileSize
	if end < s.Offset || end > uint64(len(data)) {
		return nil, fmt.Errorf("section %s outside the file", s.Name)
	}
	raw := data[s.Offset:end:end]
	if s.Flags&elf.SHF_COMPRESSED == 0 {
		return &debugSection{plain: raw}, nil
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
	ds := &debugSection{size: int(size), z: z, in: in, raw: zs[2:], buf: buf[:0]}
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
// stays valid: inflation appends within the buffer's capacity.
func (s *debugSection) prefix(n int) []byte {
	if s.plain != nil {
		return s.plain
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n = min(n, s.size)
	if len(s.buf) < n && s.z != nil && s.err == nil {
		// Inflate in steps of at least 256 KB: each call costs a lock.
		want := min(max(n, len(s.buf)+256<<10), s.size)
		got, err := io.ReadFull(s.z, s.buf[len(s.buf):want])
		s.buf = s.buf[:len(s.buf)+got]
		if err != nil {
			s.err = fmt.Errorf("inflate: %w", err)
		}
		if len(s.buf) == s.size {
			s.z.Close()
			s.z = nil
		}
		// The compressed bytes read so far are not read again: their
		// mapped pages are dropped (a flate reader over an io.ByteReader
		// reads no further than it decodes).
		consumed := len(s.raw) - s.in.Len()
		releaseMapped(s.raw, 0, consumed-4096)
	}
	return s.buf
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
