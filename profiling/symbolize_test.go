package profiling

import (
	"context"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// bins are the test programs: jenode as built (-g), its copies stripped of
// DWARF only and of everything, and a second build (-O2: another build-id).
var bins struct {
	dir                           string
	full, stripDebug, stripAll    string
	second                        string
	fullID, secondID              string
	debuginfodDir, debuginfodRoot string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "profiling-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	err = buildBins(dir)
	code := 1
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		code = m.Run()
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildBins(dir string) error {
	bins.dir = dir
	sh := func(name string, args ...string) error {
		if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s (needs binutils): %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	// debuginfod serves the -g builds only.
	bins.debuginfodRoot = filepath.Join(dir, "debuginfod")
	bins.debuginfodDir = filepath.Join(bins.debuginfodRoot, "files")
	for _, d := range []string{bins.debuginfodDir, filepath.Join(dir, "strip-debug"), filepath.Join(dir, "strip-all")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	bins.full = filepath.Join(bins.debuginfodDir, "jenode")
	bins.second = filepath.Join(bins.debuginfodDir, "jenode-o2")
	bins.stripDebug = filepath.Join(dir, "strip-debug", "jenode")
	bins.stripAll = filepath.Join(dir, "strip-all", "jenode")
	if err := nodetest.BuildJenode(bins.full, "-O1"); err != nil {
		return err
	}
	if err := nodetest.BuildJenode(bins.second, "-O2"); err != nil {
		return err
	}
	steps := [][]string{
		{"strip", "--strip-debug", "-o", bins.stripDebug, bins.full},
		{"strip", "--strip-all", "-o", bins.stripAll, bins.full},
	}
	for _, s := range steps {
		if err := sh(s[0], s[1:]...); err != nil {
			return err
		}
	}
	var err error
	if bins.fullID, err = elfBuildID(bins.full); err != nil {
		return err
	}
	bins.secondID, err = elfBuildID(bins.second)
	return err
}

func elfBuildID(path string) (string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := f.Section(".note.gnu.build-id")
	if s == nil {
		return "", fmt.Errorf("%s has no build-id", path)
	}
	d, err := s.Data()
	if err != nil || len(d) < 16 {
		return "", fmt.Errorf("%s: build-id note: %v", path, err)
	}
	return hex.EncodeToString(d[16:]), nil // 12-byte header, "GNU\0"
}

// freePort asks the kernel for a free loopback port.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startDebuginfod runs elfutils' debuginfod over the -g builds and waits
// until it serves both. debuginfod 0.188 has no option to choose its
// listening address (it binds every interface): it serves only the test's
// own binaries, on a free port, for the test's lifetime, and the tests
// send it nothing but loopback traffic.
func startDebuginfod(t *testing.T) string {
	t.Helper()
	port := freePort(t)
	db := filepath.Join(t.TempDir(), "debuginfod.sqlite")
	cmd := exec.Command("debuginfod", "-F", "-p", fmt.Sprint(port), "-d", db, "-c", "1", "-g", "0",
		"--disable-source-scan", bins.debuginfodDir)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatalf("start debuginfod (Debian package debuginfod): %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for _, id := range []string{bins.fullID, bins.secondID} {
		for {
			resp, err := client.Get(base + "/buildid/" + id + "/debuginfo") // it answers GET only
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("debuginfod did not serve %s within 60 s (last: %v)", id, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	return base
}

// countingProxy forwards to a server, counting the requests per path.
func countingProxy(t *testing.T, target string) (string, *atomic.Int64) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.Path, bins.fullID) {
			n.Add(1)
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &n
}

// runJenode starts a jemalloc node binary, profiling active from the start.
func runJenode(t *testing.T, bin string) (string, int) {
	t.Helper()
	return nodetest.StartJenode(t, bin, nodetest.Jenode{MallocConf: nodetest.ProfActive})
}

func newTestService(t *testing.T, reg *backends.Registry, opt Options) *Service {
	t.Helper()
	opt.Registry = reg
	opt.Store = snapshot.NewMemory(snapshot.Retention{})
	opt.Log = zap.NewNop()
	s, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// frame is one line of a location, for comparing symbolizers.
type frame struct {
	name, file string
	line       int64
}

func framesOf(p *profile.Profile, file string) map[uint64][]frame {
	out := map[uint64][]frame{}
	for _, loc := range p.Location {
		if loc.Mapping == nil || loc.Mapping.File != file {
			continue
		}
		var fr []frame
		for _, l := range loc.Line {
			fr = append(fr, frame{l.Function.Name, l.Function.Filename, l.Line})
		}
		out[loc.Address] = fr
	}
	return out
}

// A node whose program is stripped and not configured (a discovered node)
// gets its names, files and lines from debuginfod: the same as the debug
// information read from this machine gives. The second dump is named from
// the disk cache, without a request, and so is a new process's.
func TestSymbolsFromDebuginfod(t *testing.T) {
	base := startDebuginfod(t)
	proxy, requests := countingProxy(t, base)
	cases := []struct {
		name    string
		running string
		// reference symbolizes the same dump from files on this machine.
		reference func(t *testing.T) *symbolize.Local
	}{
		{"strip-debug: symbols kept, DWARF on the server", bins.stripDebug, func(t *testing.T) *symbolize.Local {
			return &symbolize.Local{Binary: bins.full} // the -g build itself
		}},
		{"strip-all: nothing kept, DWARF on the server", bins.stripAll, func(t *testing.T) *symbolize.Local {
			// The same debug file, found locally by build-id.
			dbg := t.TempDir()
			p := filepath.Join(dbg, ".build-id", bins.fullID[:2], bins.fullID[2:]+".debug")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Link(bins.full, p); err != nil {
				t.Fatal(err)
			}
			return &symbolize.Local{Binary: bins.stripAll, SearchPath: []string{dbg}}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			host, port := runJenode(t, tc.running)
			node := backends.Node{ID: 10001, Kind: backends.StarRocks, Host: host, HTTPPort: port}
			reg := backends.NewRegistry(backends.Options{Timeout: 30 * time.Second})
			reg.Add(node)
			cacheDir := t.TempDir()
			opt := Options{SymbolServers: []string{proxy}, SymbolCacheDir: cacheDir,
				// The stripped program, as a release would install it,
				// found under symbol_path by its base name.
				SymbolPath: []string{filepath.Dir(tc.running)}}
			s := newTestService(t, reg, opt)
			d, err := reg.Dump(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			before := requests.Load()
			got, err := s.symbolized(ctx, node, d.Data)
			if err != nil {
				t.Fatal(err)
			}
			if requests.Load() == before {
				t.Fatal("debuginfod was not asked")
			}
			for _, w := range Warnings(got) {
				if strings.Contains(w, tc.running) {
					t.Errorf("warning about the program: %s", w)
				}
			}
			ref, err := heapprof.ParseLimit(ctx, d.Data, 0)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.reference(t).Symbolize(ctx, ref); err != nil {
				t.Fatal(err)
			}
			gotFrames, wantFrames := framesOf(got, tc.running), framesOf(ref, tc.running)
			if len(wantFrames) == 0 {
				t.Fatal("no location in the program")
			}
			named := false
			for addr, want := range wantFrames {
				if fmt.Sprint(gotFrames[addr]) != fmt.Sprint(want) {
					t.Errorf("%#x: got %v, want %v", addr, gotFrames[addr], want)
				}
				for _, f := range want {
					named = named || (f.name == "jenode_segment_alloc" && strings.HasSuffix(f.file, "jenode.c") && f.line > 0)
				}
			}
			if !named {
				t.Errorf("jenode_segment_alloc with its file and line not among %v", wantFrames)
			}

			// Again, with the same service: from the disk cache.
			before = requests.Load()
			again, err := s.symbolized(ctx, node, d.Data)
			if err != nil {
				t.Fatal(err)
			}
			if n := requests.Load() - before; n != 0 {
				t.Errorf("second symbolization sent %d requests for the build-id", n)
			}
			if fmt.Sprint(framesOf(again, tc.running)) != fmt.Sprint(gotFrames) {
				t.Error("second symbolization differs")
			}
			// A new service (a restart) on the same cache, with the
			// server gone: still named.
			opt.SymbolServers = []string{fmt.Sprintf("http://127.0.0.1:%d", freePort(t))}
			s2 := newTestService(t, reg, opt)
			third, err := s2.symbolized(ctx, node, d.Data)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(framesOf(third, tc.running)) != fmt.Sprint(gotFrames) {
				t.Error("symbolization from the cache of a new service differs")
			}
		})
	}
}

// StarRocks main answers 404 on /pprof/symbol: without binary, symbol_path
// or symbol servers, the dump still renders, the program's frames in hex,
// and the warning says why.
func TestSymbolEndpoint404(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, port := runJenode(t, bins.stripAll)
	jenode, _ := url.Parse(fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(port))))
	rp := httputil.NewSingleHostReverseProxy(jenode)
	var symbolAsks atomic.Int64
	be := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/pprof/symbol" {
			symbolAsks.Add(1)
			http.Error(w, "Symbol resolution is not available", http.StatusNotFound)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	defer be.Close()
	beURL, _ := url.Parse(be.URL)
	bh, bp, _ := net.SplitHostPort(beURL.Host)
	var beport int
	fmt.Sscan(bp, &beport)

	cases := []struct {
		name       string
		node       backends.Node
		opt        Options
		wantReason []string
	}{
		{"no binary", backends.Node{ID: 10002, Kind: backends.StarRocks, Host: bh, HTTPPort: beport}, Options{},
			[]string{"no binary configured", "no symbol_servers configured", "HTTP 404", "Symbol resolution is not available"}},
		{"binary missing", backends.Node{ID: 10003, Kind: backends.StarRocks, Host: bh, HTTPPort: beport,
			Binary: filepath.Join(bins.dir, "no-such-binary")}, Options{},
			[]string{"the binary: binary " + filepath.Join(bins.dir, "no-such-binary"), "HTTP 404"}},
		{"servers, but no build-id", backends.Node{ID: 10004, Kind: backends.StarRocks, Host: bh, HTTPPort: beport},
			Options{SymbolServers: []string{be.URL}},
			[]string{"no binary configured", "debuginfod: its build-id is unknown", "HTTP 404"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := backends.NewRegistry(backends.Options{Timeout: 30 * time.Second})
			reg.Add(tc.node)
			tc.opt.SymbolCacheDir = t.TempDir()
			s := newTestService(t, reg, tc.opt)
			asked := symbolAsks.Load()
			ans, err := s.DumpDOT(ctx, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			dot, warnings := ans.Text, ans.Warnings
			if symbolAsks.Load() == asked {
				t.Error("the node's symbolizer was not asked")
			}
			if !strings.HasPrefix(dot, "digraph ") {
				t.Fatalf("not a graph: %.200s", dot)
			}
			if !regexp.MustCompile(`label="[0-9a-f]{16}\\n`).MatchString(dot) {
				t.Errorf("no hex frame in the graph:\n%s", dot)
			}
			var w string
			for _, x := range warnings {
				if strings.Contains(x, bins.stripAll) {
					w = x
				}
			}
			if w == "" {
				t.Fatalf("no warning about %s: %q", bins.stripAll, warnings)
			}
			t.Log(w)
			for _, want := range append(tc.wantReason, fmt.Sprintf("node %d: ", tc.node.ID), "shown as hex") {
				if !strings.Contains(w, want) {
					t.Errorf("warning %q lacks %q", w, want)
				}
			}
			// Kept with the snapshot.
			snap, err := s.Snapshot(ctx, tc.node)
			if err != nil {
				t.Fatal(err)
			}
			if stored, err := s.StoredDOT(ctx, tc.node, snap.Text); err != nil || len(stored.Warnings) == 0 {
				t.Errorf("stored snapshot's warnings: %q, %v", stored.Warnings, err)
			}
		})
	}
}

// The debuginfod client's disk cache and limits, against the real server.
func TestDebuginfodCache(t *testing.T) {
	base := startDebuginfod(t)
	size := func(p string) int64 {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	full, second := size(bins.full), size(bins.second)
	cases := []struct {
		name     string
		opt      symbolize.DebuginfodOptions
		fetch    []string
		wantErr  []error // per fetch; nil means success
		wantKept []bool  // per fetch, in the cache at the end
	}{
		{"both fit", symbolize.DebuginfodOptions{MaxBytes: full + second},
			[]string{bins.fullID, bins.secondID}, []error{nil, nil}, []bool{true, true}},
		{"cap evicts the oldest", symbolize.DebuginfodOptions{MaxBytes: max(full, second) + 1},
			[]string{bins.fullID, bins.secondID}, []error{nil, nil}, []bool{false, true}},
		{"file over the size limit", symbolize.DebuginfodOptions{MaxFileBytes: full - 1},
			[]string{bins.fullID}, []error{symbolize.ErrTooLarge}, []bool{false}},
		{"unknown build-id", symbolize.DebuginfodOptions{},
			[]string{strings.Repeat("ab", 20)}, []error{symbolize.ErrNotFound}, []bool{false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			tc.opt.Servers = []string{base}
			tc.opt.Dir = t.TempDir()
			tc.opt.Timeout = 30 * time.Second
			d, err := symbolize.NewDebuginfod(tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range tc.fetch {
				p, err := d.Fetch(ctx, id)
				if want := tc.wantErr[i]; (want == nil) != (err == nil) || (want != nil && !errors.Is(err, want)) {
					t.Fatalf("fetch %s: %v, want %v", id, err, want)
				}
				if err == nil && !strings.HasPrefix(p, tc.opt.Dir) {
					t.Errorf("fetched to %s, outside the cache", p)
				}
				time.Sleep(10 * time.Millisecond) // distinct modification times
			}
			for i, id := range tc.fetch {
				if kept := d.Cached(id) != ""; kept != tc.wantKept[i] {
					t.Errorf("%s in the cache: %v, want %v", id, kept, tc.wantKept[i])
				}
			}
		})
	}
	// A server that does not answer costs the timeout, not more.
	dead := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer dead.Close()
	d, err := symbolize.NewDebuginfod(symbolize.DebuginfodOptions{Servers: []string{dead.URL}, Dir: t.TempDir(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := d.Fetch(context.Background(), bins.fullID); err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("silent server: %v after %s", err, time.Since(start))
	}
}

// Without binary and symbol servers, a node whose symbolizer answers
// (jenode's dladdr, as older StarRocks BEs) names the program's frames.
func TestSymbolsFromNode(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	host, port := runJenode(t, bins.stripAll)
	node := backends.Node{ID: 10005, Kind: backends.StarRocks, Host: host, HTTPPort: port}
	reg := backends.NewRegistry(backends.Options{Timeout: 30 * time.Second})
	reg.Add(node)
	s := newTestService(t, reg, Options{})
	ans, err := s.DumpDOT(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	dot, warnings := ans.Text, ans.Warnings
	if !strings.Contains(dot, "jenode_segment_alloc") {
		t.Errorf("the node's names are not in the graph:\n%s", dot)
	}
	// dladdr knows exported symbols only: a static function's address
	// may stay hex, and its warning says the node named none of them.
	all := regexp.MustCompile(`: (\d+) of (\d+) addresses`)
	for _, w := range warnings {
		if m := all.FindStringSubmatch(w); strings.Contains(w, bins.stripAll) && (m == nil || m[1] == m[2] ||
			!strings.Contains(w, "node symbolizer: the node named none of them")) {
			t.Errorf("warning about the program: %s", w)
		}
	}
}
