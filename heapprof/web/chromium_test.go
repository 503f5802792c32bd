package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"image"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// chromiumPath is Debian's chromium (apt-get install chromium).
const chromiumPath = "/usr/bin/chromium"

// chromium runs headless Chromium on url with a fresh profile directory
// and returns its standard output; mode is --dump-dom or --screenshot=<file>.
func chromium(t *testing.T, url, mode string) []byte {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("headless browser test needs Debian's chromium (apt-get install -y chromium): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromiumPath,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--window-size=1280,900", mode, url)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Chromium's helper processes may hold the pipes after it exits.
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s %s: %v\n%s", mode, url, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// screenshot loads url in Chromium and returns its counts of non-white
// pixels and of colored ones (a channel spread of at least 40: pprof's
// graph nodes and edges, flame graph boxes; its grey chrome is not).
func screenshot(t *testing.T, url string) (nonWhite, colored, total int) {
	t.Helper()
	img := screenshotTo(t, url, filepath.Join(t.TempDir(), "shot.png"))
	nonWhite, colored = pixelCounts(img)
	return nonWhite, colored, img.Bounds().Dx() * img.Bounds().Dy()
}

// screenshotTo saves url's screenshot as the PNG file and decodes it.
func screenshotTo(t *testing.T, url, file string) image.Image {
	t.Helper()
	chromium(t, url, "--screenshot="+file)
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("screenshot of %s: %v", url, err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot of %s: decode PNG: %v", url, err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot of %s is %dx%d, want 1280x900", url, b.Dx(), b.Dy())
	}
	return img
}

func pixelCounts(img image.Image) (nonWhite, colored int) {
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			if r < 250 || g < 250 || bl < 250 {
				nonWhite++
			}
			if max(r, g, bl)-min(r, g, bl) >= 40 {
				colored++
			}
		}
	}
	return nonWhite, colored
}

// pixelsNear counts the pixels within 24 of the color "#rrggbb" in each
// channel (a series' line and points, antialiased edges aside).
func pixelsNear(t *testing.T, img image.Image, hex string) int {
	t.Helper()
	want, err := strconv.ParseUint(strings.TrimPrefix(hex, "#"), 16, 32)
	if err != nil {
		t.Fatalf("color %q: %v", hex, err)
	}
	wr, wg, wb := int(want>>16), int(want>>8&0xff), int(want&0xff)
	near := func(a, b int) bool { return a-b <= 24 && b-a <= 24 }
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if near(int(r>>8), wr) && near(int(g>>8), wg) && near(int(bl>>8), wb) {
				n++
			}
		}
	}
	return n
}

// TestChromium loads the graph and flame graph pages of a snapshot and of
// a diff in a real browser, checks that the DOM after scripts ran holds
// the profile's functions as drawn elements, and that the page's
// screenshot shows a drawing.
func TestChromium(t *testing.T) {
	srv, _ := newTestServer(t, Options{})
	svgText := func(fn string) *regexp.Regexp {
		// Graphviz splits pprof's "web.allocFirst" label into lines.
		return regexp.MustCompile(`<text[^>]*>` + fn + `</text>`)
	}
	flameBox := func(fn string) *regexp.Regexp {
		// stacks.js draws each frame as <div class="boxtext">name</div>.
		return regexp.MustCompile(`<div class="boxtext"[^>]*>web\.` + fn + `</div>`)
	}
	tests := []struct {
		name   string
		path   string
		want   []*regexp.Regexp
		absent []*regexp.Regexp
	}{
		{
			name: "graph",
			path: "/snapshots/" + idFirst + "/graph",
			want: []*regexp.Regexp{regexp.MustCompile(`<svg`), svgText("allocFirst"), svgText("allocChunks"), svgText("TestMain")},
		},
		{
			name: "flamegraph",
			path: "/snapshots/" + idSecond + "/flamegraph",
			want: []*regexp.Regexp{flameBox("allocFirst"), flameBox("allocSecond"), flameBox("allocChunks")},
		},
		{
			name:   "diff graph",
			path:   "/diff/" + idFirst + "/" + idSecond + "/graph",
			want:   []*regexp.Regexp{regexp.MustCompile(`<svg`), svgText("allocSecond")},
			absent: []*regexp.Regexp{svgText("allocFirst")},
		},
		{
			name: "list",
			path: "/",
			want: []*regexp.Regexp{regexp.MustCompile(`<table id="snapshots">`), regexp.MustCompile(regexp.QuoteMeta(idSecond))},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := srv.URL + tt.path
			dom := chromium(t, url, "--dump-dom")
			for _, re := range tt.want {
				if !re.Match(dom) {
					t.Errorf("DOM of %s lacks %s", tt.path, re)
				}
			}
			for _, re := range tt.absent {
				if re.Match(dom) {
					t.Errorf("DOM of %s has %s", tt.path, re)
				}
			}
			if t.Failed() {
				t.Logf("DOM: %.2000s", strings.TrimSpace(string(dom)))
			}
			if tt.name == "list" {
				return
			}
			nonWhite, colored, total := screenshot(t, url)
			t.Logf("%s: %d of %d pixels non-white, %d colored", tt.path, nonWhite, total, colored)
			// A blank page, or pprof's grey menu bar alone (1280x44 px), is
			// below both bounds; the drawings above are well over them.
			if nonWhite < total/50 {
				t.Errorf("screenshot of %s nearly blank: %d of %d pixels non-white", tt.path, nonWhite, total)
			}
			if colored < 2000 {
				t.Errorf("screenshot of %s shows no drawing: %d colored pixels", tt.path, colored)
			}
		})
	}
}

// chartStore holds a few snapshots of three nodes over a day: growth,
// a drop, a node with one snapshot sent without a profile.
func chartStore() *memStore {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	s := &memStore{profiles: map[string][]byte{}}
	for i, sn := range []struct {
		node      int64
		kind      string
		addr      string
		minutes   int
		mb        float64
		noProfile bool
	}{
		{10001, "starrocks", "10.0.0.1:8040", 0, 8, false},
		{10001, "starrocks", "10.0.0.1:8040", 60, 12.5, false},
		{10001, "starrocks", "10.0.0.1:8040", 120, 20, false},
		{10001, "starrocks", "10.0.0.1:8040", 180, 17, false},
		{10001, "starrocks", "10.0.0.1:8040", 240, 26, false},
		{10001, "starrocks", "10.0.0.1:8040", 300, 31, false},
		{10002, "go", "10.0.0.2:6060", 30, 1.5, false},
		{10002, "go", "10.0.0.2:6060", 110, 2, false},
		{10002, "go", "10.0.0.2:6060", 200, 1.8, false},
		{10002, "go", "10.0.0.2:6060", 290, 3, false},
		{10003, "doris", "10.0.0.3:8040", 45, 40, false},
		{10003, "doris", "10.0.0.3:8040", 150, 44, true},
		{10003, "doris", "10.0.0.3:8040", 270, 52, false},
	} {
		at := t0.Add(time.Duration(sn.minutes) * time.Minute)
		id := fmt.Sprintf("heap_profile.%d.%s", sn.node, at.Format("20060102T150405.000000000Z"))
		s.entries = append(s.entries, snapshot.Snapshot{ID: id, NodeID: sn.node, NodeKind: sn.kind, NodeAddr: sn.addr,
			TakenAt: at, TotalBytes: int64(sn.mb * (1 << 20)), Format: formatOf(sn.noProfile)})
		if !sn.noProfile {
			s.profiles[id] = [][]byte{profFirst, profSecond}[i%2]
		}
	}
	return s
}

// TestChromiumListAndGraph looks at the list page and a graph page as a
// user would: in Chromium, the list has one chart per node with one point
// per snapshot, the pages' titles name node and time, and every link of
// the charts and of the graph page's bar leads, followed with net/http, to
// the page it promises. The screenshots are kept under t.TempDir and
// copied to /tmp/heapproxy-web-{list,graph}.png to be looked at.
func TestChromiumListAndGraph(t *testing.T) {
	store := chartStore()
	srv, _ := newTestServer(t, Options{Store: store})
	byID := map[string]snapshot.Snapshot{}
	perNode := map[string]int{}
	for _, e := range store.entries {
		byID[e.ID] = e
		perNode[strconv.FormatInt(e.NodeID, 10)]++
	}
	nodeAt := func(e snapshot.Snapshot) string {
		return fmt.Sprintf("node %d at %s", e.NodeID, e.TakenAt.UTC().Format("2006-01-02 15:04:05 MST"))
	}
	// fetch follows a link as a browser would and returns the final page.
	fetch := func(t *testing.T, href string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + html.UnescapeString(href))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d: %.200s", href, resp.StatusCode, b)
		}
		return resp, string(b)
	}
	titleOf := func(page string) string {
		m := regexp.MustCompile(`<title>([^<]*)</title>`).FindStringSubmatch(page)
		if m == nil {
			return ""
		}
		return html.UnescapeString(m[1])
	}
	save := func(t *testing.T, img string, keep string) {
		t.Helper()
		b, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(keep, b, 0o644); err != nil {
			t.Errorf("keep the screenshot: %v", err)
		}
		t.Logf("screenshot: %s (and %s)", img, keep)
	}

	t.Run("list", func(t *testing.T) {
		dom := string(chromium(t, srv.URL+"/", "--dump-dom"))
		if got := titleOf(dom); got != "heapproxy: snapshots" {
			t.Errorf("title %q", got)
		}
		charts := regexp.MustCompile(`(?s)<svg class="chart" id="chart-(\d+)".*?</svg>`).FindAllStringSubmatch(dom, -1)
		if len(charts) != len(perNode) {
			t.Fatalf("%d charts, want one per node (%d)", len(charts), len(perNode))
		}
		pointRE := regexp.MustCompile(`<(?:a|g) class="point[^"]*"(?: href="([^"]*)")? data-id="([^"]*)"`)
		segRE := regexp.MustCompile(`<a class="seg" href="([^"]*)"`)
		for _, c := range charts {
			node := c[1]
			points := pointRE.FindAllStringSubmatch(c[0], -1)
			if len(points) != perNode[node] {
				t.Errorf("chart of node %s has %d points, want one per snapshot (%d)", node, len(points), perNode[node])
			}
			for _, p := range points {
				e, ok := byID[html.UnescapeString(p[2])]
				if !ok || strconv.FormatInt(e.NodeID, 10) != node {
					t.Errorf("chart of node %s has a point of %q", node, p[2])
					continue
				}
				if graphOnly(&e) {
					if p[1] != "" {
						t.Errorf("point of %s without a profile links %s", e.ID, p[1])
					}
					continue
				}
				// Click a point: its graph.
				_, page := fetch(t, p[1])
				if want := "graph · " + nodeAt(e) + " · heapproxy"; titleOf(page) != want {
					t.Errorf("point %s leads to %q, want %q", e.ID, titleOf(page), want)
				}
				if !strings.Contains(page, "<svg") {
					t.Errorf("point %s: the page has no graph", e.ID)
				}
			}
			// Click a line between two points: their diff.
			segs := segRE.FindAllStringSubmatch(c[0], -1)
			if len(segs) == 0 {
				t.Errorf("chart of node %s links no diff", node)
			}
			for _, s := range segs {
				_, page := fetch(t, s[1])
				if !strings.HasPrefix(titleOf(page), "graph of the diff: node "+node+" at ") {
					t.Errorf("line %s leads to %q", s[1], titleOf(page))
				}
			}
		}
		// Any two snapshots: check two rows and submit the form (a GET).
		boxes := regexp.MustCompile(`<input type="checkbox" name="pick" value="([^"]*)"`).FindAllStringSubmatch(dom, -1)
		if want := len(store.profiles); len(boxes) != want {
			t.Fatalf("%d checkboxes, want one per snapshot with a profile (%d)", len(boxes), want)
		}
		newer, older := byID[html.UnescapeString(boxes[0][1])], byID[html.UnescapeString(boxes[len(boxes)-1][1])]
		resp, page := fetch(t, "/diff?"+url.Values{"pick": {newer.ID, older.ID}}.Encode())
		base := nodeAt(older)
		if older.NodeID == newer.NodeID {
			base = older.TakenAt.UTC().Format("2006-01-02 15:04:05 MST")
		}
		if want := "graph of the diff: " + nodeAt(newer) + " minus " + base + " · heapproxy"; titleOf(page) != want {
			t.Errorf("diff of the checked rows %q at %s, want %q", titleOf(page), resp.Request.URL.Path, want)
		}

		file := filepath.Join(t.TempDir(), "list.png")
		img := screenshotTo(t, srv.URL+"/", file)
		save(t, file, "/tmp/heapproxy-web-list.png")
		// Each series is drawn: a 2 px line across the panel and its dots.
		for i, node := range []string{"10001", "10002", "10003"} {
			if n := pixelsNear(t, img, seriesColor(i)); n < 1000 {
				t.Errorf("node %s's series (%s) covers %d pixels of the screenshot: not drawn", node, seriesColor(i), n)
			} else {
				t.Logf("node %s's series: %d pixels", node, n)
			}
		}
	})

	t.Run("graph", func(t *testing.T) {
		// The latest snapshot of node 10001 with its previous one.
		var prev, last snapshot.Snapshot
		for _, e := range store.entries {
			if e.NodeID == 10001 {
				prev, last = last, e
			}
		}
		path := "/snapshots/" + last.ID + "/graph"
		dom := string(chromium(t, srv.URL+path, "--dump-dom"))
		if want := "graph · " + nodeAt(last) + " · heapproxy"; titleOf(dom) != want {
			t.Errorf("title %q, want %q", titleOf(dom), want)
		}
		bar := regexp.MustCompile(`(?s)<nav id="heapproxy-bar">.*?</nav>`).FindString(dom)
		if bar == "" {
			t.Fatalf("no heapproxy bar in the DOM: %.2000s", dom)
		}
		download := "/snapshots/" + last.ID + "/download"
		if !strings.Contains(bar, ">"+download+"</a>") {
			t.Errorf("the bar does not show the download URL %s: %s", download, bar)
		}
		if strings.Contains(dom, `href="./source"`) {
			t.Errorf("the graph page offers the source view without local sources")
		}
		// Follow every link of the bar.
		links := regexp.MustCompile(`href="([^"]*)"`).FindAllStringSubmatch(bar, -1)
		want := map[string]func(*http.Response, string) error{
			"/": func(_ *http.Response, page string) error {
				if titleOf(page) != "heapproxy: snapshots" {
					return fmt.Errorf("title %q", titleOf(page))
				}
				return nil
			},
			"/?node=10001": func(_ *http.Response, page string) error {
				if titleOf(page) != "heapproxy: snapshots of node 10001" || strings.Contains(page, "chart-10002") {
					return fmt.Errorf("title %q", titleOf(page))
				}
				return nil
			},
			"/diff/" + prev.ID + "/" + last.ID + "/graph": func(_ *http.Response, page string) error {
				if w := "graph of the diff: " + nodeAt(last) + " minus " + prev.TakenAt.UTC().Format("2006-01-02 15:04:05 MST") + " · heapproxy"; titleOf(page) != w {
					return fmt.Errorf("title %q, want %q", titleOf(page), w)
				}
				return nil
			},
			download: func(resp *http.Response, body string) error {
				if body != string(store.profiles[last.ID]) {
					return fmt.Errorf("%d bytes, not the stored profile", len(body))
				}
				if cd := resp.Header.Get("Content-Disposition"); !strings.HasSuffix(cd, ".pb.gz") {
					return fmt.Errorf("Content-Disposition %q", cd)
				}
				return nil
			},
		}
		followed := map[string]bool{}
		for _, l := range links {
			href := html.UnescapeString(l[1])
			resp, page := fetch(t, href)
			if check := want[href]; check != nil {
				followed[href] = true
				if err := check(resp, page); err != nil {
					t.Errorf("bar link %s: %v", href, err)
				}
			}
		}
		for href := range want {
			if !followed[href] {
				t.Errorf("the bar has no link %s: %s", href, bar)
			}
		}

		file := filepath.Join(t.TempDir(), "graph.png")
		img := screenshotTo(t, srv.URL+path, file)
		save(t, file, "/tmp/heapproxy-web-graph.png")
		if nonWhite, colored := pixelCounts(img); colored < 2000 || nonWhite < 1280*900/50 {
			t.Errorf("graph screenshot shows no drawing: %d non-white, %d colored pixels", nonWhite, colored)
		}
	})
}
