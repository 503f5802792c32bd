package web

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

func TestBuildCharts(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	e := func(node int64, id string, minutes int, mb int64, noProfile bool) snapshot.Snapshot {
		return snapshot.Snapshot{ID: id, NodeID: node, NodeKind: "starrocks", TakenAt: t0.Add(time.Duration(minutes) * time.Minute),
			TotalBytes: mb << 20, Format: formatOf(noProfile)}
	}
	tests := []struct {
		name    string
		entries []snapshot.Snapshot
		// per node, in node order: points, links to graphs, diff segments
		nodes    []int64
		points   []int
		links    []int
		segments []int
		// the segments' diffs, of every node, as "base..id"
		diffs []string
	}{
		{
			name:     "one node",
			entries:  []snapshot.Snapshot{e(1, "c", 120, 30, false), e(1, "a", 0, 10, false), e(1, "b", 60, 20, false)},
			nodes:    []int64{1},
			points:   []int{3},
			links:    []int{3},
			segments: []int{2},
			diffs:    []string{"a..b", "b..c"},
		},
		{
			name: "two nodes, a snapshot without profile in between",
			entries: []snapshot.Snapshot{e(2, "x", 0, 1, false), e(1, "a", 0, 10, false), e(1, "n", 30, 15, true),
				e(1, "b", 60, 20, false), e(2, "y", 90, 2, false)},
			nodes:    []int64{1, 2},
			points:   []int{3, 2},
			links:    []int{2, 2},
			segments: []int{1, 1},
			diffs:    []string{"a..b", "x..y"},
		},
		{
			name:     "single snapshot of zero bytes",
			entries:  []snapshot.Snapshot{e(7, "only", 0, 0, false)},
			nodes:    []int64{7},
			points:   []int{1},
			links:    []int{1},
			segments: []int{0},
		},
		{
			name:     "two snapshots at one instant",
			entries:  []snapshot.Snapshot{e(3, "p", 0, 5, false), e(3, "q", 0, 6, false)},
			nodes:    []int64{3},
			points:   []int{2},
			links:    []int{2},
			segments: []int{1},
			diffs:    []string{"p..q"},
		},
	}
	num := func(t *testing.T, s string) float64 {
		t.Helper()
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("coordinate %q", s)
		}
		return v
	}
	diffRE := regexp.MustCompile(`^/diff/([^/]+)/([^/]+)/graph$`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			charts := buildCharts(tt.entries)
			if len(charts) != len(tt.nodes) {
				t.Fatalf("%d charts, want %d", len(charts), len(tt.nodes))
			}
			var diffs []string
			for i, c := range charts {
				if c.NodeID != tt.nodes[i] {
					t.Errorf("chart %d is of node %d, want %d", i, c.NodeID, tt.nodes[i])
				}
				links := 0
				lastX := -1.0
				for _, p := range c.Points {
					x, y := num(t, p.X), num(t, p.Y)
					if x < float64(c.PlotX) || x > float64(c.PlotRight) || y < float64(c.PlotY) || y > float64(c.PlotBottom) {
						t.Errorf("point %s at %v,%v outside the plot", p.ID, x, y)
					}
					if x < lastX {
						t.Errorf("point %s left of the one before: not in time order", p.ID)
					}
					lastX = x
					if p.Href != "" {
						links++
						if p.Href != "/snapshots/"+p.ID+"/graph" {
							t.Errorf("point %s links %s", p.ID, p.Href)
						}
					}
					if p.NoProfile != (p.Href == "") {
						t.Errorf("point %s: NoProfile %v with link %q", p.ID, p.NoProfile, p.Href)
					}
				}
				if len(c.Points) != tt.points[i] || links != tt.links[i] || len(c.Segments) != tt.segments[i] {
					t.Errorf("node %d: %d points, %d links, %d segments; want %d, %d, %d", c.NodeID,
						len(c.Points), links, len(c.Segments), tt.points[i], tt.links[i], tt.segments[i])
				}
				if n := len(strings.Fields(c.Line)); n != len(c.Points) {
					t.Errorf("node %d: line through %d points, want %d", c.NodeID, n, len(c.Points))
				}
				for _, s := range c.Segments {
					m := diffRE.FindStringSubmatch(s.Href)
					if m == nil {
						t.Fatalf("segment links %q", s.Href)
					}
					diffs = append(diffs, m[1]+".."+m[2])
				}
				if len(c.YTicks) < 2 || len(c.XTicks) < 2 || len(c.XTicks) > chartMaxXTicks {
					t.Errorf("node %d: %d y ticks, %d x ticks", c.NodeID, len(c.YTicks), len(c.XTicks))
				}
			}
			if fmt.Sprint(diffs) != fmt.Sprint(tt.diffs) && len(diffs)+len(tt.diffs) > 0 {
				t.Errorf("segments diff %v, want %v", diffs, tt.diffs)
			}
		})
	}
	// A single point is drawn in the middle of its panel.
	c := buildCharts([]snapshot.Snapshot{e(7, "only", 0, 3, false)})[0]
	if x := num(t, c.Points[0].X); math.Abs(x-float64(c.PlotX+c.PlotW/2)) > 1 {
		t.Errorf("single point at x=%v, want the middle %d", x, c.PlotX+c.PlotW/2)
	}
}

func TestByteTicks(t *testing.T) {
	tests := []struct {
		max    int64
		labels string
	}{
		{0, "[0 B 1 B]"},
		{1000, "[0 B 250 B 500 B 750 B 1000 B]"},
		{1536 << 10, "[0 MB 0.5 MB 1 MB 1.5 MB]"},
		{20 << 20, "[0 MB 5 MB 10 MB 15 MB 20 MB]"},
		{31 << 20, "[0 MB 10 MB 20 MB 30 MB 40 MB]"},
		{3 << 30, "[0 GB 1 GB 2 GB 3 GB]"},
	}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.max, 10), func(t *testing.T) {
			c := buildChart([]snapshot.Snapshot{{ID: "x", TotalBytes: tt.max}}, "#000")
			var labels []string
			for _, y := range c.YTicks {
				labels = append(labels, y.Label)
			}
			if got := fmt.Sprint(labels); got != tt.labels {
				t.Errorf("y labels %s, want %s", got, tt.labels)
			}
			// The top gridline is the plot's top: the largest value fits.
			if top := c.YTicks[len(c.YTicks)-1].Pos; top != coord(float64(c.PlotY)) {
				t.Errorf("top gridline at %s, want %d", top, c.PlotY)
			}
		})
	}
}

// failingListStore has profiles but cannot list them.
type failingListStore struct{ *memStore }

func (failingListStore) List(context.Context, snapshot.Filter) ([]snapshot.Snapshot, error) {
	return nil, errors.New("list broken")
}

// TestPageChrome checks what heapproxy adds to pprof's pages: the title
// names the node and the time, the bar links the list, the node, the
// neighbouring diffs and the profile's download, and views that cannot
// show anything are not offered.
func TestPageChrome(t *testing.T) {
	snap := func(id string) string { return "/snapshots/" + id + "/" }
	diff := "/diff/" + idFirst + "/" + idSecond + "/"
	unlisted := testStore()
	unlisted.entries = nil
	tests := []struct {
		name    string
		path    string
		opts    Options
		want    []string
		notWant []string
	}{
		{
			name: "first snapshot's graph",
			path: snap(idFirst) + "graph",
			want: []string{
				"<title>graph · node 10001 at 2026-11-22 10:00:00 UTC · heapproxy</title>",
				`<a href="/">heapproxy: all snapshots</a>`, `<a href="/?node=10001">node 10001</a> (starrocks, 10.0.0.1:8040)`,
				"2026-11-22 10:00:00 UTC</b>, 8.0 MB in use",
				`<a href="/diff/` + idFirst + `/` + idSecond + `/graph">diff with next</a>`,
				`profile (.pb.gz): <a href="/snapshots/` + idFirst + `/download">/snapshots/` + idFirst + `/download</a>`,
				"<svg", // pprof's graph is still there
			},
			notWant: []string{"diff with previous", `href="./source"`, `href="./disasm"`, "<title>unknown"},
		},
		{
			name: "second snapshot's top",
			path: snap(idSecond) + "top",
			want: []string{
				"<title>top · node 10001 at 2026-11-22 11:00:00 UTC · heapproxy</title>",
				`<a href="/diff/` + idFirst + `/` + idSecond + `/top">diff with previous</a>`,
			},
			notWant: []string{"diff with next", `href="./source"`},
		},
		{
			name: "flame graph without source actions",
			path: snap(idSecond) + "flamegraph",
			want: []string{"<title>flame graph · node 10001 at 2026-11-22 11:00:00 UTC · heapproxy</title>", `id="action-focus"`},
			// The flame graph's menu would open the source view.
			notWant: []string{`id="action-source"`, `id="action-source-tab"`},
		},
		{
			name: "diff",
			path: diff + "graph",
			want: []string{
				"<title>graph of the diff: node 10001 at 2026-11-22 11:00:00 UTC minus 2026-11-22 10:00:00 UTC · heapproxy</title>",
				`<a href="/snapshots/` + idSecond + `/graph" title="` + idSecond + `">2026-11-22 11:00:00 UTC, 20.0 MB</a>`,
				`minus <a href="/snapshots/` + idFirst + `/graph" title="` + idFirst + `">2026-11-22 10:00:00 UTC, 8.0 MB</a>`,
				`diff profile (.pb.gz): <a href="` + diff + `download">` + diff + `download</a>`,
			},
		},
		{
			name: "diff across nodes",
			path: "/diff/" + idOther + "/" + idSecond + "/peek",
			want: []string{"<title>peek of the diff: node 10001 at 2026-11-22 11:00:00 UTC minus node 10002 at 2026-11-22 10:30:00 UTC · heapproxy</title>",
				">node 10002 at 2026-11-22 10:30:00 UTC, 1.5 MB</a>"},
		},
		{
			name:    "local sources offer the source view",
			path:    snap(idFirst) + "graph",
			opts:    Options{LocalSources: true},
			want:    []string{`href="./source"`},
			notWant: []string{`href="./disasm"`},
		},
		{
			name:    "snapshot the store does not list",
			path:    snap(idFirst) + "graph",
			opts:    Options{Store: unlisted},
			want:    []string{"<title>graph · snapshot " + idFirst + " · heapproxy</title>", `<a href="/">heapproxy: all snapshots</a>`},
			notWant: []string{"diff with", "node 10001"},
		},
		{
			name: "store cannot list",
			path: snap(idFirst) + "top",
			opts: Options{Store: failingListStore{testStore()}},
			want: []string{"<title>top · snapshot " + idFirst + " · heapproxy</title>", pkgPath + "allocFirst"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := newTestServer(t, tt.opts)
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			mustContain(t, tt.path, body, tt.want...)
			for _, s := range tt.notWant {
				if strings.Contains(body, s) {
					t.Errorf("%s: unexpected %q", tt.path, s)
				}
			}
			// pprof's graph has titles in its SVG; the head has one.
			if head, _, _ := strings.Cut(body, "</head>"); strings.Count(head, "<title>") != 1 {
				t.Errorf("%d title elements in the head", strings.Count(head, "<title>"))
			}
		})
	}
}

func TestDiffForm(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	graph := func(base, id string) string { return "/diff/" + base + "/" + id + "/graph" }
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		return "/diff?" + v.Encode()
	}
	tests := []struct {
		name     string
		path     string
		code     int
		location string
	}{
		{"newer first, as the list sends", q("pick", idSecond, "pick", idFirst), http.StatusSeeOther, graph(idFirst, idSecond)},
		{"older first", q("pick", idFirst, "pick", idSecond), http.StatusSeeOther, graph(idFirst, idSecond)},
		{"across nodes", q("pick", idSecond, "pick", idOther), http.StatusSeeOther, graph(idOther, idSecond)},
		{"unknown ids keep the form's order", q("pick", "b", "pick", "a"), http.StatusSeeOther, graph("a", "b")},
		{"base and id", q("base", idSecond, "id", idFirst), http.StatusSeeOther, graph(idSecond, idFirst)},
		{"one checked", q("pick", idFirst), http.StatusBadRequest, ""},
		{"three checked", q("pick", idFirst, "pick", idSecond, "pick", idOther), http.StatusBadRequest, ""},
		{"one twice", q("pick", idFirst, "pick", idFirst), http.StatusBadRequest, ""},
		{"nothing", "/diff", http.StatusBadRequest, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := get(t, srv.URL+tt.path)
			if resp.StatusCode != tt.code {
				t.Fatalf("status %d, want %d: %.300s", resp.StatusCode, tt.code, body)
			}
			if got := resp.Header.Get("Location"); got != tt.location {
				t.Errorf("Location %q, want %q", got, tt.location)
			}
			if tt.code != http.StatusSeeOther {
				mustContain(t, tt.path, body, "Check two snapshots", `<a href="/">`)
			}
		})
	}
}

// TestLinksLeadBack follows, with net/http, every link of the list page
// and of a snapshot's and a diff's graph page: each answers 200, each HTML
// page links back to the list, and each page of a snapshot or diff has a
// title naming a node and a time.
func TestLinksLeadBack(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	base, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	hrefRE := regexp.MustCompile(`\shref="([^"]*)"`)
	titleRE := regexp.MustCompile(`<title>([^<]*)</title>`)
	nodeTimeRE := regexp.MustCompile(`node \d+ at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC`)
	seen := map[string]bool{}
	checked := 0
	var visit func(page string, depth int)
	visit = func(page string, depth int) {
		if seen[page] {
			return
		}
		seen[page] = true
		resp, err := http.Get(srv.URL + page)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read %s: %v", page, err)
		}
		body := string(b)
		checked++
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d: %.200s", page, resp.StatusCode, body)
			return
		}
		mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if mt != "text/html" {
			return
		}
		if resp.Request.URL.Path != "/" && !strings.Contains(body, `href="/"`) {
			t.Errorf("%s (after redirects %s) has no link back to the list", page, resp.Request.URL.Path)
		}
		if p := resp.Request.URL.Path; strings.HasPrefix(p, "/snapshots/") || strings.HasPrefix(p, "/diff/") {
			m := titleRE.FindStringSubmatch(body)
			if m == nil || !nodeTimeRE.MatchString(html.UnescapeString(m[1])) {
				t.Errorf("%s: title %q names no node and time", page, m)
			}
		}
		if depth == 0 {
			return
		}
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			ref, err := resp.Request.URL.Parse(html.UnescapeString(m[1]))
			if err != nil {
				t.Errorf("%s: bad link %q", page, m[1])
				continue
			}
			if ref.Host != base.Host || ref.Path == "/metrics" {
				continue
			}
			ref.Fragment = ""
			visit(ref.RequestURI(), depth-1)
		}
	}
	visit("/", 1)
	visit("/snapshots/"+idSecond+"/graph", 1)
	visit("/diff/"+idFirst+"/"+idSecond+"/graph", 1)
	t.Logf("%d pages checked", checked)
	if checked < 20 {
		t.Errorf("only %d pages checked", checked)
	}
}
