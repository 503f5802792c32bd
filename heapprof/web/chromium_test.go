package web

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
	file := filepath.Join(t.TempDir(), "shot.png")
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
	b := img.Bounds()
	if b.Dx() != 1280 || b.Dy() != 900 {
		t.Errorf("screenshot of %s is %dx%d, want 1280x900", url, b.Dx(), b.Dy())
	}
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
	return nonWhite, colored, b.Dx() * b.Dy()
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
