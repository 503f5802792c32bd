package elfsym

import (
	"debug/dwarf"
	"debug/elf"
	"errors"
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
	// Unmapped once nothing holds m. Whatever keeps a slice of data
	// (symTab, debugSection) holds m too: the collector does not see
	// memory outside its heap, so a slice alone would not keep it mapped.
	runtime.AddCleanup(m, func(b []byte) { _ = syscall.Munmap(b) }, data)
	return m, nil
}

// mappedDWARF reads the debug sections of the mapped file in place,
// inflating zlib-compressed ones on demand. Zstd-compressed sections are
// errZstd (see fallbackToDebugDWARF); what else it cannot read in place is
// an error: relocatable files (ET_REL: their DWARF needs relocating, and
// no process maps one), GNU .zdebug_ sections (addr2line 2.40 reads
// none of them either) and debug sections without data.
func mappedDWARF(f *elf.File, m *mappedFile) (*rawDWARF, error) {
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return nil, fmt.Errorf("DWARF of a %v file is not read, only of executables and shared objects", f.Type)
	}
	secs := map[string]*debugSection{}
	for _, s := range f.Sections {
		if strings.HasPrefix(s.Name, ".zdebug_") {
			return nil, fmt.Errorf("section %s: GNU-style compressed debug sections are not read", s.Name)
		}
		name, ok := strings.CutPrefix(s.Name, ".debug_")
		if !ok {
			continue
		}
		if s.Type == elf.SHT_NOBITS {
			return nil, fmt.Errorf("section %s has no data", s.Name)
		}
		switch name {
		case "loc", "loclists", "frame", "macro", "macinfo", "pubnames", "pubtypes", "gnu_pubnames", "gnu_pubtypes":
			continue // never read: not inflated either
		}
		ds, err := newDebugSection(f, s, m)
		if err != nil {
			return nil, err
		}
		secs[name] = ds
	}
	if secs["info"] == nil || secs["abbrev"] == nil {
		return nil, errors.New("no .debug_info or .debug_abbrev")
	}
	return &rawDWARF{
		info: secs["info"], line: secs["line"], secs: secs,
		abbrevs: make(map[uint64]abbrevTab),
	}, nil
}

// newGoDWARF builds debug/dwarf's reader over whole sections.
func newGoDWARF(secs map[string][]byte) (*dwarf.Data, error) {
	d, err := dwarf.New(secs["abbrev"], nil, nil, secs["info"], secs["line"], nil, secs["ranges"], secs["str"])
	if err != nil {
		return nil, err
	}
	for name, b := range secs {
		switch name {
		case "abbrev", "info", "line", "ranges", "str", "aranges":
			continue
		case "types":
			if err := d.AddTypes(".debug_types", b); err != nil {
				return nil, err
			}
		default:
			if err := d.AddSection(".debug_"+name, b); err != nil {
				return nil, err
			}
		}
	}
	return d, nil
}
