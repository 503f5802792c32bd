package backends

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/internal/gzipbomb"
)

// serveBody serves body on every path with the given content type.
func serveBody(t *testing.T, body []byte) (host string, port int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return u.Hostname(), p
}

// TestGoDumpGzipBomb: a Go node's answer is inflated within max_dump_bytes,
// every gzip layer of it, and a bomb costs memory near the limit, not what
// it would inflate to.
func TestGoDumpGzipBomb(t *testing.T) {
	gh, gp := startGonode(t)
	realProfile := nodeHTTPBytes(t, "http://"+hostPort(gh, gp)+"/debug/pprof/heap")
	if !isGzip(realProfile) {
		t.Fatalf("gonode's heap profile is not gzipped: %q", realProfile[:min(len(realProfile), 16)])
	}
	const limit = 4 << 20
	// 1 GiB of zeros in ~1 MB.
	bomb := gzipbomb.Members(t, 8<<20, 128)
	t.Logf("bomb: %d bytes inflating to %d", len(bomb), 8<<20*128)
	cases := []struct {
		name    string
		body    []byte
		wantErr string // "" for a good dump
		tooBig  bool
	}{
		{"real profile", realProfile, "", false},
		{"real profile gzipped again", gzipbomb.Gzip(t, realProfile), "", false},
		{"bomb", bomb, "inflates past max_dump_bytes (4194304 bytes)", true},
		{"bomb inside gzip", gzipbomb.Gzip(t, bomb), "gzip layer 2 inflates past max_dump_bytes (4194304 bytes)", true},
		{"three layers", gzipbomb.Gzip(t, gzipbomb.Gzip(t, realProfile)), "nested 3 layers deep", false},
		{"not gzip", []byte("<html><title>login</title></html>"), "a gzipped pprof protobuf (net/http/pprof); is this node a Go service?", false},
		{"broken gzip", realProfile[:len(realProfile)/2], "unexpected EOF", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host, port := serveBody(t, c.body)
			n := Node{ID: 20002, Kind: Go, Host: host, HTTPPort: port}
			reg := NewRegistry(Options{MaxResponseBytes: limit})
			reg.Add(n)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			d, err := reg.Dump(context.Background(), n)
			runtime.ReadMemStats(&after)
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %.1f MB in %s: %v", float64(grew)/(1<<20), time.Since(start), err)
			if grew > 48<<20 {
				t.Errorf("the dump allocated %d bytes; want < 48 MiB for a %d byte limit", grew, limit)
			}
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				if isGzip(d.Data) {
					t.Error("Dump.Data is still gzipped: a later reader would inflate node data again")
				}
				p, err := profile.ParseData(d.Data)
				if err != nil || !profileHasFunc(p, "main.gonodeRetainBlocks") {
					t.Fatalf("dump is not gonode's profile: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want it to say %q", err, c.wantErr)
			}
			if errors.Is(err, ErrTooLarge) != c.tooBig {
				t.Errorf("errors.Is(err, ErrTooLarge) = %v, want %v", !c.tooBig, c.tooBig)
			}
			if strings.Contains(err.Error(), "\\x1f\\x8b") || strings.Contains(err.Error(), "<html>") {
				t.Errorf("error quotes raw bytes: %v", err)
			}
		})
	}
}

// nodeHTTPBytes GETs a URL from a test node.
func nodeHTTPBytes(t *testing.T, u string) []byte {
	t.Helper()
	code, body := nodeHTTP(t, http.MethodGet, u, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d", u, code)
	}
	return []byte(body)
}

// testBudget is the default symbolizer budget, taking any address.
func testBudget() *symbolBudget {
	return &symbolBudget{nameBytes: DefaultMaxSymbolNameBytes, left: DefaultMaxSymbolBytes, limit: DefaultMaxSymbolBytes}
}

// hostileSymbolizer serves a symbolizer that answers what fn writes to
// the POST of the addresses (GET answers num_symbols).
func hostileSymbolizer(t *testing.T, fn func(w http.ResponseWriter, addrs []string)) (host string, port int) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte("num_symbols: 1\n"))
			return
		}
		var b strings.Builder
		_, _ = io.Copy(&b, io.LimitReader(r.Body, 1<<20))
		fn(w, strings.Split(b.String(), "+"))
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	u, _ := url.Parse(srv.URL)
	p, _ := strconv.Atoi(u.Port())
	return u.Hostname(), p
}

// TestHostileSymbolizer: what a node's symbolizer may add is bounded in
// time, answer size, name length and total bytes.
func TestHostileSymbolizer(t *testing.T) {
	name250 := func(i int) string { return fmt.Sprintf("n%03d_%s", i, strings.Repeat("x", 245)) }
	cases := []struct {
		name    string
		opts    Options
		addrs   int
		serve   func(w http.ResponseWriter, addrs []string)
		wantErr string
		check   func(t *testing.T, p *profile.Profile)
	}{
		{
			name: "endless answer", addrs: 4, opts: Options{MaxSymbolAnswerBytes: 1 << 20},
			serve: func(w http.ResponseWriter, addrs []string) {
				line := []byte(addrs[0] + "\t" + strings.Repeat("y", 200) + "\n")
				for {
					if _, err := w.Write(line); err != nil {
						return
					}
				}
			},
			wantErr: "answer too large (limit 1048576 bytes)",
		},
		{
			name: "drip answer", addrs: 4, opts: Options{SymbolTimeout: 700 * time.Millisecond},
			serve: func(w http.ResponseWriter, addrs []string) {
				for {
					if _, err := w.Write([]byte("0")); err != nil {
						return
					}
					w.(http.Flusher).Flush()
					time.Sleep(50 * time.Millisecond)
				}
			},
			wantErr: "no answer within 700ms (timeout)",
		},
		{
			name: "250-byte names are cut", addrs: 300, opts: Options{MaxSymbolNameBytes: 100},
			serve: func(w http.ResponseWriter, addrs []string) {
				for i, a := range addrs {
					fmt.Fprintf(w, "%s\t%s\n", a, name250(i))
				}
			},
			check: func(t *testing.T, p *profile.Profile) {
				for _, loc := range p.Location {
					if len(loc.Line) != 1 {
						t.Fatalf("location %#x has %d lines", loc.Address, len(loc.Line))
					}
					if n := loc.Line[0].Function.Name; len(n) != 100 || !strings.HasSuffix(n, "...") {
						t.Fatalf("name %q (%d bytes), want 100 bytes ending ...", n, len(n))
					}
				}
			},
		},
		{
			name: "names over the total", addrs: 300, opts: Options{MaxSymbolBytes: 50_000},
			serve: func(w http.ResponseWriter, addrs []string) {
				for i, a := range addrs {
					fmt.Fprintf(w, "%s\t%s\n", a, name250(i))
				}
			},
			wantErr: "the names answered add more than 50000 bytes (symbolizer limit)",
		},
		{
			name: "addresses not asked for and endless inlining", addrs: 2,
			serve: func(w http.ResponseWriter, addrs []string) {
				for i := range 10000 {
					fmt.Fprintf(w, "0x%x\t%s\n", 0x900000+i, name250(i))
				}
				fmt.Fprintf(w, "%s %s\n", addrs[0], strings.Repeat("f--", 5000))
			},
			check: func(t *testing.T, p *profile.Profile) {
				if len(p.Function) != 1 || len(p.Location[0].Line) != maxSymbolFrames {
					t.Fatalf("%d functions, %d frames; want 1 function, %d frames", len(p.Function), len(p.Location[0].Line), maxSymbolFrames)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			host, port := hostileSymbolizer(t, c.serve)
			n := Node{ID: 30001, Kind: TiKV, Host: host, HTTPPort: port}
			reg := NewRegistry(c.opts)
			reg.Add(n)
			sym, err := reg.RemoteSymbolizer(n)
			if err != nil {
				t.Fatal(err)
			}
			p := &profile.Profile{}
			for i := range c.addrs {
				p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Address: 0x1000 + uint64(i)*16})
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			err = sym.Symbolize(context.Background(), p)
			runtime.ReadMemStats(&after)
			took := time.Since(start)
			t.Logf("%s, allocated %.1f MB: %v", took, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), err)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 32<<20 {
				t.Errorf("allocated %d bytes", grew)
			}
			if took > 10*time.Second {
				t.Errorf("took %s", took)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, p)
		})
	}
}

// TestMissingRouteTeaches: a 404 on a kind's dump route says which releases
// have it and what enables it. The server answers as TiKV 5.3-7.3's status
// server does ("path not found"), a fault no jenode build has.
func TestMissingRouteTeaches(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "path not found", http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())
	for _, c := range []struct {
		kind Kind
		want string
	}{
		{TiKV, "TiKV 5.3 to 7.3 (LTS 6.5.x, 7.1.x included) have no HTTP heap profile route"},
		{Databend, "memory-profiling cargo feature"},
		{Go, `import _ "net/http/pprof"`},
		{StarRocks, "be_http_port"},
		{Doris, "/jeheap/dump from 1.2.2"},
		{GreptimeDB, "(v0.9 and older: /v1/prof/mem), ?output=proto from v0.15 and the activate/deactivate/status routes from v0.16.0, on its HTTP port (4000 by default); POST /v1/prof/mem answered 404 too"},
	} {
		n := Node{ID: 1, Kind: c.kind, Host: u.Hostname(), HTTPPort: port}
		reg := NewRegistry(Options{})
		reg.Add(n)
		_, err := reg.Dump(context.Background(), n)
		if err == nil || !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.kind, err, c.want)
		}
	}
}
