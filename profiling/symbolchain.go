package profiling

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// The symbolizer chain. A dump's addresses are named, per mapped file, by
// the first of these that can:
//
//  1. the files on this machine: the node's binary (or, without one, the
//     program found under symbol_path by its mapped path) and the shared
//     libraries (under symbol_path, then at their own path), each with its
//     DWARF, or a separate debug file found by build-id or .gnu_debuglink
//     under symbol_path and /usr/lib/debug;
//  2. a debuginfod server (symbol_servers), asked by the build-id of a file
//     of step 1 that has no DWARF (a stripped program or library); what it
//     sends is kept in the symbol cache and read as in step 1;
//  3. the node's own symbolizer (/pprof/symbol and the like), for the
//     addresses still unnamed;
//  4. the raw address, in 16 hex digits as jeprof prints addresses it has
//     no symbol for.
//
// A symbolizer's failure is never the dump's: the graph is rendered with
// what could be named, and the profile carries one warning per mapped file
// with unnamed addresses saying what each step lacked (Warnings), also
// logged in one line.

// warningPrefix marks the service's warnings among a profile's comments
// (kept in the snapshot's pprof protobuf: `go tool pprof -comments`).
const warningPrefix = "heapproxy warning: "

// Warnings returns the warnings the service recorded in a profile.
func Warnings(p *profile.Profile) []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, c := range p.Comments {
		if w, ok := strings.CutPrefix(c, warningPrefix); ok {
			out = append(out, w)
		}
	}
	return out
}

// newDebuginfod builds the debuginfod client of Options.SymbolServers.
func newDebuginfod(opt Options) (*symbolize.Debuginfod, error) {
	if len(opt.SymbolServers) == 0 {
		return nil, nil
	}
	dir := opt.SymbolCacheDir
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return nil, fmt.Errorf("symbol_cache.dir is not set and there is no user cache directory: %w", err)
		}
		dir = filepath.Join(base, "heapproxy", "debuginfod")
	}
	d, err := symbolize.NewDebuginfod(symbolize.DebuginfodOptions{
		Servers: opt.SymbolServers, Dir: dir, MaxBytes: opt.SymbolCacheMaxBytes, Timeout: opt.SymbolServerTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("symbol_servers: %w", err)
	}
	return d, nil
}

// chainRun is one profile's trip through the chain: what each step
// lacked, for the warnings.
type chainRun struct {
	node      backends.Node
	binaryErr error                       // step 1: the configured binary could not be read
	program   string                      // step 1: the program found under symbol_path
	objects   map[string]symbolize.Object // step 1 and 2, by mapped file
	servers   bool                        // step 2 configured
	remoteErr error                       // step 3
	remoteRan bool
}

// symbolizeChain names p's addresses (see the chain above) and returns
// the warnings. Only the end of ctx is an error.
func (s *Service) symbolizeChain(ctx context.Context, node backends.Node, p *profile.Profile) ([]string, error) {
	run := &chainRun{node: node, servers: s.debuginfod != nil, objects: map[string]symbolize.Object{}}
	local := &symbolize.Local{Binary: node.Binary, SearchPath: s.opt.SymbolPath, Cache: s.opt.Symbols}
	if node.Binary == "" {
		if m := symbolize.MainProgram(p); m != nil {
			run.program = local.FindInSearchPath(m.File)
			local.Binary = run.program
		}
	}
	// Steps 1 and 2: what this machine lacks is fetched first (a wait on
	// the network, which holds no dump slot), then every file is read.
	var objs []symbolize.Object
	if s.debuginfod != nil {
		local.SearchPath = append(slices.Clone(local.SearchPath), s.debuginfod.Dir())
		objs = s.debuginfod.Prefetch(ctx, local, p)
	} else {
		objs = local.Objects(p)
	}
	for _, o := range objs {
		run.objects[o.File] = o
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("symbolize dump of node %d: %w", node.ID, context.Cause(ctx))
	}
	release, err := s.dumpSlot(ctx, node)
	if err != nil {
		return nil, err
	}
	err = local.Symbolize(ctx, p)
	if err != nil && ctx.Err() == nil && local.Binary != "" {
		// The binary is missing or unreadable: the libraries can still
		// be read.
		run.binaryErr = err
		local.Binary = ""
		err = local.Symbolize(ctx, p)
	}
	release()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("symbolize dump of node %d: %w", node.ID, context.Cause(ctx))
	}
	if err != nil {
		run.binaryErr = errors.Join(run.binaryErr, err)
	}

	// Step 3: the node names what is left.
	pending := unnamed(p)
	if len(pending) > 0 {
		run.remoteRan = true
		remote, err := s.opt.Registry.RemoteSymbolizer(node)
		if err == nil {
			err = remote.Symbolize(ctx, p)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("symbolize dump of node %d: %w", node.ID, context.Cause(ctx))
		}
		run.remoteErr = err
	}
	// Step 4: the rest keeps what step 1 gave it, jeprof's rendering of an
	// address it has no symbol for (hex, or "??").
	for loc, lines := range pending {
		if len(loc.Line) == 0 {
			loc.Line = lines
		}
	}
	pruneFunctions(p)
	return run.warnings(p), nil
}

// unnamed takes the lines off every location step 1 could not name
// (jeprof's hex address or "??" on every frame), returning them.
func unnamed(p *profile.Profile) map[*profile.Location][]profile.Line {
	out := map[*profile.Location][]profile.Line{}
	for _, loc := range p.Location {
		if isUnnamed(loc) {
			out[loc] = loc.Line
			loc.Line = nil
		}
	}
	return out
}

func isUnnamed(loc *profile.Location) bool {
	for _, l := range loc.Line {
		if l.Function == nil {
			continue
		}
		n := l.Function.Name
		if n != "??" && n != fmt.Sprintf("%016x", loc.Address) && n != fmt.Sprintf("0x%016x", loc.Address) {
			return false
		}
	}
	return true
}

// pruneFunctions drops the functions no line refers to any more.
func pruneFunctions(p *profile.Profile) {
	used := make(map[*profile.Function]bool, len(p.Function))
	for _, loc := range p.Location {
		for _, l := range loc.Line {
			used[l.Function] = true
		}
	}
	p.Function = slices.DeleteFunc(p.Function, func(f *profile.Function) bool { return !used[f] })
}

// outsideMappings names the addresses of no mapped file in warnings.
const outsideMappings = "(addresses outside the mapped files)"

// warnings are one line per mapped file with addresses still unnamed.
func (r *chainRun) warnings(p *profile.Profile) []string {
	type count struct{ unnamed, all map[uint64]bool }
	counts := map[string]*count{}
	for _, loc := range p.Location {
		file := outsideMappings
		if loc.Mapping != nil {
			file = loc.Mapping.File
		}
		c := counts[file]
		if c == nil {
			c = &count{unnamed: map[uint64]bool{}, all: map[uint64]bool{}}
			counts[file] = c
		}
		c.all[loc.Address] = true
		if isUnnamed(loc) {
			c.unnamed[loc.Address] = true
		}
	}
	files := make([]string, 0, len(counts))
	for f, c := range counts {
		if len(c.unnamed) > 0 {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	var out []string
	for _, f := range files {
		c := counts[f]
		out = append(out, fmt.Sprintf("node %d: %d of %d addresses in %s have no name and are shown as hex: %s",
			r.node.ID, len(c.unnamed), len(c.all), f, strings.Join(r.reasons(f), "; ")))
	}
	return out
}

// reasons says, step by step, why a mapped file's addresses are unnamed.
func (r *chainRun) reasons(file string) []string {
	o, known := r.objects[file]
	var local, server string
	switch {
	case file == outsideMappings:
		local = "no mapped file holds them"
	case !known:
		local = "not an executable file mapping"
	case o.Image == "" && !symbolize.IsLibraryPath(file) && r.binaryErr != nil:
		local = fmt.Sprintf("the binary: %v", r.binaryErr)
	case o.Image == "" && !symbolize.IsLibraryPath(file):
		local = "no binary configured for the node and none found under symbol_path"
	case o.Image == "":
		local = "not found under symbol_path nor on this machine"
	case !o.DebugInfo:
		local = fmt.Sprintf("%s has no symbol for them and no debug information", o.Image)
	default:
		local = fmt.Sprintf("%s has no symbol for them", o.Image)
	}
	switch {
	case !r.servers:
		server = "no symbol_servers configured"
	case !known || file == outsideMappings:
		server = "not asked (no file)"
	case o.Fetched != "":
		server = fmt.Sprintf("its debug file %s has no symbol for them", o.Fetched)
	case o.Err != nil:
		server = o.Err.Error()
	default:
		server = "not asked: the local file has debug information"
	}
	node := "the node named none of them"
	if r.remoteErr != nil {
		node = r.remoteErr.Error()
	}
	return []string{"local files: " + local, "debuginfod: " + server, "node symbolizer: " + node}
}
