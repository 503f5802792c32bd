// Package web serves heapproxy's HTTP view: a list of the stored heap
// profile snapshots with a chart of each node's in-use bytes over time,
// the pprof web UI (graph, flame graph, top, peek; source with
// Options.LocalSources) for any snapshot and any diff of two, titled with
// the node and time and linked back to the list, Prometheus metrics and a
// health check.
//
// It reads the snapshot store through Store, the two methods of
// snapshot.Store it needs, so the server passes its store as it is.
//
// Access: every request's Host must name the view (Options.ListenAddr's
// host, the loopback names on a loopback listener, Options.AllowedHosts, or
// the IP address the request arrived on), so that a DNS-rebinding page
// cannot read it. Every request but /healthz needs credentials, HTTP basic
// auth checked by Options.Authenticator or Options.BearerToken, unless the
// listener is on loopback and neither is configured. Pages carry a
// Content-Security-Policy that runs pprof's own scripts only.
//
// pprof's web UI reads the user's saved pprof configurations from
// os.UserConfigDir, so $HOME (or $XDG_CONFIG_HOME) must be set; without it
// the views answer 500 with pprof's reason. Graph pages need Graphviz's dot.
package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// Store is what the view reads from the snapshot store: a snapshot.Store
// is one. Implementations are safe for concurrent use.
type Store interface {
	// List lists the stored snapshots without Raw and Profile. The view
	// asks for all of them (the zero Filter) and orders them itself.
	List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error)
	// Get returns one snapshot with its Profile (pprof protobuf, gzipped or
	// not). An unknown id is a *snapshot.ErrNotFound: the view answers 404.
	Get(ctx context.Context, id string) (*snapshot.Snapshot, error)
}

var _ Store = snapshot.Store(nil)

// listed lists the store's snapshots.
func (h *Handler) listed(ctx context.Context) ([]snapshot.Snapshot, error) {
	return h.opts.Store.List(ctx, snapshot.Filter{})
}

// profile reads a snapshot's profile; one whose node sent only a graph has
// none.
func (h *Handler) profile(ctx context.Context, id string) ([]byte, error) {
	s, err := h.opts.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if len(s.Profile) == 0 {
		return nil, fmt.Errorf("snapshot %s holds a graph rendered on the node, not a profile", id)
	}
	return s.Profile, nil
}

// graphOnly reports whether the node sent only a graph it rendered itself
// (newer Doris BEs): the snapshot is listed, with no views.
func graphOnly(s *snapshot.Snapshot) bool { return s.Format == snapshot.FormatDOT }

// notFound reports whether err says the store has no such snapshot.
func notFound(err error) bool {
	var nf *snapshot.ErrNotFound
	return errors.As(err, &nf)
}

// Options configure a Handler. Only Store is required.
type Options struct {
	Store Store
	// Metrics is served on /metrics; nil serves empty metrics.
	Metrics *Metrics
	// Logger receives pprof's messages and request errors; nil discards.
	Logger *zap.Logger
	// MaxProfileBytes bounds a profile, compressed and uncompressed
	// (default 256 MiB).
	MaxProfileBytes int64
	// MaxViews bounds how many snapshot or diff views stay loaded (default 8).
	// Each holds its profile in memory twice (pprof keeps a pristine copy).
	MaxViews int
	// LoadTimeout bounds the store reads of loading one view (default 60 s).
	// pprof's own setup cannot be interrupted; requests waiting for it
	// give up with their own context.
	LoadTimeout time.Duration
	// LocalSources lets the source view read the files a profile names from
	// this machine's disk. Off by default: profiles come from remote nodes,
	// and a node could name any file (/etc/shadow, with line numbers chosen
	// to print all of it). With it off, file names are shown, never opened,
	// and the source view, which would show "???" for every line, is not
	// offered (its URL answers 404 with the reason).
	LocalSources bool
	// MaxListed bounds the rows of the list page, newest first (default 1000).
	MaxListed int
	// MaxConcurrentPages bounds the pprof pages rendered at once (default
	// 4); each graph page runs Graphviz's dot. Others wait their turn.
	MaxConcurrentPages int

	// Access. Every request but /healthz needs credentials (HTTP basic
	// auth checked by Authenticator, or BearerToken) unless the listener is
	// on loopback and neither is configured. Every request's Host must name
	// this view (see AllowedHosts), which defeats DNS rebinding.

	// ListenAddr is the address the view's listener is bound to (the
	// --http flag, "127.0.0.1:9040"): it decides whether the listener is on
	// loopback and is one of the allowed Hosts. Empty: each request's
	// local address stands for it, so a request that arrived on a loopback
	// address counts as local; set it.
	ListenAddr string
	// Authenticator checks basic auth credentials; nil: basic auth is not
	// accepted.
	Authenticator Authenticator
	// BearerToken, when set, is accepted as "Authorization: Bearer <token>"
	// (for Prometheus and scripts); compared in constant time.
	BearerToken string
	// AllowedHosts are further names (host or host:port; the port is not
	// compared) the view answers to, as in a reverse proxy's or DNS name.
	// Always allowed: ListenAddr's host; localhost, 127.0.0.1 and [::1] on
	// a loopback listener; the IP address a request arrived on.
	AllowedHosts []string
}

// Handler serves the HTTP view. Create it with New.
type Handler struct {
	opts    Options
	access  *access
	log     *zap.Logger
	metrics *Metrics
	views   *viewCache
	pages   chan struct{} // a token per page being rendered
	mux     *http.ServeMux
}

// New returns a Handler for the options.
func New(opts Options) (*Handler, error) {
	if opts.Store == nil {
		return nil, errors.New("web: Options.Store is required")
	}
	if opts.MaxProfileBytes <= 0 {
		opts.MaxProfileBytes = 256 << 20
	}
	if opts.MaxViews <= 0 {
		opts.MaxViews = 8
	}
	if opts.LoadTimeout <= 0 {
		opts.LoadTimeout = 60 * time.Second
	}
	if opts.MaxListed <= 0 {
		opts.MaxListed = 1000
	}
	if opts.MaxConcurrentPages <= 0 {
		opts.MaxConcurrentPages = 4
	}
	acc, err := newAccess(opts)
	if err != nil {
		return nil, err
	}
	h := &Handler{opts: opts, access: acc, log: opts.Logger, metrics: opts.Metrics}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	switch {
	case opts.ListenAddr == "":
		h.log.Warn("web: Options.ListenAddr not set; requests arriving on a loopback address count as local")
	case !acc.loopback && opts.Authenticator == nil && opts.BearerToken == "":
		h.log.Warn("web: the HTTP view is not on loopback and has no credentials configured; it will refuse every request but /healthz",
			zap.String("listen", opts.ListenAddr))
	}
	if h.metrics == nil {
		h.metrics = NewMetrics(nil)
	}
	h.views = newViewCache(opts.MaxViews)
	h.pages = make(chan struct{}, opts.MaxConcurrentPages)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.serveList)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("ok"))
	})
	mux.Handle("/metrics", h.metrics)
	mux.HandleFunc("GET /diff", h.serveDiffForm)
	mux.HandleFunc("/snapshots/{id}/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		h.serveView(w, r, viewKey{id: id}, "/snapshots/"+url.PathEscape(id)+"/")
	})
	mux.HandleFunc("/diff/{base}/{id}/{rest...}", func(w http.ResponseWriter, r *http.Request) {
		base, id := r.PathValue("base"), r.PathValue("id")
		h.serveView(w, r, viewKey{id: id, base: base}, "/diff/"+url.PathEscape(base)+"/"+url.PathEscape(id)+"/")
	})
	// Without the trailing slash pprof's relative links would resolve
	// against the parent; send the browser to the directory form.
	mux.HandleFunc("/snapshots/{id}", addSlash)
	mux.HandleFunc("/diff/{base}/{id}", addSlash)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		errorPage(w, http.StatusNotFound, "No page at "+r.URL.Path+".")
	})
	h.mux = mux
	return h, nil
}

// Metrics returns the metrics served on /metrics, for the server to count into.
func (h *Handler) Metrics() *Metrics { return h.metrics }

// ServeHTTP checks the request's Host and credentials, then routes it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	setSecurityHeaders(w.Header())
	if !h.guard(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

func addSlash(w http.ResponseWriter, r *http.Request) {
	u := *r.URL
	u.Path += "/"
	u.RawPath = ""
	if r.URL.RawPath != "" {
		u.RawPath = r.URL.RawPath + "/"
	}
	http.Redirect(w, r, u.String(), http.StatusMovedPermanently)
}

// serveDiffForm turns the list page's diff form (two snapshots checked,
// ?pick=&pick=; the older is the base) or ?base=&id= into the diff's graph.
func (h *Handler) serveDiffForm(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	base, id := q.Get("base"), q.Get("id")
	if picks := q["pick"]; len(picks) > 0 || base == "" || id == "" {
		if len(picks) != 2 || picks[0] == picks[1] {
			errorPage(w, http.StatusBadRequest, fmt.Sprintf("Check two snapshots in the list to see their diff (%d checked).", len(picks)))
			return
		}
		// The list is newest first, so the form sends the newer first;
		// the store's times decide when it knows both.
		id, base = picks[0], picks[1]
		if entries, err := h.listed(r.Context()); err == nil {
			taken := map[string]time.Time{}
			for _, e := range entries {
				taken[e.ID] = e.TakenAt
			}
			ti, okI := taken[id]
			tb, okB := taken[base]
			if okI && okB && ti.Before(tb) {
				id, base = base, id
			}
		}
	}
	http.Redirect(w, r, "/diff/"+url.PathEscape(base)+"/"+url.PathEscape(id)+"/graph", http.StatusSeeOther)
}

// serveView serves one pprof web UI page of a snapshot or diff under prefix.
func (h *Handler) serveView(w http.ResponseWriter, r *http.Request, key viewKey, prefix string) {
	page := "/" + r.PathValue("rest")
	switch page {
	case "/saveconfig", "/deleteconfig":
		// pprof writes these into the user's home directory, which a shared
		// server must not let a browser change.
		errorPage(w, http.StatusForbidden, "Saving pprof configurations is disabled in heapproxy.")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		errorPage(w, http.StatusMethodNotAllowed, "Method not allowed.")
		return
	}
	if page == "/download" && key.base == "" {
		// The stored bytes, not pprof's copy, which carries the view's
		// changes (fenced file names, drop_frames, comments).
		h.serveStored(w, r, key.id)
		return
	}
	switch {
	case page == "/disasm":
		// noObjTool: the binaries are on the nodes.
		errorPage(w, http.StatusNotFound, "Disassembly needs the node's binaries, which heapproxy does not read.")
		return
	case page == "/source" && !h.opts.LocalSources:
		errorPage(w, http.StatusNotFound, "The source view is off: profiles come from remote nodes, and heapproxy does not "+
			"read the source files they name from its own disk. Per-line totals are in top and graph by line:",
			prefix+"top?g=lines", prefix+"graph?g=lines")
		return
	}
	v, err := h.views.get(r.Context(), key, func() (*view, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), h.opts.LoadTimeout)
		defer cancel()
		return h.loadView(ctx, key)
	})
	if err != nil {
		h.serveError(w, prefix, err)
		return
	}
	ph := v.handlers[page]
	if ph == nil {
		errorPage(w, http.StatusNotFound, "pprof has no page "+page+".", prefix+"graph")
		return
	}
	select {
	case h.pages <- struct{}{}:
		defer func() { <-h.pages }()
	case <-r.Context().Done():
		return
	}
	if err := h.resetDriver(); err != nil {
		h.log.Warn("reset pprof config", zap.Error(err))
		errorPage(w, http.StatusInternalServerError, err.Error())
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = page, ""
	dw := &dressWriter{ResponseWriter: w}
	pw := &pageWriter{w: dw}
	ph.ServeHTTP(pw, r2)
	if err := pw.finish(); err != nil {
		h.log.Debug("write pprof page", zap.String("page", page), zap.Error(err))
	}
	err = dw.flush(func(body []byte) ([]byte, error) {
		return dress(body, h.chrome(r.Context(), key, page), h.opts.LocalSources)
	})
	if err != nil {
		h.log.Debug("write pprof page", zap.String("page", page), zap.Error(err))
	}
}

// serveError answers a failed view or download: 404 for an unknown
// snapshot, 413 for one over the size limit, 500 otherwise.
func (h *Handler) serveError(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError
	switch {
	case notFound(err):
		code = http.StatusNotFound
	case errors.Is(err, context.Canceled):
		return // the client left
	case errors.Is(err, errTooLarge):
		code = http.StatusRequestEntityTooLarge
	}
	if code == http.StatusInternalServerError {
		h.log.Warn("web view", zap.String("what", what), zap.Error(err))
	}
	errorPage(w, code, err.Error())
}

// serveStored sends a snapshot's profile as the store keeps it.
func (h *Handler) serveStored(w http.ResponseWriter, r *http.Request, id string) {
	data, err := h.profile(r.Context(), id)
	if err != nil {
		h.serveError(w, "download "+id, fmt.Errorf("read snapshot %s: %w", id, err))
		return
	}
	name, typ := id+".pb", "application/vnd.google.protobuf"
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		name, typ = id+".pb.gz", "application/vnd.google.protobuf+gzip"
	}
	w.Header().Set("Content-Type", typ)
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": name}))
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

// row is one line of the list page.
type row struct {
	snapshot.Snapshot
	NoProfile bool   // graphOnly
	Link      string // the view's directory, /snapshots/<id>/
	Download  string // the stored profile, /snapshots/<id>/download
	TotalMB   string
	Taken     string
	Prev      string // diff against the node's previous snapshot, or ""
}

func (h *Handler) serveList(w http.ResponseWriter, r *http.Request) {
	entries, err := h.listed(r.Context())
	if err != nil {
		h.log.Warn("list snapshots", zap.Error(err))
		errorPage(w, http.StatusInternalServerError, fmt.Sprintf("list snapshots: %v", err))
		return
	}
	node := r.URL.Query().Get("node")
	if node != "" {
		n, err := strconv.ParseInt(node, 10, 64)
		if err != nil {
			errorPage(w, http.StatusBadRequest, fmt.Sprintf("bad node id %q", node))
			return
		}
		entries = slices.DeleteFunc(entries, func(e snapshot.Snapshot) bool { return e.NodeID != n })
	}
	// Oldest first to find each node's previous snapshot, then newest first
	// for the page.
	slices.SortStableFunc(entries, func(a, b snapshot.Snapshot) int {
		if c := a.TakenAt.Compare(b.TakenAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	rows := make([]row, len(entries))
	prev := map[int64]string{}
	for i, e := range entries {
		link := "/snapshots/" + url.PathEscape(e.ID) + "/"
		rows[i] = row{
			Snapshot:  e,
			NoProfile: graphOnly(&e),
			Link:      link,
			Download:  link + "download",
			TotalMB:   mebibytes(e.TotalBytes),
			Taken:     e.TakenAt.UTC().Format("2006-01-02 15:04:05 MST"),
		}
		if rows[i].NoProfile {
			continue
		}
		if p, ok := prev[e.NodeID]; ok {
			rows[i].Prev = "/diff/" + url.PathEscape(p) + "/" + url.PathEscape(e.ID) + "/"
		}
		prev[e.NodeID] = e.ID
	}
	slices.Reverse(rows)
	truncated := 0
	if len(rows) > h.opts.MaxListed {
		truncated = len(rows) - h.opts.MaxListed
		rows = rows[:h.opts.MaxListed]
	}
	// The charts show the rows listed.
	shown := make([]snapshot.Snapshot, len(rows))
	for i, r := range rows {
		shown[i] = r.Snapshot
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	err = listPage.Execute(w, struct {
		Rows         []row
		Charts       []chart
		Node         string
		Truncated    int
		LocalSources bool
		Origin       string
	}{rows, buildCharts(shown), node, truncated, h.opts.LocalSources, origin(r)})
	if err != nil {
		h.log.Debug("write list page", zap.Error(err))
	}
}

// listPage is plain HTML and SVG: the page must work without scripts.
var listPage = template.Must(template.New("list").Parse(`<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>heapproxy: snapshots{{if .Node}} of node {{.Node}}{{end}}</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
h2 { font-size: 1.05em; margin: 1.2em 0 0.2em; }
h2 small { font-weight: normal; color: #555; }
svg.chart { display: block; font: 11px sans-serif; }
svg.chart .grid { stroke: #e4e4e4; }
svg.chart .axis { stroke: #999; }
svg.chart .ylabel { text-anchor: end; fill: #444; }
svg.chart .xlabel { fill: #444; }
svg.chart .seg line { stroke: transparent; stroke-width: 14; stroke-linecap: round; }
svg.chart .seg:hover line, svg.chart .seg:focus line { stroke: rgba(0, 0, 0, 0.12); }
svg.chart .point .hit { fill: transparent; }
svg.chart a.point:hover .dot, svg.chart a.point:focus .dot { stroke: #000; stroke-width: 2; }
svg.chart .nolink .dot { fill: #fff; }
p.help { color: #444; margin: 0.3em 0 1em; }
code { background: #f2f2f2; padding: 0 0.2em; }
</style>
</head>
<body>
<h1>heapproxy snapshots{{if .Node}} of node {{.Node}}{{end}}</h1>
{{if .Node}}<p><a href="/">All nodes</a></p>{{end}}
{{if .Rows}}
<section id="charts">
{{range .Charts}}<h2>In-use bytes of node {{.NodeID}} <small>{{.NodeKind}}{{if .NodeAddr}}, {{.NodeAddr}}{{end}} · {{len .Points}} snapshots, {{.Caption}}</small></h2>
<svg class="chart" id="chart-{{.NodeID}}" data-node="{{.NodeID}}" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" role="img" aria-label="In-use bytes of node {{.NodeID}} over time">
{{$c := .}}{{range .YTicks}}<line class="grid" x1="{{$c.PlotX}}" x2="{{$c.PlotRight}}" y1="{{.Pos}}" y2="{{.Pos}}"/><text class="ylabel" x="{{$c.PlotX}}" dx="-6" y="{{.Pos}}" dy="4">{{.Label}}</text>
{{end}}<line class="axis" x1="{{.PlotX}}" x2="{{.PlotRight}}" y1="{{.PlotBottom}}" y2="{{.PlotBottom}}"/>
{{range .XTicks}}<line class="axis" x1="{{.Pos}}" x2="{{.Pos}}" y1="{{$c.PlotBottom}}" y2="{{$c.TickBottom}}"/><text class="xlabel" x="{{.Pos}}" y="{{$c.Height}}" dy="-8" text-anchor="{{.Anchor}}">{{.Label}}</text>
{{end}}<polyline class="line" fill="none" stroke="{{.Color}}" stroke-width="2" points="{{.Line}}"/>
{{range .Segments}}<a class="seg" href="{{.Href}}"><title>{{.Title}}</title><line x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/></a>
{{end}}{{range .Points}}{{if .Href}}<a class="point" href="{{.Href}}" data-id="{{.ID}}"><title>{{.Title}}</title><circle class="hit" cx="{{.X}}" cy="{{.Y}}" r="10"/><circle class="dot" cx="{{.X}}" cy="{{.Y}}" r="5" fill="{{$c.Color}}"/></a>
{{else}}<g class="point nolink" data-id="{{.ID}}"><title>{{.Title}}</title><circle class="dot" cx="{{.X}}" cy="{{.Y}}" r="5" stroke="{{$c.Color}}" stroke-width="2"/></g>
{{end}}{{end}}</svg>
{{end}}<p class="help">Click a point for its snapshot's graph, a line between two points for their diff; to diff any two snapshots, check them below.</p>
</section>
<form id="diff" action="/diff" method="get">
<p><input type="submit" value="Diff the two checked snapshots"> (the older is the base)</p>
<table id="snapshots">
<thead><tr><th>Diff</th><th>Snapshot</th><th>Node</th><th>Kind</th><th>Address</th><th>Taken at</th><th>Total MB</th><th>Views</th></tr></thead>
<tbody>
{{range .Rows}}<tr>
<td>{{if not .NoProfile}}<input type="checkbox" name="pick" value="{{.ID}}" aria-label="diff {{.ID}}">{{end}}</td>
<td>{{if .NoProfile}}{{.ID}}{{else}}<a href="{{.Link}}">{{.ID}}</a>{{end}}</td>
<td><a href="/?node={{.NodeID}}">{{.NodeID}}</a></td>
<td>{{.NodeKind}}</td>
<td>{{.NodeAddr}}</td>
<td>{{.Taken}}</td>
<td class="num">{{.TotalMB}}</td>
<td>{{if .NoProfile}}no profile (the node sent a rendered graph){{else}}<a href="{{.Link}}graph">graph</a> <a href="{{.Link}}flamegraph">flame graph</a> <a href="{{.Link}}top">top</a> <a href="{{.Link}}peek">peek</a>{{if $.LocalSources}} <a href="{{.Link}}source">source</a>{{end}} <a href="{{.Download}}" title="{{.Download}}">.pb.gz</a>{{if .Prev}} <a href="{{.Prev}}">diff vs previous</a>{{end}}{{end}}</td>
</tr>
{{end}}</tbody>
</table>
</form>
{{if .Truncated}}<p>{{.Truncated}} older snapshots not shown.</p>{{end}}
<p class="help">A snapshot's profile as stored (pprof protobuf, gzipped) is at <code>/snapshots/&lt;id&gt;/download</code> (the <em>.pb.gz</em> links), e.g.
<code>go tool pprof -http : {{.Origin}}/snapshots/&lt;id&gt;/download</code>; a diff's at <code>/diff/&lt;base&gt;/&lt;id&gt;/download</code>.</p>
{{else}}
<p>No snapshots yet. Take one with <code>ADMIN EXECUTE ON &lt;id&gt; 'System.print(HeapProf.getInstance().dump_dot_snapshot())'</code>.</p>
{{end}}
<p><a href="/metrics">metrics</a> · <a href="/healthz">health</a></p>
</body>
</html>
`))

// origin is the view's address as the browser named it (the Host was
// checked by guard), for commands to copy. The view has no TLS of its own.
func origin(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}
