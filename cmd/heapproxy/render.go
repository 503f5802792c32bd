package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// renderer is one of the jeprof-like subcommands: heapproxy NAME [flags] BINARY PROFILE.
type renderer struct {
	name, summary string
	write         func(io.Writer, *profile.Profile, heapprof.Options) error
	// base: --base and --inuse_objects (every renderer but proto).
	base bool
	// graph: DOT's --nodecount, --nodefraction, --edgefraction and
	// --maxdegree; graphIgnored accepts them with no effect, as jeprof
	// --text does.
	graph, graphIgnored bool
}

var renderers = []renderer{
	{name: "dot", summary: "jeprof --dot: the profile as a Graphviz DOT graph", write: heapprof.WriteDOT, base: true, graph: true},
	{name: "text", summary: "jeprof --text: one line per function", write: heapprof.WriteText, base: true, graphIgnored: true},
	{name: "folded", summary: "folded stacks, one line each (flamegraph.pl, speedscope)", write: heapprof.WriteFolded, base: true},
	{name: "flamegraph", summary: "a flame graph (SVG)", write: heapprof.WriteFlameGraph, base: true},
	{name: "proto", summary: "the symbolized profile as pprof protobuf (.pb.gz, for go tool pprof)",
		write: func(w io.Writer, p *profile.Profile, _ heapprof.Options) error { return heapprof.WriteProto(w, p) }},
}

func findRenderer(name string) *renderer {
	for i := range renderers {
		if renderers[i].name == name {
			return &renderers[i]
		}
	}
	return nil
}

// renderFlags are one renderer's flags, read by render.
type renderFlags struct {
	base                       *string
	nodeCount, maxDegree       *int
	nodeFraction, edgeFraction *float64
	objects                    *bool
	symbolPath                 stringList
}

// newRenderFlags defines r's flags, and only r's.
func newRenderFlags(r *renderer) (*flag.FlagSet, *renderFlags) {
	fs := flag.NewFlagSet("heapproxy "+r.name, flag.ContinueOnError)
	def := heapprof.DefaultOptions()
	o := &renderFlags{base: new(string), nodeCount: &def.NodeCount, maxDegree: &def.MaxDegree,
		nodeFraction: &def.NodeFraction, edgeFraction: &def.EdgeFraction, objects: new(bool)}
	if r.base {
		fs.StringVar(o.base, "base", "", "subtract this `PROFILE` first (jeprof --base)")
		fs.BoolVar(o.objects, "inuse_objects", false, "count objects instead of bytes")
	}
	if r.graph || r.graphIgnored {
		why := ""
		if r.graphIgnored {
			why = " (accepted for jeprof command lines; " + r.name + " prints every function)"
		}
		fs.IntVar(o.nodeCount, "nodecount", def.NodeCount, "show at most `N` nodes"+why)
		fs.Float64Var(o.nodeFraction, "nodefraction", def.NodeFraction, "hide nodes below this `FRACTION` of the total"+why)
		fs.Float64Var(o.edgeFraction, "edgefraction", def.EdgeFraction, "hide edges below this `FRACTION` of the total"+why)
		fs.IntVar(o.maxDegree, "maxdegree", def.MaxDegree, "at most `N` edges into or out of a node"+why)
	}
	fs.Var(&o.symbolPath, "symbol-path", "`DIR` searched for binaries and .build-id debug files (repeatable)")
	return fs, o
}

// usage prints r's usage and its flags only.
func (r *renderer) usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: heapproxy %s [flags] BINARY PROFILE\n\n%s, printed to stdout.\n"+
		"BINARY is the program that wrote PROFILE (a jemalloc heap dump or a pprof profile);\n"+
		"flags may come before or after BINARY and PROFILE.\n\nflags:\n", r.name, r.summary)
	printFlags(w, fs)
	fmt.Fprint(w, "  -h, --help\n        this text\n")
}

// render runs one renderer subcommand, printing to stdout like jeprof.
func render(name string, args []string, stdout io.Writer) error {
	r := findRenderer(name)
	fs, o := newRenderFlags(r)
	usage := func(w io.Writer) { r.usage(w, fs) }
	pos, err := parseArgs(fs, args, usage, stdout)
	var ue *usageError
	if errors.As(err, &ue) {
		// A flag of another renderer: say whose.
		if flagName, ok := strings.CutPrefix(ue.msg, "unknown flag --"); ok {
			var has []string
			for i := range renderers {
				if ofs, _ := newRenderFlags(&renderers[i]); ofs.Lookup(flagName) != nil {
					has = append(has, renderers[i].name)
				}
			}
			if len(has) > 0 {
				ue.msg = fmt.Sprintf("%s has no --%s (a flag of %s)", name, flagName, strings.Join(has, " and "))
			}
		}
	}
	if err != nil {
		return err
	}
	switch len(pos) {
	case 2:
	case 0:
		return &usageError{name + ": missing BINARY and PROFILE", usage}
	case 1:
		return &usageError{fmt.Sprintf("%s: missing PROFILE after BINARY %q", name, pos[0]), usage}
	default:
		return &usageError{fmt.Sprintf("%s: want BINARY and PROFILE, got %d arguments (%s); flags start with -",
			name, len(pos), strings.Join(pos, " ")), usage}
	}
	binary, file := pos[0], pos[1]
	sym := &symbolize.Local{Binary: binary, SearchPath: o.symbolPath, Cache: symbolize.NewCache()}
	ctx := context.Background()
	// Reading the program's symbol tables does not need the profile.
	go sym.Preload()
	p, err := loadProfile(ctx, file, sym)
	if err != nil {
		return err
	}
	opt := heapprof.Options{Program: binary, NodeCount: *o.nodeCount, NodeFraction: *o.nodeFraction,
		EdgeFraction: *o.edgeFraction, MaxDegree: *o.maxDegree}
	if *o.objects {
		opt.SampleType = "inuse_objects"
	}
	if *o.base != "" {
		if opt.Base, err = loadProfile(ctx, *o.base, sym); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if err := r.write(w, p, opt); err != nil {
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
