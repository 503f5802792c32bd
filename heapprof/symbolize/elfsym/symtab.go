package elfsym

import (
	"cmp"
	"debug/elf"
	"fmt"
	"math/bits"
	"slices"
	"sort"
	"strings"
)

// nmSym is one procedure as jeprof's GetProcedureBoundaries sees it: the
// symbol nm -n prints first at an address (or the last "t"/"T" one there),
// spanning up to the next address nm lists.
type nmSym struct {
	start, end uint64
	sym        int32 // the symbol's index in the table
	// tagged is whether jeprof appends "<start>" to the name: it does for
	// the first symbol at an address, not for a later "t"/"T" one that
	// replaced it.
	tagged bool
}

// nmNames are a looked-up symbol's names, memoized: every PC of a function
// asks. The table itself holds no strings, so the collector never scans it.
type nmNames struct {
	raw           string // as BFD names it (nm --demangle prints demangleBFD of it)
	display, full string // jeprofFrames' names, once computed ("" before)
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
	tab     *symTab
	names   map[int32]*nmNames
}

// namesOf is s's memo, its raw name read on first use. Callers hold the
// object's lock.
func (t *nmTable) namesOf(s *nmSym) *nmNames {
	n := t.names[s.sym]
	if n == nil {
		n = &nmNames{raw: t.tab.nmName(int(s.sym))}
		if t.names == nil {
			t.names = make(map[int32]*nmNames)
		}
		t.names[s.sym] = n
	}
	return n
}

// name is s's name as BFD names it. Callers hold the object's lock.
func (t *nmTable) name(s *nmSym) string { return t.namesOf(s).raw }

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
	sym    int32 // index in the symbol table (its order)
	isText bool  // nm type t or T
}

// buildNMTable reproduces `nm -n --demangle` (nm -D -n for a dynamic
// table) and jeprof's grouping. nm lists defined, non-debugging symbols (no
// section or file symbols) sorted by value, then by name.
func buildNMTable(t *symTab, sections []*elf.Section) nmTable {
	entries := make([]nmEntry, 0, t.len())
	hasFini := false
	for i := range t.len() {
		s := t.at(i)
		typ := elf.ST_TYPE(s.info)
		if typ == elf.STT_SECTION || typ == elf.STT_FILE || s.section == elf.SHN_UNDEF {
			continue
		}
		name := t.nameBytes(s.name)
		if len(name) == 0 {
			continue
		}
		// nm leaves out what its back end calls target-special symbols
		// unless --special-syms is given.
		if t.machine == elf.EM_AARCH64 && aarch64Special(name) {
			continue
		}
		// jeprof checks every name nm prints for _fini; other names at the
		// same address are printed too.
		if string(name) == "_fini" && (!t.dynamic || t.nmName(i) == "_fini") {
			hasFini = true
		}
		entries = append(entries, nmEntry{value: s.value, sym: int32(i), isText: isNMText(s, sections)})
	}
	// By address and name, in table order among equals: by address first,
	// then the few runs of symbols at one address (aliases) by name.
	var maxValue uint64
	for i := range entries {
		maxValue = max(maxValue, entries[i].value)
	}
	if !sortPacked(entries, bits.Len64(maxValue), func(e *nmEntry) uint64 { return e.value }) {
		slices.SortFunc(entries, func(a, b nmEntry) int {
			if c := cmp.Compare(a.value, b.value); c != 0 {
				return c
			}
			return cmp.Compare(a.sym, b.sym)
		})
	}
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && entries[j].value == entries[i].value {
			j++
		}
		if j-i > 1 {
			slices.SortStableFunc(entries[i:j], func(a, b nmEntry) int {
				return strings.Compare(t.nmName(int(a.sym)), t.nmName(int(b.sym)))
			})
		}
		i = j
	}
	nt := nmTable{syms: make([]nmSym, 0, len(entries)), hasFini: hasFini, tab: t}
	for i := 0; i < len(entries); {
		j := i
		chosen, tagged := entries[i].sym, true
		for j+1 < len(entries) && entries[j+1].value == entries[i].value {
			j++
			if entries[j].isText {
				chosen, tagged = entries[j].sym, false
			}
		}
		end := entries[i].value
		if j+1 < len(entries) {
			end = entries[j+1].value
		}
		nt.syms = append(nt.syms, nmSym{start: entries[i].value, end: end, sym: chosen, tagged: tagged})
		i = j + 1
	}
	return nt
}

// isNMText reports whether nm prints type "t" or "T": a local or global
// (not weak, not unique, not ifunc) symbol in an executable section.
func isNMText(s elfSym, sections []*elf.Section) bool {
	bind := elf.ST_BIND(s.info)
	if bind != elf.STB_LOCAL && bind != elf.STB_GLOBAL {
		return false
	}
	if elf.ST_TYPE(s.info) == elf.STT_GNU_IFUNC {
		return false
	}
	idx := int(s.section)
	if s.section >= elf.SHN_LORESERVE || idx >= len(sections) {
		return false
	}
	return sections[idx].Flags&elf.SHF_EXECINSTR != 0
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
	local       bool
	sym         int32 // index in the symbol table: its order, and its name
	file        int32 // the preceding STT_FILE symbol, for local symbols; -1 if none
}

// bfdSymtab is the symbol list addr2line reads: .symtab, or .dynsym when the
// image has no static symbols, sorted by section and value (file order
// among equals).
type bfdSymtab struct {
	syms []bfdSym
	tab  *symTab
}

// name is s's raw (mangled) name: addr2line prints dynamic symbols without
// their version, unlike nm -D.
func (t *bfdSymtab) name(s *bfdSym) string { return t.tab.plainName(int(s.sym)) }

// fileName is the name of the STT_FILE symbol before s, which may be "";
// ok is false when there is none.
func (t *bfdSymtab) fileName(s *bfdSym) (name string, ok bool) {
	if s.file < 0 {
		return "", false
	}
	return t.tab.plainName(int(s.file)), true
}

// aarch64Special tells BFD's AArch64 special symbol names
// (bfd_is_aarch64_special_symbol_name with any type): the mapping symbols
// $x and $d and the tag symbols $m, $f and $p, alone or with a "."
// suffix. Binutils 2.40, bfd/cpu-aarch64.c and bfd/elfnn-aarch64.c, which
// Debian 12's binutils-aarch64-linux-gnu is built from.
func aarch64Special(name []byte) bool {
	if len(name) < 2 || name[0] != '$' {
		return false
	}
	switch name[1] {
	case 'x', 'd', 'm', 'f', 'p':
		return len(name) == 2 || name[2] == '.'
	}
	return false
}

func buildBFDSymtab(tab *symTab) bfdSymtab {
	t := bfdSymtab{tab: tab, syms: make([]bfdSym, 0, tab.len())}
	file := int32(-1)
	fileAfterSymbol := false
	seenSymbol := false
	for i := range tab.len() {
		s := tab.at(i)
		typ := elf.ST_TYPE(s.info)
		if typ == elf.STT_FILE {
			// Named or not (the linker adds one without a name before its
			// own local symbols): BFD takes every STT_FILE for a file
			// (elf_slurp_symbol_table), and addr2line prints an empty
			// name as "", not "??".
			file = int32(i)
			if seenSymbol {
				fileAfterSymbol = true
			}
			continue
		}
		seenSymbol = true
		if typ == elf.STT_SECTION || typ == elf.STT_OBJECT || typ == elf.STT_TLS ||
			s.section == elf.SHN_UNDEF || s.section >= elf.SHN_LORESERVE {
			continue
		}
		local := elf.ST_BIND(s.info) == elf.STB_LOCAL
		// Hidden, local, untyped, zero-sized symbols are annobin markers,
		// which BFD does not take for functions.
		if s.size == 0 && local && typ == elf.STT_NOTYPE && elf.ST_VISIBILITY(s.other) == elf.STV_HIDDEN {
			continue
		}
		// AArch64's back end takes only untyped and function symbols (not
		// even GNU ifuncs), and no local mapping symbol: $x marks where
		// code starts, often a function's first instruction, and would
		// name the function "$x" (elfNN_aarch64_maybe_function_sym).
		if tab.machine == elf.EM_AARCH64 &&
			(typ != elf.STT_NOTYPE && typ != elf.STT_FUNC || local && aarch64Special(tab.nameBytes(s.name))) {
			continue
		}
		size := s.size
		if size == 0 {
			size = 1
		}
		b := bfdSym{value: s.value, size: size, section: s.section, local: local, sym: int32(i), file: -1}
		if file >= 0 && (local || !fileAfterSymbol) {
			b.file = file
		}
		t.syms = append(t.syms, b)
	}
	// By section and value, in file order among equals.
	var maxValue uint64
	var maxSection elf.SectionIndex
	for i := range t.syms {
		maxValue, maxSection = max(maxValue, t.syms[i].value), max(maxSection, t.syms[i].section)
	}
	vb := bits.Len64(maxValue)
	if !sortPacked(t.syms, bits.Len16(uint16(maxSection))+vb, func(s *bfdSym) uint64 { return uint64(s.section)<<vb | s.value }) {
		slices.SortFunc(t.syms, func(a, b bfdSym) int {
			if c := cmp.Compare(a.section, b.section); c != 0 {
				return c
			}
			if c := cmp.Compare(a.value, b.value); c != 0 {
				return c
			}
			return cmp.Compare(a.sym, b.sym)
		})
	}
	return t
}

// sortPacked sorts s by key (of keyBits bits), in slice order among equal
// keys, when a key and an index fit in one uint64 together, and reports
// whether they did (s is untouched otherwise). slices.Sort of integers
// compares inline: a program's 18,600 symbols sort in a fraction of
// SortFunc's time over the records, which was most of opening it.
func sortPacked[T any](s []T, keyBits int, key func(*T) uint64) bool {
	ib := bits.Len(uint(len(s)))
	if keyBits+ib > 64 {
		return false
	}
	perm := make([]uint64, len(s))
	for i := range s {
		perm[i] = key(&s[i])<<ib | uint64(i)
	}
	slices.Sort(perm)
	for i := range perm {
		perm[i] &= 1<<ib - 1 // position i takes the element at perm[i]
	}
	// Permuted in place, a cycle at a time; perm[j] = j marks j done.
	for i := range s {
		if perm[i] == uint64(i) {
			continue
		}
		first := s[i]
		j := i
		for {
			k := int(perm[j])
			perm[j] = uint64(j)
			if k == i {
				s[j] = first
				break
			}
			s[j] = s[k]
			j = k
		}
	}
	return true
}

// find mirrors _bfd_elf_find_function: of the symbols in the section at or
// below addr, the closest; among several at that value, the first in file
// order that covers addr with the smallest size (or, if none covers it, the
// largest). It does not require the symbol to cover addr.
func (t *bfdSymtab) find(addr uint64, section elf.SectionIndex) *bfdSym {
	// First index whose (section, value) is above (section, addr).
	i := sort.Search(len(t.syms), func(i int) bool {
		s := &t.syms[i]
		if s.section != section {
			return s.section > section
		}
		return s.value > addr
	})
	if i == 0 {
		return nil
	}
	last := &t.syms[i-1]
	if last.section != section {
		return nil
	}
	j := i - 1
	for j > 0 {
		p := &t.syms[j-1]
		if p.section != section || p.value != last.value {
			break
		}
		j--
	}
	var best *bfdSym
	for k := j; k < i; k++ {
		s := &t.syms[k]
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
