package elfsym

import (
	"bytes"
	"debug/dwarf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// rawDWARF holds the plain (memory-mapped) debug sections, for scanUnit:
// a DIE walker that decodes only the attributes addr2line uses and skips
// the rest by form, without debug/dwarf's per-entry allocations.
type rawDWARF struct {
	// .debug_info and .debug_line are read as far as the units asked for
	// need (a compressed .debug_info keeps only the units planned for the
	// addresses and those asked for: debugSection.plan), .debug_abbrev,
	// .debug_ranges and .debug_rnglists as far as the
	// tables and lists asked for go (readFrom), .debug_str and
	// .debug_line_str whole on first use (load): a compressed section is
	// inflated only that far.
	info, line   *debugSection
	str, lineStr []byte
	secs         map[string]*debugSection // every .debug_* section, by name without the prefix

	loadOnce sync.Once
	loadErr  error

	goOnce  sync.Once // debug/dwarf's reader over the whole sections, for fallbacks
	goData  *dwarf.Data
	goErr   error
	goBuilt atomic.Bool // dwarfData was called (usedDebugDWARF)

	hdrMu  sync.Mutex
	starts []int // offsets of the unit headers walked so far, ascending (unitAt)

	mu      sync.Mutex // guards abbrevs: units are scanned in parallel
	abbrevs map[uint64]abbrevTab

	rows sync.Pool // of *[]lineRow, lineProgram.decode's buffers
}

// load inflates (or takes in place) the sections read whole.
func (x *rawDWARF) load() error {
	x.loadOnce.Do(func() {
		for name, dst := range map[string]*[]byte{"str": &x.str, "line_str": &x.lineStr} {
			s := x.secs[name]
			if s == nil {
				continue
			}
			b, err := s.all()
			if err != nil {
				x.loadErr = fmt.Errorf(".debug_%s: %w", name, err)
				return
			}
			*dst = b
		}
	})
	return x.loadErr
}

// dwarfData builds debug/dwarf's reader over the whole sections (inflating
// them all), for what the scanner does not read itself.
func (x *rawDWARF) dwarfData() (*dwarf.Data, error) {
	x.goOnce.Do(func() {
		x.goBuilt.Store(true)
		whole := map[string][]byte{}
		for name, s := range x.secs {
			b, err := s.all()
			if err != nil {
				x.goErr = fmt.Errorf(".debug_%s: %w", name, err)
				return
			}
			whole[name] = b
		}
		x.goData, x.goErr = newGoDWARF(whole)
		if x.goErr == nil {
			primeUnits(x.goData, bytes.NewReader(whole["info"]))
		}
	})
	return x.goData, x.goErr
}

// unitAt returns the header of the unit holding .debug_info offset off,
// walking the unit headers from the start as far as needed.
func (x *rawDWARF) unitAt(off int) (unitHeader, error) {
	x.hdrMu.Lock()
	defer x.hdrMu.Unlock()
	if len(x.starts) == 0 {
		x.starts = []int{0}
	}
	for {
		i := sort.SearchInts(x.starts, off+1) - 1
		h, err := x.parseHeader(x.starts[i])
		if err != nil {
			return h, err
		}
		if off < h.end {
			return h, nil
		}
		if i < len(x.starts)-1 {
			return h, fmt.Errorf("offset %#x between units", off)
		}
		if h.end >= x.info.len() {
			return h, fmt.Errorf("offset %#x beyond .debug_info", off)
		}
		x.starts = append(x.starts, h.end)
	}
}

type abbrev struct {
	tag      dwarf.Tag
	children bool
	attrs    []abbrevAttr
	// fixed is the size of all the attributes in the common format
	// (DWARF 3+, 8-byte addresses, 32-bit offsets) when every form has a
	// fixed size, else -1: scanUnit steps over such DIEs in one move when
	// it needs none of their attributes.
	fixed int
}

// commonFormat reports whether abbrev.fixed applies to the unit.
func (h unitHeader) commonFormat() bool { return h.version >= 3 && h.addrSize == 8 && h.offSize == 4 }

// fixedFormSize is a form's size in the common format, or -1.
func fixedFormSize(form uint64) int {
	switch form {
	case 0x19, 0x21: // flag_present, implicit_const
		return 0
	case 0x0b, 0x11, 0x0c, 0x25, 0x29: // data1, ref1, flag, strx1, addrx1
		return 1
	case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
		return 2
	case 0x27, 0x2b: // strx3, addrx3
		return 3
	case 0x06, 0x13, 0x28, 0x2c, 0x1c, // data4, ref4, strx4, addrx4, ref_sup4
		0x10, 0x0e, 0x1f, 0x17, 0x1d, 0x1f20, 0x1f21: // ref_addr, strp, line_strp, sec_offset, strp_sup, GNU_ref_alt, GNU_strp_alt
		return 4
	case 0x01, 0x07, 0x14, 0x20, 0x24: // addr, data8, ref8, ref_sig8, ref_sup8
		return 8
	case 0x1e: // data16
		return 16
	}
	return -1
}

type abbrevAttr struct {
	attr     dwarf.Attr
	form     uint64
	implicit int64
}

// errIndexedForm: the DIE uses one of DWARF 5's indexed forms (DW_FORM_strx*,
// addrx*, rnglistx, the DW_RLE_*x range entries, or their GNU split-DWARF
// ancestors), which need the unit's str_offsets/addr/rnglists bases. The
// scanner does not decode them; fallbackToDebugDWARF lets debug/dwarf
// decode such a unit.
var errIndexedForm = errors.New("indexed DWARF 5 form")

type reader struct {
	b    []byte
	off  int
	err  error
	strs map[uint64]string // interned .debug_str / .debug_line_str strings by offset
}

// readFrom runs read over sec from off on. A compressed section is
// inflated only as far as reading goes: read gets a prefix first, and
// again a longer one (up to all of it) as long as it runs out of bytes
// ("truncated"), so read must not keep what a failed run produced.
func readFrom(sec *debugSection, off int, read func(r *reader)) error {
	for n := 16 << 10; ; n *= 4 {
		b := sec.prefix(off + n)
		r := &reader{b: b, off: off}
		read(r)
		if r.err == nil || !errors.Is(r.err, errTruncated) || len(b) >= sec.len() || off+n >= sec.len() {
			return r.err
		}
	}
}

// errTruncated: a read ran past the end of the bytes it had.
var errTruncated = errors.New("truncated DWARF")

// strAt returns the string at off in sec, once per offset and scan: the
// same names recur for every inlined instance.
func (r *reader) strAt(sec []byte, off uint64, key uint64) string {
	if r.strs == nil {
		return cstringAt(sec, off)
	}
	if s, ok := r.strs[key]; ok {
		return s
	}
	s := cstringAt(sec, off)
	r.strs[key] = s
	return s
}

func (r *reader) u8() byte {
	if r.off >= len(r.b) {
		r.err = errTruncated
		return 0
	}
	v := r.b[r.off]
	r.off++
	return v
}

func (r *reader) fixed(n int) uint64 {
	if r.off+n > len(r.b) || r.off+n < r.off {
		r.err = errTruncated
		r.off = len(r.b)
		return 0
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(r.b[r.off+i])
	}
	r.off += n
	return v
}

// uleb reads an unsigned LEB128 number; most are one byte, read inline.
func (r *reader) uleb() uint64 {
	if r.off < len(r.b) && r.err == nil {
		if c := r.b[r.off]; c < 0x80 {
			r.off++
			return uint64(c)
		}
	}
	return r.ulebLong()
}

// ulebLong is uleb past its inline case, decoded by lineprog.go's
// ulebAtLong.
func (r *reader) ulebLong() uint64 {
	if r.err != nil {
		return 0
	}
	v, next := ulebAtLong(r.b, r.off)
	if next > len(r.b) {
		r.off, r.err = len(r.b), errTruncated
		return 0
	}
	r.off = next
	return v
}

// sleb reads a signed LEB128 number, a one-byte one inline.
func (r *reader) sleb() int64 {
	if r.off < len(r.b) && r.err == nil {
		if c := r.b[r.off]; c < 0x80 {
			r.off++
			return int64(int8(c<<1)) >> 1 // bit 6 is the sign
		}
	}
	return r.slebLong()
}

// slebLong is sleb past its inline case, decoded by slebAtLong.
func (r *reader) slebLong() int64 {
	if r.err != nil {
		return 0
	}
	v, next := slebAtLong(r.b, r.off)
	if next > len(r.b) {
		r.off, r.err = len(r.b), errTruncated
		return 0
	}
	r.off = next
	return v
}

func (r *reader) skip(n int) {
	if n < 0 || r.off+n > len(r.b) {
		r.err = errTruncated
		r.off = len(r.b)
		return
	}
	r.off += n
}

func (r *reader) cstring() string {
	for i := r.off; i < len(r.b); i++ {
		if r.b[i] == 0 {
			s := string(r.b[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.err = errors.New("unterminated DWARF string")
	r.off = len(r.b)
	return ""
}

func cstringAt(b []byte, off uint64) string {
	if off >= uint64(len(b)) {
		return ""
	}
	for i := off; i < uint64(len(b)); i++ {
		if b[i] == 0 {
			return string(b[off:i])
		}
	}
	return ""
}

// abbrevTab is one abbreviation table, indexed by code: producers number
// them densely from 1, and a slice lookup per DIE is much cheaper than a
// map's.
type abbrevTab []*abbrev

// maxAbbrevCode bounds the codes abbrevTab holds; a table with larger ones
// is an error (no producer measured comes near: gcc numbers them densely).
const maxAbbrevCode = 1 << 16

func (t abbrevTab) get(code uint64) *abbrev {
	if code >= uint64(len(t)) {
		return nil
	}
	return t[code]
}

func (x *rawDWARF) abbrevTable(off uint64) (abbrevTab, error) {
	if err := x.load(); err != nil {
		return nil, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if t, ok := x.abbrevs[off]; ok {
		return t, nil
	}
	sec := x.secs["abbrev"]
	if off >= uint64(sec.len()) {
		return nil, fmt.Errorf("abbrev offset %#x out of range", off)
	}
	var t abbrevTab
	err := readFrom(sec, int(off), func(r *reader) { t = parseAbbrevs(r) })
	if err != nil {
		return nil, err
	}
	x.abbrevs[off] = t
	return t, nil
}

// parseAbbrevs reads one abbreviation table; errors are left in r.err.
func parseAbbrevs(r *reader) abbrevTab {
	var t abbrevTab
	for {
		code := r.uleb()
		if code == 0 || r.err != nil {
			break
		}
		if code >= maxAbbrevCode {
			r.err = fmt.Errorf("abbreviation code %d exceeds %d", code, maxAbbrevCode-1)
			return nil
		}
		a := &abbrev{tag: dwarf.Tag(r.uleb()), children: r.u8() != 0}
		for {
			at, form := r.uleb(), r.uleb()
			if at == 0 && form == 0 || r.err != nil {
				break
			}
			if n := fixedFormSize(form); n >= 0 && a.fixed >= 0 {
				a.fixed += n
			} else {
				a.fixed = -1
			}
			aa := abbrevAttr{attr: dwarf.Attr(at), form: form}
			if form == 0x21 { // DW_FORM_implicit_const
				aa.implicit = r.sleb()
			}
			a.attrs = append(a.attrs, aa)
		}
		if code >= uint64(len(t)) {
			t = append(t, make(abbrevTab, int(code)+1-len(t))...)
		}
		t[code] = a
	}
	return t
}

// dropAbbrevs forgets the table at off once its unit is decoded: compilers
// give each unit its own, and the cache would otherwise hold them all
// (3.6 MB for the benchmark's 101 units). A unit sharing it parses it again.
func (x *rawDWARF) dropAbbrevs(off uint64) {
	x.mu.Lock()
	delete(x.abbrevs, off)
	x.mu.Unlock()
}

// unitHeader is a parsed compilation unit header.
type unitHeader struct {
	start, end int // offsets in .debug_info of the header and the unit's end
	dieOff     int // first DIE
	version    int
	addrSize   int
	offSize    int
	abbrevOff  uint64
}

// headerFor finds the header of the unit whose first DIE is at dieOff.
func (x *rawDWARF) headerFor(dieOff int) (unitHeader, error) {
	for _, size := range []int{12, 11, 24, 23} {
		h, err := x.parseHeader(dieOff - size)
		if err == nil && h.dieOff == dieOff {
			return h, nil
		}
	}
	return unitHeader{}, fmt.Errorf("no unit header before %#x", dieOff)
}

func (x *rawDWARF) parseHeader(start int) (unitHeader, error) {
	if start < 0 {
		return unitHeader{}, fmt.Errorf("unit header at negative offset %d", start)
	}
	info := x.info.slice(start, start+24)
	r := &reader{b: info, off: start}
	h := unitHeader{start: start, offSize: 4}
	length := r.fixed(4)
	if length == 0xffffffff {
		length = r.fixed(8)
		h.offSize = 8
	}
	h.end = r.off + int(length)
	h.version = int(r.fixed(2))
	switch {
	case h.version >= 2 && h.version <= 4:
		h.abbrevOff = r.fixed(h.offSize)
		h.addrSize = int(r.u8())
	case h.version == 5:
		if ut := r.u8(); ut != 1 && ut != 3 { // DW_UT_compile, DW_UT_partial
			// Skeleton (gcc -gsplit-dwarf: addr2line 2.40 reads no lines
			// from them either), type (-fdebug-types-section) and split
			// units hold no code of their own.
			return h, fmt.Errorf("DWARF 5 unit type %d not read", ut)
		}
		h.addrSize = int(r.u8())
		h.abbrevOff = r.fixed(h.offSize)
	default:
		return h, fmt.Errorf("DWARF version %d not read", h.version)
	}
	if r.err != nil || h.end > x.info.len() || h.end < r.off {
		return h, errors.New("bad unit header")
	}
	h.dieOff = r.off
	return h, nil
}

// scannedDIE is what scanUnit reports for a function DIE.
type scannedDIE struct {
	off      dwarf.Offset
	tag      dwarf.Tag
	level    int
	attrs    []nameAttr
	low      uint64
	high     uint64
	haveLow  bool
	haveHigh bool
	highRel  bool
	ranges   int64 // offset of DW_AT_ranges, -1 if none
	callFile int64
	callLine int64
	caller   int32 // index among the hit DIEs of the nearest enclosing hit function DIE, -1 if none
	// hit: the DIE's code holds a wanted address (always without want;
	// also for an inlined call without code ranges). Functions and
	// inlined calls that hold none cannot answer a wanted address, nor can
	// the calls inlined into them, which lie inside their ranges; their
	// subtrees are skipped.
	hit bool
}

// walkRelease is how far scanUnit walks between drops of the pages behind it.
const walkRelease = 1 << 20

// scanUnit walks the DIEs of one unit and calls fn for every subprogram,
// entry point and inlined subroutine. Type subtrees are skipped by their
// DW_AT_sibling. It returns errIndexedForm for the indexed forms it does
// not decode, so the caller can let debug/dwarf decode the unit.
//
// With want (sorted addresses) set, the children of a subprogram whose
// code holds none of them, or that has no code (an abstract instance or a
// declaration), are skipped too: inlined frames lie inside their caller's
// ranges, so they cannot answer those addresses.
func (x *rawDWARF) scanUnit(h unitHeader, base uint64, want []uint64, fn func(*scannedDIE)) error {
	tab, err := x.abbrevTable(h.abbrevOff)
	if err != nil {
		return err
	}
	info := x.info.slice(h.start, h.end)
	if len(info) < h.end {
		return fmt.Errorf("unit at %#x: .debug_info cannot be read", h.start)
	}
	r := &reader{b: info[:h.end], off: h.dieOff}
	common := h.commonFormat()
	level := -1 // the unit DIE is at level 0
	var d scannedDIE
	var funcAt []int32 // per level: index among the hit DIEs of the function DIE there, or -1
	var nhit int32
	// The walk reads the unit once, front to back: the pages it has left
	// are dropped as it goes (a big unit, 3.8 MB in bench/heapprof's
	// o2-12cu, would otherwise be resident whole while decoded; what the
	// names read again after the walk faults back in).
	dropped := h.start
	for r.off < h.end && r.err == nil {
		if r.off-dropped >= walkRelease+faultAround {
			x.info.release(dropped, r.off-faultAround)
			dropped = r.off - faultAround
		}
		dieOff := r.off
		code := r.uleb()
		if code == 0 {
			level--
			if level < 0 {
				break
			}
			continue
		}
		a := tab.get(code)
		if a == nil {
			return fmt.Errorf("unknown abbrev %d at %#x", code, dieOff)
		}
		level++
		isFunc := a.tag == dwarf.TagSubprogram || a.tag == dwarf.TagEntryPoint || a.tag == dwarf.TagInlinedSubroutine
		for len(funcAt) <= level {
			funcAt = append(funcAt, -1)
		}
		funcAt[level] = -1
		if isFunc {
			// The callback copies the names it keeps: their buffer is reused.
			d = scannedDIE{off: dwarf.Offset(dieOff), tag: a.tag, level: level, ranges: -1, callFile: -1, caller: -1, attrs: d.attrs[:0]}
			for k := level - 1; k >= 0; k-- {
				if funcAt[k] >= 0 {
					d.caller = funcAt[k]
					break
				}
			}
		}
		if !isFunc && a.fixed >= 0 && common && !(a.children && level > 0 && skipSubtree(a.tag)) {
			// No attribute of this DIE is needed, not even its sibling.
			r.skip(a.fixed)
			if !a.children {
				level--
			}
			continue
		}
		var sibling int64 = -1
		for _, at := range a.attrs {
			form := at.form
			if form == 0x16 { // DW_FORM_indirect
				form = r.uleb()
			}
			want := at.attr == dwarf.AttrSibling
			if isFunc {
				switch at.attr {
				case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName, dwarf.AttrAbstractOrigin,
					dwarf.AttrSpecification, dwarf.AttrLowpc, dwarf.AttrHighpc, dwarf.AttrRanges,
					dwarf.AttrCallFile, dwarf.AttrCallLine:
					want = true
				}
			}
			if !want || ignoredForm(form) {
				if err := x.skipForm(r, h, form); err != nil {
					return err
				}
				continue
			}
			if isFunc && (at.attr == dwarf.AttrName || at.attr == dwarf.AttrLinkageName || at.attr == attrMIPSLinkageName) {
				// Where the name is, not the name: most functions of a
				// unit hold no wanted address, and their names are
				// never read.
				if a, ok := lazyName(r, h, at.attr, form); ok {
					d.attrs = append(d.attrs, a)
					continue
				}
			}
			v, s, isStr, err := x.readForm(r, h, form, at.implicit)
			if err != nil {
				return err
			}
			switch at.attr {
			case dwarf.AttrSibling:
				sibling = int64(v)
			case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName:
				if isStr {
					d.attrs = append(d.attrs, nameAttr{attr: at.attr, str: s})
				}
			case dwarf.AttrAbstractOrigin, dwarf.AttrSpecification:
				ref := v
				if form != 0x10 { // not DW_FORM_ref_addr: unit-relative
					ref += uint64(h.start)
				}
				d.attrs = append(d.attrs, nameAttr{attr: at.attr, ref: dwarf.Offset(ref)})
			case dwarf.AttrLowpc:
				d.low, d.haveLow = v, true
			case dwarf.AttrHighpc:
				d.high, d.haveHigh = v, true
				d.highRel = form != 0x01 // DW_FORM_addr
			case dwarf.AttrRanges:
				if form == 0x23 { // DW_FORM_rnglistx
					return fmt.Errorf("DW_AT_ranges in DW_FORM_rnglistx: %w", errIndexedForm)
				}
				d.ranges = int64(v)
			case dwarf.AttrCallFile:
				d.callFile = int64(v)
			case dwarf.AttrCallLine:
				d.callLine = int64(v)
			}
		}
		if isFunc {
			// An inlined call without code ranges is kept (and its
			// children walked): BFD would still name it as the caller of
			// calls inlined into it.
			hasCode := d.ranges >= 0 || d.haveLow && d.haveHigh
			d.hit = want == nil || !hasCode && a.tag == dwarf.TagInlinedSubroutine || x.holdsAny(h, base, &d, want)
			if d.hit {
				funcAt[level] = nhit
				nhit++
			}
			fn(&d)
		}
		if a.children {
			skip := level > 0 && skipSubtree(a.tag)
			if !skip && !d.hit && isFunc && a.tag != dwarf.TagEntryPoint && sibling > 0 {
				skip = true
			}
			// Only a sibling ahead, within the unit, is followed: one that
			// points back would walk the same DIEs forever (a corrupt or
			// hostile debug file); without it the children are walked.
			if next := h.start + int(sibling); skip && sibling > 0 && next > r.off && next <= h.end {
				r.off = next
				level--
			}
		} else {
			level--
		}
	}
	return r.err
}

func (x *rawDWARF) skipForm(r *reader, h unitHeader, form uint64) error {
	switch form {
	case 0x01: // addr
		r.skip(h.addrSize)
	case 0x0b, 0x11, 0x0c, 0x25, 0x29: // data1, ref1, flag, strx1, addrx1
		r.skip(1)
	case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
		r.skip(2)
	case 0x27, 0x2b: // strx3, addrx3
		r.skip(3)
	case 0x06, 0x13, 0x28, 0x2c, 0x1c: // data4, ref4, strx4, addrx4, ref_sup4
		r.skip(4)
	case 0x07, 0x14, 0x20, 0x24: // data8, ref8, ref_sig8, ref_sup8
		r.skip(8)
	case 0x1e: // data16
		r.skip(16)
	case 0x0d: // sdata
		r.sleb()
	case 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x1f01, 0x1f02:
		// udata, ref_udata, strx, addrx, loclistx, rnglistx, GNU_addr_index, GNU_str_index
		r.uleb()
	case 0x08: // string
		for r.off < len(r.b) && r.b[r.off] != 0 {
			r.off++
		}
		r.skip(1)
	case 0x10: // ref_addr
		if h.version == 2 {
			r.skip(h.addrSize)
		} else {
			r.skip(h.offSize)
		}
	case 0x0e, 0x1f, 0x17, 0x1d, 0x1f20, 0x1f21: // strp, line_strp, sec_offset, strp_sup, GNU_ref_alt, GNU_strp_alt
		r.skip(h.offSize)
	case 0x18, 0x09: // exprloc, block
		r.skip(int(r.uleb()))
	case 0x0a: // block1
		r.skip(int(r.u8()))
	case 0x03: // block2
		r.skip(int(r.fixed(2)))
	case 0x04: // block4
		r.skip(int(r.fixed(4)))
	case 0x19, 0x21: // flag_present, implicit_const
	default:
		return fmt.Errorf("unknown DWARF form %#x", form)
	}
	return r.err
}

// ignoredForm reports the forms of dwz's and DWARF 5's supplementary
// object files (.gnu_debugaltlink): the scanner skips such attributes, as
// debug/dwarf (which reads them as bare offsets, not names or references)
// and so loadUnitGo do.
func ignoredForm(form uint64) bool {
	switch form {
	case 0x1f20, 0x1f21, 0x1d, 0x1c, 0x24: // GNU_ref_alt, GNU_strp_alt, strp_sup, ref_sup4, ref_sup8
		return true
	}
	return false
}

// indexedForm reports the forms whose value is an index into
// .debug_str_offsets or .debug_addr (see errIndexedForm).
func indexedForm(form uint64) bool {
	switch form {
	case 0x1a, 0x25, 0x26, 0x27, 0x28, // strx, strx1-4
		0x1b, 0x29, 0x2a, 0x2b, 0x2c, // addrx, addrx1-4
		0x1f01, 0x1f02: // GNU_addr_index, GNU_str_index
		return true
	}
	return false
}

// readForm decodes the forms of the attributes scanUnit keeps: integers,
// addresses, offsets and strings (returned with isStr).
func (x *rawDWARF) readForm(r *reader, h unitHeader, form uint64, implicit int64) (v uint64, s string, isStr bool, err error) {
	switch form {
	case 0x01:
		v = r.fixed(h.addrSize)
	case 0x0b, 0x11, 0x0c:
		v = uint64(r.u8())
	case 0x05, 0x12:
		v = r.fixed(2)
	case 0x06, 0x13:
		v = r.fixed(4)
	case 0x07, 0x14:
		v = r.fixed(8)
	case 0x0d:
		v = uint64(r.sleb())
	case 0x0f, 0x15:
		v = r.uleb()
	case 0x17:
		v = r.fixed(h.offSize)
	case 0x10:
		if h.version == 2 {
			v = r.fixed(h.addrSize)
		} else {
			v = r.fixed(h.offSize)
		}
	case 0x21:
		v = uint64(implicit)
	case 0x19:
		v = 1
	case 0x08:
		s, isStr = r.cstring(), true
	case 0x0e:
		o := r.fixed(h.offSize)
		s, isStr = r.strAt(x.str, o, o), true
	case 0x1f:
		o := r.fixed(h.offSize)
		s, isStr = r.strAt(x.lineStr, o, o|1<<63), true
	default:
		if err := x.skipForm(r, h, form); err != nil {
			return 0, "", false, err
		}
		if indexedForm(form) {
			return 0, "", false, fmt.Errorf("DWARF form %#x: %w", form, errIndexedForm)
		}
		return 0, "", false, fmt.Errorf("DWARF form %#x where a number, an address or a string belongs", form)
	}
	return v, s, isStr, r.err
}

// lazyName reads a string attribute in the forms that name a place
// (DW_FORM_strp, DW_FORM_line_strp, DW_FORM_string) as that place.
func lazyName(r *reader, h unitHeader, attr dwarf.Attr, form uint64) (nameAttr, bool) {
	switch form {
	case 0x0e: // strp
		return nameAttr{attr: attr, strIn: strInStr, strOff: r.fixed(h.offSize)}, true
	case 0x1f: // line_strp
		return nameAttr{attr: attr, strIn: strInLineStr, strOff: r.fixed(h.offSize)}, true
	case 0x08: // string
		off := uint64(r.off)
		for r.off < len(r.b) && r.b[r.off] != 0 {
			r.off++
		}
		r.skip(1)
		return nameAttr{attr: attr, strIn: strInInfo, strOff: off}, true
	}
	return nameAttr{}, false
}

// attrString is the name a nameAttr holds or points to.
func (x *rawDWARF) attrString(a *nameAttr) string {
	switch a.strIn {
	case strInStr:
		return cstringAt(x.str, a.strOff)
	case strInLineStr:
		return cstringAt(x.lineStr, a.strOff)
	case strInInfo:
		// The unit holding it was read whole (slice(h.start, h.end)).
		b := x.info.slice(int(a.strOff), int(a.strOff)+1)
		if bytes.IndexByte(b[min(int(a.strOff), len(b)):], 0) < 0 {
			b, _ = x.info.all()
		}
		return cstringAt(b, a.strOff)
	}
	return a.str
}

// rangeList reads a DW_AT_ranges list at off: .debug_rnglists for DWARF 5,
// .debug_ranges before; base is the unit's low_pc.
func (x *rawDWARF) rangeList(h unitHeader, off uint64, base uint64) ([][2]uint64, error) {
	var out [][2]uint64
	err := x.eachRange(h, off, base, func(lo, hi uint64) bool {
		out = append(out, [2]uint64{lo, hi})
		return true
	})
	return out, err
}

// eachRange calls fn for the ranges of the list at off until fn returns
// false, without allocating: holdsAny runs it for every function DIE.
func (x *rawDWARF) eachRange(h unitHeader, off uint64, base uint64, fn func(lo, hi uint64) bool) error {
	name := "rnglists"
	if h.version < 5 {
		name = "ranges"
	}
	sec := x.secs[name]
	if sec == nil || off > uint64(sec.len()) {
		return fmt.Errorf("%s offset out of range", name)
	}
	r := &reader{b: sec.prefix(int(off)), off: int(off)}
	if sec.plain == nil {
		// Inflated as far as the list goes, then read.
		err := readFrom(sec, int(off), func(r *reader) {
			if err := walkRanges(r, h, base, func(uint64, uint64) bool { return true }); err != nil {
				r.err = err
			}
		})
		if err != nil && !errors.Is(err, errTruncated) {
			return err
		}
		r.b = sec.prefix(int(off))
	}
	return walkRanges(r, h, base, fn)
}

// walkRanges reads a range list (.debug_ranges before DWARF 5,
// .debug_rnglists then) from r.
func walkRanges(r *reader, h unitHeader, base uint64, fn func(lo, hi uint64) bool) error {
	if h.version < 5 {
		for r.err == nil {
			lo, hi := r.fixed(h.addrSize), r.fixed(h.addrSize)
			if r.err != nil || lo == 0 && hi == 0 {
				break
			}
			if h.addrSize == 8 && lo == ^uint64(0) || h.addrSize == 4 && lo == 0xffffffff {
				base = hi
				continue
			}
			if !fn(base+lo, base+hi) {
				return nil
			}
		}
		return r.err
	}
	for r.err == nil {
		var lo, hi uint64
		switch kind := r.u8(); kind {
		case 0: // end_of_list
			return r.err
		case 4: // offset_pair
			a, b := r.uleb(), r.uleb()
			lo, hi = base+a, base+b
		case 5: // base_address
			base = r.fixed(h.addrSize)
			continue
		case 6: // start_end
			lo, hi = r.fixed(h.addrSize), r.fixed(h.addrSize)
		case 7: // start_length
			lo = r.fixed(h.addrSize)
			hi = lo + r.uleb()
		case 1, 2, 3: // base_addressx, startx_endx, startx_length: need .debug_addr
			if r.err != nil {
				return r.err
			}
			return fmt.Errorf("range list entry kind %d: %w", kind, errIndexedForm)
		default:
			if r.err != nil {
				return r.err
			}
			return fmt.Errorf("range list entry kind %d unknown", kind)
		}
		if r.err != nil {
			break
		}
		if !fn(lo, hi) {
			return nil
		}
	}
	return r.err
}

// holdsAny reports whether the function's code ranges contain one of the
// sorted addresses.
func (x *rawDWARF) holdsAny(h unitHeader, base uint64, d *scannedDIE, want []uint64) bool {
	in := func(lo, hi uint64) bool {
		i, _ := slices.BinarySearch(want, lo)
		return i < len(want) && want[i] < hi
	}
	if d.ranges >= 0 {
		found := false
		err := x.eachRange(h, uint64(d.ranges), base, func(lo, hi uint64) bool {
			found = in(lo, hi)
			return !found
		})
		return found || err != nil // on errors, let the full decoding report them
	}
	if d.haveLow && d.haveHigh {
		high := d.high
		if d.highRel {
			high += d.low
		}
		return in(d.low, high)
	}
	return false
}

// unitEntry is what the unit's own DIE tells: where its line table is,
// its compilation directory, base address and language.
type unitEntry struct {
	stmtList int64 // -1 without a line table
	compDir  string
	low      uint64
	lang     int64
	children bool
}

// readUnitEntry decodes the unit's first DIE (DW_TAG_compile_unit or
// DW_TAG_partial_unit).
func (x *rawDWARF) readUnitEntry(h unitHeader) (unitEntry, error) {
	e := unitEntry{stmtList: -1}
	if err := x.load(); err != nil {
		return e, err
	}
	tab, err := x.abbrevTable(h.abbrevOff)
	if err != nil {
		return e, err
	}
	info := x.info.slice(h.start, h.end)
	if len(info) < h.end {
		return e, fmt.Errorf("unit at %#x: .debug_info cannot be read", h.start)
	}
	r := &reader{b: info[:h.end], off: h.dieOff}
	a := tab.get(r.uleb())
	if a == nil || a.tag != dwarf.TagCompileUnit && a.tag != dwarf.TagPartialUnit {
		return e, fmt.Errorf("no compile unit at %#x", h.dieOff)
	}
	e.children = a.children
	for _, at := range a.attrs {
		form := at.form
		if form == 0x16 { // DW_FORM_indirect
			form = r.uleb()
		}
		switch at.attr {
		case dwarf.AttrStmtList, dwarf.AttrCompDir, dwarf.AttrLowpc, dwarf.AttrLanguage:
			if !ignoredForm(form) {
				break
			}
			fallthrough
		default:
			if err := x.skipForm(r, h, form); err != nil {
				return e, err
			}
			continue
		}
		v, s, _, err := x.readForm(r, h, form, at.implicit)
		if err != nil {
			return e, err
		}
		switch at.attr {
		case dwarf.AttrStmtList:
			e.stmtList = int64(v)
		case dwarf.AttrCompDir:
			e.compDir = s
		case dwarf.AttrLowpc:
			e.low = v
		case dwarf.AttrLanguage:
			e.lang = int64(v)
		}
	}
	return e, r.err
}

// dieNames reads the name-bearing attributes of the DIE at off (the target
// of an abstract origin or specification), in its own unit.
func (x *rawDWARF) dieNames(h unitHeader, off int) ([]nameAttr, error) {
	if off < h.dieOff || off >= h.end {
		var err error
		if h, err = x.unitAt(off); err != nil {
			return nil, err
		}
		if off < h.dieOff {
			return nil, fmt.Errorf("offset %#x inside a unit header", off)
		}
	}
	tab, err := x.abbrevTable(h.abbrevOff)
	if err != nil {
		return nil, err
	}
	info := x.info.slice(h.start, h.end)
	if len(info) < h.end {
		return nil, fmt.Errorf("unit at %#x: .debug_info cannot be read", h.start)
	}
	r := &reader{b: info[:h.end], off: off}
	a := tab.get(r.uleb())
	if a == nil {
		return nil, fmt.Errorf("no DIE at %#x", off)
	}
	var attrs []nameAttr
	for _, at := range a.attrs {
		form := at.form
		if form == 0x16 { // DW_FORM_indirect
			form = r.uleb()
		}
		switch at.attr {
		case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName, dwarf.AttrAbstractOrigin, dwarf.AttrSpecification:
			if !ignoredForm(form) {
				break
			}
			fallthrough
		default:
			if err := x.skipForm(r, h, form); err != nil {
				return nil, err
			}
			continue
		}
		if at.attr == dwarf.AttrName || at.attr == dwarf.AttrLinkageName || at.attr == attrMIPSLinkageName {
			if a, ok := lazyName(r, h, at.attr, form); ok {
				attrs = append(attrs, a)
				continue
			}
		}
		v, s, isStr, err := x.readForm(r, h, form, at.implicit)
		if err != nil {
			return nil, err
		}
		switch at.attr {
		case dwarf.AttrName, dwarf.AttrLinkageName, attrMIPSLinkageName:
			if isStr {
				attrs = append(attrs, nameAttr{attr: at.attr, str: s})
			}
		default:
			ref := v
			if form != 0x10 { // not DW_FORM_ref_addr: unit-relative
				ref += uint64(h.start)
			}
			attrs = append(attrs, nameAttr{attr: at.attr, ref: dwarf.Offset(ref)})
		}
	}
	return attrs, r.err
}
