package snapshot

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/funcname"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// refRow is one row of a reference tool's top table.
type refRow struct {
	flat, cum       int64
	flatPct, cumPct string
}

// parseTop reads `jeprof --text` or `go tool pprof -top` output: a total
// line, then rows "flat flat% sum% cum cum% name".
func parseTop(t *testing.T, out []byte, totalRE *regexp.Regexp) (int64, map[string]refRow) {
	t.Helper()
	var total int64 = -1
	rows := map[string]refRow{}
	num := func(s string) int64 {
		v, err := strconv.ParseInt(strings.TrimSuffix(s, "B"), 10, 64)
		if err != nil {
			t.Fatalf("reference output: bad number %q", s)
		}
		return v
	}
	for _, line := range strings.Split(string(out), "\n") {
		if m := totalRE.FindStringSubmatch(line); m != nil {
			total = num(m[1])
			continue
		}
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasSuffix(f[1], "%") || !strings.HasSuffix(f[4], "%") {
			continue // header lines
		}
		name := strings.Join(f[5:], " ")
		if _, dup := rows[name]; dup {
			t.Fatalf("reference output names %q twice", name)
		}
		rows[name] = refRow{flat: num(f[0]), flatPct: f[1], cum: num(f[3]), cumPct: f[4]}
	}
	if total < 0 || len(rows) == 0 {
		t.Fatalf("reference output has no total or no rows:\n%s", out)
	}
	return total, rows
}

// near accepts the difference between our rounding of the summed
// estimates and jeprof's truncating "%d" of them.
func near(a, b int64) bool { return a-b <= 1 && b-a <= 1 }

var jeprofTag = regexp.MustCompile(`<[0-9a-f]{16}>`)

// TestSummarizeJemalloc compares Summarize on real jemalloc profiles
// (symbolized by heapprof/symbolize) with jeprof on the same files:
// functions against --text, stacks against --collapsed, bytes and objects.
func TestSummarizeJemalloc(t *testing.T) {
	bin, heaps := leakProg(t)
	cache := symbolize.NewCache()
	// heaps[0] has the shape of heaps[2] with less memory; jeprof is slow.
	for _, heap := range heaps[1:] {
		t.Run(filepath.Base(heap), func(t *testing.T) {
			data, err := os.ReadFile(heap)
			if err != nil {
				t.Fatal(err)
			}
			p, err := heapprof.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&symbolize.Local{Binary: bin, Cache: cache}).Symbolize(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			tot, funcs, stacks := Summarize(p)
			byShort := map[string]Function{}
			for _, f := range funcs {
				if _, dup := byShort[f.ShortName]; dup {
					t.Fatalf("short name %q twice", f.ShortName)
				}
				byShort[f.ShortName] = f
			}

			for _, c := range []struct {
				flag    string
				total   int64
				flat    func(Function) int64
				cum     func(Function) int64
				totalRE *regexp.Regexp
			}{
				{"--show_bytes", tot.Bytes, func(f Function) int64 { return f.FlatBytes },
					func(f Function) int64 { return f.CumBytes }, regexp.MustCompile(`^Total: (\d+) B$`)},
				{"--inuse_objects", tot.Objects, func(f Function) int64 { return f.FlatObjects },
					func(f Function) int64 { return f.CumObjects }, regexp.MustCompile(`^Total: (\d+) objects$`)},
			} {
				out := run(t, nil, "jeprof", "--text", c.flag, bin, heap)
				jtotal, rows := parseTop(t, out, c.totalRE)
				if !near(c.total, jtotal) {
					t.Errorf("jeprof %s: total %d, Summarize %d", c.flag, jtotal, c.total)
				}
				for _, f := range funcs {
					if _, ok := rows[f.ShortName]; !ok {
						t.Errorf("jeprof %s does not have %q (Summarize: %+v)", c.flag, f.ShortName, f)
					}
				}
				for name, r := range rows {
					f, ok := byShort[name]
					if !ok {
						t.Errorf("jeprof %s has %q, Summarize does not", c.flag, name)
						continue
					}
					if !near(c.flat(f), r.flat) || !near(c.cum(f), r.cum) {
						t.Errorf("jeprof %s %q: flat %d cum %d; Summarize flat %d cum %d",
							c.flag, name, r.flat, r.cum, c.flat(f), c.cum(f))
					}
					if c.flag == "--show_bytes" {
						if got := fmt.Sprintf("%.1f%%", f.FlatPercent); got != r.flatPct {
							t.Errorf("%q flat%%: jeprof %s, Summarize %s", name, r.flatPct, got)
						}
						if got := fmt.Sprintf("%.1f%%", f.CumPercent); got != r.cumPct {
							t.Errorf("%q cum%%: jeprof %s, Summarize %s", name, r.cumPct, got)
						}
					}
				}
			}
			if f := byShort["agg_hash_grow"]; f.FlatBytes < 8<<20 {
				t.Errorf("agg_hash_grow keeps an 8 MiB block, Summarize says %d bytes", f.FlatBytes)
			}

			// Stacks: jeprof --collapsed prints them root first with full
			// names carrying nm's address tags.
			for _, c := range []struct {
				flag string
				val  func(Stack) int64
			}{
				{"--show_bytes", func(s Stack) int64 { return s.Bytes }},
				{"--inuse_objects", func(s Stack) int64 { return s.Objects }},
			} {
				want := map[string]int64{}
				for _, line := range strings.Split(strings.TrimSpace(string(run(t, nil, "jeprof", "--collapsed", c.flag, bin, heap))), "\n") {
					i := strings.LastIndexByte(line, ' ')
					v, err := strconv.ParseInt(line[i+1:], 10, 64)
					if err != nil {
						t.Fatalf("jeprof --collapsed: %q", line)
					}
					frames := strings.Split(jeprofTag.ReplaceAllString(line[:i], ""), ";")
					for j, f := range frames {
						frames[j] = funcname.Short(f)
					}
					want[strings.Join(frames, ";")] += v
				}
				if len(want) != len(stacks) {
					t.Errorf("jeprof --collapsed %s: %d stacks, Summarize %d", c.flag, len(want), len(stacks))
				}
				for _, s := range stacks {
					w, ok := want[s.Frames]
					if !ok {
						t.Errorf("stack %q not in jeprof --collapsed", s.Frames)
					} else if !near(c.val(s), w) {
						t.Errorf("stack %q %s: jeprof %d, Summarize %d", s.Frames, c.flag, w, c.val(s))
					}
					if s.Depth != strings.Count(s.Frames, ";")+1 {
						t.Errorf("stack %q: depth %d", s.Frames, s.Depth)
					}
				}
			}
			checkStackIDs(t, stacks)
		})
	}
}

func checkStackIDs(t *testing.T, stacks []Stack) {
	t.Helper()
	ids := map[int64]bool{}
	for _, s := range stacks {
		if s.StackID < 0 || ids[s.StackID] {
			t.Errorf("stack id %d negative or repeated", s.StackID)
		}
		ids[s.StackID] = true
	}
}

// The test process allocates along these and keeps the memory.
var kept [][]byte

//go:noinline
func allocSmallBlocks() {
	for i := 0; i < 200; i++ {
		kept = append(kept, make([]byte, 10000))
	}
}

//go:noinline
func allocLargeBlocks() {
	for i := 0; i < 8; i++ {
		kept = append(kept, make([]byte, 1<<20))
	}
}

//go:noinline
func allocBoth() {
	allocSmallBlocks()
	allocLargeBlocks()
}

// TestSummarizeGo compares Summarize on the test process's own heap
// profile (runtime/pprof) with `go tool pprof -top` on the same file.
func TestSummarizeGo(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	allocBoth()
	allocLargeBlocks()
	runtime.GC()
	file := filepath.Join(t.TempDir(), "heap.pb.gz")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(data)
	if err != nil {
		t.Fatal(err)
	}
	tot, funcs, stacks := Summarize(p)
	byName := map[string]Function{}
	for _, f := range funcs {
		byName[f.Name] = f
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		index string
		total int64
		flat  func(Function) int64
		cum   func(Function) int64
	}{
		{"inuse_space", tot.Bytes, func(f Function) int64 { return f.FlatBytes }, func(f Function) int64 { return f.CumBytes }},
		{"inuse_objects", tot.Objects, func(f Function) int64 { return f.FlatObjects }, func(f Function) int64 { return f.CumObjects }},
	} {
		out := run(t, nil, goBin, "tool", "pprof", "-top", "-nodecount=1000000", "-nodefraction=0",
			"-sample_index="+c.index, "-unit=B", file)
		total, top := parseTop(t, out, regexp.MustCompile(`of (\d+)B? total`))
		// pprof prints one row per function and labels a function that
		// was (partly) inlined into its callers; the label is not part of
		// the name.
		rows := map[string]refRow{}
		for name, r := range top {
			name = strings.TrimSuffix(strings.TrimSuffix(name, " (inline)"), " (partial-inline)")
			if _, dup := rows[name]; dup {
				t.Fatalf("pprof -top names %q twice", name)
			}
			rows[name] = r
		}
		if total != c.total {
			t.Errorf("%s: pprof total %d, Summarize %d", c.index, total, c.total)
		}
		if len(rows) != len(funcs) {
			t.Errorf("%s: pprof %d functions, Summarize %d", c.index, len(rows), len(funcs))
		}
		for name, r := range rows {
			f, ok := byName[name]
			if !ok {
				t.Errorf("%s: pprof has %q, Summarize does not", c.index, name)
				continue
			}
			if c.flat(f) != r.flat || c.cum(f) != r.cum {
				t.Errorf("%s %q: pprof flat %d cum %d; Summarize flat %d cum %d", c.index, name, r.flat, r.cum, c.flat(f), c.cum(f))
			}
		}
	}
	const pkg = "github.com/heapproxy/heapproxy/heapprof/snapshot."
	if f := byName[pkg+"allocLargeBlocks"]; f.FlatBytes < 16<<20 {
		t.Errorf("allocLargeBlocks keeps 16 MiB, Summarize says %d", f.FlatBytes)
	}
	if f := byName[pkg+"allocBoth"]; f.FlatBytes != 0 || f.CumBytes < 8<<20+2_000_000 {
		t.Errorf("allocBoth: flat %d cum %d", f.FlatBytes, f.CumBytes)
	}
	var sum int64
	for _, s := range stacks {
		sum += s.Bytes
	}
	if sum != tot.Bytes {
		t.Errorf("stacks sum to %d bytes, total %d", sum, tot.Bytes)
	}
	checkStackIDs(t, stacks)
	runtime.KeepAlive(kept)
}

// TestSummarizeEdgeCases covers profiles the reference tools do not make.
func TestSummarizeEdgeCases(t *testing.T) {
	fnA := &profile.Function{ID: 1, Name: "a"}
	fnB := &profile.Function{ID: 2, Name: "b"}
	fnMalloc := &profile.Function{ID: 3, Name: "malloc"}
	locA := &profile.Location{ID: 1, Line: []profile.Line{{Function: fnA}}}
	locB := &profile.Location{ID: 2, Line: []profile.Line{{Function: fnB}}}
	locM := &profile.Location{ID: 3, Line: []profile.Line{{Function: fnMalloc}}}
	locInl := &profile.Location{ID: 4, Line: []profile.Line{{Function: fnB}, {Function: fnA}}}
	locRaw := &profile.Location{ID: 5, Address: 0x1234}
	fnXY, fnX, fnY := &profile.Function{ID: 4, Name: "x;y"}, &profile.Function{ID: 5, Name: "x"}, &profile.Function{ID: 6, Name: "y"}
	locXY := &profile.Location{ID: 6, Line: []profile.Line{{Function: fnXY}}}
	locX := &profile.Location{ID: 7, Line: []profile.Line{{Function: fnX}}}
	locY := &profile.Location{ID: 8, Line: []profile.Line{{Function: fnY}}}
	heap := []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}
	for _, c := range []struct {
		name    string
		types   []*profile.ValueType
		samples []*profile.Sample
		want    []Function
		stacks  []string
		depths  []int // when set
	}{
		{
			name:  "recursion counts once in cum",
			types: heap,
			samples: []*profile.Sample{
				{Location: []*profile.Location{locA, locB, locA}, Value: []int64{1, 100}},
			},
			want: []Function{
				{Name: "a", ShortName: "a", FlatBytes: 100, FlatObjects: 1, CumBytes: 100, CumObjects: 1, FlatPercent: 100, CumPercent: 100},
				{Name: "b", ShortName: "b", CumBytes: 100, CumObjects: 1, CumPercent: 100},
			},
			stacks: []string{"a;b;a"},
		},
		{
			name:  "allocator frames cut, inline frames innermost first",
			types: heap,
			samples: []*profile.Sample{
				{Location: []*profile.Location{locA, locM, locInl}, Value: []int64{3, 300}},
				{Location: []*profile.Location{locRaw, locA}, Value: []int64{1, 100}},
				{Location: []*profile.Location{locB}, Value: []int64{0, 0}},
			},
			want: []Function{
				{Name: "b", ShortName: "b", FlatBytes: 300, FlatObjects: 3, CumBytes: 300, CumObjects: 3, FlatPercent: 75, CumPercent: 75},
				{Name: "0x1234", ShortName: "0x1234", FlatBytes: 100, FlatObjects: 1, CumBytes: 100, CumObjects: 1, FlatPercent: 25, CumPercent: 25},
				{Name: "a", ShortName: "a", CumBytes: 400, CumObjects: 4, CumPercent: 100},
			},
			stacks: []string{"a;b", "a;0x1234"},
		},
		{
			name:  "not a heap profile: last bytes and count types",
			types: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}, {Type: "samples", Unit: "count"}},
			samples: []*profile.Sample{
				{Location: []*profile.Location{locB}, Value: []int64{50, 2}},
			},
			want:   []Function{{Name: "b", ShortName: "b", FlatBytes: 50, FlatObjects: 2, CumBytes: 50, CumObjects: 2, FlatPercent: 100, CumPercent: 100}},
			stacks: []string{"b"},
		},
		{
			// Folded "x;y" is both the one-frame stack of a function named
			// "x;y" and y called by x: one row, the first one's depth.
			name:  "a name with ';' folds like two frames",
			types: heap,
			samples: []*profile.Sample{
				{Location: []*profile.Location{locXY}, Value: []int64{1, 10}},
				{Location: []*profile.Location{locY, locX}, Value: []int64{2, 20}},
			},
			want: []Function{
				{Name: "y", ShortName: "y", FlatBytes: 20, FlatObjects: 2, CumBytes: 20, CumObjects: 2, FlatPercent: 100 * 20.0 / 30, CumPercent: 100 * 20.0 / 30},
				{Name: "x;y", ShortName: "x;y", FlatBytes: 10, FlatObjects: 1, CumBytes: 10, CumObjects: 1, FlatPercent: 100 * 10.0 / 30, CumPercent: 100 * 10.0 / 30},
				{Name: "x", ShortName: "x", CumBytes: 20, CumObjects: 2, CumPercent: 100 * 20.0 / 30},
			},
			stacks: []string{"x;y"},
			depths: []int{1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &profile.Profile{SampleType: c.types, Sample: c.samples,
				Location: []*profile.Location{locA, locB, locM, locInl, locRaw, locXY, locX, locY},
				Function: []*profile.Function{fnA, fnB, fnMalloc, fnXY, fnX, fnY}}
			_, funcs, stacks := Summarize(p)
			if fmt.Sprint(funcs) != fmt.Sprint(c.want) {
				t.Errorf("functions\n got %v\nwant %v", funcs, c.want)
			}
			var got []string
			var depths []int
			for _, s := range stacks {
				got = append(got, s.Frames)
				depths = append(depths, s.Depth)
			}
			if !slices.Equal(got, c.stacks) {
				t.Errorf("stacks %q, want %q", got, c.stacks)
			}
			if c.depths != nil && !slices.Equal(depths, c.depths) {
				t.Errorf("depths %v, want %v", depths, c.depths)
			}
			var sum int64
			for _, s := range stacks {
				sum += s.Bytes
			}
			if tot, _, _ := Summarize(p); sum != tot.Bytes {
				t.Errorf("stacks sum to %d bytes, total %d", sum, tot.Bytes)
			}
		})
	}
}

// TestSummarizeGoNames checks a Go profile's rows: ShortName is the DOT
// graph's node name (pprof's, receivers kept; the full name where two
// functions would share it), so methods of different types stay apart in
// functions and in stacks.
func TestSummarizeGoNames(t *testing.T) {
	for _, c := range []struct {
		name   string
		funcs  []string // callee first, one stack each under main.main
		shorts []string
	}{
		{"receivers", []string{"github.com/p/tsdb.(*Head).appender", "github.com/p/tsdb.(*RangeHead).appender"},
			[]string{"tsdb.(*Head).appender", "tsdb.(*RangeHead).appender"}},
		{"shared short name", []string{"github.com/a/x.F", "github.com/b/x.F"},
			[]string{"github.com/a/x.F", "github.com/b/x.F"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			main := &profile.Function{ID: 1, Name: "main.main", Filename: "main.go"}
			root := &profile.Location{ID: 1, Line: []profile.Line{{Function: main}}}
			p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
				Function: []*profile.Function{main}, Location: []*profile.Location{root}}
			for i, n := range c.funcs {
				f := &profile.Function{ID: uint64(i + 2), Name: n, SystemName: n, Filename: "x.go"}
				l := &profile.Location{ID: uint64(i + 2), Line: []profile.Line{{Function: f}}}
				p.Function = append(p.Function, f)
				p.Location = append(p.Location, l)
				p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{l, root}, Value: []int64{1, int64(100 * (i + 1))}})
			}
			_, funcs, stacks := Summarize(p)
			short := map[string]string{}
			for _, f := range funcs {
				short[f.Name] = f.ShortName
			}
			for i, n := range c.funcs {
				if short[n] != c.shorts[i] {
					t.Errorf("%s: ShortName %q, want %q (jeprof's: %q)", n, short[n], c.shorts[i], funcname.Short(n))
				}
			}
			if len(stacks) != len(c.funcs) {
				t.Errorf("%d stacks, want %d: %v", len(stacks), len(c.funcs), stacks)
			}
			for i := range c.funcs {
				want := "main.main;" + c.shorts[len(c.funcs)-1-i]
				if stacks[i].Frames != want {
					t.Errorf("stack %d: %q, want %q", i, stacks[i].Frames, want)
				}
			}
		})
	}
}

// TestStackIDHash: stack ids are hash/fnv's 64-bit FNV-1a of the frames,
// so ids stored by earlier releases still join.
func TestStackIDHash(t *testing.T) {
	for _, frames := range []string{"", "main", "a;b;c", "std::vector<int>::push_back;operator new", strings.Repeat("x;", 1000)} {
		h := fnv.New64a()
		h.Write([]byte(frames))
		if got, want := fnv64a(frames), h.Sum64(); got != want {
			t.Errorf("fnv64a(%q) = %x, hash/fnv %x", frames, got, want)
		}
	}
}
