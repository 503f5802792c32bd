package symbolize

import (
	"debug/dwarf"
	"debug/elf"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
)

// mappedFile is a read-only memory map of a whole file. DWARF sections are
// used in place: nothing is copied, and only the pages of the units a
// lookup decodes become resident.
type mappedFile struct {
	data []byte
}

func mapFile(path string) (*mappedFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() == 0 || st.Size() != int64(int(st.Size())) {
		return nil, fmt.Errorf("cannot map %s of %d bytes", path, st.Size())
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("mmap %s: %w", path, err)
	}
	m := &mappedFile{data: data}
	// The map lives as long as the object that holds it (the cache).
	runtime.AddCleanup(m, func(b []byte) { _ = syscall.Munmap(b) }, data)
	return m, nil
}

// mappedDWARF builds the DWARF reader over the mapped file when every debug
// section is stored plainly (not compressed, not relocatable); otherwise it
// returns nil and the caller falls back to elf.File.DWARF, which copies.
func mappedDWARF(f *elf.File, m *mappedFile) (*dwarf.Data, *rawDWARF, []byte, error) {
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return nil, nil, nil, nil
	}
	secs := map[string][]byte{}
	for _, s := range f.Sections {
		name, ok := strings.CutPrefix(s.Name, ".debug_")
		if !ok {
			continue
		}
		if s.Flags&elf.SHF_COMPRESSED != 0 || s.Type == elf.SHT_NOBITS {
			return nil, nil, nil, nil
		}
		end := s.Offset + s.Size
		if end < s.Offset || end > uint64(len(m.data)) {
			return nil, nil, nil, fmt.Errorf("section %s outside the file", s.Name)
		}
		secs[name] = m.data[s.Offset:end:end]
	}
	if secs["info"] == nil {
		return nil, nil, nil, nil
	}
	d, err := dwarf.New(secs["abbrev"], nil, nil, secs["info"], secs["line"], nil, secs["ranges"], secs["str"])
	if err != nil {
		return nil, nil, nil, err
	}
	for name, b := range secs {
		switch name {
		case "abbrev", "info", "line", "ranges", "str", "aranges", "frame", "pubnames":
			continue
		case "types":
			if err := d.AddTypes(".debug_types", b); err != nil {
				return nil, nil, nil, err
			}
		default:
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	raw := &rawDWARF{
		info: secs["info"], abbrev: secs["abbrev"], str: secs["str"], lineStr: secs["line_str"], line: secs["line"],
		ranges: secs["ranges"], rnglists: secs["rnglists"],
		abbrevs: make(map[uint64]map[uint64]*abbrev),
	}
	return d, raw, secs["aranges"], nil
}
