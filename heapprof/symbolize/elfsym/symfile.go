package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
)

// symTab is an ELF symbol table (.symtab or .dynsym) read in place from
// the mapped image: records are decoded as the tables are built, and names
// are copied out only for the symbols lookups return. debug/elf's Symbols
// copies both sections and allocates a string per symbol, which was most
// of opening a large program (and of its garbage).
type symTab struct {
	recs    []byte // the records after the null first one
	recSize int    // 24 (ELFCLASS64) or 16 (ELFCLASS32)
	order   binary.ByteOrder
	str     []byte // the linked string table
	// dynamic tables name symbols with their version, as nm -D does.
	dynamic bool
	// machine is the file's: BFD's AArch64 back end skips mapping
	// symbols that its generic ELF code would take (aarch64Special).
	machine elf.Machine
	versym  []byte                // .gnu.version: one index per symbol, the null one first
	vers    map[uint16]symVersion // version index -> version
	// file keeps the mapping recs, str and versym lie in: a slice of it
	// does not keep it from being unmapped.
	file *mappedFile
}

// symVersion is a version of .gnu.version_d (needed false) or
// .gnu.version_r (needed true: the symbol is another file's).
type symVersion struct {
	name   string
	needed bool
}

// elfSym is one decoded record; its name stays in the string table.
type elfSym struct {
	name        uint32
	info, other byte
	section     elf.SectionIndex
	value, size uint64
}

// errSymTab: the symbol table cannot be read; like debug/elf's errors
// there, the image then has no symbols of that kind.
var errSymTab = errors.New("malformed symbol table")

// readSymTab returns the image's first section of type typ (SHT_SYMTAB or
// SHT_DYNSYM) over m, the mapped file; an empty table when there is
// none. Dynamic tables carry their GNU versions.
func readSymTab(f *elf.File, m *mappedFile, typ elf.SectionType) (*symTab, error) {
	t := &symTab{recSize: 24, order: f.ByteOrder, dynamic: typ == elf.SHT_DYNSYM, machine: f.Machine, file: m}
	data := m.data
	if f.Class == elf.ELFCLASS32 {
		t.recSize = 16
	}
	s := f.SectionByType(typ)
	if s == nil || s.Type == elf.SHT_NOBITS {
		return t, nil
	}
	recs, err := sectionBytes(s, data)
	if err != nil {
		return t, err
	}
	if len(recs) == 0 {
		return t, nil
	}
	if len(recs)%t.recSize != 0 {
		return t, fmt.Errorf("%s: length not a multiple of %d: %w", s.Name, t.recSize, errSymTab)
	}
	if s.Link == 0 || int(s.Link) >= len(f.Sections) {
		return t, fmt.Errorf("%s: invalid string table link: %w", s.Name, errSymTab)
	}
	if t.str, err = sectionBytes(f.Sections[s.Link], data); err != nil {
		return t, err
	}
	t.recs = recs[t.recSize:]
	if t.dynamic {
		if err := t.readVersions(f, data); err != nil {
			return &symTab{recSize: t.recSize, order: t.order, dynamic: true}, err
		}
	}
	return t, nil
}

// sectionBytes is a section's contents in the mapped file.
func sectionBytes(s *elf.Section, data []byte) ([]byte, error) {
	if s.Type == elf.SHT_NOBITS {
		return nil, nil
	}
	if s.Flags&elf.SHF_COMPRESSED != 0 {
		return nil, fmt.Errorf("section %s is compressed: %w", s.Name, errSymTab)
	}
	end := s.Offset + s.FileSize
	if end < s.Offset || end > uint64(len(data)) {
		return nil, fmt.Errorf("section %s outside the file: %w", s.Name, errSymTab)
	}
	return data[s.Offset:end:end], nil
}

// len is the number of symbols, without the null first one.
func (t *symTab) len() int {
	if t.recSize == 0 { // &symTab{}: the table of an unreadable section
		return 0
	}
	return len(t.recs) / t.recSize
}

// at decodes symbol i (0 is the first after the null one).
func (t *symTab) at(i int) elfSym {
	b := t.recs[i*t.recSize : (i+1)*t.recSize]
	if t.recSize == 24 {
		return elfSym{name: t.order.Uint32(b), info: b[4], other: b[5], section: elf.SectionIndex(t.order.Uint16(b[6:])),
			value: t.order.Uint64(b[8:]), size: t.order.Uint64(b[16:])}
	}
	return elfSym{name: t.order.Uint32(b), value: uint64(t.order.Uint32(b[4:])), size: uint64(t.order.Uint32(b[8:])),
		info: b[12], other: b[13], section: elf.SectionIndex(t.order.Uint16(b[14:]))}
}

// nameBytes is the name at off in the string table, in place ("" out of
// range or unterminated, as debug/elf reads it).
func (t *symTab) nameBytes(off uint32) []byte {
	if int(off) >= len(t.str) {
		return nil
	}
	i := bytes.IndexByte(t.str[off:], 0)
	if i < 0 {
		return nil
	}
	return t.str[off : int(off)+i]
}

// plainName is symbol i's name without a version, copied (addr2line's).
func (t *symTab) plainName(i int) string { return string(t.nameBytes(t.at(i).name)) }

// nmName is symbol i's name as BFD names it for nm: for a dynamic symbol
// with its version, "@@VER" for a default version of .gnu.version_d,
// "@VER" for a hidden one and for every version from .gnu.version_r, which
// on a defined symbol is a copy relocation (stdin@GLIBC_2.2.5 in an
// executable); nothing for the local and base indexes, nor for a version
// definition's own absolute symbol (VER_1, libnuma_1.1). (binutils 2.40,
// bfd/elf.c _bfd_elf_get_symbol_version_string and nm.c print_symname.)
func (t *symTab) nmName(i int) string {
	s := t.at(i)
	name := t.nameBytes(s.name)
	if !t.dynamic || s.section == elf.SHN_UNDEF {
		return string(name)
	}
	j := 2 * (i + 1)
	if j+2 > len(t.versym) {
		return string(name)
	}
	vi := t.order.Uint16(t.versym[j:])
	v, ok := t.vers[vi&0x7fff]
	if !ok || v.name == "" || !v.needed && string(name) == v.name {
		return string(name)
	}
	if v.needed || vi&0x8000 != 0 {
		return string(name) + "@" + v.name
	}
	return string(name) + "@@" + v.name
}

// readVersions reads .gnu.version, .gnu.version_d and .gnu.version_r the
// way debug/elf's DynamicSymbols does (a needed version wins over a
// defined one of the same index; indexes 0 and 1 name no version).
func (t *symTab) readVersions(f *elf.File, data []byte) error {
	vs := f.SectionByType(elf.SHT_GNU_VERSYM)
	if vs == nil {
		return nil
	}
	var err error
	if t.versym, err = sectionBytes(vs, data); err != nil {
		return err
	}
	t.vers = make(map[uint16]symVersion)
	order := t.order
	if vd := f.SectionByType(elf.SHT_GNU_VERDEF); vd != nil {
		d, err := sectionBytes(vd, data)
		if err != nil {
			return err
		}
		for i := 0; i+20 <= len(d); {
			if order.Uint16(d[i:]) != 1 {
				return fmt.Errorf("unexpected dynamic version: %w", errSymTab)
			}
			ndx, cnt := order.Uint16(d[i+4:]), order.Uint16(d[i+6:])
			aux, next := order.Uint32(d[i+12:]), order.Uint32(d[i+16:])
			if cnt == 0 {
				return fmt.Errorf("dynamic version has no name: %w", errSymTab)
			}
			if j := i + int(aux); j+8 <= len(d) && j >= 0 {
				if _, ok := t.vers[ndx]; !ok && ndx > 1 {
					t.vers[ndx] = symVersion{name: string(t.nameBytes(order.Uint32(d[j:])))}
				}
			}
			if next == 0 {
				break
			}
			i += int(next)
		}
	}
	if vn := f.SectionByType(elf.SHT_GNU_VERNEED); vn != nil {
		d, err := sectionBytes(vn, data)
		if err != nil {
			return err
		}
		for i := 0; i+16 <= len(d); {
			if order.Uint16(d[i:]) != 1 {
				return fmt.Errorf("unexpected dynamic need version: %w", errSymTab)
			}
			cnt, aux, next := order.Uint16(d[i+2:]), order.Uint32(d[i+8:]), order.Uint32(d[i+12:])
			for c, j := 0, i+int(aux); c < int(cnt) && j >= 0 && j+16 <= len(d); c++ {
				// debug/elf takes the first need of an index, before any
				// definition.
				if ndx := order.Uint16(d[j+6:]); ndx > 1 && !t.vers[ndx].needed {
					t.vers[ndx] = symVersion{name: string(t.nameBytes(order.Uint32(d[j+8:]))), needed: true}
				}
				jn := order.Uint32(d[j+12:])
				if jn == 0 {
					break
				}
				j += int(jn)
			}
			if next == 0 {
				break
			}
			i += int(next)
		}
	}
	return nil
}
