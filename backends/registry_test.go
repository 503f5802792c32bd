package backends

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// serveRaw accepts connections and hands each to fn: the faults a real node
// cannot be made to produce (silence, non-HTTP bytes).
func serveRaw(t *testing.T, fn func(net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				fn(c)
			}()
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestNodeErrors: every failure names the node id, its address and the cause.
func TestNodeErrors(t *testing.T) {
	jhost, jport := startJenode(t)
	ghost, gport := startGonode(t)
	silent := serveRaw(t, func(c net.Conn) {
		// Read the request, never answer.
		buf := make([]byte, 4096)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	})
	garbage := serveRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		_, _ = c.Read(buf)
		_, _ = c.Write([]byte("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n"))
		c.Close()
	})
	tests := []struct {
		name    string
		node    Node
		opts    Options
		op      func(*Registry, Node) error
		want    []string
		wantErr error
	}{
		{
			name: "connection refused",
			node: Node{ID: 7, Kind: StarRocks, Host: "127.0.0.1", HTTPPort: closedPort(t)},
			op:   dumpOp,
			want: []string{"node 7 (starrocks at 127.0.0.1:", "dump", "GET /pprof/heap", "connection refused"},
		},
		{
			name:    "timeout",
			node:    Node{ID: 8, Kind: GreptimeDB, Host: "127.0.0.1", HTTPPort: silent},
			opts:    Options{Timeout: 300 * time.Millisecond},
			op:      func(r *Registry, n Node) error { _, err := r.Status(context.Background(), n); return err },
			want:    []string{"node 8 (greptimedb at 127.0.0.1:", "status", "GET /debug/prof/mem/status", "no answer within 300ms (timeout)"},
			wantErr: ErrTimeout,
		},
		{
			name: "not HTTP",
			node: Node{ID: 9, Kind: TiKV, Host: "127.0.0.1", HTTPPort: garbage},
			op:   dumpOp,
			want: []string{"node 9 (tikv at 127.0.0.1:", "GET /debug/pprof/heap", "the answer is not HTTP", "malformed HTTP"},
		},
		{
			// A Go driver pointed at a jemalloc node: 200, but not pprof.
			name:    "garbage answer",
			node:    Node{ID: 10, Kind: Go, Host: jhost, HTTPPort: jport},
			op:      dumpOp,
			want:    []string{"node 10 (go at ", "want a gzipped pprof protobuf", "is this node a Go service?", "got a jemalloc heap_v2 dump"},
			wantErr: ErrBadAnswer,
		},
		{
			name:    "oversize answer",
			node:    Node{ID: 11, Kind: Databend, Host: jhost, HTTPPort: jport},
			opts:    Options{MaxResponseBytes: 1024},
			op:      dumpOp,
			want:    []string{"node 11 (databend at ", "answer too large (limit 1024 bytes)"},
			wantErr: ErrTooLarge,
		},
		{
			// A StarRocks driver pointed at a Go service: no /pprof/heap.
			name: "HTTP error status",
			node: Node{ID: 12, Kind: StarRocks, Host: ghost, HTTPPort: gport},
			op:   dumpOp,
			want: []string{"node 12 (starrocks at ", "GET /pprof/heap: HTTP 404 Not Found", `"404 page not found"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg := NewRegistry(tc.opts)
			reg.Add(tc.node)
			start := time.Now()
			err := tc.op(reg, tc.node)
			var ne *NodeError
			if !errors.As(err, &ne) {
				t.Fatalf("got %v (%T), want *NodeError", err, err)
			}
			t.Log(err)
			if ne.Node.ID != tc.node.ID {
				t.Errorf("NodeError.Node.ID = %d", ne.Node.ID)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %q is not %v", err, tc.wantErr)
			}
			if el := time.Since(start); el > 10*time.Second {
				t.Errorf("took %v", el)
			}
		})
	}
}

func dumpOp(r *Registry, n Node) error {
	_, err := r.Dump(context.Background(), n)
	return err
}

// TestUnknownNode: StarRocks 3.x's message, and nothing is contacted.
func TestUnknownNode(t *testing.T) {
	reg := NewRegistry(Options{})
	reg.Add(Node{ID: 1, Kind: StarRocks, Host: "127.0.0.1", HTTPPort: closedPort(t)})
	ctx := context.Background()
	_, err := reg.Get(ctx, 42)
	var nf *NodeNotFoundError
	if !errors.As(err, &nf) || err.Error() != "node not found: 42" {
		t.Fatalf("Get(42) = %v", err)
	}
	// A node that is not registered is never contacted, whatever its address.
	stranger := Node{ID: 42, Kind: StarRocks, Host: "127.0.0.1", HTTPPort: 1}
	checks := map[string]error{
		"dump":    dumpOp(reg, stranger),
		"enable":  reg.Enable(ctx, stranger),
		"disable": reg.Disable(ctx, stranger),
	}
	_, checks["status"] = reg.Status(ctx, stranger)
	for op, err := range checks {
		if err == nil || err.Error() != "node not found: 42" {
			t.Errorf("%s on unregistered node: %v", op, err)
		}
	}
	// The registered address wins over the caller's.
	jhost, jport := startJenode(t)
	reg.Add(Node{ID: 5, Kind: Databend, Host: jhost, HTTPPort: jport})
	d, err := reg.Dump(ctx, Node{ID: 5, Kind: Databend, Host: "127.0.0.1", HTTPPort: 1})
	if err != nil || d.Node.HTTPPort != jport {
		t.Fatalf("Dump by id: %v", err)
	}
}

// countingDiscoverer answers like an FE's SHOW BACKENDS.
type countingDiscoverer struct {
	calls   atomic.Int32
	columns []string
	rows    [][]string
	err     error
}

func (d *countingDiscoverer) Discover(context.Context) ([]Node, error) {
	d.calls.Add(1)
	if d.err != nil {
		return nil, d.err
	}
	return NodesFromShowBackends(StarRocks, d.columns, d.rows)
}

// TestDiscoveryOnMiss: an unknown id triggers discovery (rate-limited); a
// node found that way is then used.
func TestDiscoveryOnMiss(t *testing.T) {
	jhost, jport := startJenode(t)
	disc := &countingDiscoverer{
		columns: starRocksBackendColumns,
		rows: [][]string{
			starRocksRow("10001", jhost, jport, "true"),
			starRocksRow("10002", "192.0.2.1", 8040, "false"),
		},
	}
	reg := NewRegistry(Options{Discoverer: disc, DiscoverInterval: time.Hour})
	reg.Add(SelfNode(1))
	ctx := context.Background()

	n, err := reg.Get(ctx, 10001)
	if err != nil {
		t.Fatal(err)
	}
	if n.Kind != StarRocks || n.Host != jhost || n.HTTPPort != jport || n.Source != SourceDiscovered || !n.Alive {
		t.Fatalf("discovered node %+v", n)
	}
	if c := disc.calls.Load(); c != 1 {
		t.Fatalf("%d discoveries, want 1", c)
	}
	// Known now: no new discovery.
	if _, err := reg.Get(ctx, 10002); err != nil {
		t.Fatal(err)
	}
	// Misses within the interval do not hit the FE again.
	for i := 0; i < 3; i++ {
		if _, err := reg.Get(ctx, 42); err == nil || err.Error() != "node not found: 42" {
			t.Fatalf("Get(42) = %v", err)
		}
	}
	if c := disc.calls.Load(); c != 1 {
		t.Fatalf("%d discoveries after rate-limited misses, want 1", c)
	}
	// The discovered node is usable.
	if err := reg.Enable(ctx, n); !IsUnsupported(err) {
		t.Fatalf("Enable on StarRocks = %v", err)
	}
	if _, err := reg.Dump(ctx, n); err != nil {
		t.Fatal(err)
	}
	ids := []int64{}
	for _, n := range reg.List() {
		ids = append(ids, n.ID)
	}
	if len(ids) != 3 || ids[0] != 1 || ids[1] != 10001 || ids[2] != 10002 {
		t.Fatalf("List ids %v", ids)
	}

	// A refresh drops nodes the FE no longer lists, keeps configured ones.
	disc.rows = disc.rows[:1]
	if err := reg.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := len(reg.List()); got != 2 {
		t.Fatalf("after refresh %d nodes, want 2", got)
	}
	// A failing FE: the miss still says node not found, the cause is kept.
	disc.err = errors.New("FE down")
	reg2 := NewRegistry(Options{Discoverer: disc, DiscoverInterval: time.Millisecond})
	_, err = reg2.Get(ctx, 77)
	if err == nil || err.Error() != "node not found: 77" || !strings.Contains(errors.Unwrap(err).Error(), "FE down") {
		t.Fatalf("Get with failing discovery = %v", err)
	}
}

// TestRun refreshes periodically until cancelled.
func TestRun(t *testing.T) {
	disc := &countingDiscoverer{columns: starRocksBackendColumns, rows: [][]string{starRocksRow("10001", "127.0.0.1", 8040, "true")}}
	reg := NewRegistry(Options{Discoverer: disc})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		reg.Run(ctx, 20*time.Millisecond)
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for disc.calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if c := disc.calls.Load(); c < 3 {
		t.Fatalf("%d refreshes", c)
	}
	if len(reg.List()) != 1 {
		t.Fatalf("List %v", reg.List())
	}
}

// TestConcurrentDumpsShared: concurrent dumps of one node make one request
// at the node; all callers get its result.
func TestConcurrentDumpsShared(t *testing.T) {
	host, port := startJenode(t, "--slow-dump-ms", "500")
	node := Node{ID: 10001, Kind: StarRocks, Host: host, HTTPPort: port}
	reg := NewRegistry(Options{})
	reg.Add(node)
	ctx := context.Background()

	const callers = 8
	dumps := make([]*Dump, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dumps[i], errs[i] = reg.Dump(ctx, node)
		}()
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if dumps[i] != dumps[0] {
			t.Errorf("caller %d got a different dump", i)
		}
	}
	if n := requestCount(t, node.BaseURL(), "/pprof/heap"); n != 1 {
		t.Fatalf("node saw %d dump requests for %d concurrent callers, want 1", n, callers)
	}
	// A caller that gives up does not cancel the dump for the others.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	var patient *Dump
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		time.Sleep(10 * time.Millisecond)
		patient, perr = reg.Dump(ctx, node)
	}()
	if _, err := reg.Dump(short, node); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("impatient caller: %v", err)
	}
	wg.Wait()
	if perr != nil || patient == nil || patient == dumps[0] {
		t.Fatalf("patient caller: %v", perr)
	}
	if n := requestCount(t, node.BaseURL(), "/pprof/heap"); n != 2 {
		t.Fatalf("node saw %d dump requests, want 2", n)
	}
}

// TestUnsupportedByAnswer: products that lack a route answer 404/410; the
// drivers turn that into *UnsupportedError quoting the node. The "old
// product" here is a real Go service, which has none of these routes (a
// TiKV status server of every release serves GET /config: a 404 there
// means a wrong port).
func TestUnsupportedByAnswer(t *testing.T) {
	ghost, gport := startGonode(t)
	ctx := context.Background()
	tests := []struct {
		kind Kind
		op   string
		call func(*Registry, Node) error
		want string
	}{
		{GreptimeDB, OpEnable, func(r *Registry, n Node) error { return r.Enable(ctx, n) }, "only the dump route (POST /debug/prof/mem; /v1/prof/mem before v0.10)"},
		{GreptimeDB, OpDisable, func(r *Registry, n Node) error { return r.Disable(ctx, n) }, "only the dump route (POST /debug/prof/mem; /v1/prof/mem before v0.10)"},
		{GreptimeDB, OpStatus, func(r *Registry, n Node) error { _, err := r.Status(ctx, n); return err }, "only the dump route (POST /debug/prof/mem; /v1/prof/mem before v0.10)"},
		{Doris, OpEnable, func(r *Registry, n Node) error { return r.Enable(ctx, n) }, "no /jeheap/active"},
		{TiKV, OpEnable, func(r *Registry, n Node) error { return r.Enable(ctx, n) }, "is http_port the TiKV status port (status-addr, 20180 by default)?"},
	}
	for _, tc := range tests {
		t.Run(string(tc.kind)+"/"+tc.op, func(t *testing.T) {
			n := Node{ID: 30001, Kind: tc.kind, Host: ghost, HTTPPort: gport}
			reg := NewRegistry(Options{})
			reg.Add(n)
			err := tc.call(reg, n)
			wantUnsupported(t, err, tc.kind, tc.op)
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
		})
	}
}

// TestNoRedirects: a node that redirects elsewhere does not make heapproxy
// contact an unregistered address.
func TestNoRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	target := serveRaw(t, func(c net.Conn) {
		elsewhere.Add(1)
		c.Close()
	})
	redirector := serveRaw(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		_, _ = c.Read(buf)
		_, _ = c.Write([]byte("HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:" + strconv.Itoa(target) +
			"/pprof/heap\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
		c.Close()
	})
	n := Node{ID: 40001, Kind: StarRocks, Host: "127.0.0.1", HTTPPort: redirector}
	reg := NewRegistry(Options{})
	reg.Add(n)
	_, err := reg.Dump(context.Background(), n)
	if err == nil || !strings.Contains(err.Error(), "HTTP 302") {
		t.Fatalf("Dump through a redirect = %v", err)
	}
	if c := elsewhere.Load(); c != 0 {
		t.Fatalf("the redirect target was contacted %d times", c)
	}
}

// TestDumpsOfDifferentNodesOverlap: serialising is per node; a fan-out over
// several nodes runs them at the same time.
func TestDumpsOfDifferentNodesOverlap(t *testing.T) {
	const delay = 400 * time.Millisecond
	reg := NewRegistry(Options{})
	var nodes []Node
	for i := range 3 {
		host, port := startJenode(t, "--slow-dump-ms", strconv.Itoa(int(delay/time.Millisecond)))
		n := Node{ID: int64(10001 + i), Kind: Databend, Host: host, HTTPPort: port}
		reg.Add(n)
		nodes = append(nodes, n)
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = reg.Dump(context.Background(), n)
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("node %d: %v", nodes[i].ID, err)
		}
	}
	if el >= 2*delay {
		t.Fatalf("3 dumps of %v each took %v: not concurrent", delay, el)
	}
}
