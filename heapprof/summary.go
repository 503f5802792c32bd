package heapprof

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/google/pprof/profile"
)

// Summary is a profile's in-use bytes and objects per function and per
// stack, aggregated by the model the renderers draw (see Summarize).
// Values are unrounded sums: round them once, at the end.
type Summary struct {
	// Bytes and Objects are the profile's totals.
	Bytes, Objects float64
	// Functions has one entry per function on some stack, in the order
	// they were first seen.
	Functions []FunctionSummary
	// Stacks has one entry per distinct sequence of short names, in the
	// order they were first seen.
	Stacks []StackSummary
	// Names holds each short name once; stacks' frames index it.
	Names []string
}

// FunctionSummary is one function's totals. Flat is what it allocated
// itself (it was the innermost frame of the stack), cum what it and its
// callees allocated (it was anywhere on the stack, counted once per stack
// even when it recurses).
type FunctionSummary struct {
	// Name is the function's full name, which tells functions apart:
	// Function.Name, else SystemName, "??" without either, and the address
	// as "0x%x" for an unsymbolized location.
	Name string
	// ShortName is the name the DOT graph knows the function by, without
	// its "(inline)" mark or nm's "@addr": GoNodeNames' for a Go program's
	// profile (receivers kept, distinct functions never share one), else
	// funcname.Short.
	ShortName                                    string
	FlatBytes, FlatObjects, CumBytes, CumObjects float64
}

// StackSummary is one stack's totals.
type StackSummary struct {
	// Frames are the short names of the stack's frames, root first, inlined
	// frames as frames of their own, as indexes into Summary.Names (a deep
	// profile has millions of frames: 4 bytes each rather than a string's
	// 16).
	Frames         []int32
	Bytes, Objects float64
}

// Summarize aggregates p as the renderers do (WriteDOT, WriteText): the
// same locations, stacks, allocator cut (jeprof's
// RemoveUninterestingFrames: a stack starts at the function that called
// malloc, operator new, ...) and names, with two values per stack instead
// of one.
//
// The values are the in-use bytes and objects (sample types inuse_space
// and inuse_objects, else the profile's last byte- and count-valued
// types); for jemalloc samples, jeprof's unrounded estimates recomputed
// from the raw counts Parse keeps. Samples whose values are both zero (Go
// keeps stacks whose allocations were all freed) are left out, as jeprof's
// and pprof's tables leave them out. Functions are told apart by full
// name, stacks by their short names. Names follow NamesAuto. As in the
// renderers, a location is its address: Locations of one address are one,
// named by the first of them that is symbolized. It stops with ctx's
// error (wrapped) when ctx ends.
func Summarize(ctx context.Context, p *profile.Profile) (*Summary, error) {
	if p == nil {
		return nil, errors.New("heapprof: summarize: nil profile")
	}
	m := newModel(p, NamesAuto, nil)
	m.sum = &summaryModel{funcIdx: map[string]int32{}, shortIdx: map[string]int32{}}
	// Locations' functions, all in one slab when p lists its locations.
	frames := 0
	for _, loc := range p.Location {
		frames += max(1, len(loc.Line))
	}
	m.sum.slab = make([]int32, frames)
	m.sum.locFuncs = make([][]int32, 0, len(p.Location))
	sm := sampler{u: NewUnrounded(p), both: true}
	sm.bytes, sm.objects = summaryIndexes(p)
	ix := stackIndex{heads: make(map[uint64]int32, len(p.Sample))}
	if err := m.collect(ctx, p, sm, 1, &ix); err != nil {
		return nil, err
	}
	ix = stackIndex{}
	m.cutStacks()
	return m.sum.aggregate(ctx, m)
}

// summaryIndexes returns the indexes of the bytes and the objects values,
// -1 when the profile has none.
func summaryIndexes(p *profile.Profile) (bytesIdx, objectsIdx int) {
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

// summaryModel is what a summary adds to the model: the functions of each
// location and every stack's objects.
type summaryModel struct {
	objects []float64 // by stack, beside stack.v (bytes)

	locFuncs [][]int32 // by location: function ids, innermost first
	slab     []int32   // backs locFuncs

	funcIdx map[string]int32
	names   []string // full name by function id
	shortOf []int32  // short name id by function id

	shortIdx map[string]int32
	shorts   []string // by short name id
}

// setLocation records the functions of location id, innermost first,
// while the model's short names are at hand.
func (s *summaryModel) setLocation(m *model, id int32, loc *profile.Location) {
	for int(id) >= len(s.locFuncs) {
		s.locFuncs = append(s.locFuncs, nil)
	}
	n := max(1, len(loc.Line))
	if len(s.slab) < n {
		s.slab = make([]int32, max(4096, n))
	}
	ids := s.slab[:0:n]
	s.slab = s.slab[n:]
	if len(loc.Line) == 0 {
		ids = append(ids, s.function(m, "0x"+strconv.FormatUint(loc.Address, 16)))
	}
	for _, l := range loc.Line {
		ids = append(ids, s.function(m, summaryName(l.Function)))
	}
	s.locFuncs[id] = ids
}

// function interns a function by full name.
func (s *summaryModel) function(m *model, full string) int32 {
	if id, ok := s.funcIdx[full]; ok {
		return id
	}
	short := m.shortName(full)
	sid, ok := s.shortIdx[short]
	if !ok {
		sid = int32(len(s.shorts))
		s.shortIdx[short] = sid
		s.shorts = append(s.shorts, short)
	}
	id := int32(len(s.names))
	s.funcIdx[full] = id
	s.names = append(s.names, full)
	s.shortOf = append(s.shortOf, sid)
	return id
}

// summaryName is a function's full name in a summary: Name, else
// SystemName (pprof's choice, which Go and jeprof naming agree on up to
// nm's address tag), "??" for neither.
func summaryName(f *profile.Function) string {
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

// aggregate sums the model's cut stacks per function and per stack of
// short names.
func (s *summaryModel) aggregate(ctx context.Context, m *model) (*Summary, error) {
	nf := len(s.names)
	type totals struct{ flatB, flatO, cumB, cumO float64 }
	funcs := make([]totals, nf)
	seen := make([]uint32, nf) // stamp per function: stack number + 1
	out := &Summary{}

	// Stacks of short names: ids back to back in seqs, stack i's ending at
	// seqEnd[i]. Sized for every stack being distinct, the usual case.
	frames := 0
	for _, st := range m.stacks {
		for _, l := range st.locs {
			frames += len(s.locFuncs[l])
		}
	}
	seqs := make([]int32, 0, frames)
	seqEnd := make([]int32, 0, len(m.stacks))
	out.Stacks = make([]StackSummary, 0, len(m.stacks))
	var buf []int32
	ix := stackIndex{heads: make(map[uint64]int32, len(m.stacks))}
	seq := func(i int32) []int32 {
		start := int32(0)
		if i > 0 {
			start = seqEnd[i-1]
		}
		return seqs[start:seqEnd[i]]
	}
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("heapprof: summary stack %d: %w", si, err)
			}
		}
		b, o := st.v, s.objects[si]
		out.Bytes += b
		out.Objects += o
		stamp := uint32(si + 1)
		buf = buf[:0]
		h := hashStart
		for _, l := range st.locs {
			for _, f := range s.locFuncs[l] {
				t := &funcs[f]
				if len(buf) == 0 {
					t.flatB += b
					t.flatO += o
				}
				if seen[f] != stamp {
					seen[f] = stamp
					t.cumB += b
					t.cumO += o
				}
				buf = append(buf, s.shortOf[f])
				h = hashID(h, s.shortOf[f])
			}
		}
		found, head := ix.find(h, func(i int32) bool { return slices.Equal(seq(i), buf) })
		if found >= 0 {
			out.Stacks[found].Bytes += b
			out.Stacks[found].Objects += o
			continue
		}
		ix.add(h, head)
		seqs = append(seqs, buf...)
		seqEnd = append(seqEnd, int32(len(seqs)))
		out.Stacks = append(out.Stacks, StackSummary{Bytes: b, Objects: o})
	}

	// Frames root first, in place.
	for i := range out.Stacks {
		q := seq(int32(i))
		slices.Reverse(q)
		out.Stacks[i].Frames = q[:len(q):len(q)]
	}
	out.Names = s.shorts
	out.Functions = make([]FunctionSummary, 0, nf)
	for f, t := range funcs {
		if seen[f] == 0 {
			continue // only on cut-away frames
		}
		out.Functions = append(out.Functions, FunctionSummary{Name: s.names[f], ShortName: s.shorts[s.shortOf[f]],
			FlatBytes: t.flatB, FlatObjects: t.flatO, CumBytes: t.cumB, CumObjects: t.cumO})
	}
	return out, nil
}
