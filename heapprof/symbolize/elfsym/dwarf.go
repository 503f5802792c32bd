package elfsym

import (
	"bufio"
	"cmp"
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
)

// dwarfIndex answers addr2line's questions from one image's DWARF. Units
// are decoded lazily, only those whose ranges hold a looked-up address.
type dwarfIndex struct {
	d   *dwarf.Data
	raw *rawDWARF // mapped sections for the fast scanner; nil to use debug/dwarf
	cus []cuRange // sorted by low
	// maxHigh[i] is the largest high of cus[:i+1]: a search for the units
	// holding addr stops at the first i with maxHigh[i] <= addr.
	maxHigh []uint64
	units   map[dwarf.Offset]*unitInfo
	// pre holds the units Prefetch decodes ahead, with the addresses they
	// are decoded for, until inBatches answers them.
	pre map[dwarf.Offset]*preUnit
	// byHeader: cus and units are keyed by the offset of the unit header,
	// not of its first entry. Finding the entry means reading the header;
	// when .debug_info is compressed, that would inflate it all at once.
	byHeader bool
	onlyGo   bool       // tests: decode with debug/dwarf even where the scanner could
	names    *nameCache // the image's; nil in tests that build an index alone
}

// cuRange is one address range of a compilation unit.
type cuRange struct {
	low, high uint64
	off       dwarf.Offset // offset of the unit's DW_TAG_compile_unit entry (of its header when byHeader)
}

// unitInfo is what BFD's comp_unit holds after scan_unit_for_symbols and
// decode_line_info: the function table and the line sequences.
type unitInfo struct {
	funcs  []funcInfo
	byLow  []funcLookup // funcs sorted by lowest address, with high watermark
	seqs   []lineSeq
	files  []string
	nameOf map[dwarf.Offset][]nameAttr // name-bearing attributes of subprogram DIEs
	strs   map[uint64]string           // names read while decoding (attrString)
	hdr    unitHeader                  // the unit's header, when decoded by the scanner
}

// funcInfo is a DW_TAG_subprogram, DW_TAG_entry_point or
// DW_TAG_inlined_subroutine.
type funcInfo struct {
	ranges    [][2]uint64
	name      string
	isLinkage bool
	caller    int32 // index of the enclosing function, for inlined ones; -1 if none
	callFile  string
	callLine  int
}

type funcLookup struct {
	low, high uint64 // lowest address and high watermark (BFD's high_addr)
	idx       int32
}

// nameAttr is one attribute that find_abstract_instance reads, in DIE order.
// A name is str, or for the scanner where it lies (strIn, strOff), read
// only when needed (rawDWARF.attrString).
type nameAttr struct {
	attr   dwarf.Attr
	str    string
	ref    dwarf.Offset
	strIn  uint8 // strHere or the section strOff is an offset in
	strOff uint64
}

// Where a nameAttr's name is.
const (
	strHere      = iota // in str
	strInStr            // .debug_str
	strInLineStr        // .debug_line_str
	strInInfo           // .debug_info (DW_FORM_string)
)

type lineSeq struct {
	low  uint64
	rows []lineRow // sorted by address; the last row ends the sequence
}

type lineRow struct {
	addr uint64
	file int32
	line int32
	end  bool
}

const attrMIPSLinkageName dwarf.Attr = 0x2007

// newDwarfIndex indexes the units of debug/dwarf's reader d (raw nil) or
// of the mapped sections raw (d nil: built only for fallbacks).
func newDwarfIndex(d *dwarf.Data, raw *rawDWARF, aranges []byte) (*dwarfIndex, error) {
	x := &dwarfIndex{d: d, raw: raw, units: make(map[dwarf.Offset]*unitInfo), pre: make(map[dwarf.Offset]*preUnit)}
	firstEntry := func(hdr dwarf.Offset) (dwarf.Offset, error) { return firstEntryOffset(d, hdr) }
	if raw != nil {
		if s := raw.secs["aranges"]; s != nil {
			b, err := s.all()
			if err != nil {
				return nil, fmt.Errorf(".debug_aranges: %w", err)
			}
			aranges = b
		}
		firstEntry = func(hdr dwarf.Offset) (dwarf.Offset, error) { return hdr, nil }
	}
	var err error
	if len(aranges) > 0 {
		x.cus, err = parseAranges(aranges, firstEntry)
		x.byHeader = raw != nil && err == nil
	}
	if len(aranges) == 0 || err != nil {
		why := errNoAranges
		if err != nil {
			why = fmt.Errorf("%w: %v", errNoAranges, err)
		}
		d, derr := fallbackToDebugDWARF(why, x.data)
		if derr != nil {
			return nil, derr
		}
		x.cus, err = unitRanges(d)
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(x.cus, func(i, j int) bool { return x.cus[i].low < x.cus[j].low })
	x.maxHigh = make([]uint64, len(x.cus))
	var m uint64
	for i, c := range x.cus {
		m = max(m, c.high)
		x.maxHigh[i] = m
	}
	return x, nil
}

// errNoAranges: the image has no (readable) .debug_aranges, so the units'
// address ranges are read by debug/dwarf (fallbackToDebugDWARF).
var errNoAranges = errors.New("no .debug_aranges")

// errZstd: the image's debug sections are zstd-compressed, which
// debugSection does not inflate; debug/elf does (fallbackToDebugDWARF).
var errZstd = errors.New("zstd-compressed debug sections")

// fallbackToDebugDWARF is the one way from the scanner (dwarfscan.go,
// lineprog.go, sections.go) to debug/dwarf: it returns the reader build
// makes when why is one of the cases below, and why itself otherwise,
// so no other failure silently changes decoders. The cases are the inputs
// measured to need it (everything symbolized by the tests, libc6-dbg's
// 273 debug files, and the builds in TestFallbackInputs):
//
//   - errIndexedForm, per unit: DWARF 5's indexed forms. Go 1.26 binaries
//     (the linker writes DW_AT_low_pc as DW_FORM_addrx: every unit) and
//     rustc -C dwarf-version=5 (the prebuilt std's units name functions in
//     DW_FORM_strx1/strx2).
//   - errNoAranges, per image: Go binaries (the Go linker writes no
//     .debug_aranges); unitRanges then reads the unit DIEs' ranges.
//   - errZstd, per image: objcopy --compress-debug-sections=zstd (gcc 12
//     cannot yet emit -gz=zstd): object.go reads the sections with
//     elf.File.DWARF.
//
// Measured without it: gcc 12 DWARF 2, 3, 4 and 5 (-O0, -O2, -flto,
// -gz=zlib, -fdebug-types-section, -gsplit-dwarf: the skeleton units of
// DWARF 5 are not read, and addr2line 2.40 reads no lines from them either),
// rustc DWARF 4, and every libc6-dbg file. Everything else the scanner
// does not read fails with an error saying what (ET_REL objects, .zdebug_
// sections, DWARF versions other than 2-5, unknown forms, other
// compressions), where debug/dwarf used to be tried.
func fallbackToDebugDWARF(why error, build func() (*dwarf.Data, error)) (*dwarf.Data, error) {
	if !errors.Is(why, errIndexedForm) && !errors.Is(why, errNoAranges) && !errors.Is(why, errZstd) {
		return nil, why
	}
	return build()
}

// primeUnits enters every unit of d once, before any concurrent reader:
// debug/dwarf reads a DWARF 5 unit's bases (DW_AT_str_offsets_base,
// DW_AT_addr_base, DW_AT_rnglists_base) into the shared Data when a Reader
// first enters the unit, unguarded (Go 1.26.8, debug/dwarf/entry.go,
// collectDwarf5BaseOffsets). Units decoded in parallel raced there, and a
// reader that came second could resolve the indexed forms with bases not
// yet read: wrong names without an error (the race detector found it in
// TestFallbackInputs). info is d's .debug_info, read once from its start:
// only the units' lengths are read, and a Seek to each unit's last byte
// enters it. It returns how many units it entered.
func primeUnits(d *dwarf.Data, info io.Reader) (units int) {
	r := d.Reader()
	order := r.ByteOrder() // the file's; nil when d has no units
	if order == nil {
		return 0
	}
	br := bufio.NewReader(info)
	var word [8]byte
	for off := uint64(0); ; {
		if _, err := io.ReadFull(br, word[:4]); err != nil {
			return units
		}
		n, size := uint64(order.Uint32(word[:])), uint64(4)
		if n == 0xffffffff {
			if _, err := io.ReadFull(br, word[:]); err != nil {
				return units
			}
			n, size = order.Uint64(word[:]), 12
		}
		if n == 0 || n > 1<<40 {
			return units
		}
		end := off + size + n
		r.Seek(dwarf.Offset(end - 1))
		units++
		if _, err := br.Discard(int(n)); err != nil {
			return units
		}
		off = end
	}
}

// usedDebugDWARF reports whether x reads anything with debug/dwarf: it was
// given debug/dwarf's Data (errZstd), or fallbackToDebugDWARF built one
// over the mapped sections. For the tests (TestFallbackInputs).
func (x *dwarfIndex) usedDebugDWARF() bool {
	return x.d != nil || x.raw != nil && x.raw.goBuilt.Load()
}

// data is debug/dwarf's reader: the one object.go built (errZstd), or one
// built on first use over the mapped sections. Only fallbackToDebugDWARF
// and the tests (onlyGo) ask for it.
func (x *dwarfIndex) data() (*dwarf.Data, error) {
	if x.d != nil {
		return x.d, nil
	}
	return x.raw.dwarfData()
}

// entry reads the DIE at off with debug/dwarf: the name lookups of units
// decoded by loadUnitGo, which already went through fallbackToDebugDWARF.
func (x *dwarfIndex) entry(off dwarf.Offset) (*dwarf.Entry, error) {
	d, err := x.data()
	if err != nil {
		return nil, err
	}
	r := d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("read DIE at %#x: %w", off, err)
	}
	if e == nil {
		return nil, fmt.Errorf("no DIE at %#x", off)
	}
	return e, nil
}

// parseAranges reads .debug_aranges, mapping each set's debug_info offset
// (a unit header) to the offset of the unit's first entry.
func parseAranges(b []byte, firstEntry func(hdr dwarf.Offset) (dwarf.Offset, error)) ([]cuRange, error) {
	var out []cuRange
	for off := 0; off < len(b); {
		if len(b)-off < 4 {
			return nil, errors.New("truncated .debug_aranges")
		}
		length := uint64(le32(b[off:]))
		hdr := off + 4
		dwarf64 := false
		if length == 0xffffffff {
			if len(b)-off < 12 {
				return nil, errors.New("truncated .debug_aranges")
			}
			length = le64(b[off+4:])
			hdr = off + 12
			dwarf64 = true
		}
		end := hdr + int(length)
		if length > uint64(len(b)) || end > len(b) || end < hdr {
			return nil, errors.New("bad .debug_aranges length")
		}
		p := hdr + 2 // version
		var infoOff uint64
		if dwarf64 {
			if p+8 > end {
				return nil, errors.New("truncated .debug_aranges header")
			}
			infoOff = le64(b[p:])
			p += 8
		} else {
			if p+4 > end {
				return nil, errors.New("truncated .debug_aranges header")
			}
			infoOff = uint64(le32(b[p:]))
			p += 4
		}
		if p+2 > end {
			return nil, errors.New("truncated .debug_aranges header")
		}
		addrSize, segSize := int(b[p]), int(b[p+1])
		p += 2
		if addrSize != 8 && addrSize != 4 || segSize != 0 {
			return nil, fmt.Errorf("unsupported .debug_aranges address size %d", addrSize)
		}
		// Tuples start at a multiple of twice the address size from the set.
		tuple := 2 * addrSize
		if rem := (p - off) % tuple; rem != 0 {
			p += tuple - rem
		}
		dieOff, err := firstEntry(dwarf.Offset(infoOff))
		if err != nil {
			return nil, err
		}
		for ; p+tuple <= end; p += tuple {
			var a, n uint64
			if addrSize == 8 {
				a, n = le64(b[p:]), le64(b[p+8:])
			} else {
				a, n = uint64(le32(b[p:])), uint64(le32(b[p+4:]))
			}
			if a == 0 && n == 0 {
				break
			}
			out = append(out, cuRange{low: a, high: a + n, off: dieOff})
		}
		off = end
	}
	return out, nil
}

// firstEntryOffset finds the compile-unit entry of the unit whose header is
// at hdr by letting the reader decode the unit.
func firstEntryOffset(d *dwarf.Data, hdr dwarf.Offset) (dwarf.Offset, error) {
	// Header sizes: 11 (v2-4) or 12 (v5 compile unit) bytes in 32-bit DWARF.
	for _, size := range []dwarf.Offset{11, 12, 23, 24} {
		r := d.Reader()
		r.Seek(hdr + size)
		e, err := r.Next()
		if err == nil && e != nil && e.Offset == hdr+size && (e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit) {
			return e.Offset, nil
		}
	}
	return 0, fmt.Errorf("no compile unit at .debug_info offset %#x", hdr)
}

// unitRanges reads every unit's entry and its ranges (no .debug_aranges).
func unitRanges(d *dwarf.Data) ([]cuRange, error) {
	var out []cuRange
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read compile units: %w", err)
		}
		if e == nil {
			return out, nil
		}
		if e.Tag == dwarf.TagCompileUnit || e.Tag == dwarf.TagPartialUnit {
			rs, err := d.Ranges(e)
			if err != nil {
				return nil, fmt.Errorf("ranges of unit at %#x: %w", e.Offset, err)
			}
			for _, rg := range rs {
				out = append(out, cuRange{low: rg[0], high: rg[1], off: e.Offset})
			}
		}
		r.SkipChildren()
	}
}

// firstUnit is unitsFor(addr)[0], without allocating: the unit BFD asks
// first. ok is false when no unit's ranges contain addr.
func (x *dwarfIndex) firstUnit(addr uint64) (off dwarf.Offset, ok bool) {
	i := sort.Search(len(x.cus), func(i int) bool { return x.cus[i].low > addr })
	early := len(x.maxHigh) == len(x.cus)
	for j := i - 1; j >= 0 && i-j <= 65; j-- {
		if early && x.maxHigh[j] <= addr {
			break // no unit from j down holds addr
		}
		if c := x.cus[j]; addr >= c.low && addr < c.high && (!ok || c.off < off) {
			off, ok = c.off, true
		}
	}
	return off, ok
}

// unitsFor returns the units whose ranges contain addr, in .debug_info order.
func (x *dwarfIndex) unitsFor(addr uint64) []dwarf.Offset {
	i := sort.Search(len(x.cus), func(i int) bool { return x.cus[i].low > addr })
	var offs []dwarf.Offset
	early := len(x.maxHigh) == len(x.cus)
	for j := i - 1; j >= 0; j-- {
		if early && x.maxHigh[j] <= addr {
			break // no unit from j down holds addr
		}
		c := x.cus[j]
		if addr >= c.low && addr < c.high {
			offs = append(offs, c.off)
		}
		// Ranges are short; stop after a generous window of earlier ones.
		if i-j > 64 {
			break
		}
	}
	sort.Slice(offs, func(a, b int) bool { return offs[a] < offs[b] })
	return offs
}

// preUnit is a unit being decoded ahead (predecode) for the sorted
// addresses want: u is set (nil if decoding failed) when done is closed.
type preUnit struct {
	want []uint64
	done chan struct{}
	u    *unitInfo
}

// predecode starts decoding, in parallel, the units that hold the
// addresses pc+delta and are not decoded yet, for those addresses, and
// leaves them in x.pre for inBatches, which waits for each as it gets to
// it: answering one unit overlaps decoding the next. Callers hold the
// object's lock; the decoding itself needs it not.
func (x *dwarfIndex) predecode(pcs []uint64, delta uint64) {
	want := make(map[dwarf.Offset][]uint64)
	var need []dwarf.Offset
	for _, pc := range pcs {
		a := pc + delta
		off, ok := x.firstUnit(a)
		if !ok {
			continue
		}
		if _, ok := want[off]; !ok {
			need = append(need, off)
		}
		want[off] = append(want[off], a)
	}
	x.planUnits(want)
	var ahead []*preUnit
	n := 0
	for _, off := range need {
		slices.Sort(want[off])
		if _, ok := x.units[off]; ok {
			continue
		}
		if pu, ok := x.pre[off]; ok && covers(pu.want, want[off]) {
			continue
		}
		pu := &preUnit{want: want[off], done: make(chan struct{})}
		x.pre[off] = pu
		ahead = append(ahead, pu)
		need[n] = off
		n++
	}
	if n == 0 {
		return
	}
	// In address order, as inBatches answers them.
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	for range min(runtime.GOMAXPROCS(0), n) {
		go func() {
			for i := range work {
				u, err := x.decodeOnWorker(need[i], ahead[i].want)
				if err == nil {
					ahead[i].u = u
				}
				close(ahead[i].done)
			}
		}()
	}
}

// planUnits tells a compressed .debug_info which units the addresses
// (want's, by unit) will read: every unit whose ranges hold one, which
// addr2line tries in turn.
func (x *dwarfIndex) planUnits(want map[dwarf.Offset][]uint64) {
	if x.raw == nil || !x.byHeader || x.raw.info.plain != nil || len(want) == 0 {
		return
	}
	var starts []int
	for _, addrs := range want {
		for _, a := range addrs {
			for _, off := range x.unitsFor(a) {
				starts = append(starts, int(off))
			}
		}
	}
	x.raw.info.plan(starts)
}

// covers reports whether the sorted addresses sub are all in the sorted want.
func covers(want, sub []uint64) bool {
	i := 0
	for _, a := range sub {
		for i < len(want) && want[i] < a {
			i++
		}
		if i == len(want) || want[i] != a {
			return false
		}
	}
	return true
}

// inBatches calls answer for every pc (ascending; addresses are pc+delta)
// unit by unit: it decodes a few units at a time, in parallel, answers
// their addresses and drops them, so memory holds a handful of units while
// the memo keeps every answer. Units whose addresses are all memoized are
// not decoded. Callers hold the object's lock.
func (x *dwarfIndex) inBatches(pcs []uint64, delta uint64, known func(uint64) bool, answer func(uint64)) {
	type group struct {
		off   dwarf.Offset
		pcs   []uint64
		addrs []uint64 // pcs+delta not yet answered
		load  bool
	}
	var groups []*group
	byUnit := make(map[dwarf.Offset]*group)
	for _, pc := range pcs {
		a := pc + delta
		off, ok := x.firstUnit(a)
		if !ok {
			answer(pc) // no unit: symbols only
			continue
		}
		g := byUnit[off]
		if g == nil {
			g = &group{off: off}
			byUnit[off] = g
			groups = append(groups, g)
		}
		g.pcs = append(g.pcs, pc)
		if !known(a) {
			g.load = true
			g.addrs = append(g.addrs, a)
		}
	}
	// While one batch is answered (sequentially: BFD's answers depend on
	// the lookups before them), the next one is decoded in the background.
	batch := 2 * runtime.GOMAXPROCS(0)
	start := func(part []*group) func() map[dwarf.Offset]*unitInfo {
		var need []dwarf.Offset
		want := make(map[dwarf.Offset][]uint64)
		for _, g := range part {
			if _, ok := x.units[g.off]; g.load && !ok {
				slices.Sort(g.addrs)
				if pu, ok := x.pre[g.off]; ok && covers(pu.want, g.addrs) {
					continue // decoded ahead: taken below
				}
				need = append(need, g.off)
				want[g.off] = g.addrs
			}
		}
		x.planUnits(want)
		return x.loadAll(need, want)
	}
	var next func() map[dwarf.Offset]*unitInfo
	for i := 0; i < len(groups); i += batch {
		part := groups[i:min(i+batch, len(groups))]
		if next == nil {
			next = start(part)
		}
		loaded := next()
		next = nil
		if j := i + batch; j < len(groups) {
			next = start(groups[j:min(j+batch, len(groups))])
		}
		for _, g := range part {
			if _, ok := x.units[g.off]; ok || !g.load || loaded[g.off] != nil {
				continue
			}
			if pu, ok := x.pre[g.off]; ok && covers(pu.want, g.addrs) {
				<-pu.done
				if pu.u != nil { // else unit() reports why
					loaded[g.off] = pu.u
				}
				delete(x.pre, g.off)
			}
		}
		for off, u := range loaded {
			x.units[off] = u
		}
		for _, g := range part {
			for _, pc := range g.pcs {
				answer(pc)
			}
		}
		for off := range loaded {
			delete(x.units, off)
		}
	}
}

// loadAll starts decoding the units in parallel and returns a function
// that waits for them. Decoding only reads x.raw and debug/dwarf's Data,
// which are safe for concurrent readers once every unit has been entered
// (primeUnits, where the Data is built); x.units is left to the caller.
// Units that fail are left out (unit() will retry and report).
func (x *dwarfIndex) loadAll(need []dwarf.Offset, want map[dwarf.Offset][]uint64) func() map[dwarf.Offset]*unitInfo {
	out := make(map[dwarf.Offset]*unitInfo, len(need))
	if len(need) == 0 {
		return func() map[dwarf.Offset]*unitInfo { return out }
	}
	type result struct {
		off dwarf.Offset
		u   *unitInfo
	}
	work := make(chan dwarf.Offset, len(need))
	for _, off := range need {
		work <- off
	}
	close(work)
	results := make(chan result, len(need))
	for range min(runtime.GOMAXPROCS(0), len(need)) {
		go func() {
			for off := range work {
				u, err := x.decodeOnWorker(off, want[off])
				if err != nil {
					u = nil
				}
				results <- result{off, u}
			}
		}()
	}
	return func() map[dwarf.Offset]*unitInfo {
		for range need {
			if r := <-results; r.u != nil {
				out[r.off] = r.u
			}
		}
		return out
	}
}

func (x *dwarfIndex) unit(off dwarf.Offset) (*unitInfo, error) {
	if u, ok := x.units[off]; ok {
		return u, nil
	}
	u, err := x.loadUnit(off)
	if err != nil {
		return nil, err
	}
	x.units[off] = u
	return u, nil
}

// decodeOnWorker is loadUnitFor on one of the decoding goroutines, where a
// panic (a bug met on some malformed DWARF) would end the whole process,
// the server included, and not only the lookup: it becomes the unit's
// error instead. The unit is then decoded again on the caller's goroutine,
// whose own recovery (profiling.Service.RecoverAsError) answers the
// client with an error.
func (x *dwarfIndex) decodeOnWorker(off dwarf.Offset, want []uint64) (u *unitInfo, err error) {
	defer func() {
		if r := recover(); r != nil {
			u, err = nil, fmt.Errorf("decode unit at %#x: panic: %v", off, r)
		}
	}()
	return x.loadUnitFor(off, want)
}

// loadUnit decodes one unit: its line table and every function DIE, with
// the fast scanner when the sections are mapped plainly.
func (x *dwarfIndex) loadUnit(off dwarf.Offset) (*unitInfo, error) {
	return x.loadUnitFor(off, nil)
}

// loadUnitFor is loadUnit decoding only what answers the sorted addresses
// want (all of the unit when want is nil). Such a partial unit must only
// answer those addresses.
func (x *dwarfIndex) loadUnitFor(off dwarf.Offset, want []uint64) (*unitInfo, error) {
	if x.raw == nil { // zstd (errZstd): the whole image is debug/dwarf's
		return x.loadUnitGo(off)
	}
	var h unitHeader
	var err error
	if x.byHeader {
		h, err = x.raw.parseHeader(int(off))
	} else {
		h, err = x.raw.headerFor(int(off))
	}
	if err != nil {
		return nil, fmt.Errorf("unit header at %#x: %w", off, err)
	}
	if !x.onlyGo {
		u, err := x.loadUnitRaw(h, want)
		if !errors.Is(err, errIndexedForm) {
			return u, err
		}
		if _, err := fallbackToDebugDWARF(err, x.data); err != nil {
			return nil, err
		}
	}
	return x.loadUnitGo(dwarf.Offset(h.dieOff))
}

// loadUnitRaw is loadUnitGo over rawDWARF.scanUnit.
func (x *dwarfIndex) loadUnitRaw(h unitHeader, want []uint64) (*unitInfo, error) {
	off := dwarf.Offset(h.dieOff)
	cu, err := x.raw.readUnitEntry(h)
	if err != nil {
		return nil, fmt.Errorf("read unit at %#x: %w", off, err)
	}
	u := &unitInfo{nameOf: make(map[dwarf.Offset][]nameAttr), hdr: h}
	if err := x.readLines(u, cu, h.addrSize, want); err != nil {
		return nil, fmt.Errorf("line table of unit at %#x: %w", off, err)
	}
	if !cu.children {
		return u, nil
	}
	base := cu.low
	var pending [][]nameAttr
	// All ranges of the unit share one array; funcs point into it once it
	// stops growing.
	var store [][2]uint64
	type span struct{ start, n int32 }
	var spans []span
	var rangeErr error
	err = x.raw.scanUnit(h, base, want, func(d *scannedDIE) {
		if !d.hit {
			// Holds no wanted address: only its names may be needed, as
			// the abstract origin of inlined calls, and namesAt reads
			// them then.
			return
		}
		// Hit DIEs are u.funcs, in order: d.caller indexes them.
		f := funcInfo{caller: -1, callLine: int(d.callLine)}
		if d.tag == dwarf.TagInlinedSubroutine {
			f.caller = d.caller
		}
		if d.callFile >= 0 {
			f.callFile = u.fileName(d.callFile)
		}
		sp := span{start: int32(len(store))}
		if d.ranges >= 0 {
			rs, rerr := x.raw.rangeList(h, uint64(d.ranges), base)
			if rerr != nil && rangeErr == nil {
				rangeErr = rerr
			}
			for _, rg := range rs {
				if rg[1] > rg[0] {
					store = append(store, rg)
				}
			}
		} else if d.haveLow && d.haveHigh {
			high := d.high
			if d.highRel {
				high += d.low
			}
			if high > d.low {
				store = append(store, [2]uint64{d.low, high})
			}
		}
		sp.n = int32(len(store)) - sp.start
		spans = append(spans, sp)
		u.funcs = append(u.funcs, f)
		var attrs []nameAttr
		if len(d.attrs) > 0 {
			attrs = append(make([]nameAttr, 0, len(d.attrs)), d.attrs...)
		}
		if d.tag != dwarf.TagInlinedSubroutine {
			u.nameOf[d.off] = attrs
		}
		pending = append(pending, attrs)
	})
	if err == nil {
		err = rangeErr
	}
	if err != nil {
		return nil, err
	}
	for i, sp := range spans {
		if sp.n > 0 {
			u.funcs[i].ranges = store[sp.start : sp.start+sp.n : sp.start+sp.n]
		}
	}
	cLike := cLikeLanguage(cu.lang)
	for i, attrs := range pending {
		f := &u.funcs[i]
		x.applyNames(u, attrs, true, 0, cLike, &f.name, &f.isLinkage)
		if x.names != nil && f.name != "" {
			// Here, in parallel, rather than while answering.
			x.names.shortOf(x.names.display(f.name))
		}
	}
	u.nameOf, u.strs = nil, nil
	u.buildLookup()
	x.raw.info.releaseAround(h.start, h.end)
	x.raw.dropAbbrevs(h.abbrevOff)
	// The pages of the other sections this unit read (its abbreviations,
	// range lists and names) are dropped too: a unit reads few of them
	// but fault-around maps 64 KB each time, and units far apart in a
	// large program (a server's profile) would keep megabytes of them
	// resident. Units decoded meanwhile fault back what they read.
	for _, name := range []string{"abbrev", "ranges", "rnglists", "str", "line_str"} {
		x.raw.secs[name].releaseAll()
	}
	return u, nil
}

// loadUnitGo decodes one unit with debug/dwarf's reader (see
// fallbackToDebugDWARF for when).
func (x *dwarfIndex) loadUnitGo(off dwarf.Offset) (*unitInfo, error) {
	d, err := x.data()
	if err != nil {
		return nil, err
	}
	r := d.Reader()
	r.Seek(off)
	cu, err := r.Next()
	if err != nil {
		return nil, fmt.Errorf("read unit at %#x: %w", off, err)
	}
	if cu == nil {
		return nil, fmt.Errorf("no unit at %#x", off)
	}
	u := &unitInfo{nameOf: make(map[dwarf.Offset][]nameAttr)}
	if err := u.readLinesGo(d, cu, nil); err != nil {
		return nil, fmt.Errorf("line table of unit at %#x: %w", off, err)
	}
	if !cu.Children {
		return u, nil
	}
	type pendingName struct {
		idx   int32
		attrs []nameAttr
	}
	var pending []pendingName
	stack := []int32{-1}
	level := 0
	for {
		e, err := r.Next()
		if err != nil {
			return nil, fmt.Errorf("read unit at %#x: %w", off, err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			level--
			if level < 0 {
				break
			}
			stack = stack[:level+1]
			continue
		}
		stack[level] = -1
		switch e.Tag {
		case dwarf.TagSubprogram, dwarf.TagEntryPoint, dwarf.TagInlinedSubroutine:
			f := funcInfo{caller: -1}
			if e.Tag == dwarf.TagInlinedSubroutine {
				for i := level - 1; i >= 0; i-- {
					if stack[i] >= 0 {
						f.caller = stack[i]
						break
					}
				}
			}
			var attrs []nameAttr
			var low, high uint64
			var haveLow, haveHigh, highRel, haveRanges bool
			for _, fld := range e.Field {
				switch fld.Attr {
				case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName:
					if s, ok := fld.Val.(string); ok {
						attrs = append(attrs, nameAttr{attr: fld.Attr, str: s})
					}
				case dwarf.AttrAbstractOrigin, dwarf.AttrSpecification:
					if ref, ok := fld.Val.(dwarf.Offset); ok {
						attrs = append(attrs, nameAttr{attr: fld.Attr, ref: ref})
					}
				case dwarf.AttrCallFile:
					if n, ok := fld.Val.(int64); ok {
						f.callFile = u.fileName(n)
					}
				case dwarf.AttrCallLine:
					if n, ok := fld.Val.(int64); ok {
						f.callLine = int(n)
					}
				case dwarf.AttrLowpc:
					low, haveLow = fld.Val.(uint64)
				case dwarf.AttrHighpc:
					switch v := fld.Val.(type) {
					case uint64:
						high, haveHigh = v, true
					case int64:
						high, haveHigh, highRel = uint64(v), true, true
					}
				case dwarf.AttrRanges:
					haveRanges = true
				}
			}
			if haveLow && haveHigh {
				if highRel {
					high += low
				}
				if high > low {
					f.ranges = append(f.ranges, [2]uint64{low, high})
				}
			}
			if haveRanges {
				rs, err := d.Ranges(e)
				if err == nil {
					f.ranges = f.ranges[:0]
					for _, rg := range rs {
						if rg[1] > rg[0] {
							f.ranges = append(f.ranges, rg)
						}
					}
				}
			}
			idx := int32(len(u.funcs))
			u.funcs = append(u.funcs, f)
			if e.Tag != dwarf.TagInlinedSubroutine {
				// Only subprograms are the targets of abstract
				// origins and specifications.
				u.nameOf[e.Offset] = attrs
			}
			pending = append(pending, pendingName{idx, attrs})
			stack[level] = idx
		}
		if e.Children {
			if skipSubtree(e.Tag) {
				// Types hold no code; their member declarations are
				// read on demand by namesAt.
				r.SkipChildren()
				continue
			}
			level++
			stack = append(stack, -1)
		}
	}
	lang, _ := cu.Val(dwarf.AttrLanguage).(int64)
	cLike := cLikeLanguage(lang)
	for _, p := range pending {
		f := &u.funcs[p.idx]
		x.applyNames(u, p.attrs, true, 0, cLike, &f.name, &f.isLinkage)
	}
	u.nameOf = nil // only needed while the names are resolved
	u.buildLookup()
	return u, nil
}

// readLines decodes the unit's line table with lineProgram.
func (x *dwarfIndex) readLines(u *unitInfo, cu unitEntry, addrSize int, want []uint64) error {
	if cu.stmtList < 0 || x.raw.line == nil {
		return nil
	}
	p, err := parseLineProgram(x.raw.line, uint64(cu.stmtList), cu.compDir, addrSize, x.raw.str, x.raw.lineStr)
	if err == nil {
		err = p.decode(u, want, &x.raw.rows)
		x.raw.line.releaseAround(p.start, p.end)
	}
	if err != nil {
		return err
	}
	u.sortSeqs()
	return nil
}

// applyNames follows scan_unit_for_symbols and find_abstract_instance: a
// linkage name always wins, DW_AT_name only fills an empty name, and
// references are followed (abstract origins only from the DIE itself,
// specifications at every step).
func (x *dwarfIndex) applyNames(u *unitInfo, attrs []nameAttr, top bool, depth int, cLike bool, name *string, linkage *bool) {
	if depth > 100 {
		return
	}
	for _, a := range attrs {
		switch a.attr {
		case dwarf.AttrName:
			if *name == "" {
				*name = x.attrString(u, &a)
				if cLike {
					*linkage = true
				}
			}
		case dwarf.AttrLinkageName, attrMIPSLinkageName:
			*name = x.attrString(u, &a)
			*linkage = true
		case dwarf.AttrAbstractOrigin:
			if top {
				x.applyNames(u, x.namesAt(u, a.ref), false, depth+1, cLike, name, linkage)
			}
		case dwarf.AttrSpecification:
			x.applyNames(u, x.namesAt(u, a.ref), false, depth+1, cLike, name, linkage)
		}
	}
}

// attrString is a's name, read once per place and unit (the same names
// recur for every inlined instance).
func (x *dwarfIndex) attrString(u *unitInfo, a *nameAttr) string {
	if a.strIn == strHere {
		return a.str
	}
	key := a.strOff<<2 | uint64(a.strIn)
	if s, ok := u.strs[key]; ok {
		return s
	}
	s := x.raw.attrString(a)
	if u.strs == nil {
		u.strs = make(map[uint64]string)
	}
	u.strs[key] = s
	return s
}

// namesAt returns the name-bearing attributes of the DIE at off, reading it
// when it lies outside the unit's function DIEs.
func (x *dwarfIndex) namesAt(u *unitInfo, off dwarf.Offset) []nameAttr {
	if attrs, ok := u.nameOf[off]; ok {
		return attrs
	}
	if u.nameOf == nil {
		u.nameOf = make(map[dwarf.Offset][]nameAttr)
	}
	if x.raw != nil && u.hdr.end > 0 {
		attrs, err := x.raw.dieNames(u.hdr, int(off))
		if err == nil {
			u.nameOf[off] = attrs
			return attrs
		}
		if _, err := fallbackToDebugDWARF(err, x.data); err != nil {
			u.nameOf[off] = nil
			return nil
		}
	}
	e, err := x.entry(off)
	if err != nil {
		return nil
	}
	var attrs []nameAttr
	for _, fld := range e.Field {
		switch fld.Attr {
		case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName:
			if s, ok := fld.Val.(string); ok {
				attrs = append(attrs, nameAttr{attr: fld.Attr, str: s})
			}
		case dwarf.AttrSpecification, dwarf.AttrAbstractOrigin:
			if ref, ok := fld.Val.(dwarf.Offset); ok {
				attrs = append(attrs, nameAttr{attr: fld.Attr, ref: ref})
			}
		}
	}
	u.nameOf[off] = attrs
	return attrs
}

// buildLookup mirrors build_lookup_funcinfo_table: functions sorted by
// (lowest address, highest address, DIE order), with a running maximum of
// the high addresses so a binary search finds the first candidate.
func (u *unitInfo) buildLookup() {
	for i := range u.funcs {
		f := &u.funcs[i]
		if len(f.ranges) == 0 {
			continue
		}
		lo, hi := f.ranges[0][0], f.ranges[0][1]
		for _, r := range f.ranges[1:] {
			lo, hi = min(lo, r[0]), max(hi, r[1])
		}
		u.byLow = append(u.byLow, funcLookup{low: lo, high: hi, idx: int32(i)})
	}
	slices.SortFunc(u.byLow, func(a, b funcLookup) int {
		if c := cmp.Compare(a.low, b.low); c != 0 {
			return c
		}
		if c := cmp.Compare(a.high, b.high); c != 0 {
			return c
		}
		return cmp.Compare(a.idx, b.idx)
	})
	for i := 1; i < len(u.byLow); i++ {
		u.byLow[i].high = max(u.byLow[i].high, u.byLow[i-1].high)
	}
}

// function mirrors lookup_address_in_function_table: the function with the
// smallest single range containing addr; on a tie, the later DIE.
func (u *unitInfo) function(addr uint64) int32 {
	n := len(u.byLow)
	if n == 0 || u.byLow[n-1].high < addr {
		return -1
	}
	first := sort.Search(n, func(i int) bool { return addr < u.byLow[i].high })
	best := int32(-1)
	var bestLen uint64 = ^uint64(0)
	for i := first; i < n && addr >= u.byLow[i].low; i++ {
		idx := u.byLow[i].idx
		for _, r := range u.funcs[idx].ranges {
			if addr < r[0] || addr >= r[1] {
				continue
			}
			l := r[1] - r[0]
			if l < bestLen || (l == bestLen && idx > best) {
				best, bestLen = idx, l
			}
		}
	}
	return best
}

// readLinesGo decodes the unit's line program into sequences the way BFD's
// decode_line_info and add_line_info do: of rows at one address only the
// last is kept; sequences are sorted and overlapping ones trimmed.
//
// With want (sorted addresses) set, sequences that hold none of them are
// not kept.
func (u *unitInfo) readLinesGo(d *dwarf.Data, cu *dwarf.Entry, want []uint64) error {
	lr, err := d.LineReader(cu)
	if err != nil {
		return err
	}
	if lr == nil {
		return nil
	}
	// u.files is indexed like the attributes DW_AT_call_file refer to.
	fileIdx := make(map[*dwarf.LineFile]int32)
	for i, f := range lr.Files() {
		name := ""
		if f != nil {
			fileIdx[f] = int32(i)
			name = f.Name
		}
		u.files = append(u.files, name)
	}
	// BFD 2.40 starts every sequence of a DWARF 5 table with file 0 (the
	// unit's primary file) instead of the default file register 1. gcc
	// only emits DW_LNS_set_file on a change, so rows naming file 1 before
	// the first change in a sequence are the ones BFD names after file 0.
	dwarf5 := len(lr.Files()) > 0 && lr.Files()[0] != nil
	fileChanged := false
	var cur *lineSeq
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return err
		}
		fi, ok := fileIdx[le.File]
		if !ok {
			fi = -1
			if le.File != nil {
				fi = int32(len(u.files))
				fileIdx[le.File] = fi
				u.files = append(u.files, le.File.Name)
			}
		}
		if fi != 1 {
			fileChanged = true
		} else if dwarf5 && !fileChanged {
			fi = 0
		}
		row := lineRow{addr: le.Address, file: fi, line: int32(le.Line), end: le.EndSequence}
		switch {
		case cur != nil && len(cur.rows) > 0 && cur.rows[len(cur.rows)-1].addr == row.addr && cur.rows[len(cur.rows)-1].end == row.end:
			cur.rows[len(cur.rows)-1] = row
		case cur == nil || cur.rows[len(cur.rows)-1].end:
			u.seqs = append(u.seqs, lineSeq{low: row.addr})
			cur = &u.seqs[len(u.seqs)-1]
			cur.rows = append(cur.rows, row)
		default:
			cur.rows = append(cur.rows, row)
		}
		if row.end {
			if want != nil {
				i, _ := slices.BinarySearch(want, cur.low)
				if i == len(want) || want[i] >= row.addr {
					u.seqs = u.seqs[:len(u.seqs)-1] // no wanted address in it
				}
			}
			cur = nil
			fileChanged = false
		}
	}
	u.sortSeqs()
	return nil
}

// sortSeqs finishes decoded sequences like BFD: rows sorted, sequences
// sorted by start (longest first), nested ones dropped, overlapping ones
// trimmed.
func (u *unitInfo) sortSeqs() {
	// A sequence without an end row is dropped by nobody; keep it sorted.
	for i := range u.seqs {
		rows := u.seqs[i].rows
		if !sort.SliceIsSorted(rows, func(a, b int) bool { return rows[a].addr < rows[b].addr }) {
			sort.SliceStable(rows, func(a, b int) bool { return rows[a].addr < rows[b].addr })
		}
	}
	sort.SliceStable(u.seqs, func(i, j int) bool {
		a, b := &u.seqs[i], &u.seqs[j]
		if a.low != b.low {
			return a.low < b.low
		}
		return a.high() > b.high()
	})
	if len(u.seqs) > 1 {
		kept := u.seqs[:1]
		lastHigh := u.seqs[0].high()
		for _, s := range u.seqs[1:] {
			if s.low < lastHigh {
				if s.high() <= lastHigh {
					continue // nested
				}
				s.low = lastHigh // overlapping: trimmed
			}
			lastHigh = s.high()
			kept = append(kept, s)
		}
		u.seqs = kept
	}
}

func (s *lineSeq) high() uint64 { return s.rows[len(s.rows)-1].addr }

// line mirrors lookup_address_in_line_info_table.
func (u *unitInfo) line(addr uint64) (file string, line int, ok bool) {
	i := sort.Search(len(u.seqs), func(i int) bool { return addr < u.seqs[i].high() })
	if i == len(u.seqs) || addr < u.seqs[i].low {
		return "", 0, false
	}
	rows := u.seqs[i].rows
	j := sort.Search(len(rows), func(j int) bool { return rows[j].addr > addr }) - 1
	if j < 0 || j+1 >= len(rows) || rows[j].end {
		return "", 0, false
	}
	r := rows[j]
	return u.fileName(int64(r.file)), int(r.line), true
}

func (u *unitInfo) fileName(i int64) string {
	if i < 0 || i >= int64(len(u.files)) {
		return ""
	}
	return u.files[i]
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

func le64(b []byte) uint64 { return uint64(le32(b)) | uint64(le32(b[4:]))<<32 }

// cLikeLanguage is BFD's mangle_style(lang) == 0: languages whose
// DW_AT_name is the symbol name, so addr2line prints it as it stands (and
// among DIEs with equal ranges, the last one read). The list is binutils
// 2.40's (Debian 12), bfd/dwarf2.c mangle_style, as read at
// plctlab/patchwork-binutils-gdb@66d3faa7800240dd15030be4184f3b29f0e2d681
// (a mirror of bminor/binutils-gdb): Ada, C++, Java, D and Rust have
// demangling styles of their own and every other language DMGL_AUTO, so
// Fortran 90 and later and Modula-2 are not in it, while assembly is: glibc's
// clone3.S names clone3 through such a unit.
func cLikeLanguage(lang int64) bool {
	switch lang {
	case 0x01, 0x02, 0x0c, 0x1d, // DW_LANG_C89, C, C99, C11
		0x05, 0x06, 0x07, // Cobol74, Cobol85, Fortran77
		0x09, 0x0f, 0x12, // Pascal83, PLI, UPC
		0x8001,                 // Mips_Assembler (GNU as writes it for every target)
		0x8765,                 // Upc (the GNU extension's number)
		0x8004, 0x8006, 0x8007: // HP_Basic91, HP_IMacro, HP_Assembler
		return true
	}
	return false
}

// skipSubtree reports DIEs whose children never carry code addresses.
func skipSubtree(t dwarf.Tag) bool {
	switch t {
	case dwarf.TagStructType, dwarf.TagClassType, dwarf.TagUnionType, dwarf.TagEnumerationType,
		dwarf.TagSubroutineType, dwarf.TagArrayType, dwarf.TagTemplateTypeParameter,
		dwarf.TagTemplateValueParameter, dwarf.TagTypedef,
		dwarf.TagFormalParameter, dwarf.TagVariable,
		0x48, 0x4109: // DW_TAG_call_site, DW_TAG_GNU_call_site
		return true
	}
	return false
}
