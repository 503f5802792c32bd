// Package web serves heapproxy's HTTP view: a list of the stored heap
// profile snapshots, the pprof web UI (graph, flame graph, top, source,
// peek) for any snapshot and any diff of two, Prometheus metrics and a
// health check.
//
// The package does not know the snapshot store; it asks a Store, which the
// server adapts to whatever keeps the snapshots.
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
)

// Entry describes one stored snapshot for the list page.
type Entry struct {
	ID         string
	NodeID     int64
	NodeKind   string
	NodeAddr   string
	TakenAt    time.Time
	TotalBytes int64
	// NoProfile marks a snapshot without a profile (a node that sends only
	// a graph it rendered itself, as newer Doris BEs do): listed, no views.
	NoProfile bool
}

// Store is what the view needs from the snapshot store.
type Store interface {
	// Snapshots lists the stored snapshots, in any order.
	Snapshots(ctx context.Context) ([]Entry, error)
	// Profile returns the snapshot's symbolized profile as pprof protobuf,
	// gzipped or not. An unknown id is an error that wraps ErrNotFound.
	Profile(ctx context.Context, id string) ([]byte, error)
}

// ErrNotFound is what a Store's error wraps for an unknown snapshot id;
// the view answers 404 for it.
var ErrNotFound = errors.New("snapshot not found")

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
	// to print all of it). With it off, file names are shown, never opened.
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

// serveDiffForm turns the list page's diff form (?base=&id=) into the diff URL.
func (h *Handler) serveDiffForm(w http.ResponseWriter, r *http.Request) {
	base, id := r.URL.Query().Get("base"), r.URL.Query().Get("id")
	if base == "" || id == "" {
		http.Error(w, "diff needs base and id", http.StatusBadRequest)
		return
	}
	http.Redirect(w, r, "/diff/"+url.PathEscape(base)+"/"+url.PathEscape(id)+"/", http.StatusSeeOther)
}

// serveView serves one pprof web UI page of a snapshot or diff under prefix.
func (h *Handler) serveView(w http.ResponseWriter, r *http.Request, key viewKey, prefix string) {
	page := "/" + r.PathValue("rest")
	switch page {
	case "/saveconfig", "/deleteconfig":
		// pprof writes these into the user's home directory, which a shared
		// server must not let a browser change.
		http.Error(w, "saving pprof configurations is disabled in heapproxy", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if page == "/download" && key.base == "" {
		// The stored bytes, not pprof's copy, which carries the view's
		// changes (fenced file names, drop_frames, comments).
		h.serveStored(w, r, key.id)
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
		http.NotFound(w, r)
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
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = page, ""
	pw := &pageWriter{w: w}
	ph.ServeHTTP(pw, r2)
	if err := pw.finish(); err != nil {
		h.log.Debug("write pprof page", zap.String("page", page), zap.Error(err))
	}
}

// serveError answers a failed view or download: 404 for an unknown
// snapshot, 413 for one over the size limit, 500 otherwise.
func (h *Handler) serveError(w http.ResponseWriter, what string, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ErrNotFound):
		code = http.StatusNotFound
	case errors.Is(err, context.Canceled):
		return // the client left
	case errors.Is(err, errTooLarge):
		code = http.StatusRequestEntityTooLarge
	}
	if code == http.StatusInternalServerError {
		h.log.Warn("web view", zap.String("what", what), zap.Error(err))
	}
	http.Error(w, err.Error(), code)
}

// serveStored sends a snapshot's profile as the store keeps it.
func (h *Handler) serveStored(w http.ResponseWriter, r *http.Request, id string) {
	data, err := h.opts.Store.Profile(r.Context(), id)
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
	Entry
	Link    string // the view's directory, /snapshots/<id>/
	TotalMB string
	Taken   string
	Prev    string // diff against the node's previous snapshot, or ""
}

func (h *Handler) serveList(w http.ResponseWriter, r *http.Request) {
	entries, err := h.opts.Store.Snapshots(r.Context())
	if err != nil {
		h.log.Warn("list snapshots", zap.Error(err))
		http.Error(w, fmt.Sprintf("list snapshots: %v", err), http.StatusInternalServerError)
		return
	}
	node := r.URL.Query().Get("node")
	if node != "" {
		n, err := strconv.ParseInt(node, 10, 64)
		if err != nil {
			http.Error(w, fmt.Sprintf("bad node id %q", node), http.StatusBadRequest)
			return
		}
		entries = slices.DeleteFunc(entries, func(e Entry) bool { return e.NodeID != n })
	}
	// Oldest first to find each node's previous snapshot, then newest first
	// for the page.
	slices.SortStableFunc(entries, func(a, b Entry) int {
		if c := a.TakenAt.Compare(b.TakenAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	rows := make([]row, len(entries))
	prev := map[int64]string{}
	for i, e := range entries {
		rows[i] = row{
			Entry:   e,
			Link:    "/snapshots/" + url.PathEscape(e.ID) + "/",
			TotalMB: strconv.FormatFloat(float64(e.TotalBytes)/(1<<20), 'f', 1, 64),
			Taken:   e.TakenAt.UTC().Format("2006-01-02 15:04:05 MST"),
		}
		if e.NoProfile {
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
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	err = listPage.Execute(w, struct {
		Rows      []row
		Node      string
		Truncated int
	}{rows, node, truncated})
	if err != nil {
		h.log.Debug("write list page", zap.Error(err))
	}
}

// listPage is plain HTML: the page must work without scripts.
var listPage = template.Must(template.New("list").Parse(`<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>heapproxy snapshots</title>
<style>
body { font-family: sans-serif; margin: 1.5em; }
table { border-collapse: collapse; }
th, td { padding: 0.25em 0.8em; border-bottom: 1px solid #ddd; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
</style>
</head>
<body>
<h1>heapproxy snapshots{{if .Node}} of node {{.Node}}{{end}}</h1>
{{if .Rows}}
<form action="/diff" method="get">
Diff <select name="id">{{range .Rows}}{{if not .NoProfile}}<option value="{{.ID}}">{{.ID}}</option>{{end}}{{end}}</select>
against base <select name="base">{{range $i, $r := .Rows}}{{if not $r.NoProfile}}<option value="{{$r.ID}}"{{if eq $i 1}} selected{{end}}>{{$r.ID}}</option>{{end}}{{end}}</select>
<input type="submit" value="Show diff">
</form>
<table id="snapshots">
<thead><tr><th>Snapshot</th><th>Node</th><th>Kind</th><th>Address</th><th>Taken at</th><th>Total MB</th><th>Views</th></tr></thead>
<tbody>
{{range .Rows}}<tr>
<td>{{if .NoProfile}}{{.ID}}{{else}}<a href="{{.Link}}">{{.ID}}</a>{{end}}</td>
<td><a href="/?node={{.NodeID}}">{{.NodeID}}</a></td>
<td>{{.NodeKind}}</td>
<td>{{.NodeAddr}}</td>
<td>{{.Taken}}</td>
<td class="num">{{.TotalMB}}</td>
<td>{{if .NoProfile}}no profile (the node sent a rendered graph){{else}}<a href="{{.Link}}graph">graph</a> <a href="{{.Link}}flamegraph">flame graph</a> <a href="{{.Link}}top">top</a> <a href="{{.Link}}source">source</a> <a href="{{.Link}}peek">peek</a> <a href="{{.Link}}download">.pb.gz</a>{{if .Prev}} <a href="{{.Prev}}">diff vs previous</a>{{end}}{{end}}</td>
</tr>
{{end}}</tbody>
</table>
{{if .Truncated}}<p>{{.Truncated}} older snapshots not shown.</p>{{end}}
{{else}}
<p>No snapshots yet. Take one with <code>ADMIN EXECUTE ON &lt;id&gt; 'System.print(HeapProf.getInstance().dump_dot_snapshot())'</code>.</p>
{{end}}
<p><a href="/metrics">metrics</a> · <a href="/healthz">health</a></p>
</body>
</html>
`))
