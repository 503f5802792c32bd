package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

func TestListPage(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	local, _ := newTestServer(t, Options{LocalSources: true})
	tests := []struct {
		name    string
		path    string
		local   bool // served with LocalSources
		code    int
		want    []string
		notWant []string
		order   []string // IDs in this order on the page
	}{
		{
			name: "all",
			path: "/",
			code: http.StatusOK,
			want: []string{
				"<td>starrocks</td>", "<td>go</td>", "<td>10.0.0.1:8040</td>",
				`<td class="num">20.0</td>`, `<td class="num">8.0</td>`, `<td class="num">1.5</td>`,
				"2026-11-22 10:00:00 UTC", "2026-11-22 11:00:00 UTC",
				`href="/snapshots/` + idFirst + `/graph"`, `href="/snapshots/` + idFirst + `/flamegraph"`,
				`href="/snapshots/` + idFirst + `/top"`, `href="/snapshots/` + idFirst + `/download"`,
				`href="/?node=10001"`,
				// The second snapshot of node 10001 links its diff against the first.
				`href="/diff/` + idFirst + `/` + idSecond + `/">diff vs previous`,
				`<form id="diff" action="/diff" method="get">`,
				`<input type="checkbox" name="pick" value="` + idFirst + `"`,
				`<svg class="chart" id="chart-10001"`, `<svg class="chart" id="chart-10002"`,
				"<title>heapproxy: snapshots</title>",
			},
			// Node 10002 has one snapshot: no diff link to it. Without
			// local sources no source view is offered.
			notWant: []string{`/` + idOther + `/">diff vs previous`, `/source"`},
			order:   []string{idSecond, idOther, idFirst},
		},
		{
			name:    "one node",
			path:    "/?node=10002",
			code:    http.StatusOK,
			want:    []string{"of node 10002", idOther, `<a href="/">All nodes</a>`},
			notWant: []string{idFirst, idSecond},
		},
		{name: "local sources", path: "/?node=10002", local: true, code: http.StatusOK,
			want: []string{`href="/snapshots/` + idOther + `/source"`}},
		{name: "bad node", path: "/?node=x", code: http.StatusBadRequest, want: []string{`<a href="/">`}},
		{name: "unknown path", path: "/nosuch", code: http.StatusNotFound, want: []string{`<a href="/">`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := srv.URL
			if tt.local {
				base = local.URL
			}
			resp, body := get(t, base+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.code, body)
			}
			mustContain(t, tt.path, body, tt.want...)
			for _, s := range tt.notWant {
				if strings.Contains(body, s) {
					t.Errorf("%s: unexpected %q", tt.path, s)
				}
			}
			last := -1
			for _, id := range tt.order {
				i := strings.Index(body, `<td><a href="/snapshots/`+id+`/">`)
				if i < last {
					t.Errorf("row %s out of order (newest first)", id)
				}
				last = i
			}
		})
	}
}

func TestListPageNoProfile(t *testing.T) {
	store := testStore()
	const dotOnly = "heap_profile.10001.20261122T103000.000000000Z"
	store.entries = append(store.entries, snapshot.Snapshot{ID: dotOnly, NodeID: 10001, NodeKind: "doris",
		TakenAt: time.Date(2026, 11, 22, 10, 30, 0, 0, time.UTC), Format: snapshot.FormatDOT})
	srv, _ := newTestServer(t, Options{Store: store})
	_, body := get(t, srv.URL+"/")
	mustContain(t, "list", body, "<td>"+dotOnly+"</td>", "no profile",
		// The diff link of the next snapshot skips the one without a profile.
		`href="/diff/`+idFirst+`/`+idSecond+`/">diff vs previous`)
	for _, bad := range []string{`/snapshots/` + dotOnly + `/`, `<option value="` + dotOnly + `"`} {
		if strings.Contains(body, bad) {
			t.Errorf("list links a snapshot without a profile: %q", bad)
		}
	}
	// Its views, asked for by URL, say why there is nothing to show.
	for _, page := range []string{"graph", "download"} {
		resp, body := get(t, srv.URL+"/snapshots/"+dotOnly+"/"+page)
		want := "snapshot " + dotOnly + " holds a graph rendered on the node, not a profile"
		if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, want) {
			t.Errorf("%s of a snapshot without a profile: %d %q, want 500 with %q", page, resp.StatusCode, body, want)
		}
	}
}

func TestListPageEmptyAndBroken(t *testing.T) {
	srv, _ := newTestServer(t, Options{Store: &memStore{}})
	resp, body := get(t, srv.URL+"/")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	mustContain(t, "empty list", body, "No snapshots yet")

	srv, _ = newTestServer(t, Options{Store: brokenStore{}})
	resp, body = get(t, srv.URL+"/")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "disk on fire") {
		t.Errorf("broken store: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, srv.URL+"/snapshots/x/graph")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "disk on fire") {
		t.Errorf("broken store view: %d %q", resp.StatusCode, body)
	}
}

type brokenStore struct{}

func (brokenStore) List(context.Context, snapshot.Filter) ([]snapshot.Snapshot, error) {
	return nil, errors.New("disk on fire")
}
func (brokenStore) Get(context.Context, string) (*snapshot.Snapshot, error) {
	return nil, errors.New("disk on fire")
}

// funcName is how pprof names the test's functions on its pages.
const pkgPath = "github.com/heapproxy/heapproxy/heapprof/web."

func TestViews(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	snap := "/snapshots/" + idFirst + "/"
	diff := "/diff/" + idFirst + "/" + idSecond + "/"
	tests := []struct {
		path     string
		code     int
		location string
		want     []string
		notWant  []string
	}{
		// pprof's own root redirects, relatively, to its flame graph.
		{path: snap, code: http.StatusMovedPermanently, location: "flamegraph"},
		{path: strings.TrimSuffix(snap, "/"), code: http.StatusMovedPermanently, location: snap},
		{path: snap + "graph", code: http.StatusOK, want: []string{"<svg", "web.allocFirst", "inuse_space", `href="./flamegraph"`, "Snapshot: " + idFirst}},
		{path: snap + "flamegraph", code: http.StatusOK, want: []string{"stackViewer(", pkgPath + "allocFirst"}},
		{path: snap + "top", code: http.StatusOK, want: []string{pkgPath + "allocChunks", pkgPath + "allocFirst"}},
		// Without local sources there is no source view (it would show
		// "???" for every line), nor disassembly (no binaries).
		{path: snap + "source?f=allocFirst", code: http.StatusNotFound, want: []string{"source view is off", `href="` + snap + `top?g=lines"`, `<a href="/">`}},
		{path: snap + "disasm?f=allocFirst", code: http.StatusNotFound, want: []string{"binaries"}},
		{path: snap + "peek?f=allocFirst", code: http.StatusOK, want: []string{pkgPath + "allocFirst", pkgPath + "allocChunks"}},
		{path: snap + "top?si=alloc_space", code: http.StatusOK, want: []string{pkgPath + "allocFirst"}},
		// The diff (pprof -diff_base) holds what grew: allocSecond's 12 MiB;
		// allocFirst's 8 MiB are in both and cancel out.
		{path: diff + "top", code: http.StatusOK, want: []string{pkgPath + "allocSecond", "12MB"}, notWant: []string{pkgPath + "allocFirst"}},
		{path: diff + "graph", code: http.StatusOK, want: []string{"<svg", "web.allocSecond", "Snapshot: " + idSecond, "Base: " + idFirst}},
		{path: diff + "flamegraph", code: http.StatusOK, want: []string{pkgPath + "allocSecond"}},
		{path: "/diff?base=" + url.QueryEscape(idFirst) + "&id=" + url.QueryEscape(idSecond), code: http.StatusSeeOther, location: diff + "graph"},
		{path: "/diff?base=" + url.QueryEscape(idFirst), code: http.StatusBadRequest},
		// Configurations would be written to the user's home: refused.
		{path: snap + "saveconfig?config=x", code: http.StatusForbidden},
		{path: snap + "deleteconfig?config=x", code: http.StatusForbidden},
		{path: diff + "saveconfig?config=x", code: http.StatusForbidden},
		{path: snap + "nosuchpage", code: http.StatusNotFound},
		{path: "/snapshots/nosuch/graph", code: http.StatusNotFound, want: []string{"nosuch"}},
		{path: "/diff/nosuch/" + idFirst + "/top", code: http.StatusNotFound, want: []string{"base"}},
		{path: "/healthz", code: http.StatusOK, want: []string{"ok"}},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.code, body)
			}
			if tt.location != "" && resp.Header.Get("Location") != tt.location {
				t.Errorf("Location %q, want %q", resp.Header.Get("Location"), tt.location)
			}
			mustContain(t, tt.path, body, tt.want...)
			for _, s := range tt.notWant {
				if strings.Contains(body, s) {
					t.Errorf("%s: unexpected %q", tt.path, s)
				}
			}
		})
	}
}

// TestConfigWritesRefused sends what pprof's own page script sends to save
// and delete a configuration (POST and DELETE); both are refused before
// pprof sees them, and the home directory stays untouched.
func TestConfigWritesRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	srv, _ := newTestServer(t, Options{})
	snap := srv.URL + "/snapshots/" + idFirst + "/"
	tests := []struct {
		method, page string
		code         int
	}{
		{http.MethodPost, "saveconfig?config=mine&f=allocFirst", http.StatusForbidden},
		{http.MethodDelete, "deleteconfig?config=mine", http.StatusForbidden},
		{http.MethodGet, "saveconfig?config=mine", http.StatusForbidden},
		{http.MethodPost, "graph", http.StatusMethodNotAllowed},
		{http.MethodGet, "graph", http.StatusOK},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, snap+tt.page, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("%s %s: %d, want %d", tt.method, tt.page, resp.StatusCode, tt.code)
		}
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("home directory written: %v", entries)
	}
}

// TestNoHome: pprof's web UI needs a config directory to read saved
// configurations from; without $HOME the views fail with pprof's reason
// and the rest of the server keeps working.
func TestNoHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	srv, _ := newTestServer(t, Options{})
	resp, body := get(t, srv.URL+"/snapshots/"+idFirst+"/top")
	if resp.StatusCode != http.StatusInternalServerError || !strings.Contains(body, "$HOME") {
		t.Errorf("view without HOME: %d %q", resp.StatusCode, body)
	}
	for _, path := range []string{"/", "/healthz", "/metrics"} {
		if resp, _ := get(t, srv.URL+path); resp.StatusCode != http.StatusOK {
			t.Errorf("%s without HOME: %d", path, resp.StatusCode)
		}
	}
}

// The server hands the view its snapshot store as it is: a real store's
// snapshots are listed and viewed, its unknown ids are 404 and its
// graph-only snapshots listed without views.
func TestSnapshotStore(t *testing.T) {
	ctx := context.Background()
	st := snapshot.NewMemory(snapshot.Retention{})
	t.Cleanup(func() { st.Close() })
	const dotOnly = "heap_profile.10001.20261122T103000.000000000Z"
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, s := range []*snapshot.Snapshot{
		{ID: idFirst, NodeID: 10001, NodeKind: "go", TakenAt: t0, Format: "pprof", Raw: profFirst, Profile: profFirst, TotalBytes: 8 << 20},
		{ID: dotOnly, NodeID: 10001, NodeKind: "doris", TakenAt: t0.Add(30 * time.Minute), Format: snapshot.FormatDOT, Raw: []byte("digraph {}")},
		{ID: idSecond, NodeID: 10001, NodeKind: "go", TakenAt: t0.Add(time.Hour), Format: "pprof", Raw: profSecond, Profile: profSecond, TotalBytes: 20 << 20},
	} {
		if err := st.Save(ctx, s, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	srv, _ := newTestServer(t, Options{Store: st})
	tests := []struct {
		path string
		code int
		want []string
	}{
		{"/", http.StatusOK, []string{"<td>" + dotOnly + "</td>", `href="/diff/` + idFirst + `/` + idSecond + `/">diff vs previous`}},
		{"/snapshots/" + idSecond + "/top", http.StatusOK, []string{"allocSecond"}},
		{"/diff/" + idFirst + "/" + idSecond + "/top", http.StatusOK, []string{"allocSecond"}},
		{"/snapshots/" + idFirst + "/download", http.StatusOK, nil},
		{"/snapshots/nosuch/graph", http.StatusNotFound, []string{"snapshot not found: nosuch"}},
		{"/snapshots/" + dotOnly + "/graph", http.StatusInternalServerError, []string{"holds a graph rendered on the node, not a profile"}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.code, body)
			}
			mustContain(t, tt.path, body, tt.want...)
		})
	}
}

func TestDownload(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	// A snapshot's download is the stored profile, byte for byte.
	resp, body := get(t, srv.URL+"/snapshots/"+idSecond+"/download")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if body != string(profSecond) {
		t.Errorf("download differs from the stored profile (%d vs %d bytes)", len(body), len(profSecond))
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != `attachment; filename=`+idSecond+`.pb.gz` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if resp, _ := get(t, srv.URL+"/snapshots/nosuch/download"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("download of an unknown snapshot: %d", resp.StatusCode)
	}
	// A diff's download is pprof's: the snapshot minus the base, which
	// leaves allocSecond's 12 MiB.
	resp, body = get(t, srv.URL+"/diff/"+idFirst+"/"+idSecond+"/download")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("diff download: %d", resp.StatusCode)
	}
	d := mustParse(t, []byte(body))
	a, b := mustParse(t, profFirst), mustParse(t, profSecond)
	if got, want := total(d, 1), total(b, 1)-total(a, 1); got != want || got < 12<<20 {
		t.Errorf("diff download inuse_space total %d, want %d (>= 12 MiB)", got, want)
	}
}

func total(p *profile.Profile, i int) int64 {
	var n int64
	for _, s := range p.Sample {
		n += s.Value[i]
	}
	return n
}

// TestSourceFilesFenced checks that the source view does not read files a
// profile names unless LocalSources is set: the profile names this test's
// own source file, which exists on this machine.
func TestSourceFilesFenced(t *testing.T) {
	const line = "func allocFirst() [][]byte { return allocChunks(8) }"
	for _, local := range []bool{false, true} {
		t.Run(fmt.Sprint("local=", local), func(t *testing.T) {
			_, h := newTestServer(t, Options{LocalSources: local})
			resp, body := pprofPage(t, h, idFirst, "/source?f=allocFirst")
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			shown := strings.Contains(body, "return allocChunks(8)")
			if shown != local {
				t.Errorf("source line %q shown=%v with LocalSources=%v", line, shown, local)
			}
			if !local {
				mustContain(t, "fenced", body, sourcePrefix+"/")
			}
		})
	}
}

// pprofPage serves one of pprof's pages of a snapshot's view straight from
// the handlers pprof made, past the routes: the source view, which the
// routes offer only with LocalSources, must not read local files even if
// reached.
func pprofPage(t *testing.T, h *Handler, id, pageAndQuery string) (*http.Response, string) {
	t.Helper()
	v, err := h.loadView(t.Context(), viewKey{id: id})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.resetDriver(); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, pageAndQuery, nil)
	v.handlers[req.URL.Path].ServeHTTP(rec, req)
	return rec.Result(), rec.Body.String()
}

// TestFencedNamesCannotEscape feeds the source view a profile whose file
// names point at a real file in every way pprof resolves names (absolute,
// relative to the source path's parents, with "..", and with the directory
// name pprof's trim heuristic looks for).
func TestFencedNamesCannotEscape(t *testing.T) {
	secret := t.TempDir() + "/secret.txt"
	if err := writeFile(secret, "line one\nTOPSECRET-LINE-TWO\nline three\n"); err != nil {
		t.Fatal(err)
	}
	names := []string{
		secret,
		strings.TrimPrefix(secret, "/"),
		"../../../../../../../../" + strings.TrimPrefix(secret, "/"),
		"/proc/self/cwd/" + secret,
		"/x/web/" + strings.TrimPrefix(secret, "/"),
	}
	fn := []*profile.Function{}
	loc := []*profile.Location{}
	var samples []*profile.Sample
	for i, n := range names {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("leak%d", i), SystemName: fmt.Sprintf("leak%d", i), Filename: n}
		l := &profile.Location{ID: uint64(i + 1), Line: []profile.Line{{Function: f, Line: 2}}}
		fn, loc = append(fn, f), append(loc, l)
		samples = append(samples, &profile.Sample{Location: []*profile.Location{l}, Value: []int64{1, 1 << 20}})
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Sample:     samples, Location: loc, Function: fn,
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	store := &memStore{profiles: map[string][]byte{"evil": buf.Bytes()}}
	_, h := newTestServer(t, Options{Store: store})
	resp, body := pprofPage(t, h, "evil", "/source?f=leak")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, body)
	}
	// The first three names clean to the same file and share one listing.
	mustContain(t, "source", body, sourcePrefix+secret, "leak3", "leak4")
	if strings.Contains(body, "TOPSECRET") {
		t.Errorf("the source view read a local file named by the profile")
	}

	// The same profile with LocalSources shows the file: the test's names
	// do reach it when not fenced.
	srv, _ := newTestServer(t, Options{Store: store, LocalSources: true})
	_, body = get(t, srv.URL+"/snapshots/evil/source?f=leak0")
	mustContain(t, "local source", body, "TOPSECRET")
}

// TestForeignDriverCallDoesNotLeak: pprof's driver keeps the flags of its
// last call; a -hide given by another caller in the process must not hide
// anything in the web view, neither in a view loaded after it nor in one
// loaded before.
func TestForeignDriverCallDoesNotLeak(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	before := "/snapshots/" + idFirst + "/top"
	if _, body := get(t, srv.URL+before); !strings.Contains(body, pkgPath+"allocFirst") {
		t.Fatalf("top lacks allocFirst before the foreign call")
	}
	// Another caller's -hide, parsed the way pprof's own command line does.
	out, err := driverRunLeaky("-hide=allocFirst")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, pkgPath+"allocFirst") {
		t.Fatalf("-hide had no effect on the foreign call itself:\n%s", out)
	}
	for _, path := range []string{before, "/snapshots/" + idSecond + "/top", "/diff/" + idOther + "/" + idSecond + "/top"} {
		if _, err := driverRunLeaky("-hide=allocFirst"); err != nil {
			t.Fatal(err)
		}
		_, body := get(t, srv.URL+path)
		want := pkgPath + "allocFirst"
		if strings.HasPrefix(path, "/diff/") {
			want = pkgPath + "allocSecond"
		}
		if !strings.Contains(body, want) {
			t.Errorf("%s: %s hidden by another caller's -hide", path, want)
		}
	}
}

// driverRunLeaky runs pprof's driver as a naive caller does, with a
// FlagSet over the standard flag package that uses pprof's own defaults,
// i.e. the previous call's values.
func driverRunLeaky(args ...string) (string, error) {
	p, err := profile.ParseData(profFirst)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	err = driver.PProf(&driver.Options{
		Flagset: &stdFlagSet{newFlagSet(append(args, "-output=out", "-top", "x"))},
		Fetch:   fetcher{"x": p},
		Sym:     noSymbolizer{},
		Obj:     noObjTool{},
		UI:      &driverUI{log: zap.NewNop()},
		Writer:  bufWriter{&out},
	})
	return out.String(), err
}

// stdFlagSet declares flags with the defaults pprof passes.
type stdFlagSet struct{ *flagSet }

func (f *stdFlagSet) Bool(name string, def bool, usage string) *bool {
	return f.fs.Bool(name, def, usage)
}
func (f *stdFlagSet) Int(name string, def int, usage string) *int { return f.fs.Int(name, def, usage) }
func (f *stdFlagSet) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}
func (f *stdFlagSet) String(name string, def string, usage string) *string {
	return f.fs.String(name, def, usage)
}

type bufWriter struct{ b *bytes.Buffer }

func (w bufWriter) Open(string) (io.WriteCloser, error) { return nopCloser{w.b}, nil }

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

func writeFile(name, text string) error { return os.WriteFile(name, []byte(text), 0o600) }

func TestLeakExistsWithoutReset(t *testing.T) {
	// The reference: with pprof's own defaults, a -hide does carry over
	// into the next call. If pprof ever stops leaking, this test says so
	// and the reset machinery can go.
	if _, err := driverRunLeaky("-hide=allocFirst"); err != nil {
		t.Fatal(err)
	}
	out, err := driverRunLeaky()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, pkgPath+"allocFirst") || !strings.Contains(out, "hide=allocFirst") {
		t.Fatalf("pprof no longer keeps -hide between calls:\n%s", out)
	}
	// And this package's flagSet resets it.
	if _, err := runDriver(map[string]*profile.Profile{"x": mustParse(t, profFirst)}, []string{"x"}, false, zap.NewNop()); err != nil {
		t.Fatal(err)
	}
	out, err = driverRunLeaky()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, pkgPath+"allocFirst") || strings.Contains(out, "hide=") {
		t.Fatalf("runDriver did not reset -hide:\n%s", out)
	}
}

func mustParse(t *testing.T, b []byte) *profile.Profile {
	t.Helper()
	p, err := profile.ParseData(b)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConcurrentRequests loads views while others render, with a cache of
// two views for three so that views are evicted and reloaded, and checks
// every answer. Run with -race.
func TestConcurrentRequests(t *testing.T) {
	store := testStore()
	srv, _ := newTestServer(t, Options{Store: store, MaxViews: 2})
	type job struct{ path, want string }
	var jobs []job
	for _, id := range []string{idFirst, idSecond, idOther} {
		for _, page := range []string{"top", "graph", "flamegraph", "peek?f=allocFirst"} {
			jobs = append(jobs, job{"/snapshots/" + id + "/" + page, "allocFirst"})
		}
	}
	jobs = append(jobs, job{"/diff/" + idFirst + "/" + idSecond + "/top", "allocSecond"}, job{"/", idOther}, job{"/metrics", "heapproxy_connections_open"})
	svgRE := regexp.MustCompile(`<svg`)
	var wg sync.WaitGroup
	errs := make(chan error, 4*len(jobs))
	for range 4 {
		for _, j := range jobs {
			wg.Go(func() {
				resp, err := http.Get(srv.URL + j.path)
				if err != nil {
					errs <- err
					return
				}
				defer resp.Body.Close()
				var b bytes.Buffer
				b.ReadFrom(resp.Body)
				if resp.StatusCode != http.StatusOK || !strings.Contains(b.String(), j.want) {
					errs <- fmt.Errorf("%s: %d, has %q: %v", j.path, resp.StatusCode, j.want, strings.Contains(b.String(), j.want))
				}
				if strings.HasSuffix(j.path, "/graph") && !svgRE.Match(b.Bytes()) {
					errs <- fmt.Errorf("%s: no <svg>", j.path)
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	t.Logf("store reads with 2 cached views: %v", store.reads)
}

// TestViewLoadedOnce: concurrent first requests for one view share one load.
func TestViewLoadedOnce(t *testing.T) {
	store := testStore()
	srv, _ := newTestServer(t, Options{Store: store})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			resp, err := http.Get(srv.URL + "/snapshots/" + idSecond + "/top")
			if err == nil {
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	store.mu.Lock()
	defer store.mu.Unlock()
	if n := store.reads[idSecond]; n != 1 {
		t.Errorf("profile read %d times for 8 concurrent requests, want 1", n)
	}
}

func TestProfileSizeLimit(t *testing.T) {
	tests := []struct {
		name  string
		limit int64
		code  int
	}{
		{"compressed over", int64(len(profFirst)) - 1, http.StatusRequestEntityTooLarge},
		// profFirst is gzipped; its uncompressed size is larger.
		{"uncompressed over", int64(len(profFirst)) + 1, http.StatusRequestEntityTooLarge},
		{"fits", 64 << 20, http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newTestServer(t, Options{MaxProfileBytes: tt.limit})
			resp, body := get(t, srv.URL+"/snapshots/"+idFirst+"/top")
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d: %.200s", resp.StatusCode, tt.code, body)
			}
		})
	}
}

func TestNewNeedsStore(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Error("New without a Store succeeded")
	}
}

// panicStore panics reading profiles: a view's load must turn that into an
// error for the request, not crash the process.
type panicStore struct{ memStore }

func (*panicStore) Get(context.Context, string) (*snapshot.Snapshot, error) { panic("store bug") }

func TestBadProfiles(t *testing.T) {
	tests := []struct {
		name  string
		store Store
		code  int
		want  string
	}{
		{"garbage", &memStore{profiles: map[string][]byte{"x": []byte("not a profile")}}, http.StatusInternalServerError, "parse profile"},
		{"bad gzip", &memStore{profiles: map[string][]byte{"x": {0x1f, 0x8b, 0, 0}}}, http.StatusInternalServerError, "gunzip"},
		{"truncated", &memStore{profiles: map[string][]byte{"x": profFirst[:len(profFirst)/2]}}, http.StatusInternalServerError, "snapshot x"},
		{"store panics", &panicStore{}, http.StatusInternalServerError, "panic: store bug"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newTestServer(t, Options{Store: tt.store})
			resp, body := get(t, srv.URL+"/snapshots/x/graph")
			if resp.StatusCode != tt.code || !strings.Contains(body, tt.want) {
				t.Errorf("%d %q, want %d with %q", resp.StatusCode, body, tt.code, tt.want)
			}
			if resp, _ := get(t, srv.URL+"/healthz"); resp.StatusCode != http.StatusOK {
				t.Errorf("healthz after the failure: %d", resp.StatusCode)
			}
		})
	}
}
