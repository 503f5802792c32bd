package heapprof

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// TestParseHeapV2Real checks Parse against the real dumps of the test
// programs: every t* stack becomes a sample whose addresses are jeprof's
// (caller PCs minus one, as jeprof --raw prints them) and whose values are
// AdjustSamples of the raw counts.
func TestParseHeapV2Real(t *testing.T) {
	for _, name := range []string{"shallow", "shlib", "inline"} {
		t.Run(name, func(t *testing.T) {
			bp := prog(t, name)
			data, err := os.ReadFile(bp.profiles[0])
			if err != nil {
				t.Fatal(err)
			}
			p, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			stacks := strings.Count(string(data), "\n@ ")
			if len(p.Sample) != stacks {
				t.Errorf("%d samples, file has %d stacks", len(p.Sample), stacks)
			}
			// jeprof --raw lists exactly the addresses it looks up.
			rs := newRawSymbolizer(t, bp.bin, bp.profiles[0])
			if len(rs.syms) != len(p.Location) {
				t.Errorf("%d locations, jeprof looks up %d addresses", len(p.Location), len(rs.syms))
			}
			for _, loc := range p.Location {
				if _, ok := rs.syms[loc.Address]; !ok {
					t.Errorf("location %#x is not an address jeprof looks up", loc.Address)
				}
			}
			var binMapped bool
			for _, loc := range p.Location {
				if loc.Mapping != nil && loc.Mapping.File == bp.bin {
					binMapped = true
					if loc.Address < loc.Mapping.Start || loc.Address >= loc.Mapping.Limit {
						t.Errorf("location %#x outside its mapping %#x-%#x", loc.Address, loc.Mapping.Start, loc.Mapping.Limit)
					}
				}
			}
			if !binMapped {
				t.Errorf("no location mapped to the program %s", bp.bin)
			}
			if got := len(p.SampleType); got != 4 || p.SampleType[2].Type != LabelSampledObjects || p.SampleType[3].Type != LabelSampledBytes {
				t.Fatalf("sample types %v, want inuse_objects, inuse_space and the raw counts", p.SampleType)
			}
			for _, s := range p.Sample {
				n, b := s.Value[2], s.Value[3]
				wantN, wantB := AdjustSamples(p.Period, n, b)
				if s.Value[0] != int64(math.Round(wantN)) || s.Value[1] != int64(math.Round(wantB)) {
					t.Errorf("sample values %v, want rounded %v %v", s.Value, wantN, wantB)
				}
				if s.Value[1] < b {
					t.Errorf("scaled bytes %d below sampled bytes %d", s.Value[1], b)
				}
			}
		})
	}
}

func TestAdjustSamples(t *testing.T) {
	for _, c := range []struct {
		period, n, s int64
		wantN, wantS float64
	}{
		{period: 1024, n: 0, s: 0, wantN: 0, wantS: 0},
		// ratio 1: scale 1/(1-e^-1)
		{period: 1024, n: 2, s: 2048, wantN: 2 / (1 - math.Exp(-1)), wantS: 2048 / (1 - math.Exp(-1))},
		// huge objects are always sampled: scale ~1
		{period: 1, n: 1, s: 1 << 30, wantN: 1, wantS: 1 << 30},
	} {
		n, s := AdjustSamples(c.period, c.n, c.s)
		if n != c.wantN || s != c.wantS {
			t.Errorf("AdjustSamples(%d, %d, %d) = %v, %v; want %v, %v", c.period, c.n, c.s, n, s, c.wantN, c.wantS)
		}
	}
}

const goodV2 = `heap_v2/524288
  t*: 2: 1024 [0: 0]
  t0: 2: 1024 [0: 0]
@ 0x10 0x20 0x30
  t*: 2: 1024 [0: 0]
  t0: 2: 1024 [0: 0]

MAPPED_LIBRARIES:
00000000-00001000 r-xp 00000000 fe:00 1   /bin/x
`

func TestParseHeapV2Synthetic(t *testing.T) {
	p, err := Parse([]byte(goodV2))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 1 || len(p.Location) != 3 {
		t.Fatalf("got %d samples, %d locations", len(p.Sample), len(p.Location))
	}
	var addrs []uint64
	for _, l := range p.Sample[0].Location {
		addrs = append(addrs, l.Address)
		if l.Mapping == nil || l.Mapping.File != "/bin/x" {
			t.Errorf("location %#x has mapping %v", l.Address, l.Mapping)
		}
	}
	if want := []uint64{0x10, 0x1f, 0x2f}; !equalU64(addrs, want) {
		t.Errorf("addresses %#x, want %#x (callers minus one)", addrs, want)
	}
	if p.Period != 524288 || p.DefaultSampleType != "inuse_space" {
		t.Errorf("period %d default %q", p.Period, p.DefaultSampleType)
	}
}

func equalU64(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestParseHeapV2Errors(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"no period", "heap_v2/\n", "line 1"},
		{"zero period", "heap_v2/0\n", "line 1"},
		{"bad address", "heap_v2/1\n@ 0xzz\n  t*: 1: 1 [0: 0]\n", "line 2"},
		{"long address", "heap_v2/1\n@ 0x11112222333344445\n  t*: 1: 1 [0: 0]\n", "line 2"},
		{"truncated stack", "heap_v2/1\n  t*: 1: 1 [0: 0]\n@ 0x1 0x2\n", "line 3"},
		{"truncated counts", "heap_v2/1\n@ 0x1\n  t*: 1: 1 [0:", "line 3"},
		{"negative count", "heap_v2/1\n@ 0x1\n  t*: -1: 1 [0: 0]\n", "line 3"},
		{"overflow", "heap_v2/1\n@ 0x1\n  t*: 1: 99999999999999999999 [0: 0]\n", "line 3"},
		{"junk", "heap_v2/1\nhello\n", "line 2"},
		{"two t*", "heap_v2/1\n@ 0x1\n t*: 1: 1 [0: 0]\n t*: 1: 1 [0: 0]\n", "line 4"},
		{"bad thread", "heap_v2/1\n@ 0x1\n tx: 1: 1 [0: 0]\n", "line 3"},
		{"bad mapping", "heap_v2/1\nMAPPED_LIBRARIES:\nzz-10 r-xp 0 0:0 0 /x\n", "line 3"},
		{"line too long", "heap_v2/1\n@" + strings.Repeat(" 0x1", maxLineBytes/4+1) + "\n  t*: 1: 1 [0: 0]\n", "line 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Parse error %v, want one naming %q", err, c.want)
			}
		})
	}
}

func TestParseTooLarge(t *testing.T) {
	big := make([]byte, MaxProfileBytes+1)
	if _, err := Parse(big); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse(%d bytes) = %v, want ErrTooLarge", len(big), err)
	}
	// A gzip bomb: small compressed, too large decompressed.
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	chunk := make([]byte, 1<<20)
	for i := 0; i <= MaxProfileBytes>>20; i++ {
		zw.Write(chunk)
	}
	zw.Close()
	if _, err := Parse(zb.Bytes()); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse(gzip bomb of %d bytes) = %v, want ErrTooLarge", zb.Len(), err)
	}
}

// TestParseOtherFormats feeds Parse what Go's runtime writes: the pprof
// protobuf (gzipped, as net/http/pprof serves it, and plain) and the
// legacy "heap profile:" text (debug=1).
func TestParseOtherFormats(t *testing.T) {
	keep := make([][]byte, 0, 64)
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 64<<10))
	}
	runtime.GC()
	var gz, text bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&gz, 0); err != nil {
		t.Fatal(err)
	}
	if err := pprof.Lookup("heap").WriteTo(&text, 1); err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(keep)
	gp, err := profile.ParseData(gz.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := gp.WriteUncompressed(&plain); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want string // the legacy text carries addresses only
	}{
		{"protobuf gzip", gz.Bytes(), "TestParseOtherFormats"},
		{"protobuf plain", plain.Bytes(), "TestParseOtherFormats"},
		{"legacy text", text.Bytes(), "Total: "},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Sample) == 0 {
				t.Fatal("no samples")
			}
			var out bytes.Buffer
			opt := DefaultOptions()
			opt.Program = "go-test"
			opt.SampleType = "inuse_space"
			if err := WriteText(&out, p, opt); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), c.want) {
				t.Errorf("text output lacks %q:\n%s", c.want, out.String())
			}
		})
	}
}

// FuzzParseHeapV2: Parse never panics, and what it accepts is a valid
// profile that survives a protobuf round trip. The seeds include real dumps
// of several KB, whose minimization pauses the exec counter; run with
// -fuzzminimizetime=5s to keep fuzzing brisk.
func FuzzParseHeapV2(f *testing.F) {
	f.Add([]byte(goodV2))
	f.Add([]byte("heap_v2/1\n@ 0x1\n  t*: 1: 1 [0: 0]\n"))
	f.Add([]byte("heap_v2/1\n@ 0x0 0x0\n  t*: 0: 0 [0: 0]\n"))
	// Fuzz workers get the corpus from the coordinator; only the
	// coordinator (or a plain go test) builds the programs for seeds.
	if fw := flag.Lookup("test.fuzzworker"); (fw == nil || fw.Value.String() != "true") && buildProgsOnce() == nil {
		for _, name := range []string{"shallow", "shlib", "deep"} {
			if data, err := os.ReadFile(progs[name].profiles[0]); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !bytes.HasPrefix(data, []byte("heap_v2/")) {
			data = append([]byte("heap_v2/"), data...)
		}
		p, err := Parse(data)
		d, derr := ParseDump(context.Background(), bytes.NewReader(data), 0)
		if fmt.Sprint(err) != fmt.Sprint(derr) {
			t.Fatalf("Parse: %v; ParseDump: %v", err, derr)
		}
		if err != nil {
			return
		}
		// Unsymbolized, the graph names every PC: the stacks ParseDump
		// collected must draw Parse's graph.
		var want, got bytes.Buffer
		werr := WriteDOT(&want, p, DefaultOptions())
		gerr := d.WriteDOT(context.Background(), &got, DefaultOptions())
		if fmt.Sprint(werr) != fmt.Sprint(gerr) || want.String() != got.String() {
			t.Fatalf("ParseDump's graph (%v) differs from Parse's (%v):\n%s", gerr, werr, lineDiff(got.String(), want.String()))
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("Parse accepted an invalid profile: %v", err)
		}
		var buf bytes.Buffer
		if err := p.Write(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(buf.Bytes()); err != nil {
			t.Fatalf("round trip: %v", err)
		}
		opt := DefaultOptions()
		if err := WriteDOT(&bytes.Buffer{}, p, opt); err != nil && !errors.Is(err, ErrNoNodes) {
			t.Fatalf("WriteDOT: %v", err)
		}
	})
}

// TestLegacyRawCountLabels: profiles stored before the raw counts became
// sample types carry them as NumLabels; they must render the same.
func TestLegacyRawCountLabels(t *testing.T) {
	p, err := Parse([]byte(goodV2))
	if err != nil {
		t.Fatal(err)
	}
	legacy := p.Copy()
	legacy.SampleType = legacy.SampleType[:2]
	for _, s := range legacy.Sample {
		s.NumLabel = map[string][]int64{LabelSampledObjects: {s.Value[2]}, LabelSampledBytes: {s.Value[3]}}
		s.Value = s.Value[:2]
	}
	for _, st := range []string{"inuse_space", "inuse_objects"} {
		opt := DefaultOptions()
		opt.Program, opt.SampleType = "/bin/x", st
		var got, want bytes.Buffer
		if err := WriteDOT(&want, p, opt); err != nil {
			t.Fatal(err)
		}
		if err := WriteDOT(&got, legacy, opt); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("%s: legacy labels render\n%s\nwant\n%s", st, got.String(), want.String())
		}
	}
}

// TestParseHeapV2SharedText: startStack takes the addresses a stack line
// shares with the previous one from that line; every way two lines can
// share text must give the addresses a plain reading gives, the leaf never
// decremented and every caller once, in Parse and in ParseDump.
func TestParseHeapV2SharedText(t *testing.T) {
	for _, c := range []struct {
		name   string
		stacks []string // the text after "@"
	}{
		{"same lines", []string{" 0x10 0x20 0x30", " 0x10 0x20 0x30", " 0x10 0x20 0x30"}},
		{"leaf only differs", []string{" 0x11 0x20 0x30", " 0x12 0x20 0x30"}},
		{"middle differs", []string{" 0x10 0x20 0x30 0x40", " 0x10 0x21 0x22 0x30 0x40", " 0x10 0x40"}},
		{"token grows at the end", []string{" 0x10 0x2", " 0x10 0x20", " 0x10 0x2"}},
		{"token grows at the start", []string{" 0x10 0x20", " 0x110 0x20", " 0x10 0x20"}},
		{"suffix reaches the leaf", []string{" 0x20 0x30", " 0x10 0x20 0x30", " 0x30", " 0x20 0x30"}},
		{"leaf becomes a caller", []string{" 0x30", " 0x10 0x30", " 0x30 0x30", " 0x30 0x30 0x30"}},
		{"prefix and suffix overlap", []string{" 0x1 0x2", " 0x1 0x2 0x2", " 0x1 0x2 0x2 0x2", " 0x1 0x2"}},
		{"repeated tokens", []string{" 0x5 0x5 0x5 0x5", " 0x5 0x5 0x5", " 0x5 0x5 0x5 0x5 0x5", " 0x5"}},
		{"spacing and tabs", []string{" 0x10  0x20\t0x30", "\t0x10 0x20  0x30", " 0x10\t 0x20 0x30 "}},
		{"without 0x and in capitals", []string{" 10 0x20 0x3A", " 0x10 20 0xAB", " 0xab 0xAB 0xaB", "0xab 0xAB"}},
		{"digits shared across tokens", []string{" 0x123 0x456", " 0x12 0x3456", " 0x1234 0x56", " 0x123 0x456"}},
		{"zero and wrap", []string{" 0x0 0x0", " 0x1 0x0", " 0x0 0x0 0x0"}},
		{"no space after @", []string{"0x10 0x20", " 0x10 0x20", "0x10 0x20"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var in strings.Builder
			in.WriteString("heap_v2/524288\n  t*: 1: 1 [0: 0]\n")
			var want [][]uint64
			for i, st := range c.stacks {
				fmt.Fprintf(&in, "@%s\n  t*: %d: %d [0: 0]\n", st, i+1, 100*(i+1))
				var addrs []uint64
				for j, f := range strings.Fields(st) {
					a, ok := parseHexAddress([]byte(f))
					if !ok {
						t.Fatalf("bad test address %q", f)
					}
					if j > 0 {
						a--
					}
					addrs = append(addrs, a)
				}
				want = append(want, addrs)
			}
			in.WriteString("MAPPED_LIBRARIES:\n")
			p, err := Parse([]byte(in.String()))
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range p.Sample {
				var got []uint64
				for _, l := range s.Location {
					got = append(got, l.Address)
				}
				if !equalU64(got, want[i]) {
					t.Errorf("Parse: stack %d (%q): %#x, want %#x", i, c.stacks[i], got, want[i])
				}
			}
			d, err := ParseDump(context.Background(), strings.NewReader(in.String()), 0)
			if err != nil {
				t.Fatal(err)
			}
			// Distinct stacks in the order they first come, values summed.
			var distinct []string
			sums := map[string]float64{}
			for i, s := range p.Sample {
				k := fmt.Sprint(want[i])
				if _, ok := sums[k]; !ok {
					distinct = append(distinct, k)
				}
				sums[k] += float64(s.Value[3])
			}
			if d.stacks.spans.len() != len(distinct) {
				t.Fatalf("ParseDump: %d stacks, want %d", d.stacks.spans.len(), len(distinct))
			}
			for i := range d.stacks.spans.len() {
				var got []uint64
				for _, id := range d.stacks.locs(i) {
					got = append(got, d.p.Location[id].Address)
				}
				v := d.stacks.values.at(i)[3]
				if k := fmt.Sprint(got); k != distinct[i] || v != sums[k] {
					t.Errorf("ParseDump: stack %d: %#x (%v), want %s (%v)", i, got, v, distinct[i], sums[distinct[i]])
				}
			}
		})
	}
}
