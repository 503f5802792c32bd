package backends

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// wantNodeError checks err is a *NodeError for op whose text has every want.
func wantNodeError(t *testing.T, err error, op string, want ...string) {
	t.Helper()
	var ne *NodeError
	if !errors.As(err, &ne) || ne.Op != op {
		t.Fatalf("got %v, want *NodeError for %s", err, op)
	}
	t.Log(err)
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
}

// profActive reads jemalloc's prof.active from jenode (its GreptimeDB
// status route reads the same mallctl), the truth behind a node's switch.
func profActive(t *testing.T, base string) bool {
	t.Helper()
	code, body := nodeHTTP(t, http.MethodGet, base+"/debug/prof/mem/status", "")
	if code != http.StatusOK {
		t.Fatalf("prof.active: %d %q", code, body)
	}
	return strings.Contains(body, "true")
}

// TestTiKVReleases drives jenode answering as each TiKV release's status
// server does (src/server/status_server at the tags, README.md): the
// driver learns the release from GET /config (and /engine_type), switches
// 7.5+ with memory.enable-heap-profiling, never calls heap_activate, and
// dumps with ?seconds= so 7.4 samples for the window and 7.5+ answer at once.
func TestTiKVReleases(t *testing.T) {
	const window = 2 * time.Second
	tests := []struct {
		version string
		// switchable: 7.5+ have memory.enable-heap-profiling (on by default).
		switchable bool
		// release is what errors of a release without the switch say it is.
		release string
		// dump: "404" (5.3-7.3), "window" (7.4), "now" (7.5+).
		dump string
		// extra checks the release's own quirks.
		extra func(t *testing.T, reg *Registry, n Node)
	}{
		{version: "6.5", release: "7.0 or older", dump: "404"},
		{version: "7.4", release: "7.1 to 7.4", dump: "window", extra: func(t *testing.T, reg *Registry, n Node) {
			// Someone's heap_activate holds TiKV 7.4's profiling mutex:
			// the windowed dump is refused and the error says why.
			base := n.BaseURL()
			if code, body := nodeHTTP(t, http.MethodGet, base+"/debug/pprof/heap_activate", ""); code != http.StatusOK {
				t.Fatalf("heap_activate: %d %q", code, body)
			}
			_, err := reg.Dump(context.Background(), n)
			wantNodeError(t, err, OpDump, "HTTP 500", "Already in Profiling", "GET /debug/pprof/heap_deactivate stops those")
			nodeHTTP(t, http.MethodGet, base+"/debug/pprof/heap_deactivate", "")
		}},
		{version: "7.5", switchable: true, dump: "now", extra: func(t *testing.T, reg *Registry, n Node) {
			// With the default config, heap_activate fails and
			// heap_deactivate answers 200 while prof.active stays on, yet
			// dumps are refused: the error tells how to recover, and
			// Disable then Enable does.
			ctx := context.Background()
			base := n.BaseURL()
			if code, body := nodeHTTP(t, http.MethodGet, base+"/debug/pprof/heap_activate", ""); code != http.StatusInternalServerError ||
				!strings.Contains(body, "Already in Heap Profiling") {
				t.Fatalf("heap_activate: %d %q", code, body)
			}
			if code, body := nodeHTTP(t, http.MethodGet, base+"/debug/pprof/heap_deactivate", ""); code != http.StatusOK {
				t.Fatalf("heap_deactivate: %d %q", code, body)
			}
			if on, err := reg.Status(ctx, n); err != nil || !on || !profActive(t, base) {
				t.Fatalf("after heap_deactivate: Status %v, %v; prof.active %v; want the config and prof.active still on", on, err, profActive(t, base))
			}
			_, err := reg.Dump(ctx, n)
			wantNodeError(t, err, OpDump, "HTTP 500", "heap profiling is not activated", "disable_prof() then enable_prof()")
			if err := reg.Disable(ctx, n); err != nil {
				t.Fatal(err)
			}
			if err := reg.Enable(ctx, n); err != nil {
				t.Fatal(err)
			}
			if _, err := reg.Dump(ctx, n); err != nil {
				t.Fatalf("Dump after Disable, Enable: %v", err)
			}
		}},
		{version: "8.1", switchable: true, dump: "now", extra: func(t *testing.T, reg *Registry, n Node) {
			if code, body := nodeHTTP(t, http.MethodGet, n.BaseURL()+"/debug/pprof/heap_activate", ""); code != http.StatusGone {
				t.Fatalf("heap_activate: %d %q, want 410", code, body)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.version, func(t *testing.T) {
			host, port := startJenode(t, "--product", "tikv", "--version", tc.version)
			n := Node{ID: 10004, Kind: TiKV, Host: host, HTTPPort: port}
			base := n.BaseURL()
			reg := NewRegistry(Options{Timeout: 30 * time.Second, TiKVHeapWindow: window})
			reg.Add(n)
			ctx := context.Background()

			on, err := reg.Status(ctx, n)
			if tc.switchable {
				if err != nil || !on || !profActive(t, base) {
					t.Fatalf("Status = %v, %v; want on, as memory.enable-heap-profiling defaults", on, err)
				}
				if err := reg.Disable(ctx, n); err != nil {
					t.Fatal(err)
				}
				if on, err := reg.Status(ctx, n); err != nil || on || profActive(t, base) {
					t.Fatalf("after Disable: Status = %v, %v; prof.active %v", on, err, profActive(t, base))
				}
				if err := reg.Enable(ctx, n); err != nil {
					t.Fatal(err)
				}
				if on, err := reg.Status(ctx, n); err != nil || !on || !profActive(t, base) {
					t.Fatalf("after Enable: Status = %v, %v; prof.active %v", on, err, profActive(t, base))
				}
			} else {
				wantUnsupported(t, err, TiKV, OpStatus)
				for _, op := range []func(context.Context, Node) error{reg.Enable, reg.Disable} {
					err := op(ctx, n)
					for _, w := range []string{"this TiKV is " + tc.release, "memory.enable-heap-profiling", "added in TiKV 7.5",
						"/debug/pprof/heap?seconds=2", "every 60 s"} {
						if !strings.Contains(err.Error(), w) {
							t.Errorf("error %q lacks %q", err, w)
						}
					}
				}
				wantUnsupported(t, reg.Enable(ctx, n), TiKV, OpEnable)
				if prof := profActive(t, base); prof {
					t.Error("prof.active is on: the driver switched something")
				}
			}

			start := time.Now()
			d, err := reg.Dump(ctx, n)
			took := time.Since(start)
			switch tc.dump {
			case "404":
				wantNodeError(t, err, OpDump, "GET /debug/pprof/heap?seconds=2: HTTP 404", "path not found",
					"TiKV 5.3 to 7.3 (LTS 6.5.x, 7.1.x included) have no HTTP heap profile route")
			case "window":
				if err != nil {
					t.Fatal(err)
				}
				if took < window {
					t.Errorf("dump took %s, want the %s window", took, window)
				}
				// TiKV 7.4 has no /debug/pprof/symbol (7.5+); jenode's
				// StarRocks route names the addresses.
				checkJemallocDump(t, d, base+"/pprof/symbol")
				if profActive(t, base) {
					t.Error("prof.active is on after the window")
				}
			case "now":
				if err != nil {
					t.Fatal(err)
				}
				if took >= window {
					t.Errorf("dump took %s; 7.5+ dump at once", took)
				}
				checkJemallocDump(t, d, base+"/debug/pprof/symbol")
			}
			for _, path := range []string{"/debug/pprof/heap_activate", "/debug/pprof/heap_deactivate"} {
				if got := requestCount(t, base, path); got != 0 {
					t.Errorf("the driver called %s %d times", path, got)
				}
			}
			if tc.extra != nil {
				tc.extra(t, reg, n)
			}
		})
	}
}

// TestTiKVWindow: the dump window is whole seconds and leaves the node
// time to answer within the call's timeout.
func TestTiKVWindow(t *testing.T) {
	for _, c := range []struct {
		window, timeout time.Duration
		want            int
	}{
		{0, DefaultTimeout, 10},
		{1500 * time.Millisecond, DefaultTimeout, 2},
		{time.Minute, DefaultTimeout, 30},
		{0, 4 * time.Second, 2},
		{0, time.Second, 1},
	} {
		d := tikvDriver{c: newCaller(nil, c.timeout, 0, false), window: c.window}
		if got := d.windowSeconds(); got != c.want {
			t.Errorf("window %s, timeout %s: %d s, want %d", c.window, c.timeout, got, c.want)
		}
	}
}

// TestGreptimeDBReleases: jenode as GreptimeDB v0.9 (/v1/prof/mem only,
// query ignored), v0.15 (?output=proto, no switch) and the current routes.
// A node without a local binary is asked for the pprof symbolized on the
// node; older releases send the raw dump, which is taken as it is.
func TestGreptimeDBReleases(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		binary bool
		format Format
		// requests per path the dump must have cost
		requests map[string]int
		switches bool // activate/deactivate/status exist (v0.16+)
	}{
		{name: "0.9/no-binary", args: []string{"--product", "greptimedb", "--version", "0.9"}, format: FormatJemalloc,
			requests: map[string]int{"/debug/prof/mem": 1, "/v1/prof/mem": 1}},
		{name: "0.9/binary", args: []string{"--product", "greptimedb", "--version", "0.9"}, binary: true, format: FormatJemalloc,
			requests: map[string]int{"/debug/prof/mem": 1, "/v1/prof/mem": 1}},
		{name: "0.15/no-binary", args: []string{"--product", "greptimedb", "--version", "0.15"}, format: FormatPprof,
			requests: map[string]int{"/debug/prof/mem": 1, "/v1/prof/mem": 0}},
		{name: "0.15/binary", args: []string{"--product", "greptimedb", "--version", "0.15"}, binary: true, format: FormatJemalloc,
			requests: map[string]int{"/debug/prof/mem": 1, "/v1/prof/mem": 0}},
		{name: "current/no-binary", format: FormatPprof, switches: true,
			requests: map[string]int{"/debug/prof/mem": 1, "/v1/prof/mem": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Profiling active from the start (prof_active:true), as a node
			// started with MALLOC_CONF=prof:true.
			host, port := startJenodeConf(t, "prof:true,prof_active:true,lg_prof_sample:10", tc.args...)
			n := Node{ID: 10003, Kind: GreptimeDB, Host: host, HTTPPort: port}
			if tc.binary {
				n.Binary = progs.Jenode
			}
			reg := NewRegistry(Options{Timeout: 30 * time.Second})
			reg.Add(n)
			ctx := context.Background()
			base := n.BaseURL()
			d, err := reg.Dump(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			switch tc.format {
			case FormatPprof:
				checkNodePprof(t, d)
			default:
				checkJemallocDump(t, d, base+"/pprof/symbol")
			}
			for path, want := range tc.requests {
				if got := requestCount(t, base, path); got != want {
					t.Errorf("%s asked %d times, want %d", path, got, want)
				}
			}
			_, err = reg.Status(ctx, n)
			if tc.switches {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				wantUnsupported(t, err, GreptimeDB, OpStatus)
			}
		})
	}
}

// TestDatabendOfficialBuild: jenode as an official databend-query build,
// which has no memory route; the error says which build has it.
func TestDatabendOfficialBuild(t *testing.T) {
	host, port := startJenode(t, "--product", "databend", "--version", "release")
	n := Node{ID: 10005, Kind: Databend, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(n)
	_, err := reg.Dump(context.Background(), n)
	wantNodeError(t, err, OpDump, "GET /debug/mem/pprof/profile?seconds=0: HTTP 404",
		"memory-profiling cargo feature", "src/binaries/Cargo.toml", "admin_service.rs", "MALLOC_CONF=prof:true")
}
