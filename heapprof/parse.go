// Package heapprof reads heap profiles (jemalloc heap_v2, gperftools heap
// text, pprof protobuf) into *profile.Profile and renders them the way
// jemalloc's jeprof does (WriteDOT = jeprof --dot, WriteText = --text,
// Options.Base = --base), plus folded stacks, an SVG flame graph and the
// symbolized pprof protobuf. Symbolization is behind the Symbolizer
// interface; symbolizer.go holds the contract that makes the output equal
// jeprof's.
package heapprof

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// MaxProfileBytes bounds the (decompressed) size of a profile Parse accepts.
// A 1 MB jemalloc dump is typical for a large server (seed 001); 256 MiB
// leaves room for very large heaps while keeping a hostile or broken node
// from exhausting the proxy's memory.
const MaxProfileBytes = 256 << 20

// Label keys under which Parse keeps jemalloc's raw sampled counts of each
// stack. pprof's Sample.Value holds the scaled estimate rounded to an
// integer; jeprof renders the unrounded estimate, so the renderer recomputes
// it from these raw counts and Profile.Period to print the same numbers.
const (
	LabelSampledObjects = "jemalloc_sampled_objects"
	LabelSampledBytes   = "jemalloc_sampled_bytes"
)

// ErrTooLarge is returned (wrapped) when a profile exceeds MaxProfileBytes.
var ErrTooLarge = errors.New("profile exceeds MaxProfileBytes")

// Parse detects the format of data and parses it:
//   - jemalloc "heap_v2/<period>" text as written by mallctl("prof.dump"),
//   - gperftools "heap profile:" text and pprof protobuf, plain or gzipped
//     (both through github.com/google/pprof/profile).
//
// For heap_v2 the samples carry inuse_objects and inuse_space scaled for
// jemalloc's sampling exactly as jeprof's AdjustSamples does, and every
// Location.Address is the address jeprof looks up: the leaf PC as written,
// every caller PC minus one (jeprof's FixCallerAddresses), so a symbolizer
// looks each address up as is. Locations are not symbolized.
func Parse(data []byte) (*profile.Profile, error) {
	if len(data) > MaxProfileBytes {
		return nil, fmt.Errorf("parse profile: %d bytes: %w", len(data), ErrTooLarge)
	}
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		var err error
		if data, err = gunzip(data); err != nil {
			return nil, err
		}
	}
	if bytes.HasPrefix(data, []byte("heap_v2/")) {
		return parseHeapV2(data)
	}
	if len(data) == 0 {
		return nil, errors.New("parse profile: empty input")
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("parse profile (not heap_v2; tried pprof protobuf and legacy text): %w", err)
	}
	return p, nil
}

// gunzip decompresses data, refusing output above MaxProfileBytes so a small
// gzip bomb cannot allocate gigabytes.
func gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("parse profile: gzip header: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, MaxProfileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("parse profile: gunzip: %w", err)
	}
	if len(out) > MaxProfileBytes {
		return nil, fmt.Errorf("parse profile: decompressed size: %w", ErrTooLarge)
	}
	return out, nil
}

// heapV2Builder accumulates a heap_v2 profile while its lines are read.
type heapV2Builder struct {
	p        *profile.Profile
	period   int64
	locs     map[uint64]*profile.Location
	stack    []uint64 // current "@" stack, already caller-adjusted
	stackAt  int      // line number of the current stack
	haveStar bool     // the current stack has its t* line
}

func parseHeapV2(data []byte) (*profile.Profile, error) {
	lines := splitLines(data)
	header := strings.TrimRight(lines[0], "\r")
	period, err := parseHeaderPeriod(header)
	if err != nil {
		return nil, fmt.Errorf("parse heap_v2 line 1: %w", err)
	}
	b := &heapV2Builder{
		p: &profile.Profile{
			SampleType: []*profile.ValueType{
				{Type: "inuse_objects", Unit: "count"},
				{Type: "inuse_space", Unit: "bytes"},
			},
			DefaultSampleType: "inuse_space",
			PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
			Period:            period,
		},
		period: period,
		locs:   make(map[uint64]*profile.Location),
	}
	var maps []*profile.Mapping
	for i := 1; i < len(lines); i++ {
		n := i + 1
		line := strings.TrimSpace(strings.TrimRight(lines[i], "\r"))
		switch {
		case line == "":
		case strings.HasPrefix(line, "MAPPED_LIBRARIES:"), strings.HasPrefix(line, "--- Memory map:"):
			if err := b.endStack(); err != nil {
				return nil, err
			}
			if maps, err = parseMaps(lines[i+1:], n+1); err != nil {
				return nil, err
			}
			i = len(lines)
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
		default:
			return nil, fmt.Errorf("parse heap_v2 line %d: unexpected %q", n, truncate(line, 60))
		}
	}
	if err := b.endStack(); err != nil {
		return nil, err
	}
	b.attachMappings(maps)
	if err := b.p.CheckValid(); err != nil {
		return nil, fmt.Errorf("parse heap_v2: %w", err)
	}
	return b.p, nil
}

// splitLines splits on '\n' without copying the line contents twice; a
// final empty element after a trailing newline is dropped.
func splitLines(data []byte) []string {
	s := string(data)
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

func (b *heapV2Builder) startStack(text string, n int) error {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return errors.New("stack with no addresses")
	}
	stack := make([]uint64, len(fields))
	for i, f := range fields {
		h := strings.TrimPrefix(f, "0x")
		if h == "" || len(h) > 16 {
			return fmt.Errorf("bad address %q", truncate(f, 40))
		}
		a, err := strconv.ParseUint(h, 16, 64)
		if err != nil {
			return fmt.Errorf("bad address %q: %w", truncate(f, 40), err)
		}
		// A return address points after the call; jeprof looks up the call
		// instruction itself (FixCallerAddresses). The leaf PC is exact.
		// jeprof's AddressSub wraps modulo 2^64 like uint64 does.
		if i > 0 {
			a--
		}
		stack[i] = a
	}
	b.stack, b.stackAt, b.haveStar = stack, n, false
	return nil
}

// endStack checks that the stack being read got its totals line; a stack
// without one means the dump was cut off.
func (b *heapV2Builder) endStack() error {
	if b.stack != nil && !b.haveStar {
		return fmt.Errorf("parse heap_v2 line %d: stack has no t* line (truncated profile?)", b.stackAt)
	}
	b.stack = nil
	return nil
}

// threadLine handles "t*: n1: s1 [n2: s2]" and "t<N>: ...". Only t* lines
// after a stack make samples, as in jeprof's ReadThreadedHeapProfile; the
// header's totals and per-thread lines are checked for syntax only.
func (b *heapV2Builder) threadLine(line string) error {
	colon := strings.IndexByte(line, ':')
	if colon < 0 {
		return fmt.Errorf("thread line %q has no ':'", truncate(line, 60))
	}
	thread := line[1:colon]
	if thread != "*" {
		if _, err := strconv.ParseUint(thread, 10, 64); err != nil {
			return fmt.Errorf("bad thread id %q", truncate(thread, 30))
		}
	}
	n1, s1, _, _, err := parseCounts(line[colon+1:])
	if err != nil {
		return err
	}
	if thread != "*" || b.stack == nil {
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
func parseCounts(s string) (n1, s1, n2, s2 int64, err error) {
	s = strings.TrimSpace(s)
	open := strings.IndexByte(s, '[')
	if open < 0 || !strings.HasSuffix(s, "]") {
		return 0, 0, 0, 0, fmt.Errorf("counts %q are not \"n: s [n: s]\"", truncate(s, 60))
	}
	if n1, s1, err = parsePair(s[:open]); err != nil {
		return 0, 0, 0, 0, err
	}
	if n2, s2, err = parsePair(s[open+1 : len(s)-1]); err != nil {
		return 0, 0, 0, 0, err
	}
	return n1, s1, n2, s2, nil
}

func parsePair(s string) (int64, int64, error) {
	a, c, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("count pair %q has no ':'", truncate(s, 40))
	}
	n, err := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	if err != nil || n < 0 {
		return 0, 0, fmt.Errorf("bad object count %q", truncate(a, 30))
	}
	v, err := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
	if err != nil || v < 0 {
		return 0, 0, fmt.Errorf("bad byte count %q", truncate(c, 30))
	}
	return n, v, nil
}

func (b *heapV2Builder) addSample(n1, s1 int64) {
	objects, bytes := AdjustSamples(b.period, n1, s1)
	locs := make([]*profile.Location, len(b.stack))
	for i, a := range b.stack {
		loc := b.locs[a]
		if loc == nil {
			loc = &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: a}
			b.locs[a] = loc
			b.p.Location = append(b.p.Location, loc)
		}
		locs[i] = loc
	}
	b.p.Sample = append(b.p.Sample, &profile.Sample{
		Location: locs,
		Value:    []int64{roundInt64(objects), roundInt64(bytes)},
		NumLabel: map[string][]int64{LabelSampledObjects: {n1}, LabelSampledBytes: {s1}},
		NumUnit:  map[string][]string{LabelSampledObjects: {"count"}, LabelSampledBytes: {"bytes"}},
	})
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
// contains it. jeprof only reads executable ("..x.") file mappings.
func (b *heapV2Builder) attachMappings(maps []*profile.Mapping) {
	b.p.Mapping = maps
	for _, loc := range b.p.Location {
		for _, m := range maps {
			if loc.Address >= m.Start && loc.Address < m.Limit {
				loc.Mapping = m
				break
			}
		}
	}
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
