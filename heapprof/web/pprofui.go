package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof"
)

// driverMu serializes calls into pprof's driver. It is the package's one
// piece of global state, and deliberately so: what it guards is global too.
// pprof keeps the flags of its last call in package variables (its
// "current config", read again by every web UI request), so two calls at
// once would race and a call's flags would leak into the next.
var driverMu sync.Mutex

// sourcePrefix marks file names that came from a remote node. pprof opens
// absolute source file names as they are and looks relative ones up in the
// source path and all its parents, so a name from a profile could read any
// local file; with this prefix (and the source path "/") the name is shown
// but resolves to "/node:/...", which does not exist (and only root could
// create).
const sourcePrefix = "node:"

// viewKey names a snapshot view (base == "") or a diff view.
type viewKey struct{ id, base string }

func (k viewKey) String() string {
	if k.base == "" {
		return k.id
	}
	return k.base + ".." + k.id
}

// view is one loaded pprof web UI: its page handlers by path ("/graph", ...).
type view struct {
	handlers map[string]http.Handler
}

// loadView fetches the profiles of key and runs pprof's driver on them.
func (h *Handler) loadView(ctx context.Context, key viewKey) (*view, error) {
	profiles := map[string]*profile.Profile{}
	p, err := h.readProfile(ctx, key.id)
	if err != nil {
		return nil, err
	}
	profiles["snapshot:"+key.id] = p
	args := []string{"snapshot:" + key.id}
	// pprof shows comments in every page's legend: say what is shown.
	p.Comments = append(p.Comments, "Snapshot: "+key.id)
	if key.base != "" {
		b, err := h.readProfile(ctx, key.base)
		if err != nil {
			return nil, fmt.Errorf("base: %w", err)
		}
		p.Comments = append(p.Comments, "Base: "+key.base)
		profiles["base:"+key.base] = b
		// pprof's -diff_base: the base is subtracted and marked, so the views
		// show growth and shrinkage against it, not the difference's share of
		// the base.
		args = append([]string{"-diff_base=base:" + key.base}, args...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return runDriver(profiles, args, h.opts.LocalSources, h.log)
}

// readProfile reads and parses one stored profile, within the size limit.
func (h *Handler) readProfile(ctx context.Context, id string) (*profile.Profile, error) {
	data, err := h.profile(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	limit := h.opts.MaxProfileBytes
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("snapshot %s: profile of %d bytes: %w", id, len(data), errTooLarge)
	}
	// profile.ParseData would gunzip without bound; do it here with one.
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: gunzip profile: %w", id, err)
		}
		raw, err := io.ReadAll(io.LimitReader(zr, limit+1))
		if err != nil {
			return nil, fmt.Errorf("snapshot %s: gunzip profile: %w", id, err)
		}
		if int64(len(raw)) > limit {
			return nil, fmt.Errorf("snapshot %s: profile over %d bytes uncompressed: %w", id, limit, errTooLarge)
		}
		data = raw
	}
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: parse profile: %w", id, err)
	}
	defuseDOTStrings(p)
	if p.DropFrames == "" {
		// pprof then cuts stacks at the allocator as jeprof does; without it
		// a jemalloc profile charges everything to jemalloc's internals.
		p.DropFrames = allocatorFrames()
	}
	return p, nil
}

// dotQuoteFree replaces the two characters that end or escape a quoted DOT
// string with look-alikes.
var dotQuoteFree = strings.NewReplacer(`"`, "\uff02", `\`, "\u29f5")

// defuseDOTStrings makes the profile's strings that pprof's graph page
// writes into its DOT source unescaped safe to write there: sample label
// keys and values and units (its tag boxes), file names and mapping file
// names (node labels at file and line granularity). pprof escapes
// function names itself. Without this a node could send a label value
// such as `"];X[URL="javascript:..."];Y[label="` and have Graphviz draw a
// link of its choosing into the page.
func defuseDOTStrings(p *profile.Profile) {
	defuse := func(s string) string {
		if strings.ContainsAny(s, `"\`) {
			return dotQuoteFree.Replace(s)
		}
		return s
	}
	for _, f := range p.Function {
		f.Filename = defuse(f.Filename)
	}
	for _, m := range p.Mapping {
		m.File = defuse(m.File)
	}
	for _, s := range p.Sample {
		if len(s.Label) > 0 {
			l := make(map[string][]string, len(s.Label))
			for k, vs := range s.Label {
				out := make([]string, len(vs))
				for i, v := range vs {
					out[i] = defuse(v)
				}
				l[defuse(k)] = out
			}
			s.Label = l
		}
		if len(s.NumLabel) > 0 {
			nl := make(map[string][]int64, len(s.NumLabel))
			for k, v := range s.NumLabel {
				nl[defuse(k)] = v
			}
			s.NumLabel = nl
		}
		if len(s.NumUnit) > 0 {
			nu := make(map[string][]string, len(s.NumUnit))
			for k, vs := range s.NumUnit {
				out := make([]string, len(vs))
				for i, v := range vs {
					out[i] = defuse(v)
				}
				nu[defuse(k)] = out
			}
			s.NumUnit = nu
		}
	}
}

// allocatorFrames is a drop_frames regexp (pprof anchors it and matches
// function names without their argument lists) of the allocator entry
// points jeprof cuts heap stacks at. Names are matched whole, so Go
// profiles (runtime.mallocgc) are unaffected.
func allocatorFrames() string {
	names := heapprof.AllocatorFrames()
	for i, n := range names {
		names[i] = regexp.QuoteMeta(n)
	}
	return strings.Join(names, "|")
}

var errTooLarge = errors.New("profile too large")

// runDriver runs pprof's driver in web UI mode on the profiles (by source
// name, as args name them) and returns the page handlers it made.
func runDriver(profiles map[string]*profile.Profile, sources []string, localSources bool, log *zap.Logger) (*view, error) {
	if !localSources {
		for _, p := range profiles {
			fenceSourceFiles(p)
		}
	}
	// Every flag pprof reads into its current config is given on every
	// call (see pristineFlags), so nothing from an earlier call survives.
	args := []string{
		// A port is given so pprof does not open a listener to pick one;
		// nothing listens there, HTTPServer below keeps the handlers.
		"-http=localhost:0",
		"-no_browser",
		"-flat",
	}
	if !localSources {
		args = append(args, "-source_path=/")
	}
	args = append(args, sources...)

	var handlers map[string]http.Handler
	opts := &driver.Options{
		Writer:  refuseWriter{},
		Flagset: newFlagSet(args),
		Fetch:   fetcher(profiles),
		Sym:     noSymbolizer{},
		Obj:     noObjTool{},
		UI:      &driverUI{log: log},
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			handlers = a.Handlers
			return nil
		},
		// Profiles come from the store only; pprof must not fetch URLs.
		HTTPTransport: refuseTransport{},
	}
	if err := callDriver(opts); err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	if handlers == nil {
		return nil, errors.New("pprof: no web UI handlers")
	}
	return &view{handlers: handlers}, nil
}

// resetDriver puts pprof's current config back to this package's
// defaults. The web UI's page handlers read that config on every request,
// so another user of pprof's driver in this process (a -hide, a -cum)
// would otherwise change the pages of views loaded before. The source
// path is part of that config too, so all Handlers of a process must agree
// on Options.LocalSources. It runs the
// driver on an empty profile: 60 µs, measured.
func (h *Handler) resetDriver() error {
	vt := &profile.ValueType{Type: "none", Unit: "count"}
	empty := &profile.Profile{SampleType: []*profile.ValueType{vt}, PeriodType: vt}
	_, err := runDriver(map[string]*profile.Profile{"reset": empty}, []string{"reset"}, h.opts.LocalSources, h.log)
	return err
}

// callDriver runs pprof's driver under driverMu. A panic in pprof (on a
// profile it did not expect) becomes an error: views load outside any
// request, where nothing else would recover it.
func callDriver(opts *driver.Options) (err error) {
	driverMu.Lock()
	defer driverMu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return driver.PProf(opts)
}

// fenceSourceFiles marks the profile's file names as remote (sourcePrefix),
// cleaned so that ".." cannot climb out of the fence.
func fenceSourceFiles(p *profile.Profile) {
	for _, f := range p.Function {
		if f.Filename != "" {
			f.Filename = sourcePrefix + path.Clean("/"+f.Filename)
		}
	}
}

// fetcher hands pprof the profiles loaded from the store, by source name.
type fetcher map[string]*profile.Profile

func (f fetcher) Fetch(src string, _, _ time.Duration) (*profile.Profile, string, error) {
	p, ok := f[src]
	if !ok {
		// Never nil, nil: pprof would then read src as a file or URL.
		return nil, "", fmt.Errorf("unknown profile source %q", src)
	}
	// A copy per call: pprof scales the base by -1 in place, and a diff of
	// a snapshot against itself fetches one profile twice. The empty source
	// URL keeps pprof from saving a copy under $HOME/pprof.
	return p.Copy(), "", nil
}

// noSymbolizer leaves profiles alone: snapshots are stored symbolized.
type noSymbolizer struct{}

func (noSymbolizer) Symbolize(string, driver.MappingSources, *profile.Profile) error { return nil }

// noObjTool opens no binaries: pprof's default runs objdump and nm on file
// names from the profile, costs 35-50 ms per call and the binaries live on
// the nodes anyway. Disassembly is therefore unavailable.
type noObjTool struct{}

var errNoObj = errors.New("binaries are not read by heapproxy's web view")

func (noObjTool) Open(string, uint64, uint64, uint64, string) (driver.ObjFile, error) {
	return nil, errNoObj
}

func (noObjTool) Disasm(string, uint64, uint64, bool) ([]driver.Inst, error) {
	return nil, errNoObj
}

// refuseWriter refuses output files; in web UI mode pprof writes none.
type refuseWriter struct{}

func (refuseWriter) Open(name string) (io.WriteCloser, error) {
	return nil, fmt.Errorf("writing %s is disabled", name)
}

type refuseTransport struct{}

func (refuseTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("fetching %s is disabled in the web view", r.URL.Redacted())
}

// driverUI is pprof's console: no terminal, no browser, messages to the log.
type driverUI struct{ log *zap.Logger }

func (u *driverUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (u *driverUI) Print(args ...any)                   { u.log.Debug("pprof", zap.String("msg", fmt.Sprint(args...))) }
func (u *driverUI) PrintErr(args ...any)                { u.log.Info("pprof", zap.String("msg", fmt.Sprint(args...))) }
func (u *driverUI) IsTerminal() bool                    { return false }
func (u *driverUI) WantBrowser() bool                   { return false }
func (u *driverUI) SetAutoComplete(func(string) string) {}

// pristineFlags are the defaults of the flags pprof copies into its
// current config (internal/driver config.go, defaultConfig and the zero
// values). pprof declares those flags with the previous call's values as
// defaults; flagSet declares them with these instead, which resets them.
// The choice flags (-flat/-cum, -functions/-lines/...) are booleans pprof
// declares false and cannot be reset by a default: the sort is reset by
// passing -flat, and the granularity is never set by this package.
var pristineFlags = map[string]any{
	"output": "", "call_tree": false, "relative_percentages": false,
	"unit": "minimum", "compact_labels": false, "source_path": "", "trim_path": "",
	"intel_syntax": false, "mean": false, "sample_index": "", "divide_by": 1.0,
	"normalize": false, "tagroot": "", "tagleaf": "", "drop_negative": false,
	"nodecount": -1, "nodefraction": 0.005, "edgefraction": 0.001, "trim": true,
	"focus": "", "ignore": "", "prune_from": "", "hide": "", "show": "",
	"show_from": "", "tagfocus": "", "tagignore": "", "tagshow": "", "taghide": "",
	"noinlines": false, "showcolumns": false,
}

// flagSet is pprof's FlagSet over a fixed argument list.
type flagSet struct {
	fs    *flag.FlagSet
	args  []string
	usage string
}

func newFlagSet(args []string) *flagSet {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flagSet{fs: fs, args: args}
}

func pristine[T any](name string, def T) T {
	if v, ok := pristineFlags[name].(T); ok {
		return v
	}
	return def
}

func (f *flagSet) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, pristine(name, def), usage)
}

func (f *flagSet) Int(name string, def int, usage string) *int {
	return f.fs.Int(name, pristine(name, def), usage)
}

func (f *flagSet) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, pristine(name, def), usage)
}

func (f *flagSet) String(name string, def string, usage string) *string {
	return f.fs.String(name, pristine(name, def), usage)
}

func (f *flagSet) StringList(name string, def string, usage string) *[]*string {
	l := &stringList{}
	if def != "" {
		l.values = []*string{&def}
	}
	f.fs.Var(l, name, usage)
	return &l.values
}

func (f *flagSet) ExtraUsage() string      { return f.usage }
func (f *flagSet) AddExtraUsage(eu string) { f.usage += eu }

// Parse parses the fixed arguments; they are this package's own, so an
// error is a bug, reported by returning no arguments (pprof then fails
// with "no profile source specified").
func (f *flagSet) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		return nil
	}
	return f.fs.Args()
}

// stringList is a repeatable string flag.
type stringList struct{ values []*string }

func (l *stringList) String() string { return fmt.Sprint(len(l.values)) }
func (l *stringList) Set(s string) error {
	l.values = append(l.values, &s)
	return nil
}

// compile-time checks that the adapters satisfy pprof's interfaces.
var (
	_ driver.FlagSet    = (*flagSet)(nil)
	_ driver.Fetcher    = fetcher(nil)
	_ driver.Symbolizer = noSymbolizer{}
	_ driver.ObjTool    = noObjTool{}
	_ driver.UI         = (*driverUI)(nil)
	_ driver.Writer     = refuseWriter{}
)
