package heapprof

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/google/pprof/profile"
)

// Dump is a heap profile read for the renderers only (heapproxy dot and
// the other jeprof-like commands). A jemalloc heap_v2 dump's stacks are
// collected into the renderers' model as the dump is read (the model's
// distinct stacks of location numbers: what buildModel's collect makes of
// Parse's samples, in the same order, with the same sums), and no
// profile.Sample is made: for bench/heapprof's o2 dump that is 41,601
// samples and 883,208 location pointers (14 MB the collector marks on
// every cycle) replaced by 3.5 MB of int32s it does not scan, and the
// rendering skips collect. Any other format is held as Parse returns it.
// Render a Dump after symbolizing Profile().
type Dump struct {
	p *profile.Profile
	// heapV2: the dump is a heap_v2 dump, whose distinct stacks are in
	// stacks; otherwise p has its samples.
	heapV2 bool
	stacks dumpStacks
	// addrs and keys are a heap_v2 dump's location addresses, as read,
	// and the model's keys of them (locationKey), made once the dump is
	// read: while heapproxy dot's symbolizer still works, not after.
	addrs []uint64
	keys  []string
}

// dumpStacks are a heap_v2 dump's distinct stacks, their locations as
// indexes into its Profile's Location. The collector does not scan them:
// they hold no pointers but the chunks.
type dumpStacks struct {
	// chunks hold the stacks' location indexes, stack after stack; a
	// stack's are in one chunk, at spans[i].
	chunks [][]int32
	spans  chunkList[dumpSpan]
	// values holds each stack's values, one per sample type of the
	// profile, summed in the order its samples came.
	values chunkList[[dumpValues]float64]
}

// chunkList is an append-only list kept in chunks, so that it is not
// copied as it grows and holds at most a chunk more than it needs.
type chunkList[T any] struct {
	chunks [][]T
	n      int
}

// chunkBits: 4096 elements a chunk.
const chunkBits = 12

func (l *chunkList[T]) len() int { return l.n }

func (l *chunkList[T]) at(i int) *T { return &l.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

func (l *chunkList[T]) push(v T) {
	if l.n&(1<<chunkBits-1) == 0 {
		l.chunks = append(l.chunks, make([]T, 1<<chunkBits))
	}
	*l.at(l.n) = v
	l.n++
}

// dumpSpan is where a stack's location indexes are in the chunks.
type dumpSpan struct{ chunk, off, n int32 }

// dumpChunk is how many location indexes a chunk holds (256 KB).
const dumpChunk = 64 << 10

func (s *dumpStacks) locs(i int) []int32 {
	sp := s.spans.at(i)
	return s.chunks[sp.chunk][sp.off : sp.off+sp.n : sp.off+sp.n]
}

// add appends a stack not seen before.
func (s *dumpStacks) add(ids []int32, values [dumpValues]float64) {
	last := len(s.chunks) - 1
	if last < 0 || len(s.chunks[last])+len(ids) > cap(s.chunks[last]) {
		s.chunks = append(s.chunks, make([]int32, 0, max(dumpChunk, len(ids))))
		last++
	}
	chunk := s.chunks[last]
	s.spans.push(dumpSpan{int32(last), int32(len(chunk)), int32(len(ids))})
	s.chunks[last] = append(chunk, ids...)
	s.values.push(values)
}

// dumpValues is how many values a Dump keeps per stack: those of Parse's
// heap_v2 sample types, as collect's sampler reads them from a sample
// (AdjustSamples' unrounded estimates, then the raw counts).
const dumpValues = 4

// ParseDump reads a profile as ParseReaderLimit does (the same formats,
// limit, context and errors) for rendering with the Dump's methods.
func ParseDump(ctx context.Context, r io.Reader, limit int64) (*Dump, error) {
	var c dumpCollector
	p, err := parseReader(ctx, r, limit, &c)
	if err != nil {
		return nil, err
	}
	d := &Dump{p: p, heapV2: c.started, stacks: c.stacks}
	if d.heapV2 {
		d.addrs, d.keys = make([]uint64, len(p.Location)), make([]string, len(p.Location))
		for i, loc := range p.Location {
			if i%ctxCheckLines == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("heapprof: location %d: %w", i, err)
				}
			}
			d.addrs[i], d.keys[i] = loc.Address, locationKey(loc)
		}
	}
	return d, nil
}

// Profile is the profile to symbolize before rendering: for a heap_v2
// dump its locations and mappings, as Parse makes them, and no samples.
func (d *Dump) Profile() *profile.Profile { return d.p }

// WriteDOT is WriteDOTContext of the dump.
func (d *Dump) WriteDOT(ctx context.Context, w io.Writer, opt Options) error {
	m, err := d.model(ctx, opt)
	if err != nil {
		return err
	}
	return m.writeDOT(ctx, w, opt)
}

// WriteText is WriteTextContext of the dump.
func (d *Dump) WriteText(ctx context.Context, w io.Writer, opt Options) error {
	m, err := d.model(ctx, opt)
	if err != nil {
		return err
	}
	return m.writeText(ctx, w)
}

// WriteFolded is WriteFoldedContext of the dump.
func (d *Dump) WriteFolded(ctx context.Context, w io.Writer, opt Options) error {
	m, err := d.model(ctx, opt)
	if err != nil {
		return err
	}
	return m.writeFolded(ctx, w)
}

// WriteFlameGraph is WriteFlameGraphContext of the dump.
func (d *Dump) WriteFlameGraph(ctx context.Context, w io.Writer, opt Options) error {
	m, err := d.model(ctx, opt)
	if err != nil {
		return err
	}
	return m.writeFlameGraph(ctx, w, opt)
}

// model is buildModel of the dump: collect's work was done while it was
// read.
func (d *Dump) model(ctx context.Context, opt Options) (*model, error) {
	if !d.heapV2 {
		return buildModel(ctx, d.p, opt)
	}
	p := d.p
	idx, kind, err := sampleIndex(p, opt.SampleType)
	if err != nil {
		return nil, err
	}
	if idx >= dumpValues {
		return nil, fmt.Errorf("heapprof: dump has no values of sample type %q", p.SampleType[idx].Type)
	}
	m := newModel(p, opt.Names, opt.Base)
	m.kind = kind
	if err := m.dumpLocations(ctx, p, d.addrs, d.keys); err != nil {
		return nil, err
	}
	// The model cuts its stacks (cutStacks) by reslicing them: the dump's
	// stay as read, for another rendering.
	m.stacks = make([]stack, d.stacks.spans.len())
	for i := range m.stacks {
		m.stacks[i] = stack{locs: d.stacks.locs(i), v: d.stacks.values.at(i)[idx]}
	}
	var ix stackIndex
	if opt.Base != nil {
		// The base's samples are added to the dump's stacks they match.
		ix = stackIndex{heads: make(map[uint64]int32, len(m.stacks))}
		ix.next = make([]int32, 0, len(m.stacks))
		for _, st := range m.stacks {
			h := hashIDs(st.locs)
			head, ok := ix.heads[h]
			if !ok {
				head = -1
			}
			ix.add(h, head)
		}
	}
	return m.finish(ctx, p.SampleType[idx].Type, opt, &ix)
}

// parallelFunctions is how many functions a profile has at least for
// nameFunctions to name them on two goroutines.
const parallelFunctions = 1024

// dumpLocations adds a dump's locations to the model, numbered as
// collect would: in the order Parse made them, which is the order of
// their first use. ParseDump made one location per address, numbered in
// order, and their keys (addrs, keys): while the locations keep their
// numbers and addresses, those are distinct (a location's key is its
// address, or its ID when the address is 0) and the keys are ParseDump's;
// else they are checked and made again here. The keys are indexed only
// for a base (finish).
//
// Naming the functions (funcname.Short of each) is the longest part of
// the model's work after symbolization, and the other core is idle by
// then: the symbolizer's functions are named first, half of them on
// another goroutine, then the locations' frames take their names by
// function.
func (m *model) dumpLocations(ctx context.Context, p *profile.Profile, addrs []uint64, keys []string) error {
	locs := p.Location
	n := len(locs)
	asRead := len(addrs) == n && len(keys) == n
	for i, loc := range locs {
		if i%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: location %d: %w", i, err)
			}
		}
		if loc.ID != uint64(i)+1 {
			return fmt.Errorf("heapprof: dump location %d has ID %d", i, loc.ID)
		}
		asRead = asRead && loc.Address == addrs[i]
	}
	if asRead {
		m.locKeys = keys[:n:n]
	} else {
		seen := make(map[uint64]struct{}, n)
		m.locKeys = make([]string, n)
		for i, loc := range locs {
			if i%ctxCheckLines == 0 {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("heapprof: location %d: %w", i, err)
				}
			}
			if loc.Address != 0 {
				if _, dup := seen[loc.Address]; dup {
					return errors.New("heapprof: dump locations are not distinct")
				}
				seen[loc.Address] = struct{}{}
			}
			m.locKeys[i] = locationKey(loc)
		}
	}
	if err := m.nameFunctions(ctx, p.Function); err != nil {
		return err
	}
	m.frames = make([][]frame, n)
	for i, loc := range locs {
		if i%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: location %d: %w", i, err)
			}
		}
		m.frames[i] = m.jeprofFrames(loc)
	}
	return nil
}

// nameFunctions fills m.fns with funcs, which jeprofFrames then finds by
// ID (byID), when their IDs are 1..len(funcs) in order, as the
// symbolizers number them.
func (m *model) nameFunctions(ctx context.Context, funcs []*profile.Function) error {
	if len(m.fns) > 0 {
		return nil
	}
	for i, f := range funcs {
		if f == nil || f.ID != uint64(i)+1 {
			return nil
		}
	}
	fns := make([]funcNames, len(funcs))
	name := func(from, to int) error {
		for i := from; i < to; i++ {
			if (i-from)%ctxCheckLines == 0 {
				if err := ctx.Err(); err != nil {
					return fmt.Errorf("heapprof: function %d: %w", i, err)
				}
			}
			full := m.fullName(funcs[i])
			fns[i] = funcNames{full: full, short: m.peekShortName(full), node: [2]int32{-1, -1}}
		}
		return nil
	}
	half := len(funcs)
	if half >= parallelFunctions {
		half /= 2
	}
	var wg sync.WaitGroup
	var otherErr error
	if half < len(funcs) {
		wg.Go(func() { otherErr = name(half, len(funcs)) })
	}
	err := name(0, half)
	wg.Wait()
	if err == nil {
		err = otherErr
	}
	if err != nil {
		return err
	}
	m.fns, m.byID = fns, funcs
	return nil
}

// hashIDs hashes a stack's location numbers as collect does.
func hashIDs(ids []int32) uint64 {
	h := hashStart
	for _, id := range ids {
		h = hashID(h, id)
	}
	return h
}

// dumpCollector collects a heap_v2 dump's stacks while it is parsed
// (ParseDump): collect's work, on the addresses as they are read. What it
// holds has no pointers but the locations, so the collector does not scan
// it, and grows in chunks, so it is not copied as it grows.
type dumpCollector struct {
	started bool
	ids     map[uint64]int32 // location index by address
	// cur and prev are the current and the previous stack's location
	// indexes; startStack says how many of them the two share.
	cur, prev []int32
	stacks    dumpStacks
	// table finds a stack by its location indexes: open addressing,
	// linear probing, of stack numbers + 1 (0: free), hashes[i] being
	// stack i's hash.
	table  []int32
	hashes []uint64
}

func (c *dumpCollector) start() {
	c.started = true
	c.ids = make(map[uint64]int32)
}

// add collects the stack b has just read with its values.
func (c *dumpCollector) add(b *heapV2Builder, objects, bytes float64, n1, s1 int64) {
	head, tail := b.shareHead, b.shareTail
	ids := append(c.cur[:0], c.prev[:head]...)
	for _, a := range b.stack[head : len(b.stack)-tail] {
		id, ok := c.ids[a]
		if !ok {
			id = int32(len(b.p.Location))
			c.ids[a] = id
			b.p.Location = append(b.p.Location, &profile.Location{ID: uint64(id) + 1, Address: a})
		}
		ids = append(ids, id)
	}
	ids = append(ids, c.prev[len(c.prev)-tail:]...)
	c.cur, c.prev = c.prev, ids

	h := hashIDs(ids)
	if 2*(len(c.hashes)+1) > len(c.table) {
		c.grow()
	}
	mask := uint64(len(c.table) - 1)
	i := h & mask
	for ; c.table[i] != 0; i = (i + 1) & mask {
		if st := c.table[i] - 1; c.hashes[st] == h && slices.Equal(c.stacks.locs(int(st)), ids) {
			v := c.stacks.values.at(int(st))
			v[0] += objects
			v[1] += bytes
			v[2] += float64(n1)
			v[3] += float64(s1)
			return
		}
	}
	c.table[i] = int32(len(c.hashes)) + 1
	c.hashes = append(c.hashes, h)
	c.stacks.add(ids, [dumpValues]float64{objects, bytes, float64(n1), float64(s1)})
}

// grow doubles the table.
func (c *dumpCollector) grow() {
	c.table = make([]int32, max(4096, 2*len(c.table)))
	mask := uint64(len(c.table) - 1)
	for st, h := range c.hashes {
		i := h & mask
		for c.table[i] != 0 {
			i = (i + 1) & mask
		}
		c.table[i] = int32(st) + 1
	}
}
