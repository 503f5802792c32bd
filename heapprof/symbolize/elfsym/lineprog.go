package elfsym

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"sync"
)

// lineProgram decodes one unit's .debug_line program straight from the
// (mapped) section. It produces the same files and rows as debug/dwarf's
// LineReader, which readLinesGo uses, but keeps only the sequences that
// hold a wanted address and allocates nothing for the others: a unit of a
// large C++ program has thousands of sequences (one per function and
// per COMDAT template instance) and a profile hits few of them.
type lineProgram struct {
	version       int
	addrSize      int
	minInstLen    uint64
	maxOps        uint64
	defaultIsStmt bool
	lineBase      int
	lineRange     int
	opcodeBase    int
	opLengths     []uint8
	dirs          []string
	files         []string // file index -> name; "" where debug/dwarf has no entry
	hasFile       []bool   // whether the index has an entry (debug/dwarf's non-nil *LineFile)
	prog          []byte   // the opcodes
	start, end    int      // the program's extent in .debug_line
	str, lineStr  []byte
}

var errLineTable = errors.New("malformed line table")

// parseLineProgram reads the header of the line program at off.
// compDir is the unit's DW_AT_comp_dir, addrSize its address size.
func parseLineProgram(ls *debugSection, off uint64, compDir string, addrSize int, str, lineStr []byte) (*lineProgram, error) {
	if off >= uint64(ls.len()) {
		return nil, fmt.Errorf("line table offset %#x out of range", off)
	}
	sec := ls.prefix(int(off) + 12)
	r := &reader{b: sec, off: int(off)}
	offSize := 4
	length := r.fixed(4)
	if length == 0xffffffff {
		length = r.fixed(8)
		offSize = 8
	}
	if r.err != nil || length > uint64(ls.len()-r.off) {
		return nil, fmt.Errorf("line table at %#x: length %d exceeds the section", off, length)
	}
	end := r.off + int(length)
	if sec = ls.prefix(end); len(sec) < end {
		return nil, fmt.Errorf("line table at %#x: .debug_line cannot be read", off)
	}
	r.b = sec[:end]
	p := &lineProgram{str: str, lineStr: lineStr, addrSize: addrSize}
	p.version = int(r.fixed(2))
	if p.version < 2 || p.version > 5 {
		return nil, fmt.Errorf("line table at %#x: unknown version %d", off, p.version)
	}
	if p.version >= 5 {
		p.addrSize = int(r.u8())
		if seg := r.u8(); seg != 0 {
			return nil, fmt.Errorf("line table at %#x: segment selector size %d: %w", off, seg, errLineTable)
		}
	}
	hdrLen := r.fixed(offSize)
	if r.err != nil || hdrLen > uint64(end-r.off) {
		return nil, fmt.Errorf("line table at %#x: header length %d: %w", off, hdrLen, errLineTable)
	}
	progOff := r.off + int(hdrLen)
	p.minInstLen = uint64(r.u8())
	p.maxOps = 1
	if p.version >= 4 {
		p.maxOps = uint64(r.u8())
	}
	p.defaultIsStmt = r.u8() != 0
	p.lineBase = int(int8(r.u8()))
	p.lineRange = int(r.u8())
	p.opcodeBase = int(r.u8())
	if r.err != nil || p.maxOps == 0 || p.lineRange == 0 || p.opcodeBase == 0 {
		return nil, fmt.Errorf("line table at %#x: %w", off, errLineTable)
	}
	p.opLengths = make([]uint8, p.opcodeBase)
	for i := 1; i < p.opcodeBase; i++ {
		p.opLengths[i] = r.u8()
	}
	// debug/dwarf rejects standard opcodes of unexpected length; so do we,
	// so both decoders agree on which tables they read.
	for op, n := range []uint8{0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1} {
		if op > 0 && op != 5 && op != 9 && op < p.opcodeBase && p.opLengths[op] != n {
			return nil, fmt.Errorf("line table at %#x: opcode %d has length %d: %w", off, op, p.opLengths[op], errLineTable)
		}
	}
	if p.version < 5 {
		// Directory 0 is the compilation directory; file numbers start at 1.
		p.dirs = []string{compDir}
		for {
			d := r.cstring()
			if r.err != nil {
				return nil, fmt.Errorf("line table at %#x: %w", off, r.err)
			}
			if d == "" {
				break
			}
			if !isAbsPath(d) {
				d = joinPath(compDir, d)
			}
			p.dirs = append(p.dirs, d)
		}
		p.files, p.hasFile = []string{""}, []bool{false}
		for {
			done, err := p.readFileEntry(r)
			if err != nil {
				return nil, fmt.Errorf("line table at %#x: %w", off, err)
			}
			if done {
				break
			}
		}
	} else {
		dirFmt := readEntryFormat(r)
		n := r.uleb()
		if r.err != nil || n > uint64(end) {
			return nil, fmt.Errorf("line table at %#x: %w", off, errLineTable)
		}
		for range n {
			d, err := p.readEntry(r, dirFmt, offSize)
			if err != nil {
				return nil, fmt.Errorf("line table at %#x: %w", off, err)
			}
			p.dirs = append(p.dirs, d)
		}
		fileFmt := readEntryFormat(r)
		n = r.uleb()
		if r.err != nil || n > uint64(end) {
			return nil, fmt.Errorf("line table at %#x: %w", off, errLineTable)
		}
		for range n {
			f, err := p.readEntry(r, fileFmt, offSize)
			if err != nil {
				return nil, fmt.Errorf("line table at %#x: %w", off, err)
			}
			p.files = append(p.files, f)
			p.hasFile = append(p.hasFile, true)
		}
	}
	if r.err != nil || progOff > end {
		return nil, fmt.Errorf("line table at %#x: %w", off, errLineTable)
	}
	p.prog = sec[progOff:end]
	p.start, p.end = int(off), end
	return p, nil
}

type entryFormat struct{ content, form uint64 }

func readEntryFormat(r *reader) []entryFormat {
	n := int(r.u8())
	out := make([]entryFormat, 0, n)
	for range n {
		out = append(out, entryFormat{r.uleb(), r.uleb()})
	}
	return out
}

// readEntry reads one DWARF 5 directory or file entry: its path, joined
// with its directory when it names one.
func (p *lineProgram) readEntry(r *reader, format []entryFormat, offSize int) (string, error) {
	var name, dir string
	for _, f := range format {
		var s string
		var v uint64
		switch f.form {
		case 0x08: // DW_FORM_string
			s = r.cstring()
		case 0x0e, 0x1f: // DW_FORM_strp, DW_FORM_line_strp
			o := r.fixed(offSize)
			if f.form == 0x0e {
				s = cstringAt(p.str, o)
			} else {
				s = cstringAt(p.lineStr, o)
			}
		case 0x1d: // DW_FORM_strp_sup: not followed (debug/dwarf neither)
			r.fixed(offSize)
		case 0x1a, 0x0f: // DW_FORM_strx, DW_FORM_udata
			v = r.uleb()
		case 0x25, 0x0b: // DW_FORM_strx1, DW_FORM_data1
			v = r.fixed(1)
		case 0x26, 0x05: // DW_FORM_strx2, DW_FORM_data2
			v = r.fixed(2)
		case 0x27: // DW_FORM_strx3
			r.fixed(3)
		case 0x28, 0x06: // DW_FORM_strx4, DW_FORM_data4
			v = r.fixed(4)
		case 0x07: // DW_FORM_data8
			v = r.fixed(8)
		case 0x1e: // DW_FORM_data16
			r.skip(16)
		case 0x09: // DW_FORM_block
			r.skip(int(r.uleb()))
		default:
			return "", fmt.Errorf("line table entry form %#x: %w", f.form, errLineTable)
		}
		if f.form == 0x1a || f.form >= 0x25 && f.form <= 0x28 {
			v = 0 // a string index is no number
		}
		switch f.content {
		case 1: // DW_LNCT_path
			name = s
		case 2: // DW_LNCT_directory_index
			if v >= uint64(len(p.dirs)) {
				return "", fmt.Errorf("directory index %d out of range: %w", v, errLineTable)
			}
			dir = p.dirs[v]
		}
	}
	if r.err != nil {
		return "", r.err
	}
	if dir != "" && name != "" {
		name = joinPath(dir, name)
	}
	return name, nil
}

// readFileEntry reads a DWARF 2-4 file entry (header or DW_LNE_define_file).
func (p *lineProgram) readFileEntry(r *reader) (done bool, err error) {
	name := r.cstring()
	if r.err != nil {
		return false, r.err
	}
	if name == "" {
		return true, nil
	}
	dir := r.uleb()
	if !isAbsPath(name) {
		if dir >= uint64(len(p.dirs)) {
			return false, fmt.Errorf("directory index %d out of range: %w", dir, errLineTable)
		}
		name = joinPath(p.dirs[dir], name)
	}
	r.uleb() // mtime
	r.uleb() // length
	p.files = append(p.files, name)
	p.hasFile = append(p.hasFile, true)
	return false, r.err
}

// decode runs the program and fills u.files and u.seqs the way readLinesGo
// does from debug/dwarf's rows: of rows at one address only the last is
// kept, and with want (sorted addresses) set, sequences holding none of
// them are dropped and of the others only the rows rowsFor keeps.
//
// With want set, decodeWanted keeps those rows as they are decoded; a
// table it does not handle that way (rows out of order, a sequence without
// an end row, an error) is decoded again by decodeRows, from scratch.
// pool, when not nil, recycles decodeRows's buffer.
func (p *lineProgram) decode(u *unitInfo, want []uint64, pool *sync.Pool) error {
	if want != nil {
		nFiles, nSeqs := len(p.files), len(u.seqs)
		if p.decodeWanted(u, want) {
			return nil
		}
		p.files, p.hasFile = p.files[:nFiles], p.hasFile[:nFiles]
		clear(u.seqs[nSeqs:])
		u.seqs = u.seqs[:nSeqs]
	}
	return p.decodeRows(u, want, pool)
}

// decodeWanted is decodeRows for want set, without materializing a
// sequence's rows: rowsFor's selection is made while the rows go by (see
// rowPicker). The opcodes are read from locals, not through a reader: a
// unit's table holds hundreds of thousands of them. It reports false,
// leaving u and p to be reset, where decodeRows must decide (see decode).
func (p *lineProgram) decodeWanted(u *unitInfo, want []uint64) bool {
	if p.maxOps != 1 {
		return false // VLIW operation indices: decodeRows
	}
	dwarf5 := p.version >= 5 && len(p.files) > 0
	u.files = append(u.files[:0], p.files...)
	var (
		b           = p.prog
		off         int
		addr        uint64
		file, line  = 1, 1
		fileChanged bool
		pk          = rowPicker{want: want}
		spans       []int // per kept sequence: its end in pk.kept
		nSeqs       = len(u.seqs)
		minInst     = p.minInstLen
		opBase      = p.opcodeBase
		constAdd    = minInst * uint64((255-p.opcodeBase)/p.lineRange) // DW_LNS_const_add_pc's advance
		step        uint64
		fiRaw       = p.fileIndex(1) // file's index, before decodeRows's DWARF 5 rule
		// A special opcode's address advance and line increment, worked
		// out once rather than divided out for every row.
		special [256]struct {
			step  uint64
			dLine int
		}
	)
	for op := opBase; op < len(special); op++ {
		adj := op - opBase
		special[op].step, special[op].dLine = minInst*uint64(adj/p.lineRange), p.lineBase+adj%p.lineRange
	}
	pk.next = ^uint64(0)
	for off < len(b) {
		op := int(b[off])
		off++
		end := false
		if op >= opBase {
			sp := &special[op]
			step = sp.step
			line += sp.dLine
		} else {
			switch op {
			case 0: // extended
				r := reader{b: b, off: off}
				sz := r.uleb()
				start := r.off
				if r.err != nil || sz == 0 || sz > uint64(len(b)-start) {
					return false
				}
				switch r.u8() {
				case 1: // DW_LNE_end_sequence
					end = true
				case 2: // DW_LNE_set_address
					switch p.addrSize {
					case 1, 2, 4, 8:
						addr = r.fixed(p.addrSize)
					default:
						return false
					}
				case 3: // DW_LNE_define_file
					done, err := p.readFileEntry(&r)
					if err != nil || done {
						return false
					}
					u.files = append(u.files, p.files[len(p.files)-1])
					fiRaw = p.fileIndex(file)
				}
				if r.err != nil {
					return false
				}
				off = start + int(sz)
				if !end {
					continue
				}
				step = 0
			case 1: // DW_LNS_copy
				step = 0
			case 2: // DW_LNS_advance_pc
				if off < len(b) && b[off] < 0x80 {
					step = uint64(b[off])
					off++
				} else {
					step, off = ulebAtLong(b, off)
				}
				addr += minInst * step
				continue
			case 3: // DW_LNS_advance_line
				if off < len(b) && b[off] < 0x80 {
					line += int(int8(b[off]<<1) >> 1) // bit 6 is the sign
					off++
				} else {
					var d int64
					d, off = slebAtLong(b, off)
					line += int(d)
				}
				continue
			case 4: // DW_LNS_set_file
				if off < len(b) && b[off] < 0x80 {
					file = int(b[off])
					off++
				} else {
					step, off = ulebAtLong(b, off)
					file = int(step)
				}
				fiRaw = p.fileIndex(file)
				continue
			case 5: // DW_LNS_set_column
				if off < len(b) && b[off] < 0x80 {
					off++
				} else {
					_, off = ulebAtLong(b, off)
				}
				continue
			case 6, 7, 10, 11: // negate_stmt, basic_block, prologue_end, epilogue_begin
				continue
			case 8: // DW_LNS_const_add_pc
				addr += constAdd
				continue
			case 9: // DW_LNS_fixed_advance_pc
				if off+2 > len(b) {
					return false
				}
				addr += uint64(b[off]) | uint64(b[off+1])<<8
				off += 2
				continue
			default:
				for range p.opLengths[op] {
					_, off = ulebAt(b, off)
				}
				continue
			}
		}
		// A row (decodeRows's emit), after a special opcode's advance.
		addr += step
		fi := fiRaw
		if fi != 1 {
			fileChanged = true
		} else if dwarf5 && !fileChanged {
			fi = 0
		}
		row := lineRow{addr: addr, file: fi, line: int32(line), end: end}
		switch {
		case !pk.pending:
			pk.cur, pk.pending = row, true
		case pk.cur.addr == row.addr && pk.cur.end == row.end:
			pk.cur = row // replaces the row at its address
		case pk.n > 0 && pk.cur.addr >= pk.prev.addr && pk.cur.addr <= pk.next:
			// final's work when cur passes no wanted address.
			pk.prev, pk.cur = pk.cur, row
			pk.n++
		default:
			if !pk.add(row) {
				return false
			}
		}
		if end {
			// decodeRows's endSequence.
			if !pk.final() {
				return false
			}
			if low, ok := pk.endSeq(); ok {
				u.seqs = append(u.seqs, lineSeq{low: low})
				spans = append(spans, len(pk.kept))
			}
			addr, file, line, fileChanged = 0, 1, 1, false
			fiRaw = p.fileIndex(1)
		}
	}
	if off > len(b) || pk.pending {
		return false // truncated, or a sequence without an end row
	}
	kept := slices.Clip(pk.kept)
	start := 0
	for i, e := range spans {
		u.seqs[nSeqs+i].rows = kept[start:e:e]
		start = e
	}
	return true
}

// rowPicker makes rowsFor's selection from a sequence's rows as they are
// decoded: a cursor into want marks the first wanted address no row has
// passed yet; the row that passes it and the one before are kept.
type rowPicker struct {
	want     []uint64
	kept     []lineRow // the rows kept, of every sequence, back to back
	seqStart int       // where the current sequence's rows start in kept
	pending  bool      // cur holds a row of the current sequence
	cur      lineRow   // the last row, which a later row at its address replaces
	prev     lineRow   // the final row before cur
	n        int       // the sequence's final rows
	i0, wi   int       // the cursor at the sequence's start, and now
	next     uint64    // want[wi], or the largest address past want's end
	lastKept int       // the index of the sequence's last kept row
}

// add takes the next row of the sequence; false if rows go backwards.
func (pk *rowPicker) add(row lineRow) bool {
	if pk.pending {
		if pk.cur.addr == row.addr && pk.cur.end == row.end {
			pk.cur = row
			return true
		}
		if !pk.final() {
			return false
		}
	}
	pk.cur, pk.pending = row, true
	return true
}

// final makes cur the sequence's next row.
func (pk *rowPicker) final() bool {
	cur := pk.cur
	if pk.n == 0 {
		pk.i0, _ = slices.BinarySearch(pk.want, cur.addr)
		pk.wi, pk.lastKept = pk.i0, 0
		pk.kept = append(pk.kept, cur)
	} else {
		if cur.addr < pk.prev.addr {
			return false
		}
		for pk.wi < len(pk.want) && pk.want[pk.wi] < cur.addr {
			// prev is the last row at or before want[wi], cur the next.
			if pk.n-1 > pk.lastKept {
				pk.kept = append(pk.kept, pk.prev)
			}
			if pk.n > pk.lastKept {
				pk.kept = append(pk.kept, cur)
				pk.lastKept = pk.n
			}
			pk.wi++
		}
	}
	pk.next = ^uint64(0)
	if pk.wi < len(pk.want) {
		pk.next = pk.want[pk.wi]
	}
	pk.prev = cur
	pk.n++
	pk.pending = false
	return true
}

// fileIndex is the row's file index for file (decodeRows's fileIndex
// before its DWARF 5 rule): -1 where no file has that number.
func (p *lineProgram) fileIndex(file int) int32 {
	if file >= 0 && file < len(p.files) && p.hasFile[file] {
		return int32(file)
	}
	return -1
}

// endSeq ends the sequence after its end row: ok if a row passed a wanted
// address (the sequence holds one), its rows then ending kept; low is its
// first row's address.
func (pk *rowPicker) endSeq() (low uint64, ok bool) {
	if pk.wi > pk.i0 {
		if pk.n-1 > pk.lastKept {
			pk.kept = append(pk.kept, pk.prev)
		}
		low, ok = pk.kept[pk.seqStart].addr, true
		pk.seqStart = len(pk.kept)
	} else {
		pk.kept = pk.kept[:pk.seqStart]
	}
	pk.n = 0
	return low, ok
}

// ulebAt reads an unsigned LEB128 number at off; the offset after it is
// past len(b) when it is truncated. decodeWanted reads one-byte numbers
// inline and calls ulebAtLong for the others.
func ulebAt(b []byte, off int) (uint64, int) {
	if off < len(b) && b[off] < 0x80 {
		return uint64(b[off]), off + 1
	}
	return ulebAtLong(b, off)
}

func ulebAtLong(b []byte, off int) (uint64, int) {
	var v uint64
	var shift uint
	for ; off < len(b); off++ {
		c := b[off]
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			return v, off + 1
		}
	}
	return 0, len(b) + 1
}

// slebAtLong reads a signed LEB128 number like ulebAtLong.
func slebAtLong(b []byte, off int) (int64, int) {
	var v int64
	var shift uint
	for ; off < len(b); off++ {
		c := b[off]
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, off + 1
		}
	}
	return 0, len(b) + 1
}

// decodeRows decodes every row of a sequence into a buffer, then keeps
// the sequence (all of it, or with want set the rows rowsFor picks) or
// drops it.
func (p *lineProgram) decodeRows(u *unitInfo, want []uint64, pool *sync.Pool) error {
	// BFD 2.40 starts every sequence of a DWARF 5 table with file 0; see
	// readLinesGo.
	dwarf5 := p.version >= 5 && len(p.files) > 0
	u.files = append(u.files[:0], p.files...)
	r := &reader{b: p.prog}
	scratch := new([]lineRow)
	if pool != nil {
		if b, ok := pool.Get().(*[]lineRow); ok {
			scratch = b
		}
		defer pool.Put(scratch)
	}
	var (
		addr        uint64
		opIndex     uint64
		file        = 1
		line        = 1
		fileChanged bool
		rows        = (*scratch)[:0] // the current sequence
	)
	defer func() { *scratch = rows[:0] }()
	reset := func() {
		addr, opIndex, file, line, fileChanged = 0, 0, 1, 1, false
	}
	advance := func(n uint64) {
		if p.maxOps == 1 {
			addr += p.minInstLen * n
			return
		}
		op := opIndex + n
		addr += p.minInstLen * (op / p.maxOps)
		opIndex = op % p.maxOps
	}
	fileIndex := func() int32 {
		fi := int32(-1)
		if file >= 0 && file < len(p.files) && p.hasFile[file] {
			fi = int32(file)
		}
		if fi != 1 {
			fileChanged = true
		} else if dwarf5 && !fileChanged {
			fi = 0
		}
		return fi
	}
	emit := func(end bool) {
		row := lineRow{addr: addr, file: fileIndex(), line: int32(line), end: end}
		if n := len(rows); n > 0 && rows[n-1].addr == row.addr && rows[n-1].end == row.end {
			rows[n-1] = row
			return
		}
		rows = append(rows, row)
	}
	endSequence := func() {
		low, high := rows[0].addr, rows[len(rows)-1].addr
		if want == nil {
			u.seqs = append(u.seqs, lineSeq{low: low, rows: slices.Clone(rows)})
		} else if i, _ := slices.BinarySearch(want, low); i < len(want) && want[i] < high {
			u.seqs = append(u.seqs, lineSeq{low: low, rows: rowsFor(rows, want[i:], high)})
		}
		rows = rows[:0]
	}
	for r.off < len(r.b) && r.err == nil {
		op := int(r.u8())
		if op >= p.opcodeBase {
			adj := op - p.opcodeBase
			advance(uint64(adj / p.lineRange))
			line += p.lineBase + adj%p.lineRange
			emit(false)
			continue
		}
		switch op {
		case 0: // extended
			n := r.uleb()
			start := r.off
			if n == 0 || n > uint64(len(r.b)-start) {
				return fmt.Errorf("extended line opcode of length %d: %w", n, errLineTable)
			}
			switch r.u8() {
			case 1: // DW_LNE_end_sequence
				emit(true)
				endSequence()
				reset()
			case 2: // DW_LNE_set_address
				switch p.addrSize {
				case 1, 2, 4, 8:
					addr = r.fixed(p.addrSize)
				default:
					return fmt.Errorf("address size %d: %w", p.addrSize, errLineTable)
				}
				opIndex = 0
			case 3: // DW_LNE_define_file
				done, err := p.readFileEntry(r)
				if err != nil {
					return err
				}
				if done {
					return fmt.Errorf("empty DW_LNE_define_file: %w", errLineTable)
				}
				u.files = append(u.files, p.files[len(p.files)-1])
			}
			r.off = start + int(n)
		case 1: // DW_LNS_copy
			emit(false)
		case 2: // DW_LNS_advance_pc
			advance(r.uleb())
		case 3: // DW_LNS_advance_line
			line += int(r.sleb())
		case 4: // DW_LNS_set_file
			file = int(r.uleb())
		case 5: // DW_LNS_set_column
			r.uleb()
		case 6, 7, 10, 11: // negate_stmt, basic_block, prologue_end, epilogue_begin
		case 8: // DW_LNS_const_add_pc
			advance(uint64((255 - p.opcodeBase) / p.lineRange))
		case 9: // DW_LNS_fixed_advance_pc
			addr += r.fixed(2)
			opIndex = 0
		default:
			for range p.opLengths[op] {
				r.uleb()
			}
		}
	}
	if r.err != nil {
		return r.err
	}
	if len(rows) > 0 {
		// A sequence without an end row: debug/dwarf returns its rows too.
		u.seqs = append(u.seqs, lineSeq{low: rows[0].addr, rows: slices.Clone(rows)})
	}
	return nil
}

// rowsFor returns the rows of a sequence (sorted by address, ending at
// high) that lookups of the sorted wanted addresses (those below high)
// read: for each, the last row at or before it and the row after that,
// plus the first and the end row, which bound the sequence. A lookup of
// any of those addresses finds the same two rows as in the whole sequence.
func rowsFor(rows []lineRow, want []uint64, high uint64) []lineRow {
	if !slices.IsSortedFunc(rows, func(a, b lineRow) int { return cmp.Compare(a.addr, b.addr) }) {
		return slices.Clone(rows)
	}
	var out []lineRow
	last := -1 // index of the last row copied
	add := func(j int) {
		if j > last {
			out = append(out, rows[j])
			last = j
		}
	}
	add(0)
	for _, a := range want {
		if a >= high {
			break
		}
		j := sort.Search(len(rows), func(j int) bool { return rows[j].addr > a }) - 1
		if j < 0 {
			continue
		}
		add(j)
		if j+1 < len(rows) {
			add(j + 1)
		}
	}
	add(len(rows) - 1)
	return out
}

func isAbsPath(p string) bool { return len(p) > 0 && (p[0] == '/' || p[0] == '\\') }

// joinPath is debug/dwarf's pathJoin for UNIX-style paths, so file names
// match the other decoder's.
func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return path.Join(dir, name)
}
