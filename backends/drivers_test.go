package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// jenodeFuncs are the functions jenode allocates in.
var jenodeFuncs = []string{"jenode_segment_alloc", "jenode_tablet_schema_alloc", "jenode_leak_step"}

// stackAddrs returns the distinct PCs of a heap_v2 profile's stacks.
func stackAddrs(t *testing.T, data []byte) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "@ ") {
			continue
		}
		for _, a := range strings.Fields(line[2:]) {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("profile has no stacks:\n%s", data)
	}
	return out
}

// symbolize asks a node's gperftools-style symbolizer for the names of addrs:
// GET must answer num_symbols; the addresses go as a POST body, or, when
// post is false, as the GET query (Go 1.22+ net/http/pprof registers
// "GET /debug/pprof/symbol" only, so POST gets 405 there).
func symbolize(t *testing.T, url string, addrs []string, post bool) map[string]bool {
	t.Helper()
	code, body := nodeHTTP(t, http.MethodGet, url, "")
	if code != http.StatusOK || !strings.HasPrefix(body, "num_symbols: ") {
		t.Fatalf("GET %s: %d %q", url, code, body)
	}
	if post {
		code, body = nodeHTTP(t, http.MethodPost, url, strings.Join(addrs, "+"))
	} else {
		code, body = nodeHTTP(t, http.MethodGet, url+"?"+strings.Join(addrs, "+"), "")
	}
	if code != http.StatusOK {
		t.Fatalf("symbolize at %s: %d %q", url, code, body)
	}
	names := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "num_symbols: ") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 || !strings.HasPrefix(f[0], "0x") {
			t.Fatalf("symbolize at %s: bad line %q", url, line)
		}
		names[f[1]] = true
	}
	return names
}

// checkJemallocDump checks a dump is a real heap_v2 profile whose stacks,
// named by the node's symbolizer, include jenode's allocating functions.
func checkJemallocDump(t *testing.T, d *Dump, symURL string) {
	t.Helper()
	if d.Format != FormatJemalloc {
		t.Fatalf("format %v, want jemalloc", d.Format)
	}
	first, _, _ := strings.Cut(string(d.Data), "\n")
	if !regexp.MustCompile(`^heap_v2/\d+$`).MatchString(first) {
		t.Fatalf("first line %q, want heap_v2/<period>", first)
	}
	if !bytes.Contains(d.Data, []byte("\nMAPPED_LIBRARIES:\n")) {
		t.Fatal("dump has no MAPPED_LIBRARIES section")
	}
	names := symbolize(t, symURL, stackAddrs(t, d.Data), true)
	for _, f := range jenodeFuncs {
		if !names[f] {
			t.Errorf("stacks do not include %s; symbolizer named %v", f, names)
		}
	}
}

// checkNodePprof checks a dump is a flat pprof protobuf whose samples name
// jenode's allocating functions (symbolized on the node).
func checkNodePprof(t *testing.T, d *Dump) {
	t.Helper()
	if d.Format != FormatPprof {
		t.Fatalf("format %v, want pprof", d.Format)
	}
	if isGzip(d.Data) {
		t.Fatal("Dump.Data is still gzipped")
	}
	p, err := profile.ParseData(d.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.SampleType) != 1 || p.SampleType[0].Type != "inuse_space" || p.SampleType[0].Unit != "bytes" {
		t.Errorf("sample types %v, want inuse_space/bytes", p.SampleType)
	}
	for _, f := range jenodeFuncs {
		if !profileHasFunc(p, f) {
			t.Errorf("profile does not name %s", f)
		}
	}
}

// checkDOT checks graphviz accepts a graph and that it names jenode's
// functions (jeprof on the node symbolized them from the binary).
func checkDOT(t *testing.T, dot []byte) {
	t.Helper()
	if !bytes.HasPrefix(dot, []byte("digraph ")) {
		t.Fatalf("DOT starts %q", dot[:min(len(dot), 60)])
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = bytes.NewReader(dot)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot -Tsvg rejected the graph: %v %s\n%s", err, stderr.String(), dot)
	}
	for _, f := range jenodeFuncs {
		if !bytes.Contains(dot, []byte(f)) {
			t.Errorf("DOT does not name %s:\n%s", f, dot)
		}
	}
}

// sampledBytes reads the total of a fresh raw dump ("  t*: objs: bytes").
func sampledBytes(t *testing.T, base string) int64 {
	t.Helper()
	code, body := nodeHTTP(t, http.MethodGet, base+"/pprof/heap", "")
	lines := strings.SplitN(body, "\n", 3)
	if code != http.StatusOK || len(lines) < 2 {
		t.Fatalf("raw dump: %d %q", code, body[:min(len(body), 80)])
	}
	f := strings.Fields(strings.NewReplacer(":", " ").Replace(lines[1]))
	if len(f) < 3 || f[0] != "t*" {
		t.Fatalf("totals line %q", lines[1])
	}
	v, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func wantUnsupported(t *testing.T, err error, kind Kind, op string) {
	t.Helper()
	var u *UnsupportedError
	if !errors.As(err, &u) {
		t.Fatalf("%s on %s: got %v, want *UnsupportedError", op, kind, err)
	}
	t.Log(err)
	if u.Kind != kind || u.Op != op || u.Reason == "" || !strings.Contains(err.Error(), u.Reason) {
		t.Fatalf("%s on %s: UnsupportedError %+v", op, kind, u)
	}
}

// TestJemallocKinds drives a real jemalloc node through each product's API:
// status false -> enable -> status true -> dump with the known stacks ->
// disable -> status false; where a product cannot do an operation the driver
// says so with *UnsupportedError, and the test flips prof.active through the
// node's GreptimeDB endpoint instead.
func TestJemallocKinds(t *testing.T) {
	tests := []struct {
		name          string
		kind          Kind
		args          []string // jenode's personality
		binary        bool     // the node has a local binary (Node.Binary)
		canToggle     bool
		canStatus     bool
		format        Format
		symbolPath    string // the node's own symbolizer, "" when the product has none
		toggleMessage string // what an Unsupported enable must mention
	}{
		{name: "starrocks", kind: StarRocks, format: FormatJemalloc, symbolPath: "/pprof/symbol", toggleMessage: "ADMIN EXECUTE"},
		{name: "doris", kind: Doris, canToggle: true, format: FormatDOT, symbolPath: "/pprof/symbol"},
		// With a local binary the raw dump, symbolized by heapproxy; without
		// one ?output=proto, symbolized on the node.
		{name: "greptimedb/binary", kind: GreptimeDB, binary: true, canToggle: true, canStatus: true, format: FormatJemalloc},
		{name: "greptimedb/no-binary", kind: GreptimeDB, canToggle: true, canStatus: true, format: FormatPprof},
		// TiKV 8.1 started with memory.enable-heap-profiling = false.
		{name: "tikv", kind: TiKV, args: []string{"--product", "tikv", "--version", "8.1", "--heap-profiling", "off"},
			canToggle: true, canStatus: true, format: FormatJemalloc, symbolPath: "/debug/pprof/symbol"},
		{name: "databend", kind: Databend, format: FormatJemalloc, toggleMessage: "MALLOC_CONF=prof:true"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			host, port := startJenode(t, tc.args...)
			node := Node{ID: 10001, Kind: tc.kind, Host: host, HTTPPort: port}
			if tc.binary {
				node.Binary = progs.Jenode
			}
			reg := NewRegistry(Options{Timeout: 30 * time.Second})
			reg.Add(node)
			ctx := context.Background()
			base := node.BaseURL()
			// The same process serves GreptimeDB's API: the test's
			// out-of-band switch for kinds without one.
			setActive := func(on bool) {
				path := "/debug/prof/mem/deactivate"
				if on {
					path = "/debug/prof/mem/activate"
				}
				if code, body := nodeHTTP(t, http.MethodPost, base+path, ""); code != http.StatusOK {
					t.Fatalf("POST %s: %d %q", path, code, body)
				}
			}
			status := func(want bool) {
				t.Helper()
				got, err := reg.Status(ctx, node)
				if !tc.canStatus {
					wantUnsupported(t, err, tc.kind, OpStatus)
					return
				}
				if err != nil || got != want {
					t.Fatalf("Status = %v, %v; want %v", got, err, want)
				}
			}

			status(false)
			if err := reg.Enable(ctx, node); tc.canToggle {
				if err != nil {
					t.Fatalf("Enable: %v", err)
				}
			} else {
				wantUnsupported(t, err, tc.kind, OpEnable)
				if ForwardToFE(err) != (tc.kind == StarRocks) {
					t.Errorf("ForwardToFE(%v) = %v", err, ForwardToFE(err))
				}
				if !strings.Contains(err.Error(), tc.toggleMessage) {
					t.Errorf("Enable error %q does not mention %q", err, tc.toggleMessage)
				}
				setActive(true)
			}
			status(true)

			enabledFrom := sampledBytes(t, base)
			if code, _ := nodeHTTP(t, http.MethodGet, base+"/alloc", ""); code != http.StatusOK {
				t.Fatalf("/alloc: %d", code)
			}
			enabledGrowth := sampledBytes(t, base) - enabledFrom
			d, err := reg.Dump(ctx, node)
			if err != nil {
				t.Fatalf("Dump: %v", err)
			}
			if d.Node.ID != node.ID || d.TakenAt.IsZero() {
				t.Errorf("Dump metadata: node %d, taken %v", d.Node.ID, d.TakenAt)
			}
			drv, err := reg.Driver(tc.kind)
			if err != nil {
				t.Fatal(err)
			}
			wantSym := ""
			if tc.symbolPath != "" {
				wantSym = base + tc.symbolPath
			}
			if got := drv.SymbolURL(node); got != wantSym {
				t.Errorf("SymbolURL = %q, want %q", got, wantSym)
			}
			switch tc.format {
			case FormatJemalloc:
				symURL := wantSym
				if symURL == "" {
					// The product has no symbolizer; ask jenode's.
					symURL = base + "/pprof/symbol"
				}
				checkJemallocDump(t, d, symURL)
			case FormatDOT:
				if d.Format != FormatDOT {
					t.Fatalf("format %v, want dot", d.Format)
				}
				checkDOT(t, d.Data)
			case FormatPprof:
				checkNodePprof(t, d)
			}

			if err := reg.Disable(ctx, node); tc.canToggle {
				if err != nil {
					t.Fatalf("Disable: %v", err)
				}
			} else {
				wantUnsupported(t, err, tc.kind, OpDisable)
				setActive(false)
			}
			status(false)

			// Disabled means no new samples: the same allocations that grew
			// the profile by MBs while enabled barely move it now (measured:
			// tens of KB, from blocks sampled before that jemalloc still
			// tracks through realloc).
			before := sampledBytes(t, base)
			nodeHTTP(t, http.MethodGet, base+"/alloc", "")
			disabledGrowth := sampledBytes(t, base) - before
			if enabledGrowth <= 0 || disabledGrowth*10 > enabledGrowth {
				t.Errorf("sampled bytes grew by %d while enabled, by %d after Disable", enabledGrowth, disabledGrowth)
			}
		})
	}
}

// TestDorisInactiveDump: a Doris BE answers 500 while the profiler is off;
// the error names the node and quotes the BE.
func TestDorisInactiveDump(t *testing.T) {
	host, port := startJenode(t)
	node := Node{ID: 10002, Kind: Doris, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(node)
	_, err := reg.Dump(context.Background(), node)
	var ne *NodeError
	if !errors.As(err, &ne) {
		t.Fatalf("Dump: %v, want *NodeError", err)
	}
	for _, want := range []string{"node 10002", node.Addr(), "HTTP 500", "Jemalloc heap profiler is not enabled"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

// TestDorisLegacyDump: Doris 1.2.2-2.1.7 writes the dump on the node's disk;
// the driver says so, naming the file, which really is a heap profile.
func TestDorisLegacyDump(t *testing.T) {
	host, port := startJenode(t, "--doris-legacy")
	node := Node{ID: 10003, Kind: Doris, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(node)
	ctx := context.Background()
	if err := reg.Enable(ctx, node); err != nil {
		t.Fatal(err)
	}
	_, err := reg.Dump(ctx, node)
	wantUnsupported(t, err, Doris, OpDump)
	m := regexp.MustCompile(`disk \((\S+)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q names no file", err)
	}
	data, rerr := os.ReadFile(m[1])
	if rerr != nil || !bytes.HasPrefix(data, []byte("heap_v2/")) {
		t.Fatalf("file %s: %v, starts %q", m[1], rerr, data[:min(len(data), 20)])
	}
}

// TestGoNode: a real Go service with net/http/pprof.
func TestGoNode(t *testing.T) {
	host, port := startGonode(t)
	node := Node{ID: 20001, Kind: Go, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(node)
	ctx := context.Background()

	if on, err := reg.Status(ctx, node); err != nil || !on {
		t.Fatalf("Status = %v, %v; want always true", on, err)
	}
	wantUnsupported(t, reg.Enable(ctx, node), Go, OpEnable)
	wantUnsupported(t, reg.Disable(ctx, node), Go, OpDisable)

	d, err := reg.Dump(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	if d.Format != FormatPprof {
		t.Fatalf("format %v", d.Format)
	}
	p, err := profile.ParseData(d.Data)
	if err != nil {
		t.Fatal(err)
	}
	if !profileHasFunc(p, "main.gonodeRetainBlocks") {
		t.Errorf("profile lacks main.gonodeRetainBlocks")
	}
	// The node's symbolizer names the function's address too.
	var addr uint64
	for _, loc := range p.Location {
		for _, l := range loc.Line {
			if l.Function.Name == "main.gonodeRetainBlocks" {
				addr = loc.Address
			}
		}
	}
	names := symbolize(t, reg.drivers[Go].SymbolURL(node), []string{"0x" + strconv.FormatUint(addr, 16)}, false)
	if !names["main.gonodeRetainBlocks"] {
		t.Errorf("symbolizer named %v", names)
	}
}

func profileHasFunc(p *profile.Profile, name string) bool {
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if l.Function != nil && l.Function.Name == name {
					return true
				}
			}
		}
	}
	return false
}

var selfSink [][]byte

// selfTestRetain allocates along a known stack in the test process.
//
//go:noinline
func selfTestRetain() {
	for i := 0; i < 64; i++ {
		selfSink = append(selfSink, make([]byte, 32<<10))
	}
}

// TestSelf profiles the test process itself through the Self driver.
func TestSelf(t *testing.T) {
	saved := runtime.MemProfileRate
	t.Cleanup(func() { runtime.MemProfileRate = saved })
	node := SelfNode(1)
	reg := NewRegistry(Options{SelfMemProfileRate: 4096})
	reg.Add(node)
	ctx := context.Background()

	if err := reg.Disable(ctx, node); err != nil {
		t.Fatal(err)
	}
	if on, err := reg.Status(ctx, node); err != nil || on {
		t.Fatalf("after Disable: Status = %v, %v", on, err)
	}
	if err := reg.Enable(ctx, node); err != nil {
		t.Fatal(err)
	}
	if on, err := reg.Status(ctx, node); err != nil || !on || runtime.MemProfileRate != 4096 {
		t.Fatalf("after Enable: Status = %v, %v; rate %d", on, err, runtime.MemProfileRate)
	}
	selfTestRetain()
	d, err := reg.Dump(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.ParseData(d.Data)
	if err != nil || d.Format != FormatPprof {
		t.Fatalf("dump: %v, format %v", err, d.Format)
	}
	if !profileHasFunc(p, "github.com/heapproxy/heapproxy/backends.selfTestRetain") {
		t.Errorf("self profile lacks selfTestRetain")
	}
	if got := reg.drivers[Self].SymbolURL(node); got != "" {
		t.Errorf("SymbolURL = %q", got)
	}
	selfSink = nil
}

// TestProfilingNotStarted: a node whose jemalloc was started without
// prof:true cannot dump; each driver reports it the way its product fails
// (StarRocks: an empty 200; the others: HTTP 500 with the node's text).
func TestProfilingNotStarted(t *testing.T) {
	host, port := startJenodeConf(t, "prof:false")
	ctx := context.Background()
	tests := []struct {
		kind Kind
		op   string
		call func(*Registry, Node) error
		want []string
	}{
		{StarRocks, OpDump, dumpOp, []string{"GET /pprof/heap", "empty answer", "prof:true"}},
		{TiKV, OpDump, dumpOp, []string{"GET /debug/pprof/heap", "HTTP 500", "dump jemalloc prof file failed"}},
		{Databend, OpDump, dumpOp, []string{"GET /debug/mem/pprof/profile?seconds=0", "HTTP 500"}},
		{GreptimeDB, OpDump, dumpOp, []string{"POST /debug/prof/mem", "HTTP 500"}},
		{GreptimeDB, OpEnable, func(r *Registry, n Node) error { return r.Enable(ctx, n) }, []string{"POST /debug/prof/mem/activate", "HTTP 500"}},
		{Doris, OpEnable, func(r *Registry, n Node) error { return r.Enable(ctx, n) }, []string{"GET /jeheap/active/true", "HTTP 500"}},
		{Doris, OpDump, dumpOp, []string{"GET /jeheap/dump", "HTTP 500", "Jemalloc heap profiler is not enabled"}},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind)+"/"+tc.op, func(t *testing.T) {
			n := Node{ID: 50001, Kind: tc.kind, Host: host, HTTPPort: port}
			reg := NewRegistry(Options{})
			reg.Add(n)
			err := tc.call(reg, n)
			var ne *NodeError
			if !errors.As(err, &ne) || ne.Op != tc.op {
				t.Fatalf("got %v, want *NodeError for %s", err, tc.op)
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestDorisHTTPAuth: a Doris BE with enable_all_http_auth=true answers 401
// without credentials; with the node's user and password the driver works.
func TestDorisHTTPAuth(t *testing.T) {
	host, port := startJenode(t, "--auth", "root:s3cret")
	ctx := context.Background()
	anon := Node{ID: 60001, Kind: Doris, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(anon)
	err := reg.Enable(ctx, anon)
	var ne *NodeError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "HTTP 401") || !strings.Contains(err.Error(), "set http_user and http_password or http_password_file") {
		t.Fatalf("Enable without credentials = %v", err)
	}
	t.Log(err)
	wrong := anon
	wrong.HTTPUser, wrong.HTTPPassword = "root", "guess"
	reg.Add(wrong)
	err = reg.Enable(ctx, wrong)
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || !strings.Contains(err.Error(), "check http_user and http_password / http_password_file") {
		t.Fatalf("Enable with a wrong password = %v", err)
	}
	if strings.Contains(err.Error(), "guess") {
		t.Fatalf("the error shows the password: %v", err)
	}
	t.Log(err)
	good := anon
	good.HTTPUser, good.HTTPPassword = "root", "s3cret"
	reg.Add(good)
	if err := reg.Enable(ctx, good); err != nil {
		t.Fatalf("Enable with credentials: %v", err)
	}
	nodeHTTP(t, http.MethodGet, good.BaseURL()+"/alloc", "")
	d, err := reg.Dump(ctx, good)
	if err != nil {
		t.Fatalf("Dump with credentials: %v", err)
	}
	checkDOT(t, d.Data)
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
		for _, v := range []any{good, &good, good.HTTPPassword, []Node{good}, map[int64]Node{1: good}} {
			if s := fmt.Sprintf(verb, v); strings.Contains(s, "s3cret") || strings.Contains(s, fmt.Sprintf("%x", "s3cret")) {
				t.Errorf("%s of %T shows the password: %s", verb, v, s)
			}
		}
	}
	if b, err := json.Marshal(good); err != nil || strings.Contains(string(b), "s3cret") {
		t.Errorf("JSON of a node shows the password: %s %v", b, err)
	}
	var logged strings.Builder
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(&logged), zap.DebugLevel))
	log.Info("node", zap.Any("node", good), zap.Stringer("password", good.HTTPPassword))
	if strings.Contains(logged.String(), "s3cret") || !strings.Contains(logged.String(), "***") {
		t.Errorf("a zap log shows the password: %s", logged.String())
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if pw, err := ReadSecretFile(pwFile); err != nil || pw != "s3cret" {
		t.Errorf("ReadSecretFile = %v, %v", pw, err)
	}
	sym, err := reg.RemoteSymbolizer(good)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := NewRegistry(Options{}).drivers[StarRocks].Dump(ctx, Node{ID: 1, Kind: StarRocks, Host: host, HTTPPort: port,
		HTTPUser: "root", HTTPPassword: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	p := profileFromHeapV2(t, raw.Data)
	if err := sym.Symbolize(ctx, p); err != nil {
		t.Fatalf("symbolize with credentials: %v", err)
	}
	if !profileFuncNames(p)["jenode_leak_step"] {
		t.Errorf("symbolizer behind auth named nothing useful")
	}
}
