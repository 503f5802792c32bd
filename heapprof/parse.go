// Package heapprof reads heap profiles (jemalloc heap_v2, gperftools heap
// text, pprof protobuf) into *profile.Profile and renders them the way
// jemalloc's jeprof does (WriteDOT = jeprof --dot, WriteText = --text,
// Options.Base = --base), plus folded stacks, an SVG flame graph and the
// symbolized pprof protobuf. Symbolization is behind the Symbolizer
// interface; symbolizer.go holds the contract that makes the output equal
// jeprof's.
package heapprof

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// MaxProfileBytes bounds the (decompressed) size of a profile Parse accepts.
// A 1 MB jemalloc dump is typical for a large server (seed 001); 256 MiB
// leaves room for very large heaps while keeping a hostile or broken node
// from exhausting the proxy's memory.
const MaxProfileBytes = 256 << 20

// Sample types in which Parse keeps jemalloc's raw sampled counts of each
// stack, after inuse_objects and inuse_space. pprof's Sample.Value holds
// the scaled estimate rounded to an integer; jeprof renders the unrounded
// estimate, so the renderer recomputes it from these raw counts and
// Profile.Period (see Unrounded) to print the same numbers. Profiles
// parsed before these were sample types carry them as NumLabels of the
// same names; Unrounded reads both.
const (
	LabelSampledObjects = "jemalloc_sampled_objects"
	LabelSampledBytes   = "jemalloc_sampled_bytes"
)

// ErrTooLarge is returned (wrapped) when a profile, or any layer of it
// after decompression, exceeds the size limit (MaxProfileBytes, or the
// limit given to ParseLimit / ParseReaderLimit).
var ErrTooLarge = errors.New("profile exceeds the size limit")

// maxGzipLayers is how many gzip layers ParseReaderLimit unwraps. Real
// profiles have one (pprof protobuf) or none; a second covers a gzipped
// file of a gzipped protobuf. More is refused rather than inflated.
const maxGzipLayers = 2

// maxLineBytes bounds one line of a heap_v2 profile: a stack line holds at
// most a few hundred addresses (jemalloc's PROF_BT_MAX is 128).
const maxLineBytes = 1 << 20

// ctxCheckLines is how many lines (or samples, locations, stacks) a stage
// handles between two looks at its context.
const ctxCheckLines = 4096

// Parse detects the format of data and parses it:
//   - jemalloc "heap_v2/<period>" text as written by mallctl("prof.dump"),
//   - gperftools "heap profile:" text as jeprof's ReadHeapProfile reads it
//     (see parseGperfHeap),
//   - pprof protobuf and the other legacy text formats, through
//     github.com/google/pprof/profile;
//
// each plain or gzipped.
//
// For heap_v2 the samples carry inuse_objects and inuse_space scaled for
// jemalloc's sampling exactly as jeprof's AdjustSamples does, and every
// jemalloc's sampling exactly as jeprof's AdjustSamples does. For heap_v2 and
// gperftools heap text every Location.Address is the address jeprof
// looks up: the leaf PC as written,
// every caller PC minus one (jeprof's FixCallerAddresses), so a symbolizer
// looks each address up as is. Locations are not symbolized.
//
// Parse is ParseLimit with MaxProfileBytes and no deadline.
func Parse(data []byte) (*profile.Profile, error) {
	return ParseLimit(context.Background(), data, MaxProfileBytes)
}

// ParseLimit is Parse bounded by limit bytes (a node's max_dump_bytes):
// data itself and every layer of it after decompression must fit, or the
// error wraps ErrTooLarge. limit <= 0 means MaxProfileBytes. It stops with
// ctx's error when ctx ends.
func ParseLimit(ctx context.Context, data []byte, limit int64) (*profile.Profile, error) {
	if limit <= 0 {
		limit = MaxProfileBytes
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("parse profile: %d bytes, limit %d: %w", len(data), limit, ErrTooLarge)
	}
	return ParseReaderLimit(ctx, bytes.NewReader(data), limit)
}

// ParseReader is Parse reading from r. A heap_v2 profile is parsed as it
// is read, without holding its text; other formats are read whole. More
// than MaxProfileBytes (after decompression) is ErrTooLarge.
//
// ParseReader is ParseReaderLimit with MaxProfileBytes and no deadline.
func ParseReader(r io.Reader) (*profile.Profile, error) {
	return ParseReaderLimit(context.Background(), r, MaxProfileBytes)
}

// ParseReaderLimit is ParseReader bounded by limit bytes (limit <= 0:
// MaxProfileBytes) and by ctx. The bound holds after inflation for every
// layer: the bytes read from r, and what each gzip layer (up to two, as
// nested gzip) decompresses to, are each cut off at limit with an error
// wrapping ErrTooLarge, so a gzip bomb costs at most about limit bytes of
// memory, never its inflated size. Nothing compressed reaches
// profile.ParseData, which would inflate it without a bound. The
// context is checked on every read and every few thousand lines.
func ParseReaderLimit(ctx context.Context, r io.Reader, limit int64) (*profile.Profile, error) {
	return parseReader(ctx, r, limit, nil)
}

// parseReader is ParseReaderLimit; a heap_v2 profile's stacks go to dump
// when it is set (ParseDump), its samples are not made.
func parseReader(ctx context.Context, r io.Reader, limit int64, dump *dumpCollector) (*profile.Profile, error) {
	if limit <= 0 {
		limit = MaxProfileBytes
	}
	br := bufio.NewReaderSize(&limitedReader{ctx: ctx, r: r, left: limit, limit: limit, what: "profile"}, 64<<10)
	for layer := 1; ; layer++ {
		magic, _ := br.Peek(2)
		if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
			break
		}
		if layer > maxGzipLayers {
			return nil, fmt.Errorf("parse profile: more than %d nested gzip layers", maxGzipLayers)
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return nil, fmt.Errorf("parse profile: %w", cerr)
			}
			return nil, fmt.Errorf("parse profile: gzip layer %d header: %w", layer, err)
		}
		what := fmt.Sprintf("gzip layer %d, inflated,", layer)
		br = bufio.NewReaderSize(&limitedReader{ctx: ctx, r: zr, left: limit, limit: limit, what: what}, 64<<10)
	}
	if head, _ := br.Peek(len("heap_v2/")); string(head) == "heap_v2/" {
		return parseHeapV2(ctx, br, dump)
	}
	if head, _ := br.Peek(len("heap profile:")); isGperfHeap(head) {
		return parseGperfHeap(ctx, br)
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, fmt.Errorf("parse profile: %w", err)
	}
	if len(data) == 0 {
		return nil, errors.New("parse profile: empty input")
	}
	// data is not gzip (every layer was unwrapped above), so ParseData
	// inflates nothing.
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("parse profile (not heap_v2; tried pprof protobuf and legacy text): %w", err)
	}
	return p, nil
}

// limitedReader is io.LimitReader failing with ErrTooLarge instead of
// ending quietly, so a cut-off profile is not mistaken for a whole one,
// and failing with ctx's error once ctx ends.
type limitedReader struct {
	ctx   context.Context
	r     io.Reader
	left  int64
	limit int64
	what  string // what is being limited, for the error
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if l.left <= 0 {
		// One byte more tells a profile of exactly the limit from a larger one.
		var one [1]byte
		if n, _ := io.ReadFull(l.r, one[:]); n > 0 {
			return 0, fmt.Errorf("%s more than %d bytes: %w", l.what, l.limit, ErrTooLarge)
		}
		return 0, io.EOF
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	return n, err
}

// heapV2Builder accumulates a heap_v2 profile while its lines are read.
type heapV2Builder struct {
	p        *profile.Profile
	period   int64
	locs     map[uint64]*profile.Location
	stack    []uint64 // current "@" stack, already caller-adjusted
	inStack  bool     // a "@" line was read and its t* line is awaited
	stackAt  int      // line number of the current stack
	haveStar bool     // the current stack has its t* line

	// The current stack line's text and where each of its addresses
	// starts and ends, and the previous line's (see startStack); the
	// first shareHead and last shareTail addresses of stack are the
	// previous stack's.
	text, prevText                     []byte
	starts, ends, prevStarts, prevEnds []int32
	prevStack                          []uint64
	shareHead, shareTail               int

	// Samples are many and small: their values and location lists are
	// cut from shared slabs.
	values  []int64
	locSlab []*profile.Location

	// dump, when set, collects the stacks for the renderers (ParseDump)
	// instead of making samples.
	dump *dumpCollector
}

// slabSize is how many int64s or pointers a slab holds before the next one.
const slabSize = 4096

func parseHeapV2(ctx context.Context, br *bufio.Reader, dump *dumpCollector) (*profile.Profile, error) {
	lines := lineReader{r: br}
	first, err := lines.next()
	if err != nil {
		return nil, fmt.Errorf("parse heap_v2 line 1: %w", err)
	}
	period, err := parseHeaderPeriod(string(bytes.TrimRight(first, "\r")))
	if err != nil {
		return nil, fmt.Errorf("parse heap_v2 line 1: %w", err)
	}
	b := &heapV2Builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{
				{Type: "inuse_objects", Unit: "count"},
				{Type: "inuse_space", Unit: "bytes"},
				{Type: LabelSampledObjects, Unit: "count"},
				{Type: LabelSampledBytes, Unit: "bytes"},
			},
			DefaultSampleType: "inuse_space",
			PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
			Period:            period,
		},
		period: period,
		dump:   dump,
	}
	if dump == nil {
		b.locs = make(map[uint64]*profile.Location)
	} else {
		dump.start()
	}
	var maps []*profile.Mapping
	for n := 2; ; n++ {
		if n%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("parse heap_v2 line %d: %w", n, err)
			}
		}
		raw, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse heap_v2 line %d: %w", n, err)
		}
		line := bytes.TrimSpace(raw)
		switch {
		case len(line) == 0:
		case line[0] == '@':
			if err := b.endStack(); err != nil {
				return nil, err
			}
			if err := b.startStack(line[1:], n); err != nil {
				return nil, fmt.Errorf("parse heap_v2 line %d: %w", n, err)
			}
		case line[0] == 't':
			if err := b.threadLine(line); err != nil {
				return nil, fmt.Errorf("parse heap_v2 line %d: %w", n, err)
			}
		case bytes.HasPrefix(line, []byte("MAPPED_LIBRARIES:")), bytes.HasPrefix(line, []byte("--- Memory map:")):
			if err := b.endStack(); err != nil {
				return nil, err
			}
			rest, err := io.ReadAll(br)
			if err != nil {
				return nil, fmt.Errorf("parse heap_v2 line %d: %w", n+1, err)
			}
			if maps, err = parseMaps(splitLines(string(rest)), n+1); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("parse heap_v2 line %d: unexpected %q", n, truncate(string(line), 60))
		}
	}
	if err := b.endStack(); err != nil {
		return nil, err
	}
	if err := b.attachMappings(ctx, maps); err != nil {
		return nil, err
	}
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("parse heap_v2: %w", err)
	}
	return b.p, nil
}

// lineReader yields the lines of a bufio.Reader without their '\n'. A
// line is valid until the next call.
type lineReader struct {
	r    *bufio.Reader
	long []byte // a line longer than r's buffer, assembled
}

func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], line...)
		for err == bufio.ErrBufferFull && len(l.long) <= maxLineBytes {
			line, err = l.r.ReadSlice('\n')
			l.long = append(l.long, line...)
		}
		if len(l.long) > maxLineBytes {
			return nil, fmt.Errorf("line longer than %d bytes", maxLineBytes)
		}
		line = l.long
	}
	if err == io.EOF && len(line) > 0 {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line, []byte("\n")), nil
}

// splitLines splits on '\n'; a final empty element after a trailing
// newline is dropped.
func splitLines(s string) []string {
	lines := strings.Split(s, "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// parseHeaderPeriod reads "heap_v2/<period>". jeprof refuses a threaded
// profile without a sample period, and a period of 0 would divide by zero
// in AdjustSamples.
func parseHeaderPeriod(header string) (int64, error) {
	rest := strings.TrimPrefix(header, "heap_v2/")
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	if end == 0 {
		return 0, fmt.Errorf("header %q has no sample period", truncate(header, 60))
	}
	period, err := strconv.ParseInt(rest[:end], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("header sample period: %w", err)
	}
	if period <= 0 {
		return 0, fmt.Errorf("header sample period %d is not positive", period)
	}
	return period, nil
}

// startStack reads the addresses of a "@ 0x... 0x..." line (text after
// the "@"). It is the hot loop of a large profile. Consecutive stacks of a
// dump share most of their text (the allocator's frames at the start, the
// program's outer frames at the end: 89% on bench/heapprof's o2), so the
// addresses the line has in common with the previous one, whole tokens of
// the same text in the same place from either end, are taken from the
// previous stack and only the rest is read; shareHead and shareTail say
// how many, for the samples' locations. The leaf (not decremented) is
// never taken from a caller's text or the other way round.
func (b *heapV2Builder) startStack(text []byte, n int) error {
	prev, prevStack, prevStarts, prevEnds := b.text, b.stack, b.starts, b.ends
	stack, starts, ends := b.prevStack[:0], b.prevStarts[:0], b.prevEnds[:0]
	// The previous line's addresses that end, before a separator, inside
	// the text both lines start with.
	pre := commonPrefix(text, prev)
	head := 0
	for head < len(prevEnds) && int(prevEnds[head]) < pre {
		head++
	}
	i := 0
	if head > 0 {
		stack = append(stack, prevStack[:head]...)
		starts = append(starts, prevStarts[:head]...)
		ends = append(ends, prevEnds[:head]...)
		i = int(prevEnds[head-1])
	}
	// Addresses that start after a separator inside the text both lines
	// end with, past the previous line's leaf, are its last ones.
	sufStart := len(text) + 1
	if len(prevEnds) > 0 {
		sufStart = len(text) - commonSuffix(text, prev, len(prev)-int(prevEnds[0]))
	}
	tail := 0
	for i < len(text) {
		if isSep(text[i]) {
			i++
			continue
		}
		if len(stack) > 0 && i > sufStart {
			if j := tailFrom(prevStarts, i-len(text)+len(prev)); j > 0 {
				shift := int32(len(text) - len(prev))
				tail = len(prevStack) - j
				stack = append(stack, prevStack[j:]...)
				for k := j; k < len(prevStack); k++ {
					starts = append(starts, prevStarts[k]+shift)
					ends = append(ends, prevEnds[k]+shift)
				}
				break
			}
		}
		start := i
		a, end, ok := readAddress(text, i)
		if !ok {
			for end < len(text) && !isSep(text[end]) {
				end++
			}
			return fmt.Errorf("bad address %q", truncate(string(text[start:end]), 40))
		}
		i = end
		// A return address points after the call; jeprof looks up the call
		// instruction itself (FixCallerAddresses). The leaf PC is exact.
		// jeprof's AddressSub wraps modulo 2^64 like uint64 does.
		if len(stack) > 0 {
			a--
		}
		stack = append(stack, a)
		starts = append(starts, int32(start))
		ends = append(ends, int32(end))
	}
	if len(stack) == 0 {
		return errors.New("stack with no addresses")
	}
	b.prevStack, b.prevStarts, b.prevEnds = b.stack, b.starts, b.ends
	b.stack, b.starts, b.ends = stack, starts, ends
	b.text, b.prevText = append(b.prevText[:0], text...), b.text
	b.shareHead, b.shareTail = head, tail
	b.inStack, b.stackAt, b.haveStar = true, n, false
	return nil
}

// tailFrom returns the index of the address starting at offset at in a
// line whose addresses start at starts, or 0 if none does.
func tailFrom(starts []int32, at int) int {
	for j := len(starts) - 1; j > 0; j-- {
		switch s := int(starts[j]); {
		case s == at:
			return j
		case s < at:
			return 0
		}
	}
	return 0
}

// parseHexAddress reads "0x" followed by 1 to 16 hex digits (the "0x" is
// optional, as jeprof's hex() does not need it).
func parseHexAddress(f []byte) (uint64, bool) {
	a, end, ok := readAddress(f, 0)
	return a, ok && end == len(f)
}

// readAddress reads the address at b[i:] as parseHexAddress does, in one
// pass (a dump's text is mostly stack lines), and returns it and where it
// ends; it must end at a separator or the end of b.
func readAddress(b []byte, i int) (a uint64, end int, ok bool) {
	if i+1 < len(b) && b[i] == '0' && b[i+1] == 'x' {
		i += 2
	}
	start := i
	for ; i < len(b); i++ {
		d := hexDigits[b[i]]
		if d == 0xff {
			break
		}
		a = a<<4 | uint64(d)
	}
	if n := i - start; n == 0 || n > 16 || i < len(b) && !isSep(b[i]) {
		return 0, i, false
	}
	return a, i, true
}

func isSep(c byte) bool { return c == ' ' || c == '\t' }

// hexDigits maps a byte to its hex value, 0xff if it is not a hex digit.
var hexDigits = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

// endStack checks that the stack being read got its totals line; a stack
// without one means the dump was cut off.
func (b *heapV2Builder) endStack() error {
	if b.inStack && !b.haveStar {
		return fmt.Errorf("parse heap_v2 line %d: stack has no t* line (truncated profile?)", b.stackAt)
	}
	b.inStack = false
	return nil
}

// threadLine handles "t*: n1: s1 [n2: s2]" and "t<N>: ...". Only t* lines
// after a stack make samples, as in jeprof's ReadThreadedHeapProfile; the
// header's totals and per-thread lines are checked for syntax only.
func (b *heapV2Builder) threadLine(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon < 0 {
		return fmt.Errorf("thread line %q has no ':'", truncate(string(line), 60))
	}
	thread := line[1:colon]
	star := len(thread) == 1 && thread[0] == '*'
	if !star {
		if _, ok := parseCount(thread); !ok {
			return fmt.Errorf("bad thread id %q", truncate(string(thread), 30))
		}
	}
	n1, s1, _, _, err := parseCounts(line[colon+1:])
	if err != nil {
		return err
	}
	if !star || !b.inStack {
		return nil
	}
	if b.haveStar {
		return errors.New("second t* line for one stack")
	}
	b.haveStar = true
	b.addSample(n1, s1)
	return nil
}

// parseCounts reads " n1: s1 [n2: s2]".
func parseCounts(s []byte) (n1, s1, n2, s2 int64, err error) {
	s = bytes.TrimSpace(s)
	open := bytes.IndexByte(s, '[')
	if open < 0 || !bytes.HasSuffix(s, []byte("]")) {
		return 0, 0, 0, 0, fmt.Errorf("counts %q are not \"n: s [n: s]\"", truncate(string(s), 60))
	}
	if n1, s1, err = parsePair(s[:open]); err != nil {
		return 0, 0, 0, 0, err
	}
	if n2, s2, err = parsePair(s[open+1 : len(s)-1]); err != nil {
		return 0, 0, 0, 0, err
	}
	return n1, s1, n2, s2, nil
}

func parsePair(s []byte) (int64, int64, error) {
	a, c, ok := bytes.Cut(s, []byte(":"))
	if !ok {
		return 0, 0, fmt.Errorf("count pair %q has no ':'", truncate(string(s), 40))
	}
	n, ok := parseCount(bytes.TrimSpace(a))
	if !ok {
		return 0, 0, fmt.Errorf("bad object count %q", truncate(string(a), 30))
	}
	v, ok := parseCount(bytes.TrimSpace(c))
	if !ok {
		return 0, 0, fmt.Errorf("bad byte count %q", truncate(string(c), 30))
	}
	return n, v, nil
}

// parseCount reads a non-negative decimal int64 (digits only).
func parseCount(s []byte) (int64, bool) {
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

func (b *heapV2Builder) addSample(n1, s1 int64) {
	objects, bytes := AdjustSamples(b.period, n1, s1)
	if b.dump != nil {
		b.dump.add(b, objects, bytes, n1, s1)
		return
	}
	if len(b.locSlab) < len(b.stack) {
		b.locSlab = make([]*profile.Location, max(slabSize, len(b.stack)))
	}
	locs := b.locSlab[:len(b.stack):len(b.stack)]
	b.locSlab = b.locSlab[len(b.stack):]
	// The addresses the stack shares with the previous one (startStack)
	// are the previous sample's locations, without a map lookup.
	head, tail := 0, 0
	if n := len(b.p.Sample); n > 0 {
		prev := b.p.Sample[n-1].Location
		head, tail = b.shareHead, b.shareTail
		copy(locs[:head], prev[:head])
		copy(locs[len(locs)-tail:], prev[len(prev)-tail:])
	}
	for i := head; i < len(locs)-tail; i++ {
		a := b.stack[i]
		loc := b.locs[a]
		if loc == nil {
			loc = &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: a}
			b.locs[a] = loc
			b.p.Location = append(b.p.Location, loc)
		}
		locs[i] = loc
	}
	if len(b.values) < 4 {
		b.values = make([]int64, slabSize)
	}
	value := b.values[:4:4]
	b.values = b.values[4:]
	value[0], value[1], value[2], value[3] = roundInt64(objects), roundInt64(bytes), n1, s1
	b.p.Sample = append(b.p.Sample, &profile.Sample{Location: locs, Value: value})
}

// Unrounded recomputes jeprof's unrounded estimates of a profile's
// jemalloc samples from the raw sampled counts Parse keeps.
type Unrounded struct {
	period         int64
	objects, bytes int // sample type indexes of the raw counts, or -1
}

// NewUnrounded looks up where p keeps raw sampled counts.
func NewUnrounded(p *profile.Profile) Unrounded {
	u := Unrounded{period: p.Period, objects: -1, bytes: -1}
	for i, st := range p.SampleType {
		switch st.Type {
		case LabelSampledObjects:
			u.objects = i
		case LabelSampledBytes:
			u.bytes = i
		}
	}
	return u
}

// Values returns the sample's in-use objects and bytes as jeprof computes
// them; ok is false when the sample has no raw counts (not a jemalloc
// heap_v2 sample).
func (u Unrounded) Values(s *profile.Sample) (objects, bytes float64, ok bool) {
	if u.period <= 0 {
		return 0, 0, false
	}
	if u.objects >= 0 && u.bytes >= 0 && u.objects < len(s.Value) && u.bytes < len(s.Value) {
		objects, bytes = AdjustSamples(u.period, s.Value[u.objects], s.Value[u.bytes])
		return objects, bytes, true
	}
	n, b := s.NumLabel[LabelSampledObjects], s.NumLabel[LabelSampledBytes]
	if len(n) == 1 && len(b) == 1 {
		objects, bytes = AdjustSamples(u.period, n[0], b[0])
		return objects, bytes, true
	}
	return 0, 0, false
}

// AdjustSamples scales a sampled (count, bytes) pair the way jeprof's
// AdjustSamples does for jemalloc's heap_v2 (Poisson sampling with mean
// period bytes): each stack is scaled by 1/(1-exp(-avg/period)), where avg
// is the stack's average sampled object size.
func AdjustSamples(period, count, bytes int64) (float64, float64) {
	n, s := float64(count), float64(bytes)
	if period <= 0 || count == 0 {
		return n, s
	}
	ratio := (s / n) / float64(period)
	scale := 1 / (1 - math.Exp(-ratio))
	return n * scale, s * scale
}

func roundInt64(f float64) int64 {
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(math.Round(f))
}

// attachMappings points every location at the executable mapping that
// contains it, the first one in the dump's order as in jeprof (which only
// reads executable "..x." file mappings). /proc/self/maps is sorted and
// has no overlaps: then a binary search finds it; a dump whose maps
// overlap is searched in order.
func (b *heapV2Builder) attachMappings(ctx context.Context, maps []*profile.Mapping) error {
	b.p.Mapping = maps
	sorted := true
	for i := 1; i < len(maps); i++ {
		if maps[i].Start < maps[i-1].Limit {
			sorted = false
			break
		}
	}
	for i, loc := range b.p.Location {
		if i%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("parse heap_v2: mappings: %w", err)
			}
		}
		if sorted {
			// The first map whose limit is above the address.
			j, _ := slices.BinarySearchFunc(maps, loc.Address, func(m *profile.Mapping, a uint64) int {
				if m.Limit <= a {
					return -1
				}
				return 1
			})
			if j < len(maps) && loc.Address >= maps[j].Start {
				loc.Mapping = maps[j]
			}
			continue
		}
		for _, m := range maps {
			if loc.Address >= m.Start && loc.Address < m.Limit {
				loc.Mapping = m
				break
			}
		}
	}
	return nil
}

// parseMaps reads the /proc/self/maps section jemalloc appends. Only
// executable, file-backed mappings are kept: those are the only ones jeprof
// symbolizes. Lines it cannot read are skipped like jeprof skips them, but a
// line that looks like a mapping with broken numbers is an error.
func parseMaps(lines []string, firstLine int) ([]*profile.Mapping, error) {
	var maps []*profile.Mapping
	for i, raw := range lines {
		line := strings.TrimSpace(strings.TrimRight(raw, "\r"))
		if line == "" || strings.HasPrefix(line, "build=") {
			continue
		}
		// start-limit perms offset dev inode path
		f := strings.Fields(line)
		if len(f) < 6 || len(f[1]) != 4 || f[1][2] != 'x' {
			continue
		}
		rangeText, ok := strings.CutPrefix(f[0], "0x")
		if !ok {
			rangeText = f[0]
		}
		lo, hi, ok := strings.Cut(rangeText, "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		limit, err2 := strconv.ParseUint(hi, 16, 64)
		offset, err3 := strconv.ParseUint(f[2], 16, 64)
		if err := errors.Join(err1, err2, err3); err != nil {
			return nil, fmt.Errorf("parse heap_v2 line %d: mapping %q: %w", firstLine+i, truncate(line, 80), err)
		}
		if limit < start {
			return nil, fmt.Errorf("parse heap_v2 line %d: mapping limit below start", firstLine+i)
		}
		maps = append(maps, &profile.Mapping{
			ID:     uint64(len(maps) + 1),
			Start:  start,
			Limit:  limit,
			Offset: offset,
			// Paths with spaces are rare but legal in /proc/self/maps.
			File: strings.Join(f[5:], " "),
		})
	}
	return maps, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
