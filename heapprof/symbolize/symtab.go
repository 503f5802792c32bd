package symbolize

import (
	"cmp"
	"debug/elf"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// nmSym is one procedure as jeprof's GetProcedureBoundaries sees it: the
// symbol nm -n prints first at an address (or the last "t"/"T" one there),
// spanning up to the next address nm lists.
type nmSym struct {
	start, end uint64
	raw        string // as BFD names it; nm --demangle prints demangleBFD(raw)
	// tagged is whether jeprof appends "<start>" to the name: it does for
	// the first symbol at an address, not for a later "t"/"T" one that
	// replaced it.
	tagged bool
	// display and full memoize jeprofFrames' names for the symbol
	// (written under the object's lock).
	display, full string
}

// fullName is the name jeprof's MapSymbolsWithNM records, given the
// demangled name.
func (s *nmSym) fullName(name string) string {
	if s.tagged {
		return fmt.Sprintf("%s<%016x>", name, s.start)
	}
	return name
}

// nmTable is jeprof's view of an image's symbols (nm -n --demangle, falling
// back to nm -D -n for stripped images).
type nmTable struct {
	syms    []nmSym
	hasFini bool // jeprof only runs addr2line with -i when _fini is listed
}

// lookup mirrors MapSymbolsWithNM: the procedure whose end lies above addr.
// It does not check the start, like jeprof: addresses below the first
// symbol get the first symbol.
func (t *nmTable) lookup(addr uint64) *nmSym {
	if len(t.syms) == 0 {
		return nil
	}
	// The first index i with addr < end, capped at the last symbol.
	i := sort.Search(len(t.syms)-1, func(i int) bool { return addr < t.syms[i].end })
	if addr < t.syms[i].end {
		return &t.syms[i]
	}
	return nil
}

// nmEntry is a symbol as nm lists it, before grouping by address.
type nmEntry struct {
	value  uint64
	raw    string // name as BFD holds it (with @VERSION for dynamic symbols)
	isText bool   // nm type t or T
	idx    int    // position in the symbol table
}

// buildNMTable reproduces `nm -n --demangle` and jeprof's grouping. nm
// lists defined, non-debugging symbols (no section or file symbols) sorted
// by value, then by name.
func buildNMTable(syms []elf.Symbol, dynamic bool, sections []*elf.Section) nmTable {
	var entries []nmEntry
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if typ == elf.STT_SECTION || typ == elf.STT_FILE || s.Section == elf.SHN_UNDEF || s.Name == "" {
			continue
		}
		name := s.Name
		if dynamic {
			name = versionedName(s)
		}
		entries = append(entries, nmEntry{value: s.Value, raw: name, isText: isNMText(s, sections), idx: len(entries)})
	}
	// By address and name, in table order among equals (a stable sort,
	// without sort.SliceStable's cost on 100,000 symbols).
	slices.SortFunc(entries, func(a, b nmEntry) int {
		if c := cmp.Compare(a.value, b.value); c != 0 {
			return c
		}
		if c := strings.Compare(a.raw, b.raw); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	t := nmTable{syms: make([]nmSym, 0, len(entries))}
	for i := 0; i < len(entries); {
		j := i
		chosen, tagged := entries[i].raw, true
		for j+1 < len(entries) && entries[j+1].value == entries[i].value {
			j++
			if entries[j].isText {
				chosen, tagged = entries[j].raw, false
			}
		}
		for k := i; k <= j; k++ {
			// jeprof checks every name nm prints for _fini; other names
			// at the same address are printed too.
			if entries[k].raw == "_fini" {
				t.hasFini = true
			}
		}
		end := entries[i].value
		if j+1 < len(entries) {
			end = entries[j+1].value
		}
		t.syms = append(t.syms, nmSym{start: entries[i].value, end: end, raw: chosen, tagged: tagged})
		i = j + 1
	}
	return t
}

// isNMText reports whether nm prints type "t" or "T": a local or global
// (not weak, not unique, not ifunc) symbol in an executable section.
func isNMText(s elf.Symbol, sections []*elf.Section) bool {
	bind := elf.ST_BIND(s.Info)
	if bind != elf.STB_LOCAL && bind != elf.STB_GLOBAL {
		return false
	}
	if elf.ST_TYPE(s.Info) == elf.STT_GNU_IFUNC {
		return false
	}
	idx := int(s.Section)
	if s.Section >= elf.SHN_LORESERVE || idx >= len(sections) {
		return false
	}
	return sections[idx].Flags&elf.SHF_EXECINSTR != 0
}

// versionedName appends the symbol version the way BFD names dynamic
// symbols, so as `nm -D` prints them (binutils 2.40, bfd/elf.c
// _bfd_elf_get_symbol_version_string and nm.c print_symname): "@@VER" for
// a default version of .gnu.version_d; "@VER" for a hidden one and for
// every version from .gnu.version_r, which on a defined symbol is a copy
// relocation (stdin@GLIBC_2.2.5 in an executable); nothing for the local
// and base indexes, nor for a version definition's own absolute symbol
// (VER_1, libnuma_1.1).
func versionedName(s elf.Symbol) string {
	if !s.HasVersion || s.Version == "" || s.Section == elf.SHN_UNDEF {
		return s.Name
	}
	// debug/elf names the file that needs the version (Library) only for
	// .gnu.version_r entries.
	needed := s.Library != ""
	if !needed && s.Name == s.Version {
		return s.Name
	}
	if needed || s.VersionIndex.IsHidden() {
		return s.Name + "@" + s.Version
	}
	return s.Name + "@@" + s.Version
}

// demangleBFD demangles like bfd_demangle with DMGL_PARAMS|DMGL_ANSI:
// leading dots are kept aside, a @VERSION suffix is cut off before
// demangling and put back after, names that are not mangled are returned
// unchanged.
func demangleBFD(name string) string {
	rest := strings.TrimLeft(name, ".$")
	pre := name[:len(name)-len(rest)]
	suf := ""
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest, suf = rest[:i], rest[i:]
	}
	out, err := demangleCxx(rest)
	if err != nil {
		return name
	}
	return pre + out + suf
}

// bfdSym is a symbol as BFD's _bfd_elf_find_function considers it.
type bfdSym struct {
	value, size uint64 // size is at least 1, like _bfd_elf_maybe_function_sym
	section     elf.SectionIndex
	name        string // raw (mangled, versioned)
	local       bool
	file        string // the preceding STT_FILE symbol, for local symbols
}

// bfdSymtab is the symbol list addr2line reads: .symtab, or .dynsym when the
// image has no static symbols. syms keeps the file's order; byAddr indexes
// it by section and value (stable, so file order breaks ties).
type bfdSymtab struct {
	syms   []bfdSym
	byAddr []int32
}

func buildBFDSymtab(syms []elf.Symbol, dynamic bool) bfdSymtab {
	var t bfdSymtab
	file := ""
	fileAfterSymbol := false
	seenSymbol := false
	for _, s := range syms {
		typ := elf.ST_TYPE(s.Info)
		if typ == elf.STT_FILE {
			file = s.Name
			if seenSymbol {
				fileAfterSymbol = true
			}
			continue
		}
		seenSymbol = true
		if typ == elf.STT_SECTION || typ == elf.STT_OBJECT || typ == elf.STT_TLS ||
			s.Section == elf.SHN_UNDEF || s.Section >= elf.SHN_LORESERVE {
			continue
		}
		local := elf.ST_BIND(s.Info) == elf.STB_LOCAL
		// Hidden, local, untyped, zero-sized symbols are annobin markers,
		// which BFD does not take for functions.
		if s.Size == 0 && local && typ == elf.STT_NOTYPE && elf.ST_VISIBILITY(s.Other) == elf.STV_HIDDEN {
			continue
		}
		size := s.Size
		if size == 0 {
			size = 1
		}
		// addr2line prints dynamic symbols without their version,
		// unlike nm -D.
		name := s.Name
		b := bfdSym{value: s.Value, size: size, section: s.Section, name: name, local: local}
		if file != "" && (local || !fileAfterSymbol) {
			b.file = file
		}
		t.syms = append(t.syms, b)
	}
	t.byAddr = make([]int32, len(t.syms))
	for i := range t.byAddr {
		t.byAddr[i] = int32(i)
	}
	// By section and value, in file order among equals.
	slices.SortFunc(t.byAddr, func(i, j int32) int {
		a, b := &t.syms[i], &t.syms[j]
		if c := cmp.Compare(a.section, b.section); c != 0 {
			return c
		}
		if c := cmp.Compare(a.value, b.value); c != 0 {
			return c
		}
		return cmp.Compare(i, j)
	})
	return t
}

// find mirrors _bfd_elf_find_function: of the symbols in the section at or
// below addr, the closest; among several at that value, the first in file
// order that covers addr with the smallest size (or, if none covers it, the
// largest). It does not require the symbol to cover addr.
func (t *bfdSymtab) find(addr uint64, section elf.SectionIndex) *bfdSym {
	// First index whose (section, value) is above (section, addr).
	i := sort.Search(len(t.byAddr), func(i int) bool {
		s := &t.syms[t.byAddr[i]]
		if s.section != section {
			return s.section > section
		}
		return s.value > addr
	})
	if i == 0 {
		return nil
	}
	last := &t.syms[t.byAddr[i-1]]
	if last.section != section {
		return nil
	}
	j := i - 1
	for j > 0 {
		p := &t.syms[t.byAddr[j-1]]
		if p.section != section || p.value != last.value {
			break
		}
		j--
	}
	var best *bfdSym
	for k := j; k < i; k++ {
		s := &t.syms[t.byAddr[k]]
		if best == nil || betterFit(best.value, best.size, s.value, s.size, addr) {
			best = s
		}
	}
	return best
}

func betterFit(curOff, curSize, off, size, addr uint64) bool {
	if off > addr || off < curOff {
		return false
	}
	if off > curOff {
		return true
	}
	if curOff+curSize <= addr {
		return size > curSize
	}
	if off+size > addr {
		return size < curSize
	}
	return false
}
