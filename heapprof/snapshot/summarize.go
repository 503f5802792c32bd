package snapshot

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
)

// Summarize computes a symbolized profile's totals and its Function and
// Stack rows (SnapshotID left empty; Save fills it in). p must not be nil.
// It is SummarizeContext without a deadline, which cannot fail then.
func Summarize(p *profile.Profile) (Totals, []Function, []Stack) {
	tot, funcs, stacks, err := SummarizeContext(context.Background(), p)
	if err != nil {
		// Only a nil profile or an ended context fail.
		panic(err)
	}
	return tot, funcs, stacks
}

// SummarizeContext computes a symbolized profile's totals and its Function
// and Stack rows from heapprof.Summarize, which aggregates the profile as
// the DOT graph and jeprof --text do; see it for the rules.
//
// In short: values are the in-use bytes and objects, for jemalloc profiles
// jeprof's unrounded estimates, summed and rounded once here, so the
// numbers agree with `jeprof --text --show_bytes`. Each stack is cut after
// its last allocator entry point (malloc, operator new, ...), so flat is
// charged to the function that called the allocator: the innermost
// remaining frame (an inlined function where there is one); cum to every
// function on the stack, once per stack. Functions are told apart by full
// name; stacks by their frames' short names, root first (stacks equal
// under short names are one Stack row). Short names are the DOT graph's
// node names without "(inline)": for a Go program's profile `go tool
// pprof`'s, which keep receivers, or the full name where two functions
// would share one (heapprof.GoNodeNames), otherwise jeprof's
// ShortFunctionName.
func SummarizeContext(ctx context.Context, p *profile.Profile) (Totals, []Function, []Stack, error) {
	sum, err := heapprof.Summarize(ctx, p)
	if err != nil {
		return Totals{}, nil, nil, fmt.Errorf("snapshot rows: %w", err)
	}
	tot := Totals{Bytes: round(sum.Bytes), Objects: round(sum.Objects)}
	funcs := make([]Function, 0, len(sum.Functions))
	for _, a := range sum.Functions {
		f := Function{
			Name: a.Name, ShortName: a.ShortName,
			FlatBytes: round(a.FlatBytes), FlatObjects: round(a.FlatObjects),
			CumBytes: round(a.CumBytes), CumObjects: round(a.CumObjects),
		}
		if sum.Bytes != 0 {
			f.FlatPercent = 100 * a.FlatBytes / sum.Bytes
			f.CumPercent = 100 * a.CumBytes / sum.Bytes
		}
		funcs = append(funcs, f)
	}
	sortFunctions(funcs)
	// A name with ';' can make two stacks one folded line: they are one
	// row then (the first one's depth), summed before rounding.
	var at map[string]int
	for _, n := range sum.Names {
		if strings.IndexByte(n, ';') >= 0 {
			at = map[string]int{}
			break
		}
	}
	stacks := make([]Stack, 0, len(sum.Stacks))
	sums := make([][2]float64, 0, len(sum.Stacks))
	var b strings.Builder
	for _, st := range sum.Stacks {
		n := max(0, len(st.Frames)-1)
		for _, f := range st.Frames {
			n += len(sum.Names[f])
		}
		b.Reset()
		b.Grow(n)
		for i, f := range st.Frames {
			if i > 0 {
				b.WriteByte(';')
			}
			b.WriteString(sum.Names[f])
		}
		frames := b.String()
		if at != nil {
			if i, ok := at[frames]; ok {
				sums[i][0] += st.Bytes
				sums[i][1] += st.Objects
				continue
			}
			at[frames] = len(stacks)
		}
		stacks = append(stacks, Stack{Frames: frames, Depth: len(st.Frames)})
		sums = append(sums, [2]float64{st.Bytes, st.Objects})
	}
	for i := range stacks {
		stacks[i].Bytes, stacks[i].Objects = round(sums[i][0]), round(sums[i][1])
	}
	sortStacks(stacks)
	assignStackIDs(stacks)
	return tot, funcs, stacks, nil
}

// assignStackIDs gives each stack a non-negative 63-bit FNV-1a hash of its
// frames; a collision within the snapshot (never seen in practice) moves
// the later stack, in sorted order, to the next free id.
func assignStackIDs(stacks []Stack) {
	used := make(map[int64]bool, len(stacks))
	for i := range stacks {
		id := int64(fnv64a(stacks[i].Frames) >> 1)
		for used[id] {
			id = (id + 1) & math.MaxInt64
		}
		used[id] = true
		stacks[i].StackID = id
	}
}

// fnv64a is hash/fnv's New64a sum of s, without copying s to a []byte.
func fnv64a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
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
