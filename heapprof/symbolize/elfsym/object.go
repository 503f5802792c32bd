package elfsym

import (
	"bytes"
	"debug/dwarf"
	"debug/elf"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/heapproxy/heapproxy/heapprof/funcname"
)

// Frame is one record of `addr2line -f -C -i`: a function name (demangled;
// "??" when unknown) and the file and line it prints ("??" and 0 when
// unknown). A lookup returns the innermost inlined frame first.
type Frame struct {
	Function string
	File     string
	Line     int
}

// section is an allocated ELF section, as addr2line's
// find_address_in_section walks them.
type section struct {
	addr, size uint64
	index      elf.SectionIndex
}

// object is one ELF image, read once and shared by every lookup. The
// DWARF units, the memoized answers and the per-function name fix-ups are
// filled in lazily under mu.
type object struct {
	path     string // the file nm and addr2line read
	buildID  string
	textAdj  uint64 // .text address minus its file offset (jeprof ParseTextSectionHeader)
	sections []section
	nm       nmTable
	syms     bfdSymtab // addr2line's symbols
	symSecs  []section // the sections syms refer to

	mu    sync.Mutex
	dw    *dwarfIndex
	memo  map[uint64]answer
	names *nameCache
}

// nameCache memoizes, per image, addr2line's printed form of DWARF and
// ELF names and jeprof's short form of those. Units decoded in parallel
// fill it ahead of the (sequential) answers.
type nameCache struct {
	mu        sync.Mutex
	demangled map[string]string
	short     map[string]string
}

func newNameCache() *nameCache {
	return &nameCache{demangled: make(map[string]string), short: make(map[string]string)}
}

// display is the name addr2line prints for a DWARF or ELF name.
func (c *nameCache) display(name string) string {
	if name == "" {
		return "??"
	}
	c.mu.Lock()
	d, ok := c.demangled[name]
	c.mu.Unlock()
	if !ok {
		d = demangleBFD(name)
		c.mu.Lock()
		c.demangled[name] = d
		c.mu.Unlock()
	}
	return d
}

// shortOf memoizes funcname.Short: every PC in a function asks.
func (c *nameCache) shortOf(name string) string {
	c.mu.Lock()
	s, ok := c.short[name]
	c.mu.Unlock()
	if !ok {
		s = funcname.Short(name)
		c.mu.Lock()
		c.short[name] = s
		c.mu.Unlock()
	}
	return s
}

// openObject reads the symbol tables and opens the DWARF of the ELF file at
// path. debugDirs are searched for a separate debug file
// (.build-id/xx/rest.debug) when the image carries no DWARF itself.
func openObject(path string, debugDirs []string) (*object, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open ELF %s: %w", path, err)
	}
	defer f.Close()
	o := &object{path: path, memo: make(map[uint64]answer), names: newNameCache()}
	o.buildID = buildID(f)
	o.sections = allocSections(f)
	o.symSecs = o.sections
	if text := f.Section(".text"); text != nil {
		o.textAdj = text.Addr - text.Offset
	}

	// The symbol tables are read in place, and so is the DWARF when the
	// image carries it.
	m, err := mapFile(path)
	if err != nil {
		return nil, fmt.Errorf("read symbols of %s: %w", path, err)
	}
	static, err := readSymTab(f, m, elf.SHT_SYMTAB)
	if err != nil {
		static = &symTab{}
	}
	var dyn *symTab // .dynsym, read when needed
	dynamic := func() *symTab {
		if dyn == nil {
			var err error
			if dyn, err = readSymTab(f, m, elf.SHT_DYNSYM); err != nil {
				dyn = &symTab{}
			}
		}
		return dyn
	}
	if hasListedSymbols(static) {
		o.nm = buildNMTable(static, f.Sections)
	} else {
		o.nm = buildNMTable(dynamic(), f.Sections)
	}
	if static.len() > 0 {
		o.syms = buildBFDSymtab(static)
	} else {
		o.syms = buildBFDSymtab(dynamic())
	}

	dwFile, dwPath, dwMap := f, path, m
	if f.Section(".debug_info") == nil {
		if dbgPath := findDebugFile(f, path, o.buildID, debugDirs); dbgPath != "" {
			df, err := elf.Open(dbgPath)
			if err == nil {
				defer df.Close()
				dm, err := mapFile(dbgPath)
				if err != nil {
					return nil, fmt.Errorf("read DWARF of %s: %w", dbgPath, err)
				}
				dwFile, dwPath, dwMap = df, dbgPath, dm
				// BFD then takes the debug file's symbols for every
				// name it looks up.
				if s, err := readSymTab(df, dm, elf.SHT_SYMTAB); err == nil && s.len() > 0 {
					o.syms = buildBFDSymtab(s)
					o.symSecs = allocSections(df)
				}
			}
		}
	}
	if dwFile.Section(".debug_info") != nil {
		var d *dwarf.Data
		var aranges []byte
		raw, err := mappedDWARF(dwFile, dwMap)
		if err != nil {
			if d, err = fallbackToDebugDWARF(err, dwFile.DWARF); err != nil {
				return nil, fmt.Errorf("read DWARF of %s: %w", dwPath, err)
			}
			// Inflated again as a stream, for the units' lengths only.
			primeUnits(d, dwFile.Section(".debug_info").Open())
			if s := dwFile.Section(".debug_aranges"); s != nil {
				aranges, _ = s.Data()
			}
		}
		o.dw, err = newDwarfIndex(d, raw, aranges)
		if err != nil {
			return nil, fmt.Errorf("index DWARF of %s: %w", path, err)
		}
		o.dw.names = o.names
	}
	return o, nil
}

// hasListedSymbols reports whether nm (without -a) prints any symbol.
func hasListedSymbols(t *symTab) bool {
	for i := range t.len() {
		s := t.at(i)
		typ := elf.ST_TYPE(s.info)
		if typ != elf.STT_SECTION && typ != elf.STT_FILE && s.section != elf.SHN_UNDEF && len(t.nameBytes(s.name)) > 0 {
			return true
		}
	}
	return false
}

func allocSections(f *elf.File) []section {
	var out []section
	for i, s := range f.Sections {
		if i == 0 || s.Flags&elf.SHF_ALLOC == 0 {
			continue
		}
		out = append(out, section{addr: s.Addr, size: s.Size, index: elf.SectionIndex(i)})
	}
	return out
}

func sectionOf(secs []section, addr uint64) (elf.SectionIndex, bool) {
	for _, s := range secs {
		if addr >= s.addr && addr-s.addr < s.size {
			return s.index, true
		}
	}
	return 0, false
}

// BuildID returns f's GNU build-id note as hex, or "".
func BuildID(f *elf.File) string { return buildID(f) }

// buildID returns the GNU build-id note as hex, or "".
func buildID(f *elf.File) string {
	for _, s := range f.Sections {
		if s.Type != elf.SHT_NOTE {
			continue
		}
		data, err := s.Data()
		if err != nil {
			continue
		}
		for len(data) >= 12 {
			order := f.ByteOrder
			nameSz, descSz, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
			nameEnd := 12 + align4(nameSz)
			descEnd := nameEnd + align4(descSz)
			if uint64(descEnd) > uint64(len(data)) {
				break
			}
			name := data[12 : 12+nameSz]
			if typ == 3 && bytes.Equal(bytes.TrimRight(name, "\x00"), []byte("GNU")) {
				return hex.EncodeToString(data[nameEnd : nameEnd+descSz])
			}
			data = data[descEnd:]
		}
	}
	return ""
}

func align4(n uint32) uint32 { return (n + 3) &^ 3 }

// findDebugFile looks for separate debug information the way BFD does for
// addr2line: by build-id under the debug directories, then by
// .gnu_debuglink next to the file, in its .debug directory and under the
// debug directories.
func findDebugFile(f *elf.File, path, id string, dirs []string) string {
	if len(id) > 2 {
		for _, dir := range dirs {
			p := filepath.Join(dir, ".build-id", id[:2], id[2:]+".debug")
			if isFile(p) {
				return p
			}
		}
	}
	if s := f.Section(".gnu_debuglink"); s != nil {
		data, err := s.Data()
		if err == nil {
			if i := bytes.IndexByte(data, 0); i > 0 {
				name := string(data[:i])
				dir := filepath.Dir(path)
				cands := []string{filepath.Join(dir, name), filepath.Join(dir, ".debug", name)}
				for _, d := range dirs {
					cands = append(cands, filepath.Join(d, dir, name))
				}
				for _, p := range cands {
					if p != path && isFile(p) {
						return p
					}
				}
			}
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// answer is a memoized addr2line answer. BFD (binutils 2.40) prints, on
// the first lookup that lands in a function whose DWARF name is not a
// linkage name, the ELF symbol's name instead (firstName); later lookups
// print the DWARF name. fn identifies the function for that bookkeeping.
type answer struct {
	frames    []Frame
	fn        fnKey // zero when no DWARF function was found
	firstName string
}

// fnKey names a DWARF function without holding its unit in memory.
type fnKey struct {
	unit dwarf.Offset
	idx  int32
}

// prefetch starts decoding the DWARF units the addresses pc+delta need
// (see Local.Prefetch) and returns the raw names of the nm symbols
// jeprofFrames will print for them, to demangle without the lock. It
// answers nothing. Callers hold o.mu.
func (o *object) prefetch(pcs []uint64, delta uint64) []string {
	if o.dw != nil {
		// Addresses already answered need no unit.
		var open []uint64
		for _, pc := range pcs {
			if _, ok := o.memo[pc+delta]; !ok {
				open = append(open, pc)
			}
		}
		o.dw.predecode(open, delta)
	}
	var raws []string
	var last *nmSym
	for _, pc := range pcs {
		if s := o.nm.lookup(pc + delta); s != nil && s != last {
			raws = append(raws, o.nm.name(s))
			last = s
		}
	}
	return raws
}

// lookupRun answers like one `addr2line -f -C -i -e image` process that
// has already been asked the addresses recorded in seen (callers feed
// addresses in ascending order, as jeprof does). Callers hold o.mu.
func (o *object) lookupRun(addr uint64, seen map[fnKey]bool) []Frame {
	a, ok := o.memo[addr]
	if !ok {
		a = o.addr2line(addr)
		if o.memo != nil {
			o.memo[addr] = a
		}
	}
	if a.firstName == "" || seen[a.fn] {
		return a.frames
	}
	seen[a.fn] = true
	fr := append([]Frame(nil), a.frames...)
	fr[0].Function = a.firstName
	return fr
}

var unknownFrame = []Frame{{Function: "??", File: "??"}}

func (o *object) addr2line(addr uint64) answer {
	if _, ok := sectionOf(o.sections, addr); !ok {
		return answer{frames: unknownFrame}
	}
	if o.dw != nil {
		for _, off := range o.dw.unitsFor(addr) {
			u, err := o.dw.unit(off)
			if err != nil {
				continue
			}
			file, line, lineOK := u.line(addr)
			fi := u.function(addr)
			if !lineOK && fi < 0 {
				continue
			}
			if file == "" {
				file = "??"
			}
			if fi < 0 {
				name := "??"
				if s := o.symbol(addr); s != nil {
					name = o.displayName(o.syms.name(s))
				}
				return answer{frames: []Frame{{Function: name, File: file, Line: line}}}
			}
			f := &u.funcs[fi]
			a := answer{fn: fnKey{unit: off, idx: fi}}
			if !f.isLinkage {
				if s := o.symbol(addr); s != nil {
					a.firstName = o.displayName(o.syms.name(s))
				}
				o.fixLinkage(f)
			}
			name := f.name
			if name == "" {
				if s := o.symbol(addr); s != nil {
					name = o.syms.name(s)
				}
			}
			a.frames = []Frame{{Function: o.displayName(name), File: file, Line: line}}
			for cur := f; cur.caller >= 0; {
				c := &u.funcs[cur.caller]
				cf := cur.callFile
				if cf == "" {
					cf = "??"
				}
				a.frames = append(a.frames, Frame{Function: o.displayName(c.name), File: cf, Line: cur.callLine})
				cur = c
			}
			return a
		}
	}
	s := o.symbol(addr)
	if s == nil {
		return answer{frames: unknownFrame}
	}
	file, ok := o.syms.fileName(s)
	if !ok {
		file = "??"
	}
	return answer{frames: []Frame{{Function: o.displayName(o.syms.name(s)), File: file}}}
}

// symbol is _bfd_elf_find_function over addr2line's symbols.
func (o *object) symbol(addr uint64) *bfdSym {
	sec, ok := sectionOf(o.symSecs, addr)
	if !ok {
		return nil
	}
	return o.syms.find(addr, sec)
}

// fixLinkage reproduces BFD's fix-up for functions whose DWARF name is not
// a linkage name: when the ELF symbol at the function's start begins
// exactly there, the symbol's name replaces the DWARF name for good.
func (o *object) fixLinkage(f *funcInfo) {
	f.isLinkage = true
	if len(f.ranges) == 0 {
		return
	}
	if s := o.symbol(f.ranges[0][0]); s != nil && s.value == f.ranges[0][0] {
		f.name = o.syms.name(s)
	}
}

// displayName is the name addr2line prints for a DWARF or ELF name.
func (o *object) displayName(name string) string { return o.names.display(name) }

// sortedUnique returns the addresses sorted, without duplicates.
func sortedUnique(addrs []uint64) []uint64 {
	out := append([]uint64(nil), addrs...)
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	n := 0
	for i, a := range out {
		if i == 0 || a != out[n-1] {
			out[n] = a
			n++
		}
	}
	return out[:n]
}

// readBuildID reads only the build-id note of the ELF file at path.
func readBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return buildID(f), nil
}
