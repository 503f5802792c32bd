package snapshot

import (
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/funcname"
)

// Summarize computes a symbolized profile's totals and its Function and
// Stack rows (SnapshotID left empty; Save fills it in).
//
// Values are the in-use bytes and objects (sample types inuse_space and
// inuse_objects, else the profile's byte- and count-valued types). For
// jemalloc profiles the unrounded estimates are summed (recomputed from the
// raw sampled counts heapprof.Parse keeps, as jeprof does) and rounded once
// at the end, so the numbers agree with `jeprof --text --show_bytes`.
//
// Each stack is cut after its last allocator entry point (malloc, calloc,
// operator new, ...; jeprof's RemoveUninterestingFrames), so flat is
// charged to the function that called the allocator. Flat goes to the
// innermost remaining frame (Location.Line[0] of the first location: the
// innermost inlined function); cum to every function on the stack, once
// per stack even when it recurses. Functions are told apart by full name;
// stacks by their frames' short names (stacks equal under short names are
// one Stack row).
//
// Short names are the DOT graph's node names: for a Go program's profile
// (heapprof.IsGoProfile) `go tool pprof`'s names, which keep receivers
// ("tsdb.(*Head).appender"), or the full name where two functions of the
// profile would share one (heapprof.GoNodeNames), so distinct Go
// functions never share a short name or merge stacks; otherwise jeprof's
// ShortFunctionName.
func Summarize(p *profile.Profile) (Totals, []Function, []Stack) {
	bi, oi := valueIndex(p)
	type acc struct{ flatB, flatO, cumB, cumO float64 }
	type stackAcc struct {
		depth int
		b, o  float64
	}
	funcs := map[string]*acc{}
	stacks := map[string]*stackAcc{}
	frames := newFrameCache()
	if heapprof.IsGoProfile(p) {
		frames.goNames = heapprof.GoNodeNames(p)
	}
	var totB, totO float64
	seen := map[string]bool{}
	var names, shorts []string
	u := heapprof.NewUnrounded(p)
	for _, s := range p.Sample {
		b, o := sampleValues(u, s, bi, oi)
		if b == 0 && o == 0 {
			// Go heap profiles keep stacks whose allocations were all
			// freed; like jeprof and pprof, they are not shown.
			continue
		}
		totB += b
		totO += o
		names, shorts = frames.stack(s, names[:0], shorts[:0])
		clear(seen)
		for i, n := range names {
			a := funcs[n]
			if a == nil {
				a = &acc{}
				funcs[n] = a
			}
			if i == 0 {
				a.flatB += b
				a.flatO += o
			}
			if !seen[n] {
				seen[n] = true
				a.cumB += b
				a.cumO += o
			}
		}
		// Folded form, root first, as flame graph tools and jeprof
		// --collapsed write stacks.
		key := rootFirst(shorts)
		st := stacks[key]
		if st == nil {
			st = &stackAcc{depth: len(shorts)}
			stacks[key] = st
		}
		st.b += b
		st.o += o
	}
	tot := Totals{Bytes: round(totB), Objects: round(totO)}
	fout := make([]Function, 0, len(funcs))
	for name, a := range funcs {
		f := Function{
			Name: name, ShortName: frames.short(name),
			FlatBytes: round(a.flatB), FlatObjects: round(a.flatO),
			CumBytes: round(a.cumB), CumObjects: round(a.cumO),
		}
		if totB != 0 {
			f.FlatPercent = 100 * a.flatB / totB
			f.CumPercent = 100 * a.cumB / totB
		}
		fout = append(fout, f)
	}
	sortFunctions(fout)
	sout := make([]Stack, 0, len(stacks))
	for key, a := range stacks {
		sout = append(sout, Stack{Frames: key, Depth: a.depth, Bytes: round(a.b), Objects: round(a.o)})
	}
	sortStacks(sout)
	assignStackIDs(sout)
	return tot, fout, sout
}

// frameCache computes each location's names once: profiles have tens of
// thousands of stacks over a few thousand locations.
type frameCache struct {
	locs   map[*profile.Location]*locFrames
	shorts map[string]string
	// goNames, for a Go profile, holds every function's short name.
	goNames map[string]string
}

type locFrames struct {
	names, shorts []string // innermost first
	allocator     bool     // the containing function is an allocator entry point
}

func newFrameCache() *frameCache {
	return &frameCache{locs: map[*profile.Location]*locFrames{}, shorts: map[string]string{}}
}

func (c *frameCache) short(name string) string {
	if c.goNames != nil {
		if s, ok := c.goNames[name]; ok {
			return s
		}
		return funcname.Pprof(name)
	}
	s, ok := c.shorts[name]
	if !ok {
		s = funcname.Short(name)
		c.shorts[name] = s
	}
	return s
}

func (c *frameCache) loc(loc *profile.Location) *locFrames {
	if f := c.locs[loc]; f != nil {
		return f
	}
	f := &locFrames{}
	if len(loc.Line) == 0 {
		a := fmt.Sprintf("0x%x", loc.Address)
		f.names, f.shorts = []string{a}, []string{a}
	}
	for _, l := range loc.Line {
		n := funcName(l.Function)
		f.names = append(f.names, n)
		f.shorts = append(f.shorts, c.short(n))
	}
	if n := len(loc.Line); n > 0 {
		f.allocator = heapprof.IsAllocatorFrame(f.shorts[n-1])
	}
	c.locs[loc] = f
	return f
}

// stack appends the full and the short function names of s, innermost
// first, after the last allocator entry point. An unsymbolized location is
// its address.
func (c *frameCache) stack(s *profile.Sample, names, shorts []string) ([]string, []string) {
	start := 0
	for i, loc := range s.Location {
		if c.loc(loc).allocator {
			start = i + 1
		}
	}
	for _, loc := range s.Location[start:] {
		f := c.loc(loc)
		names = append(names, f.names...)
		shorts = append(shorts, f.shorts...)
	}
	return names, shorts
}

// assignStackIDs gives each stack a non-negative 63-bit FNV-1a hash of its
// frames; a collision within the snapshot (never seen in practice) moves
// the later stack, in sorted order, to the next free id.
func assignStackIDs(stacks []Stack) {
	used := make(map[int64]bool, len(stacks))
	for i := range stacks {
		h := fnv.New64a()
		h.Write([]byte(stacks[i].Frames))
		id := int64(h.Sum64() >> 1)
		for used[id] {
			id = (id + 1) & math.MaxInt64
		}
		used[id] = true
		stacks[i].StackID = id
	}
}

// valueIndex returns the indices of the bytes and objects values, -1 when
// the profile has none.
func valueIndex(p *profile.Profile) (bytesIdx, objectsIdx int) {
	bytesIdx, objectsIdx = -1, -1
	for i, st := range p.SampleType {
		if st.Unit == "bytes" {
			bytesIdx = i
		}
		if st.Unit == "count" || st.Unit == "objects" {
			objectsIdx = i
		}
	}
	// Heap profiles (jemalloc's as Parse builds them, Go's) name their
	// in-use values; otherwise the last byte- and count-valued types.
	for i, st := range p.SampleType {
		switch st.Type {
		case "inuse_space":
			bytesIdx = i
		case "inuse_objects":
			objectsIdx = i
		}
	}
	return bytesIdx, objectsIdx
}

// sampleValues returns a sample's bytes and objects; for jemalloc samples
// the unrounded estimate from the raw counts (heapprof.Parse rounds the
// Value it stores).
func sampleValues(u heapprof.Unrounded, s *profile.Sample, bi, oi int) (b, o float64) {
	if objects, bytes, ok := u.Values(s); ok {
		return bytes, objects
	}
	if bi >= 0 && bi < len(s.Value) {
		b = float64(s.Value[bi])
	}
	if oi >= 0 && oi < len(s.Value) {
		o = float64(s.Value[oi])
	}
	return b, o
}

func funcName(f *profile.Function) string {
	switch {
	case f == nil:
		return "??"
	case f.Name != "":
		return f.Name
	case f.SystemName != "":
		return f.SystemName
	}
	return "??"
}

func round(f float64) int64 {
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(math.Round(f))
}

// rootFirst joins innermost-first frames root first with ";".
func rootFirst(frames []string) string {
	var b strings.Builder
	for i := len(frames) - 1; i >= 0; i-- {
		b.WriteString(frames[i])
		if i > 0 {
			b.WriteByte(';')
		}
	}
	return b.String()
}
