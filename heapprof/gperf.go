package heapprof

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"
)

// gperftools "heap profile:" text, as tcmalloc's heap profiler writes it
// (HEAPPROFILE=..., HeapProfilerDump) and as jeprof's ReadHeapProfile reads
// it. Parse reads it itself rather than through pprof's legacy parser,
// which differs from jeprof twice: it subtracts one from the leaf PC as
// well as from the callers (jeprof's FixCallerAddresses keeps the leaf, so
// pprof's leaf can land in another inlined frame or line), and a profile
// whose header shows no frees gets only "objects"/"space" sample types,
// where jeprof still answers --inuse_objects and --base.

// gperfHeaderRE is jeprof's header pattern: in-use and allocated totals,
// then optionally "@ <type>[/<sample period>]".
var gperfHeaderRE = regexp.MustCompile(`^heap profile:\s*(\d+):\s+(\d+)\s+\[\s*(\d+):\s+(\d+)\](\s*@\s*([^/]*)(/(\d+))?)?`)

// gperfSampleRE is jeprof's pattern for one stack (after trimming).
var gperfSampleRE = regexp.MustCompile(`^\s*(\d+):\s+(\d+)\s+\[\s*(\d+):\s+(\d+)\]\s+@\s+(.*)$`)

// Sample type order of a parsed gperftools heap profile: pprof's order for
// legacy heap profiles (and Go's), with inuse_space the default.
const (
	gperfAllocObjects = iota
	gperfAllocSpace
	gperfInuseObjects
	gperfInuseSpace
)

// gperfSampling is how jeprof scales a heap profile's counts
// (ReadHeapProfile's $sampling_algorithm and $sample_adjustment).
type gperfSampling struct {
	algorithm  int     // 0: none (heapprofile, growth), 1: remote heap v1, 2: v2 (Poisson)
	adjustment float64 // the sample period jeprof divides by
}

// parseGperfHeader reads the header line as ReadHeapProfile does.
func parseGperfHeader(line string) (gperfSampling, error) {
	m := gperfHeaderRE.FindStringSubmatch(line)
	if m == nil {
		return gperfSampling{}, fmt.Errorf("header %q is not \"heap profile: n: s [n: s] @ type\"", truncate(line, 80))
	}
	var s gperfSampling
	if typ := m[6]; typ != "" {
		period := 0.0
		if m[8] != "" {
			p, err := strconv.ParseInt(m[8], 10, 64)
			if err != nil {
				return gperfSampling{}, fmt.Errorf("header sample period: %w", err)
			}
			period = float64(p)
		}
		switch {
		case typ == "heapprofile" || !strings.Contains(typ, "heap"):
		case strings.Contains(typ, "_v2"):
			s = gperfSampling{algorithm: 2, adjustment: period}
		default:
			s = gperfSampling{algorithm: 1, adjustment: period / 2}
		}
	} else if m[1] == m[3] && m[2] == m[4] {
		// No type: old remote heap profiles, recognized by equal totals.
		s.algorithm = 1
	}
	if s.algorithm > 0 && s.adjustment == 0 {
		s.adjustment = 128 * 1024
	}
	return s, nil
}

// adjust is jeprof's AdjustSamples for one count pair.
func (s gperfSampling) adjust(n, b int64) (float64, float64) {
	fn, fb := float64(n), float64(b)
	if s.algorithm == 0 || n == 0 {
		return fn, fb
	}
	ratio := (fb / fn) / s.adjustment
	if s.algorithm == 2 {
		scale := 1 / (1 - math.Exp(-ratio))
		return fn * scale, fb * scale
	}
	if ratio < 1 {
		return fn / ratio, fb / ratio
	}
	return fn, fb
}

// isGperfHeap tells whether a profile starts like a gperftools heap profile.
func isGperfHeap(head []byte) bool {
	return bytes.HasPrefix(head, []byte("heap profile:"))
}

// parseGperfHeap reads a gperftools heap profile. Locations carry the
// address jeprof looks up (leaf as written, callers minus one) and the
// executable mapping containing it, as for heap_v2. Samples have
// alloc_objects, alloc_space, inuse_objects and inuse_space (jeprof's
// --alloc_objects, --alloc_space, --inuse_objects, default), scaled as
// jeprof scales them; for sampled (v2) profiles the raw in-use counts ride
// along as LabelSampledObjects / LabelSampledBytes so the renderer uses
// jeprof's unrounded estimates.
func parseGperfHeap(ctx context.Context, br *bufio.Reader) (*profile.Profile, error) {
	lines := lineReader{r: br}
	first, err := lines.next()
	if err != nil {
		return nil, fmt.Errorf("parse heap profile line 1: %w", err)
	}
	sampling, err := parseGperfHeader(strings.TrimRight(string(first), "\r"))
	if err != nil {
		return nil, fmt.Errorf("parse heap profile line 1: %w", err)
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{
			gperfAllocObjects: {Type: "alloc_objects", Unit: "count"},
			gperfAllocSpace:   {Type: "alloc_space", Unit: "bytes"},
			gperfInuseObjects: {Type: "inuse_objects", Unit: "count"},
			gperfInuseSpace:   {Type: "inuse_space", Unit: "bytes"},
		},
		DefaultSampleType: "inuse_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	raw := sampling.algorithm == 2
	if raw {
		p.SampleType = append(p.SampleType,
			&profile.ValueType{Type: LabelSampledObjects, Unit: "count"},
			&profile.ValueType{Type: LabelSampledBytes, Unit: "bytes"})
		// Unrounded scales the raw counts by Period exactly as
		// AdjustSamples; jeprof's v2 adjustment is the header's period.
		p.Period = int64(sampling.adjustment)
	} else if sampling.algorithm == 1 {
		p.Period = int64(sampling.adjustment)
	}
	b := &heapV2Builder{p: p, locs: make(map[uint64]*profile.Location)}
	var maps []*profile.Mapping
	for n := 2; ; n++ {
		if n%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("parse heap profile line %d: %w", n, err)
			}
		}
		rawLine, err := lines.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("parse heap profile line %d: %w", n, err)
		}
		line := strings.TrimSpace(strings.ReplaceAll(string(rawLine), "\r", ""))
		if strings.HasPrefix(line, "MAPPED_LIBRARIES:") || strings.HasPrefix(line, "--- Memory map:") {
			rest, err := io.ReadAll(br)
			if err != nil {
				return nil, fmt.Errorf("parse heap profile line %d: %w", n+1, err)
			}
			if maps, err = parseMaps(splitLines(string(rest)), n+1); err != nil {
				return nil, err
			}
			break
		}
		m := gperfSampleRE.FindStringSubmatch(line)
		if m == nil {
			continue // jeprof skips what it does not recognize
		}
		var c [4]int64
		for i := range c {
			v, ok := parseCount([]byte(m[1+i]))
			if !ok {
				return nil, fmt.Errorf("parse heap profile line %d: count %q out of range", n, truncate(m[1+i], 30))
			}
			c[i] = v
		}
		if err := b.gperfStack(m[5]); err != nil {
			return nil, fmt.Errorf("parse heap profile line %d: %w", n, err)
		}
		inN, inS := sampling.adjust(c[0], c[1])
		allocN, allocS := sampling.adjust(c[2], c[3])
		value := []int64{
			gperfAllocObjects: roundInt64(allocN),
			gperfAllocSpace:   roundInt64(allocS),
			gperfInuseObjects: roundInt64(inN),
			gperfInuseSpace:   roundInt64(inS),
		}
		if raw {
			value = append(value, c[0], c[1])
		}
		locs := make([]*profile.Location, len(b.stack))
		for i, a := range b.stack {
			loc := b.locs[a]
			if loc == nil {
				loc = &profile.Location{ID: uint64(len(p.Location) + 1), Address: a}
				b.locs[a] = loc
				p.Location = append(p.Location, loc)
			}
			locs[i] = loc
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: value})
	}
	if err := b.attachMappings(ctx, maps); err != nil {
		return nil, err
	}
	if err := p.CheckValid(); err != nil {
		return nil, fmt.Errorf("parse heap profile: %w", err)
	}
	return p, nil
}

// gperfStack reads a stack's addresses, separated by spaces, into b.stack
// as jeprof's FixCallerAddresses leaves them: the leaf as written, every
// caller minus one.
func (b *heapV2Builder) gperfStack(text string) error {
	b.stack = b.stack[:0]
	for _, f := range strings.Fields(text) {
		a, ok := parseHexAddress([]byte(f))
		if !ok {
			return fmt.Errorf("bad address %q", truncate(f, 40))
		}
		if len(b.stack) > 0 {
			a--
		}
		b.stack = append(b.stack, a)
	}
	if len(b.stack) == 0 {
		return errors.New("stack with no addresses")
	}
	return nil
}
