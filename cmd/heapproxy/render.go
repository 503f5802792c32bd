package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// renderers are the jeprof-like subcommands: heapproxy dot|text|folded|flamegraph|proto BINARY PROFILE.
var renderers = map[string]func(io.Writer, *profile.Profile, heapprof.Options) error{
	"dot":        heapprof.WriteDOT,
	"text":       heapprof.WriteText,
	"folded":     heapprof.WriteFolded,
	"flamegraph": heapprof.WriteFlameGraph,
	"proto":      func(w io.Writer, p *profile.Profile, _ heapprof.Options) error { return heapprof.WriteProto(w, p) },
}

// render runs one renderer subcommand, printing to stdout like jeprof.
func render(name string, args []string, stdout io.Writer) error {
	write := renderers[name]
	fs := flag.NewFlagSet("heapproxy "+name, flag.ContinueOnError)
	def := heapprof.DefaultOptions()
	base := fs.String("base", "", "subtract this profile first (jeprof --base)")
	nodeCount := fs.Int("nodecount", def.NodeCount, "show at most so many nodes")
	nodeFraction := fs.Float64("nodefraction", def.NodeFraction, "hide nodes below this fraction of the total")
	edgeFraction := fs.Float64("edgefraction", def.EdgeFraction, "hide edges below this fraction of the total")
	maxDegree := fs.Int("maxdegree", def.MaxDegree, "at most so many edges into or out of a node")
	objects := fs.Bool("inuse_objects", false, "count objects instead of bytes")
	var symbolPath stringList
	fs.Var(&symbolPath, "symbol-path", "directory searched for binaries and .build-id debug files (repeatable)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: heapproxy %s [flags] BINARY PROFILE\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return errors.New("want BINARY and PROFILE")
	}
	binary, file := fs.Arg(0), fs.Arg(1)
	sym := &symbolize.Local{Binary: binary, SearchPath: symbolPath, Cache: symbolize.NewCache()}
	ctx := context.Background()
	// Reading the program's symbol tables does not need the profile.
	go sym.Preload()
	p, err := loadProfile(ctx, file, sym)
	if err != nil {
		return err
	}
	opt := heapprof.Options{Program: binary, NodeCount: *nodeCount, NodeFraction: *nodeFraction,
		EdgeFraction: *edgeFraction, MaxDegree: *maxDegree}
	if *objects {
		opt.SampleType = "inuse_objects"
	}
	if *base != "" {
		if opt.Base, err = loadProfile(ctx, *base, sym); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if err := write(w, p, opt); err != nil {
		return fmt.Errorf("%s %s: %w", name, file, err)
	}
	return w.Flush()
}

func loadProfile(ctx context.Context, file string, sym heapprof.Symbolizer) (*profile.Profile, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Streamed: a large heap_v2 dump is never held whole.
	p, err := heapprof.ParseReaderLimit(ctx, f, heapprof.MaxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if !p.HasFunctions() {
		if err := sym.Symbolize(ctx, p); err != nil {
			return nil, fmt.Errorf("symbolize %s: %w", file, err)
		}
	}
	return p, nil
}

type stringList []string

func (l *stringList) String() string     { return fmt.Sprint(*l) }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
