package web

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// What heapproxy adds to pprof's pages: a title naming the node and the
// time, a bar with links back to the list, to the neighbouring snapshots'
// diffs and to the profile's download; and, without local sources, no
// links to views that cannot show anything.

// pageChrome is what a pprof page of one view is given.
type pageChrome struct {
	Title string
	Page  string // "graph", "flame graph", ...
	Diff  bool
	Snap  snapInfo
	Base  snapInfo // of a diff
	// Prev and Next are the same page of the diffs against the node's
	// previous snapshot and of the next one against this; "" if none.
	Prev, Next string
	// Download is the profile's URL: the stored .pb.gz of a snapshot,
	// pprof's profile of the difference for a diff.
	Download string
}

// snapInfo is what the bar says of one snapshot.
type snapInfo struct {
	ID       string
	Known    bool // listed by the store
	NodeID   int64
	NodeKind string
	NodeAddr string
	Taken    string
	TotalMB  string
	Link     string // the same page of this snapshot alone
	NodeLink string // the list of the node's snapshots
}

// pageName is how titles name a pprof page, by its path.
func pageName(page string) string {
	switch page {
	case "/graph":
		return "graph"
	case "/flamegraph", "/flamegraph2", "/flamegraphold":
		return "flame graph"
	case "/top":
		return "top"
	case "/peek":
		return "peek"
	case "/source":
		return "source"
	case "/disasm":
		return "disassembly"
	}
	return strings.TrimPrefix(page, "/")
}

// chrome looks up the view's snapshots in the store and describes them.
// The page is still served when the store cannot list: it then names
// snapshots by id only.
func (h *Handler) chrome(ctx context.Context, key viewKey, page string) pageChrome {
	entries, err := h.listed(ctx)
	if err != nil {
		h.log.Warn("list snapshots for a page's title", zap.Error(err))
	}
	pc := pageChrome{Page: pageName(page), Diff: key.base != ""}
	info := func(id string) snapInfo {
		s := snapInfo{ID: id, Link: "/snapshots/" + url.PathEscape(id) + page}
		for _, e := range entries {
			if e.ID == id {
				s.Known, s.NodeID, s.NodeKind, s.NodeAddr = true, e.NodeID, e.NodeKind, e.NodeAddr
				s.Taken = e.TakenAt.UTC().Format("2006-01-02 15:04:05 MST")
				s.TotalMB = mebibytes(e.TotalBytes)
				s.NodeLink = "/?node=" + strconv.FormatInt(e.NodeID, 10)
				break
			}
		}
		return s
	}
	pc.Snap = info(key.id)
	if pc.Diff {
		pc.Base = info(key.base)
		pc.Download = "/diff/" + url.PathEscape(key.base) + "/" + url.PathEscape(key.id) + "/download"
		pc.Title = pc.Page + " of the diff: " + pc.Snap.name() + " minus " + pc.Base.nameBeside(pc.Snap) + " · heapproxy"
		return pc
	}
	pc.Download = "/snapshots/" + url.PathEscape(key.id) + "/download"
	pc.Title = pc.Page + " · " + pc.Snap.name() + " · heapproxy"
	if pc.Snap.Known {
		// The node's snapshots with a profile, oldest first.
		var same []snapshot.Snapshot
		for _, e := range entries {
			if e.NodeID == pc.Snap.NodeID && !graphOnly(&e) {
				same = append(same, e)
			}
		}
		slices.SortStableFunc(same, func(a, b snapshot.Snapshot) int {
			if c := a.TakenAt.Compare(b.TakenAt); c != 0 {
				return c
			}
			return cmp.Compare(a.ID, b.ID)
		})
		i := slices.IndexFunc(same, func(e snapshot.Snapshot) bool { return e.ID == key.id })
		if i > 0 {
			pc.Prev = "/diff/" + url.PathEscape(same[i-1].ID) + "/" + url.PathEscape(key.id) + page
		}
		if i >= 0 && i+1 < len(same) {
			pc.Next = "/diff/" + url.PathEscape(key.id) + "/" + url.PathEscape(same[i+1].ID) + page
		}
	}
	return pc
}

// name is "node 10001 at 2026-11-22 10:00:00 UTC", or the id if unknown.
func (s snapInfo) name() string {
	if !s.Known {
		return "snapshot " + s.ID
	}
	return "node " + strconv.FormatInt(s.NodeID, 10) + " at " + s.Taken
}

// nameBeside names a diff's base; the node is left out when it is the
// snapshot's.
func (s snapInfo) nameBeside(snap snapInfo) string {
	if s.Known && snap.Known && s.NodeID == snap.NodeID {
		return s.Taken
	}
	return s.name()
}

// chromeBar is inserted at the top of pprof's pages. pprof's stylesheet
// sets every margin and padding to 0; the bar's rules are its own.
var chromeBar = template.Must(template.New("bar").Parse(`<nav id="heapproxy-bar">
<a href="/">heapproxy: all snapshots</a>
{{- with .Snap}} › {{if .Known}}<a href="{{.NodeLink}}">node {{.NodeID}}</a> ({{.NodeKind}}{{if .NodeAddr}}, {{.NodeAddr}}{{end}}){{end}}{{end}}
{{- if .Diff}} › {{.Page}} of the diff: <a href="{{.Snap.Link}}" title="{{.Snap.ID}}">{{if .Snap.Known}}{{.Snap.Taken}}, {{.Snap.TotalMB}} MB{{else}}{{.Snap.ID}}{{end}}</a>
 minus <a href="{{.Base.Link}}" title="{{.Base.ID}}">{{if .Base.Known}}{{if ne .Base.NodeID .Snap.NodeID}}node {{.Base.NodeID}} at {{end}}{{.Base.Taken}}, {{.Base.TotalMB}} MB{{else}}{{.Base.ID}}{{end}}</a>
 · diff profile (.pb.gz): <a href="{{.Download}}">{{.Download}}</a>
{{- else}} › <b title="{{.Snap.ID}}">{{if .Snap.Known}}{{.Snap.Taken}}{{else}}{{.Snap.ID}}{{end}}</b>{{if .Snap.Known}}, {{.Snap.TotalMB}} MB in use{{end}}
{{- if .Prev}} · <a href="{{.Prev}}">diff with previous</a>{{end}}
{{- if .Next}} · <a href="{{.Next}}">diff with next</a>{{end}}
 · profile (.pb.gz): <a href="{{.Download}}">{{.Download}}</a>
{{- end}}
</nav>
`))

// chromeStyle goes into the head of pprof's pages.
const chromeStyle = `<style>
#heapproxy-bar { flex: none; padding: 5px 1rem; background: #dde7f5; border-bottom: 1px solid #b8c7de;
  font-size: 13px; overflow-wrap: anywhere; }
#heapproxy-bar a { margin: 0 2px; }
</style>
`

var (
	titleElement = regexp.MustCompile(`(?s)<title>.*?</title>`)
	// sourceLinks are pprof's links to its source and disassembly views:
	// its menu's and the flame graph's action menu's.
	sourceLinks = regexp.MustCompile(`<a [^<>]*href="\./source"[^<>]*>[^<]*</a>`)
	disasmLinks = regexp.MustCompile(`<a [^<>]*href="\./disasm"[^<>]*>[^<]*</a>`)
)

// dress gives a pprof HTML page its title and bar and takes out the
// links to views that cannot show anything here.
func dress(body []byte, pc pageChrome, localSources bool) ([]byte, error) {
	var bar bytes.Buffer
	if err := chromeBar.Execute(&bar, pc); err != nil {
		return nil, err
	}
	title := []byte("<title>" + template.HTMLEscapeString(pc.Title) + "</title>")
	if loc := titleElement.FindIndex(body); loc != nil {
		body = slices.Concat(body[:loc[0]], title, body[loc[1]:])
	}
	if i := bytes.Index(body, []byte("</head>")); i >= 0 {
		body = slices.Concat(body[:i], []byte(chromeStyle), body[i:])
	}
	if i := bytes.Index(body, []byte("<body>")); i >= 0 {
		i += len("<body>")
		body = slices.Concat(body[:i], []byte("\n"), bar.Bytes(), body[i:])
	}
	body = disasmLinks.ReplaceAll(body, nil)
	if !localSources {
		body = sourceLinks.ReplaceAll(body, nil)
	}
	return body, nil
}

// errorPage answers an error as a page with a way back to the list, and
// further links (a path each) if given.
func errorPage(w http.ResponseWriter, code int, msg string, links ...string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Del("Content-Length")
	w.WriteHeader(code)
	errorTemplate.Execute(w, struct {
		Code   int
		Status string
		Msg    string
		Links  []string
	}{code, http.StatusText(code), msg, links})
}

var errorTemplate = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{{.Code}} {{.Status}} · heapproxy</title>
<style>body { font-family: sans-serif; margin: 1.5em; } pre { white-space: pre-wrap; }</style>
</head>
<body>
<h1>{{.Code}} {{.Status}}</h1>
<pre>{{.Msg}}</pre>
{{range .Links}}<p><a href="{{.}}">{{.}}</a></p>
{{end}}<p><a href="/">heapproxy: all snapshots</a></p>
</body>
</html>
`))

// dressWriter holds what pageWriter sends, so that an HTML page can be
// dressed (see dress) before it goes out.
type dressWriter struct {
	http.ResponseWriter
	code int
	buf  bytes.Buffer
}

func (d *dressWriter) WriteHeader(code int) {
	if d.code == 0 {
		d.code = code
	}
}

func (d *dressWriter) Write(b []byte) (int, error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	return d.buf.Write(b)
}

// flush sends the held answer, an HTML page of status 200 through fn.
func (d *dressWriter) flush(fn func([]byte) ([]byte, error)) (ferr error) {
	if d.code == 0 {
		d.code = http.StatusOK
	}
	body := d.buf.Bytes()
	if mt, _, _ := mime.ParseMediaType(d.Header().Get("Content-Type")); mt == "text/html" && d.code == http.StatusOK {
		dressed, err := fn(body)
		if err != nil {
			// Sent as pprof made it: undressed is better than nothing.
			ferr = fmt.Errorf("dress page: %w", err)
		} else {
			body = dressed
		}
	}
	d.ResponseWriter.WriteHeader(d.code)
	if _, err := d.ResponseWriter.Write(body); err != nil && ferr == nil {
		ferr = fmt.Errorf("write page: %w", err)
	}
	return ferr
}
