// Package jeprofcmd is heapproxy's jeprof-like command line on files:
// heapproxy dot|text|folded|flamegraph|proto [flags] BINARY PROFILE, plus
// the flag parsing and error printing the rest of the command line shares.
//
// heapproxy dot is a short-lived process, so its start-up counts: the
// commands run from this package's init (see init), before the server's
// packages are initialized. Go initializes a package once its imports are,
// the first such in import-path order at each step (the spec's "Package
// initialization"). This package imports heapprof and
// heapprof/symbolize/elfsym, neither of which needs net/http, while
// go-mysql-server's packages wait for net/http (and "github.com/dolthub"
// sorts before "github.com/heapproxy"), so this init runs ~150 packages
// in, before go-mysql-server's, TiDB's parser's, pprof's web driver's and
// heapproxy's own server packages (GODEBUG=inittrace=1 shows the order):
// those took ~10 ms and ~20 MB of the binary's pages. TestDotSkipsServerInit
// in cmd/heapproxy keeps it so.
//
// A process started for a command also decodes the DWARF the dump's
// addresses need while heapprof parses it (prefetch) and sets the
// collector for one pass over its input (tuneGC); Run, called by main's
// tests, does neither. Every command but proto reads the dump as a
// heapprof.Dump (its stacks collected for the renderer while it is read,
// no profile.Sample each). (Dropping the binary's own start-up pages from RSS
// with madvise was tried and left out: the pages stay in the page cache,
// so it would lower the number, not the memory.)
package jeprofcmd

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize/elfsym"
)

// init runs a command of this package when the process was started with
// one (heapproxy dot ...) and exits with its status, before the heaviest
// packages of the server are initialized (the SQL engine's, the TiDB
// parser, pprof's web driver: TestDotSkipsServerInit). Lighter ones that
// sort before this package's path still initialize first: Go's linker
// runs the ready packages in import-path order, and this one waits on
// regexp and internal/zstd. Any other command line (the server, help,
// version, a test binary's flags) goes on to main.
func init() {
	if len(os.Args) < 2 || find(os.Args[1]) == nil {
		return
	}
	os.Exit(ExitCode(run(os.Args[1], os.Args[2:], os.Stdout, true), os.Stderr))
}

// renderer is one of the commands: heapproxy NAME [flags] BINARY PROFILE.
type renderer struct {
	name, summary string
	// write renders a heapprof.Dump (whose jemalloc stacks are collected
	// for the renderer as the file is read, without a profile.Sample
	// each); nil for proto, which writes the profile Parse makes.
	write func(*heapprof.Dump, context.Context, io.Writer, heapprof.Options) error
	// base: --base and --inuse_objects (every renderer but proto).
	base bool
	// graph: DOT's --nodecount, --nodefraction, --edgefraction and
	// --maxdegree; graphIgnored accepts them with no effect, as jeprof
	// --text does.
	graph, graphIgnored bool
}

// renderers lists the commands in the order the usage prints them.
func renderers() []renderer {
	return []renderer{
		{name: "dot", summary: "jeprof --dot: the profile as a Graphviz DOT graph", write: (*heapprof.Dump).WriteDOT, base: true, graph: true},
		{name: "text", summary: "jeprof --text: one line per function", write: (*heapprof.Dump).WriteText, base: true, graphIgnored: true},
		{name: "folded", summary: "folded stacks, one line each (flamegraph.pl, speedscope)", write: (*heapprof.Dump).WriteFolded, base: true},
		{name: "flamegraph", summary: "a flame graph (SVG)", write: (*heapprof.Dump).WriteFlameGraph, base: true},
		{name: "proto", summary: "the symbolized profile as pprof protobuf (.pb.gz, for go tool pprof)"},
	}
}

func find(name string) *renderer {
	for _, r := range renderers() {
		if r.name == name {
			return &r
		}
	}
	return nil
}

// Command is one of the commands, for heapproxy's usage.
type Command struct{ Name, Summary string }

// Commands lists the commands in the order the usage prints them.
func Commands() []Command {
	var out []Command
	for _, r := range renderers() {
		out = append(out, Command{r.name, r.summary})
	}
	return out
}

// Is reports whether name is one of the commands.
func Is(name string) bool { return find(name) != nil }

// Usage prints the usage of the command name and its flags only.
func Usage(w io.Writer, name string) {
	if r := find(name); r != nil {
		fs, _ := newFlags(r)
		r.usage(w, fs)
	}
}

// flags are one renderer's flags, read by Run.
type flags struct {
	base                       *string
	nodeCount, maxDegree       *int
	nodeFraction, edgeFraction *float64
	objects                    *bool
	symbolPath                 stringList
}

// newFlags defines r's flags, and only r's.
func newFlags(r *renderer) (*flag.FlagSet, *flags) {
	fs := flag.NewFlagSet("heapproxy "+r.name, flag.ContinueOnError)
	def := heapprof.DefaultOptions()
	o := &flags{base: new(string), nodeCount: &def.NodeCount, maxDegree: &def.MaxDegree,
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
	PrintFlags(w, fs)
	fmt.Fprint(w, "  -h, --help\n        this text\n")
}

// Run runs the command name with its arguments, printing to stdout like
// jeprof.
func Run(name string, args []string, stdout io.Writer) error { return run(name, args, stdout, false) }

// run is Run; tune sets the collector for a process that runs only this
// command (see tuneGC).
func run(name string, args []string, stdout io.Writer, tune bool) error {
	r := find(name)
	if r == nil {
		return fmt.Errorf("no command %q", name)
	}
	fs, o := newFlags(r)
	usage := func(w io.Writer) { r.usage(w, fs) }
	pos, err := ParseArgs(fs, args, usage, stdout)
	var ue *UsageError
	if errors.As(err, &ue) {
		// A flag of another renderer: say whose.
		if flagName, ok := strings.CutPrefix(ue.Msg, "unknown flag --"); ok {
			var has []string
			for _, other := range renderers() {
				if ofs, _ := newFlags(&other); ofs.Lookup(flagName) != nil {
					has = append(has, other.name)
				}
			}
			if len(has) > 0 {
				ue.Msg = fmt.Sprintf("%s has no --%s (a flag of %s)", name, flagName, strings.Join(has, " and "))
			}
		}
	}
	if err != nil {
		return err
	}
	switch len(pos) {
	case 2:
	case 0:
		return &UsageError{name + ": missing BINARY and PROFILE", usage}
	case 1:
		return &UsageError{fmt.Sprintf("%s: missing PROFILE after BINARY %q", name, pos[0]), usage}
	default:
		return &UsageError{fmt.Sprintf("%s: want BINARY and PROFILE, got %d arguments (%s); flags start with -",
			name, len(pos), strings.Join(pos, " ")), usage}
	}
	binary, file := pos[0], pos[1]
	if tune {
		if r.write != nil {
			// The profile as a heapprof.Dump, the base as a profile.
			tuneGC(max(20<<20, fileSize(binary)/programDiv), heapFile{file, 2}, heapFile{*o.base, 1})
		} else {
			tuneGC(36<<20, heapFile{file, 1})
		}
	}
	// One profile, one pass: its answers are never asked again, unless a
	// --base profile of the same program follows.
	cache := elfsym.NewOnePassCache()
	if *o.base != "" {
		cache = elfsym.NewCache()
	}
	sym := &elfsym.Local{Binary: binary, SearchPath: o.symbolPath, Cache: cache}
	ctx := context.Background()
	// Reading the program's symbol tables does not need the profile, and
	// the DWARF its addresses need can be decoded while it is parsed.
	go sym.Preload()
	pctx, parsed := context.WithCancel(ctx)
	defer parsed()
	go prefetch(pctx, file, sym)
	var d *heapprof.Dump
	var p *profile.Profile
	if r.write != nil {
		d, err = loadDump(ctx, file, sym, parsed)
	} else {
		p, err = loadProfile(ctx, file, sym, parsed)
	}
	if err != nil {
		return err
	}
	opt := heapprof.Options{Program: binary, NodeCount: *o.nodeCount, NodeFraction: *o.nodeFraction,
		EdgeFraction: *o.edgeFraction, MaxDegree: *o.maxDegree}
	if *o.objects {
		opt.SampleType = "inuse_objects"
	}
	if *o.base != "" {
		if opt.Base, err = loadProfile(ctx, *o.base, sym, func() {}); err != nil {
			return err
		}
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	if r.write != nil {
		err = r.write(d, ctx, w, opt)
	} else {
		err = heapprof.WriteProto(w, p)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", name, file, err)
	}
	return w.Flush()
}

// tuneGC sets the collector of a process that makes one pass over the
// jemalloc dumps files and exits: it collects when the heap reaches a
// limit instead of each time it doubles: fixed (the symbolizer's tables
// and decoded units, the renderer's model) plus what the parsed dumps
// take, a share of each file's size. A dump parsed as a profile takes
// about its size in heap; as a heapprof.Dump, 0.4 of it (bench/heapprof's
// o2: 6.1 of 14.9 MB), counted as half. Measured on bench/heapprof's
// shapes: GOGC=100 let the heap reach twice the ~30 MB live while
// symbolizing (peak RSS 76-80 MB); with 36 MiB plus the size for a profile
// 65-70 MB for the same CPU time. For a Dump (o2, o2-12cu), the limit at
// 32, 36, 40 MiB and 51 (36 plus the size) gave 57, 60, 64, 73 MB of peak
// RSS for 0.22, 0.20, 0.21, 0.19 s of CPU; 32 plus half the size (39 MiB)
// was taken. Once demangleSimple cut a fifth of the garbage (session 11,
// the helper, medians of 11 interleaved runs), 32, 24, 22 and 20 MiB plus
// half the size gave o2-12cu 43.1, 37.1, 36.3, 33.8 MB (a quarter of
// jeprof's is 37.25) for 0.082-0.085 s, and the server shape 0.111, 0.115,
// 0.119, 0.122 s (60x jeprof is 0.132); 20 is taken, ~16 MB above the
// live heap's 14-17 MB. A smaller limit costs CPU, on a small dump most
// (16 MiB plus twice the size: 38 collections instead of 7 on o2-sparse).
// The fixed part grows with the program, a fifth of its file when that is
// more than 20 MiB: the memory a symbolizer may take is budgeted by the
// program it reads (addr2line, jeprof's largest process, holds 1.2 to 1.7
// times the file on these shapes), and every collection not run is CPU
// saved. Session 12, 9 interleaved runs each, medians, 20 MiB against a
// fifth: server (166 MB) 0.118 -> 0.104 s, 34 -> 45 MB; o2 0.118 -> 0.096 s,
// 32 -> 43 MB; o1-60 (162 MB) 0.083 -> 0.076 s, 33 -> 41 MB; o2-sparse
// 0.084 -> 0.073 s; o2-12cu (96 MB: a fifth is under 20 MiB) and so (a
// 0.1 MB program; its library does not count) unchanged.
// Other formats
// (pprof protobuf, gzipped: their parsed size is not the file's) keep Go's
// default, and so does a GOGC or GOMEMLIMIT set in the environment.
func tuneGC(fixed int64, files ...heapFile) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	limit := fixed
	for _, file := range files {
		if file.path == "" {
			continue
		}
		f, err := os.Open(file.path)
		if err != nil {
			return
		}
		head := make([]byte, 8)
		_, err = io.ReadFull(f, head)
		st, serr := f.Stat()
		f.Close()
		if err != nil || serr != nil || string(head) != "heap_v2/" {
			return
		}
		limit += st.Size() / file.div
	}
	debug.SetMemoryLimit(limit)
	debug.SetGCPercent(-1)
}

// programDiv: tuneGC's fixed part is at least a fifth of the program's
// file (see tuneGC).
const programDiv = 5

// fileSize is the size of the file at path, 0 if it cannot be read.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// heapFile is a dump file for tuneGC and what of its size its parse
// takes in heap: 1/div.
type heapFile struct {
	path string
	div  int64
}

// loadProfile parses file and symbolizes it with sym; parsed is called in
// between.
func loadProfile(ctx context.Context, file string, sym heapprof.Symbolizer, parsed func()) (*profile.Profile, error) {
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
	parsed()
	return p, symbolize(ctx, file, p, sym)
}

// loadDump is loadProfile for the renderers: heapprof.ParseDump.
func loadDump(ctx context.Context, file string, sym heapprof.Symbolizer, parsed func()) (*heapprof.Dump, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := heapprof.ParseDump(ctx, f, heapprof.MaxProfileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	parsed()
	return d, symbolize(ctx, file, d.Profile(), sym)
}

// symbolize symbolizes the profile parsed from file unless it came
// symbolized. What the prefetch has not started by now, Symbolize does
// itself.
func symbolize(ctx context.Context, file string, p *profile.Profile, sym heapprof.Symbolizer) error {
	if heapprof.Symbolized(p) {
		return nil
	}
	if err := sym.Symbolize(ctx, p); err != nil {
		return fmt.Errorf("symbolize %s: %w", file, err)
	}
	return nil
}

type stringList []string

func (l *stringList) String() string     { return fmt.Sprint(*l) }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
