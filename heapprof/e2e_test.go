package heapprof_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// TestEndToEndNativeSymbolizer runs the whole pipeline heapproxy uses —
// Parse, the native symbolize.Local, WriteDOT / WriteText — on real
// jemalloc dumps and compares with the real jeprof on the same files.
func TestEndToEndNativeSymbolizer(t *testing.T) {
	cache := symbolize.NewCache()
	for _, c := range []struct {
		prog string
		base bool
	}{
		{prog: "shallow"}, {prog: "deep"}, {prog: "inline"}, {prog: "templates"},
		{prog: "shlib"}, {prog: "wide"}, {prog: "growth", base: true},
		{prog: "gperf"}, {prog: "gperf", base: true},
	} {
		name := c.prog
		if c.base {
			name += "_base"
		}
		t.Run(name, func(t *testing.T) {
			bin, profiles := heapprof.BuiltTestProg(t, c.prog)
			sym := &symbolize.Local{Binary: bin, Cache: cache}
			load := func(path string) *profile.Profile {
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				p, err := heapprof.Parse(data)
				if err != nil {
					t.Fatal(err)
				}
				if err := sym.Symbolize(context.Background(), p); err != nil {
					t.Fatalf("Symbolize: %v", err)
				}
				return p
			}
			opt := heapprof.DefaultOptions()
			opt.Program = bin
			target := profiles[0]
			var args []string
			if c.base {
				target = profiles[1]
				opt.Base = load(profiles[0])
				args = append(args, "--base="+profiles[0])
			}
			args = append(args, bin, target)
			p := load(target)

			var dot bytes.Buffer
			if err := heapprof.WriteDOT(&dot, p, opt); err != nil {
				t.Fatal(err)
			}
			want := heapprof.RunForTest(t, "jeprof", append([]string{"--dot"}, args...)...)
			heapprof.CompareDOTForTest(t, dot.String(), string(want))

			var text bytes.Buffer
			if err := heapprof.WriteText(&text, p, opt); err != nil {
				t.Fatal(err)
			}
			want = heapprof.RunForTest(t, "jeprof", append([]string{"--text"}, args...)...)
			if text.String() != string(want) {
				t.Errorf("text differs from jeprof --text:\n%s", heapprof.LineDiffForTest(text.String(), string(want)))
			}
			if strings.Count(dot.String(), "\n") < 5 {
				t.Errorf("suspiciously small graph:\n%s", dot.String())
			}
			sameFromDump(t, sym, target, p, opt)
		})
	}
}

// sameFromDump checks that heapproxy dot's path, ParseDump and the Dump's
// renderers, writes what Parse and the renderers write for p, the profile
// in path, byte for byte, by bytes and by objects.
func sameFromDump(t *testing.T, sym heapprof.Symbolizer, path string, p *profile.Profile, opt heapprof.Options) {
	t.Helper()
	ctx := context.Background()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := heapprof.ParseDump(ctx, f, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := sym.Symbolize(ctx, d.Profile()); err != nil {
		t.Fatal(err)
	}
	type writer func(context.Context, io.Writer, heapprof.Options) error
	for _, c := range []struct {
		name        string
		fromProfile func(context.Context, io.Writer, *profile.Profile, heapprof.Options) error
		fromDump    writer
	}{
		{"dot", heapprof.WriteDOTContext, d.WriteDOT},
		{"text", heapprof.WriteTextContext, d.WriteText},
		{"folded", heapprof.WriteFoldedContext, d.WriteFolded},
		{"flamegraph", heapprof.WriteFlameGraphContext, d.WriteFlameGraph},
	} {
		for _, typ := range []string{"", "inuse_objects"} {
			o := opt
			o.SampleType = typ
			var want, got bytes.Buffer
			werr := c.fromProfile(ctx, &want, p, o)
			gerr := c.fromDump(ctx, &got, o)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) || got.String() != want.String() {
				t.Errorf("%s %s of the Dump (error %v) differs from the profile's (error %v):\n%s",
					c.name, typ, gerr, werr, heapprof.LineDiffForTest(got.String(), want.String()))
			}
		}
	}
}
