package heapprof

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/funcname"
)

// Options controls rendering. The zero value is not useful; start from
// DefaultOptions, which holds jeprof's defaults.
type Options struct {
	// Program is the binary path as jeprof prints it in the title and
	// legend: exactly the argument the user gave jeprof, not made absolute.
	Program string
	// NodeCount, NodeFraction, EdgeFraction and MaxDegree are jeprof's
	// --nodecount, --nodefraction, --edgefraction and --maxdegree.
	NodeCount    int
	NodeFraction float64
	EdgeFraction float64
	MaxDegree    int
	// Base, when set, is subtracted stack by stack (jeprof --base). It must
	// be symbolized like the profile itself.
	Base *profile.Profile
	// SampleType selects the value to render by its type name
	// ("inuse_space", "inuse_objects", ...). Empty means the profile's
	// DefaultSampleType, or its last sample type (jeprof's inuse_space for
	// heap_v2).
	SampleType string
	// Names chooses how functions are named in nodes. The zero value,
	// NamesAuto, names a Go program's profile (IsGoProfile) as `go tool
	// pprof` does and any other as jeprof does.
	Names Names
}

// Names is a way of naming a profile's functions in its graph.
type Names int

const (
	// NamesAuto is NamesGo for a profile IsGoProfile reports as Go's, else
	// NamesJeprof.
	NamesAuto Names = iota
	// NamesJeprof is jeprof's naming, for C, C++ and Rust programs:
	// funcname.Short, "name@addr" for nm symbols sharing a short name, and
	// inlined frames as nodes of their own named "name (inline)".
	NamesJeprof
	// NamesGo is `go tool pprof`'s naming: funcname.Pprof of the function's
	// name, which keeps receivers ("tsdb.(*Head).appender"), or the full
	// name when functions of the profile share that short name, so
	// distinct functions never share a node; an inlined frame is its
	// function's node, and an edge to a function inlined at every call
	// along it is dashed.
	NamesGo
)

// IsGoProfile reports whether p comes from a Go program: more than half of
// its functions that have a source file name have one ending in ".go".
// runtime/pprof names every function's file (profiles of Go services,
// heapproxy's own, and their snapshots), while C, C++ and Rust functions
// symbolized from DWARF come from .c, .cc, .h or .rs files, and jemalloc
// dumps symbolized without line tables have no file names at all.
func IsGoProfile(p *profile.Profile) bool {
	if p == nil {
		return false
	}
	goFiles, files := 0, 0
	for _, f := range p.Function {
		if f == nil || f.Filename == "" {
			continue
		}
		files++
		if strings.HasSuffix(f.Filename, ".go") {
			goFiles++
		}
	}
	return goFiles*2 > files
}

// goNames tells whether opt names p's functions the Go way.
func goNames(p *profile.Profile, names Names) bool {
	return names == NamesGo || names == NamesAuto && IsGoProfile(p)
}

// goFuncName is the name pprof knows a function by: Name, else
// SystemName.
func goFuncName(f *profile.Function) string {
	if f.Name != "" {
		return f.Name
	}
	return f.SystemName
}

// GoNodeNames maps the name of each function of the profiles (Name, else
// SystemName) to its node name under NamesGo: funcname.Pprof of it, or
// the name itself where several functions would share a node name. Node
// names are therefore distinct for distinct functions.
func GoNodeNames(ps ...*profile.Profile) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		if p == nil {
			continue
		}
		for _, f := range p.Function {
			if f == nil {
				continue
			}
			if full := goFuncName(f); full != "" {
				out[full] = funcname.Pprof(full)
			}
		}
	}
	// A node name shared by several functions gives way to their full
	// names, which are distinct; repeat in case a full name equals
	// another function's short one.
	for {
		byShort := make(map[string][]string, len(out))
		for full, short := range out {
			byShort[short] = append(byShort[short], full)
		}
		changed := false
		for short, fulls := range byShort {
			if len(fulls) < 2 {
				continue
			}
			for _, full := range fulls {
				if full != short {
					out[full] = full
					changed = true
				}
			}
		}
		if !changed {
			return out
		}
	}
}

// DefaultOptions returns jeprof's defaults: --nodecount=80
// --nodefraction=0.005 --edgefraction=0.001 --maxdegree=8.
func DefaultOptions() Options {
	return Options{NodeCount: 80, NodeFraction: 0.005, EdgeFraction: 0.001, MaxDegree: 8}
}

// ErrNoNodes is returned by WriteDOT when every node falls below the node
// limit; jeprof prints "No nodes to print" and exits 1 in that case. Nothing
// has been written when it is returned.
var ErrNoNodes = errors.New("heapprof: no nodes to print")

// frame is one entry of jeprof's symbol list for a PC: the short name used
// for nodes and the full name used to disambiguate equal short names.
type frame struct {
	short, full string
	file        string // addr2line's file name, "" if unknown
	line        int64
	// fn is the frame's function in model.fns plus one; 0: none (no
	// function, or an unsymbolized location's address).
	fn int32
}

// fileLine is the frame's "file:line" as addr2line prints it ("??:0" when
// unknown), which jeprof --collapsed shows for frames without a name.
func (f frame) fileLine() string {
	if f.file == "" {
		return "??:0"
	}
	return f.file + ":" + strconv.FormatInt(f.line, 10)
}

// valueKind says how a sample value is printed.
type valueKind int

const (
	kindBytes   valueKind = iota // MB with one decimal
	kindObjects                  // integer count
)

// stack is one entry of jeprof's profile hash: locations leaf first (as
// indices into model.locKeys) and the stack's value.
type stack struct {
	locs []int32
	v    float64
}

// model is everything jeprof's FilterAndPrint computes before printing.
// Locations and node names are interned to small integers: the profiles
// this renders have tens of thousands of stacks.
type model struct {
	kind  valueKind
	total float64 // TotalProfile of the (base-subtracted) raw profile

	locKeys []string // jeprof's key of each location: 16 hex digits
	locIdx  map[string]int32
	frames  [][]frame // jeprof's symbol list per location, nil if unknown
	skip    []bool    // location is an allocator entry point

	stacks   []stack           // after RemoveUninterestingFrames
	shortMap map[string]string // FillFullnameToShortnameMap

	names     []string // node names by id
	nameIdx   map[string]int32
	locNames  [][]int32 // node names of each location, callee first
	locDone   []bool
	perCaller []bool            // location has Callback::Run frames
	runIDs    map[string]int    // ShortIdFor
	shorts    map[string]string // funcname.Short cache, or GoNodeNames
	goNames   bool              // NamesGo

	// fns is what the model names each profile.Function it has met
	// (fnIdx: its index in fns), so that the names of a function that
	// many locations share are made, hashed and interned once, not per
	// frame (string maps on long C++ names were most of the cost).
	fns   []funcNames
	fnIdx map[*profile.Function]int32
	// byID: the functions nameFunctions put first in fns, in order, by
	// ID - 1.
	byID []*profile.Function

	flat, cum  []float64 // by name id
	inCum      []bool    // name is a key of jeprof's cumulative hash
	localTotal float64

	// sum is set by Summarize only: the functions of each location and
	// every stack's objects (v is then its bytes).
	sum *summaryModel
}

func buildModel(ctx context.Context, p *profile.Profile, opt Options) (*model, error) {
	if p == nil {
		return nil, errors.New("heapprof: nil profile")
	}
	idx, kind, err := sampleIndex(p, opt.SampleType)
	if err != nil {
		return nil, err
	}
	m := newModel(p, opt.Names, opt.Base)
	m.kind = kind
	// collect names p's functions as it meets them.
	m.fnIdx = make(map[*profile.Function]int32, len(p.Function))
	if !m.goNames {
		m.shorts = make(map[string]string, len(p.Function))
	}
	ix := stackIndex{heads: make(map[uint64]int32, len(p.Sample))}
	if err := m.collect(ctx, p, newSampler(p, idx), 1, &ix); err != nil {
		return nil, err
	}
	return m.finish(ctx, p.SampleType[idx].Type, opt, &ix)
}

// finish builds the model of the stacks collected with ix: it subtracts
// opt.Base, then names and sums the nodes.
func (m *model) finish(ctx context.Context, sampleType string, opt Options, ix *stackIndex) (*model, error) {
	if opt.Base != nil {
		if len(m.locIdx) < len(m.locKeys) {
			// A Dump's locations were added without the index.
			m.locIdx = make(map[string]int32, len(m.locKeys))
			for id, k := range m.locKeys {
				m.locIdx[k] = int32(id)
			}
		}
		bidx, _, err := sampleIndex(opt.Base, sampleType)
		if err != nil {
			return nil, fmt.Errorf("base profile: %w", err)
		}
		if err := m.collect(ctx, opt.Base, newSampler(opt.Base, bidx), -1, ix); err != nil {
			return nil, fmt.Errorf("base profile: %w", err)
		}
	}
	*ix = stackIndex{}
	m.cutStacks()
	if !m.goNames {
		m.shortMap = fullnameToShortname(m.frames, len(m.fns))
	}
	m.locNames = make([][]int32, len(m.locKeys))
	m.locDone = make([]bool, len(m.locKeys))
	m.perCaller = make([]bool, len(m.locKeys))
	if len(m.nameIdx) == 0 {
		// Most names are a function's.
		m.nameIdx = make(map[string]int32, len(m.fns))
	}
	if err := m.reduce(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// funcNames is what the model names one profile.Function.
type funcNames struct {
	full, short string
	// node is the function's node name id (intern) as a frame's
	// containing function ([0]) and as an inlined frame ([1]); -1 until
	// nodeNames needs it.
	node [2]int32
}

// newModel returns an empty model naming p's functions (and base's, for
// --base) as names says.
func newModel(p *profile.Profile, names Names, base *profile.Profile) *model {
	m := &model{locIdx: map[string]int32{}, nameIdx: map[string]int32{}, runIDs: map[string]int{},
		shorts: map[string]string{}, fnIdx: map[*profile.Function]int32{}}
	if goNames(p, names) {
		m.goNames = true
		m.shorts = GoNodeNames(p, base)
	}
	return m
}

// cutStacks ends collecting: it sums the total and cuts every stack after
// its last allocator entry point (RemoveUninterestingFrames).
func (m *model) cutStacks() {
	// Only collect looks locations and short names up: let them go before
	// the names are built.
	m.locIdx, m.shorts, m.fnIdx, m.byID = nil, nil, nil, nil
	m.skip = make([]bool, len(m.locKeys))
	for i, fr := range m.frames {
		if len(fr) > 0 {
			f := fr[0].short
			// jeprof's skip regexp: TCMalloc|^tcmalloc::
			m.skip[i] = IsAllocatorFrame(f)
		}
	}
	for i := range m.stacks {
		st := &m.stacks[i]
		m.total += st.v
		st.locs = m.removeUninteresting(st.locs)
	}
}

// sampleIndex picks the value index to render and how to print it.
func sampleIndex(p *profile.Profile, name string) (int, valueKind, error) {
	if len(p.SampleType) == 0 {
		return 0, 0, errors.New("heapprof: profile has no sample types")
	}
	if name == "" {
		name = p.DefaultSampleType
	}
	idx := len(p.SampleType) - 1
	if name != "" {
		idx = -1
		for i, st := range p.SampleType {
			if st.Type == name {
				idx = i
			}
		}
		if idx < 0 {
			return 0, 0, fmt.Errorf("heapprof: profile has no sample type %q", name)
		}
	}
	kind := kindObjects
	if p.SampleType[idx].Unit == "bytes" {
		kind = kindBytes
	}
	return idx, kind, nil
}

// stackIndex finds the stack already collected with the same locations
// (or, in a summary, the same short names): a hash of the ids to the first
// stack with that hash, chained through next. It saves building a string
// key per sample.
type stackIndex struct {
	heads map[uint64]int32
	next  []int32 // by stack: the next stack with the same hash, or -1
}

// hashStart and hashID are FNV-1a over a sequence of ids.
const hashStart = uint64(14695981039346656037)

func hashID(h uint64, id int32) uint64 { return (h ^ uint64(uint32(id))) * 1099511628211 }

// find returns the stack hashed to h that same accepts, or -1, and the
// first stack hashed to h (-1 if none) for add.
func (ix *stackIndex) find(h uint64, same func(int32) bool) (found, head int32) {
	head, ok := ix.heads[h]
	if !ok {
		return -1, -1
	}
	for i := head; i >= 0; i = ix.next[i] {
		if same(i) {
			return i, head
		}
	}
	return -1, head
}

// add indexes the next stack, number len(ix.next), under h; head is what
// find returned for h.
func (ix *stackIndex) add(h uint64, head int32) {
	ix.heads[h] = int32(len(ix.next))
	ix.next = append(ix.next, head)
}

// sampler picks the values collect keeps of a sample: the one value a
// renderer draws (idx), or a summary's bytes and objects (both).
type sampler struct {
	u   Unrounded
	idx int
	typ string // p.SampleType[idx].Type
	// both: a summary's in-use bytes and objects, by summaryIndexes.
	both           bool
	bytes, objects int
}

func newSampler(p *profile.Profile, idx int) sampler {
	return sampler{u: NewUnrounded(p), idx: idx, typ: p.SampleType[idx].Type}
}

// values returns the sample's values and whether collect keeps it.
func (sm *sampler) values(s *profile.Sample) (v, v2 float64, keep bool) {
	if !sm.both {
		if len(s.Value) <= sm.idx {
			return 0, 0, false
		}
		return sampleValue(sm.u, s, sm.idx, sm.typ), 0, true
	}
	if objects, bytes, ok := sm.u.Values(s); ok {
		v, v2 = bytes, objects
	} else {
		if sm.bytes >= 0 && sm.bytes < len(s.Value) {
			v = float64(s.Value[sm.bytes])
		}
		if sm.objects >= 0 && sm.objects < len(s.Value) {
			v2 = float64(s.Value[sm.objects])
		}
	}
	// Go heap profiles keep stacks whose allocations were all freed; like
	// jeprof's and pprof's tables, a summary leaves them out.
	return v, v2, v != 0 || v2 != 0
}

// collect adds p's samples to m.stacks as jeprof's profile hash: one entry
// per distinct location sequence with the values summed, in the order
// stacks first appear (so sums are the same on every run). sign -1
// subtracts the samples (SubtractProfile for --base, without
// --drop_negative). It also records the symbols of the locations.
func (m *model) collect(ctx context.Context, p *profile.Profile, sm sampler, sign float64, ix *stackIndex) error {
	// Location IDs are small and dense in practice (Parse numbers them
	// 1..n): a slice indexed by ID, a map for the others.
	byID := make([]int32, len(p.Location)+1)
	for i := range byID {
		byID[i] = -1
	}
	other := map[*profile.Location]int32{}
	m.stacks = slices.Grow(m.stacks, len(p.Sample))
	if m.sum != nil {
		m.sum.objects = slices.Grow(m.sum.objects, len(p.Sample))
	}
	ix.next = slices.Grow(ix.next, len(p.Sample))
	var slab, buf []int32
	for si, s := range p.Sample {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: sample %d: %w", si, err)
			}
		}
		v, v2, keep := sm.values(s)
		if !keep {
			continue
		}
		v, v2 = sign*v, sign*v2
		buf = buf[:0]
		h := hashStart
		for _, loc := range s.Location {
			var id int32
			if loc.ID < uint64(len(byID)) && byID[loc.ID] >= 0 {
				id = byID[loc.ID]
			} else if known, ok := other[loc]; ok {
				id = known
			} else {
				id = m.location(loc)
				if loc.ID > 0 && loc.ID < uint64(len(byID)) && p.Location[loc.ID-1] == loc {
					byID[loc.ID] = id
				} else {
					other[loc] = id
				}
			}
			buf = append(buf, id)
			h = hashID(h, id)
		}
		found, head := ix.find(h, func(i int32) bool { return slices.Equal(m.stacks[i].locs, buf) })
		if found >= 0 {
			m.stacks[found].v += v
			if m.sum != nil {
				m.sum.objects[found] += v2
			}
			continue
		}
		if len(slab) < len(buf) {
			// Room for the remaining samples' stacks if they are as deep,
			// up to 4096 ids at a time.
			slab = make([]int32, max(len(buf), min(4096, (len(p.Sample)-si)*len(buf))))
		}
		locs := slab[:len(buf):len(buf)]
		slab = slab[len(buf):]
		copy(locs, buf)
		ix.add(h, head)
		m.stacks = append(m.stacks, stack{locs: locs, v: v})
		if m.sum != nil {
			m.sum.objects = append(m.sum.objects, v2)
		}
	}
	return nil
}

// location interns a location by jeprof's key, so the same PC in the
// profile and its base is one location.
func (m *model) location(loc *profile.Location) int32 {
	k := locationKey(loc)
	if id, ok := m.locIdx[k]; ok {
		if m.frames[id] == nil && len(loc.Line) > 0 {
			m.frames[id] = m.jeprofFrames(loc)
			if m.sum != nil {
				m.sum.setLocation(m, id, loc)
			}
		}
		return id
	}
	id := m.addLocation(loc, k)
	m.locIdx[k] = id
	return id
}

// addLocation adds a location not seen before, keyed k, without indexing
// it in locIdx.
func (m *model) addLocation(loc *profile.Location, k string) int32 {
	id := int32(len(m.locKeys))
	m.locKeys = append(m.locKeys, k)
	m.frames = append(m.frames, m.jeprofFrames(loc))
	if m.sum != nil {
		m.sum.setLocation(m, id, loc)
	}
	return id
}

// sampleValue returns the value jeprof computes for a sample: for heap_v2
// input the unrounded AdjustSamples estimate recomputed from the raw counts
// Parse kept, otherwise the value itself.
func sampleValue(u Unrounded, s *profile.Sample, idx int, typ string) float64 {
	if typ == "inuse_objects" || typ == "inuse_space" {
		if objects, bytes, ok := u.Values(s); ok {
			if typ == "inuse_objects" {
				return objects
			}
			return bytes
		}
	}
	return float64(s.Value[idx])
}

// locationKey is jeprof's key for a PC: 16 hex digits, no "0x". Locations
// without an address (some symbolized protobufs) are keyed by their ID so
// distinct frames stay distinct.
func locationKey(loc *profile.Location) string {
	if loc.Address == 0 && loc.ID != 0 {
		return "L" + strconv.FormatUint(loc.ID, 10)
	}
	b := [16]byte{'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'}
	for i, a := 15, loc.Address; a != 0; i, a = i-1, a>>4 {
		b[i] = "0123456789abcdef"[a&15]
	}
	return string(b[:])
}

// jeprofFrames turns a symbolized location into jeprof's symbol list
// (containing function first). The symbolizer already made jeprof's naming
// decisions (see symbolizer.go): SystemName, or Name when it is empty, is
// jeprof's full name. It returns nil for an unsymbolized location.
func (m *model) jeprofFrames(loc *profile.Location) []frame {
	if len(loc.Line) == 0 {
		return nil
	}
	out := make([]frame, 0, len(loc.Line))
	for j := len(loc.Line) - 1; j >= 0; j-- {
		f := loc.Line[j].Function
		if f == nil {
			full := m.fullName(f)
			out = append(out, frame{short: m.shortName(full), full: full, line: loc.Line[j].Line})
			continue
		}
		fn, ok := int32(f.ID-1), f.ID-1 < uint64(len(m.byID)) && m.byID[f.ID-1] == f
		if !ok {
			fn, ok = m.fnIdx[f]
		}
		if !ok {
			full := m.fullName(f)
			fn = int32(len(m.fns))
			m.fnIdx[f] = fn
			m.fns = append(m.fns, funcNames{full: full, short: m.shortName(full), node: [2]int32{-1, -1}})
		}
		names := &m.fns[fn]
		out = append(out, frame{short: names.short, full: names.full, file: f.Filename, line: loc.Line[j].Line, fn: fn + 1})
	}
	return out
}

// fullName is the name a function goes by in the model: Name under
// NamesGo, else jeprof's full name (SystemName, or Name when it is empty);
// "??" for none.
func (m *model) fullName(f *profile.Function) string {
	switch {
	case f == nil:
		return "??"
	case m.goNames && f.Name != "":
		return f.Name
	case f.SystemName != "":
		return f.SystemName
	case f.Name != "":
		return f.Name
	}
	return "??"
}

// isAllocator tells whether loc's containing function is an allocator
// entry point by the short name the model gives it: where the renderers,
// Summarize and WriteProto cut a heap stack.
func (m *model) isAllocator(loc *profile.Location) bool {
	if len(loc.Line) == 0 {
		return false
	}
	return IsAllocatorFrame(m.shortName(m.fullName(loc.Line[len(loc.Line)-1].Function)))
}

// peekShortName is shortName without caching what it computes, so that
// goroutines can call it at once.
func (m *model) peekShortName(full string) string {
	if short, ok := m.shorts[full]; ok {
		return short
	}
	if m.goNames {
		return funcname.Pprof(full)
	}
	return funcname.Short(full)
}

// shortName is a full name's short name: GoNodeNames' under NamesGo,
// funcname.Short's otherwise.
func (m *model) shortName(full string) string {
	short, ok := m.shorts[full]
	if !ok {
		// Names repeat across PCs. (Under NamesGo, every function's name
		// is there already but a missing one: "??".)
		short = funcname.Short(full)
		if m.goNames {
			short = funcname.Pprof(full)
		}
		m.shorts[full] = short
	}
	return short
}

// fullAddr0RE finds the address of an nm-tagged name ("name<addr>").
var fullAddr0RE = regexp.MustCompile(`<0*([^>]*)>$`)

// hasAddrTag is jeprof's m/<[0-9a-fA-F]+>$/ (an nm-tagged full name),
// without a regexp: C++ names often end in ">", so it is asked of many.
func hasAddrTag(s string) bool {
	i := len(s) - 1
	if i < 0 || s[i] != '>' {
		return false
	}
	digits := 0
	for i--; i >= 0 && isHexDigit(s[i]); i-- {
		digits++
	}
	return digits > 0 && i >= 0 && s[i] == '<'
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// allocatorNames are the allocator entry points jeprof's
// RemoveUninterestingFrames cuts heap stacks at.
var allocatorNames = []string{"calloc", "cfree", "malloc", "newImpl", "void* newImpl", "free",
	"memalign", "posix_memalign", "aligned_alloc", "pvalloc", "valloc", "realloc",
	"mallocx", "rallocx", "xallocx", "dallocx", "sdallocx", "sdallocx_noflags",
	"tc_calloc", "tc_cfree", "tc_malloc", "tc_free", "tc_memalign", "tc_posix_memalign",
	"tc_pvalloc", "tc_valloc", "tc_realloc", "tc_new", "tc_delete", "tc_newarray",
	"tc_deletearray", "tc_new_nothrow", "tc_newarray_nothrow", "do_malloc",
	"::do_malloc", "::do_malloc_or_cpp_alloc", "DoSampledAllocation",
	"simple_alloc::allocate", "__malloc_alloc_template::allocate", "__builtin_delete",
	"__builtin_new", "__builtin_vec_delete", "__builtin_vec_new", "operator new",
	"operator new[]", "malloc_zone_malloc", "malloc_zone_calloc", "malloc_zone_valloc",
	"malloc_zone_realloc", "malloc_zone_memalign", "malloc_zone_free",
	"__start_google_malloc", "__stop_google_malloc", "__start_malloc_hook",
	"__stop_malloc_hook"}

// AllocatorFrames returns the allocator entry points jeprof cuts heap
// stacks at, each also with the "_" prefix jeprof matches too (for pprof's
// drop_frames, say).
func AllocatorFrames() []string {
	out := make([]string, 0, 2*len(allocatorNames))
	for _, n := range allocatorNames {
		out = append(out, n, "_"+n)
	}
	return out
}

// IsAllocatorFrame tells whether a short function name (funcname.Short)
// is one of jeprof's allocator entry points or TCMalloc's internals; jeprof
// drops such frames and everything below them from heap stacks.
func IsAllocatorFrame(short string) bool {
	return skipFrames[short] || strings.Contains(short, "TCMalloc") || strings.HasPrefix(short, "tcmalloc::")
}

// skipFrames is AllocatorFrames as a set.
var skipFrames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range AllocatorFrames() {
		m[n] = true
	}
	return m
}()

// removeUninteresting drops, from a stack, every frame up to and
// including the last allocator entry point (jeprof keys this on the short
// name of the PC's containing function, before any "@addr" renaming).
func (m *model) removeUninteresting(locs []int32) []int32 {
	start := 0
	for i, l := range locs {
		if m.skip[l] {
			start = i + 1
		}
	}
	return locs[start:]
}

// fullnameToShortname is FillFullnameToShortnameMap: a containing
// function's short name that stands for several nm-tagged full names
// ("name<addr>") becomes "short@addr" for each of them.
//
// The names depend only on the function: a function of model.fns (fns of
// them) is looked at once, however many locations it contains.
func fullnameToShortname(syms [][]frame, fns int) map[string]string {
	once := map[string]string{}
	multi := map[string]bool{}
	seen := make([]bool, fns)
	for _, fr := range syms {
		if len(fr) == 0 {
			continue
		}
		if fn := fr[0].fn; fn > 0 {
			if seen[fn-1] {
				continue
			}
			seen[fn-1] = true
		}
		if !hasAddrTag(fr[0].full) {
			continue
		}
		short, full := fr[0].short, fr[0].full
		if prev, ok := once[short]; ok && prev != full {
			multi[short] = true
		} else {
			once[short] = full
		}
	}
	out := map[string]string{}
	if len(multi) == 0 {
		return out
	}
	for _, fr := range syms {
		if len(fr) == 0 || !multi[fr[0].short] {
			continue
		}
		if sm := fullAddr0RE.FindStringSubmatch(fr[0].full); sm != nil {
			out[fr[0].full] = fr[0].short + "@" + sm[1]
		}
	}
	return out
}

// translate is jeprof's TranslateStack at function granularity: the node
// names of a stack, callee first, inlined frames as their own "(inline)"
// entries. It appends to out.
func (m *model) translate(locs []int32, out []int32) []int32 {
	var buf []int32
	for i := range locs {
		out = append(out, m.locationNames(locs, i, &buf)...)
	}
	return out
}

// locationNames is translate's part for the stack's location locs[i]:
// its nodeNames, or, where it has Callback::Run frames, those named per
// caller in *buf. The renderers walk a stack's names this way instead of
// keeping translate's output (about a million names for bench/heapprof's o2).
func (m *model) locationNames(locs []int32, i int, buf *[]int32) []int32 {
	l := locs[i]
	names := m.nodeNames(l)
	if !m.perCaller[l] {
		return names
	}
	out := (*buf)[:0]
	for _, id := range names {
		if isCallbackRun(m.names[id]) {
			// Do not merge Callback::Run frames (jeprof: they make
			// confusing cycles); name them per caller instead.
			caller := "0"
			if i > 0 {
				caller = m.locKeys[locs[i-1]]
			}
			id = m.intern("Run#" + strconv.Itoa(m.shortID(caller)))
		}
		out = append(out, id)
	}
	*buf = out
	return out
}

// nodeNames returns the node names of one location (callee first),
// computed once: they depend only on the location, except for
// Callback::Run frames, which translate renames per caller.
func (m *model) nodeNames(l int32) []int32 {
	if m.locDone[l] {
		return m.locNames[l]
	}
	m.locDone[l] = true
	a := m.locKeys[l]
	// jeprof drops addresses above 0x7fffffffffffffff ("fake entries").
	if len(a) > 8 && a > "7fffffffffffffff" && a[0] != 'L' {
		return nil
	}
	fr := m.frames[l]
	if len(fr) == 0 {
		fr = []frame{{short: a, full: a}}
	}
	names := make([]int32, 0, len(fr))
	for j := len(fr) - 1; j >= 0; j-- {
		inlined := 0
		if j > 0 && !m.goNames {
			inlined = 1
		}
		var cached *int32
		if fr[j].fn > 0 {
			// A function's node name is the same at every location but
			// for "??" and Callback::Run, which are not cached.
			if cached = &m.fns[fr[j].fn-1].node[inlined]; *cached >= 0 {
				names = append(names, *cached)
				continue
			}
		}
		name := fr[j].short
		if s, ok := m.shortMap[fr[j].full]; ok {
			name = s
		}
		if inlined == 1 {
			name += " (inline)"
		}
		if isCallbackRun(name) {
			m.perCaller[l] = true
			cached = nil
		} else if name == "??" {
			name = a
			cached = nil
		}
		id := m.intern(name)
		if cached != nil {
			*cached = id
		}
		names = append(names, id)
	}
	m.locNames[l] = names
	return names
}

// isCallbackRun is jeprof's m/Callback.*::Run$/.
func isCallbackRun(name string) bool {
	return strings.HasSuffix(name, "::Run") && strings.Contains(name[:len(name)-len("::Run")], "Callback")
}

func (m *model) intern(name string) int32 {
	if id, ok := m.nameIdx[name]; ok {
		return id
	}
	id := int32(len(m.names))
	m.nameIdx[name] = id
	m.names = append(m.names, name)
	return id
}

func (m *model) shortID(key string) int {
	id, ok := m.runIDs[key]
	if !ok {
		id = len(m.runIDs) + 1
		m.runIDs[key] = id
	}
	return id
}

// reduce is ReduceProfile followed by FlatProfile and CumulativeProfile:
// each name counts once per stack so recursion is not counted twice; the
// first name of a stack gets the flat value.
func (m *model) reduce(ctx context.Context) error {
	// The stacks' locations are named first, in the order the stacks
	// reach them (which numbers the names as translate would), so that
	// the sums make no call: a call in the loop would make the compiler
	// keep the loop's values in memory.
	var buf []int32
	perCaller := false
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: stack %d: %w", si, err)
			}
		}
		for i, l := range st.locs {
			if !m.locDone[l] || m.perCaller[l] {
				m.locationNames(st.locs, i, &buf)
				perCaller = perCaller || m.perCaller[l]
			}
		}
	}
	names := m.names
	seen := make([]uint32, len(names)) // stamp per name id: stack number + 1
	flat, cum, inCum := make([]float64, len(names)), make([]float64, len(names)), make([]bool, len(names))
	locNames := m.locNames
	localTotal := 0.0
	for si, st := range m.stacks {
		if si%ctxCheckLines == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("heapprof: stack %d: %w", si, err)
			}
		}
		stamp := uint32(si + 1)
		first := true
		v := st.v
		for i, l := range st.locs {
			ids := locNames[l]
			if perCaller && m.perCaller[l] {
				ids = m.locationNames(st.locs, i, &buf)
			}
			for _, id := range ids {
				if seen[id] == stamp || names[id] == "" {
					continue
				}
				seen[id] = stamp
				if first {
					flat[id] += v
					localTotal += v
					first = false
				}
				cum[id] += v
				inCum[id] = true
			}
		}
	}
	m.flat, m.cum, m.inCum, m.localTotal = flat, cum, inCum, localTotal
	return nil
}

// unparse is jeprof's Unparse for heap profiles.
func (m *model) unparse(v float64) string {
	if m.kind == kindObjects {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v/1048576.0, 'f', 1, 64)
}

func (m *model) units() string {
	if m.kind == kindObjects {
		return "objects"
	}
	return "MB"
}

// percent is jeprof's Percent.
func percent(num, tot float64) string {
	if tot != 0 {
		return strconv.FormatFloat(num*100.0/tot, 'f', 1, 64) + "%"
	}
	switch {
	case num == 0:
		return "nan"
	case num > 0:
		return "+inf"
	}
	return "-inf"
}

// perlInt is Perl's int(): truncation toward zero.
func perlInt(f float64) float64 { return math.Trunc(f) }
