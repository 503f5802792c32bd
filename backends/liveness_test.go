package backends

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestLiveness: the checker GETs each registered node's cheap route and
// fills Alive, LastHeartbeat and ErrMsg (SHOW BACKENDS and Health()).
func TestLiveness(t *testing.T) {
	jh, jp := startJenode(t)
	ah, ap := startJenode(t, "--auth", "root:s3cret")
	gh, gp := startGonode(t)
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	t.Cleanup(broken.Close)
	bu, _ := url.Parse(broken.URL)
	bp, _ := strconv.Atoi(bu.Port())
	cases := []struct {
		node    Node
		alive   bool
		errMsg  string
		touched string // jenode path the check must have hit
	}{
		{node: Node{ID: 1, Kind: StarRocks, Host: jh, HTTPPort: jp}, alive: true, touched: "/pprof/symbol"},
		{node: Node{ID: 2, Kind: TiKV, Host: jh, HTTPPort: jp}, alive: true, touched: "/status"},
		{node: Node{ID: 3, Kind: GreptimeDB, Host: jh, HTTPPort: jp}, alive: true, touched: "/debug/prof/mem/status"},
		{node: Node{ID: 4, Kind: Databend, Host: jh, HTTPPort: jp}, alive: true},
		{node: Node{ID: 5, Kind: Go, Host: gh, HTTPPort: gp}, alive: true},
		{node: Node{ID: 6, Kind: Doris, Host: ah, HTTPPort: ap}, alive: true, errMsg: "HTTP 401"},
		{node: Node{ID: 7, Kind: Doris, Host: ah, HTTPPort: ap, HTTPUser: "root", HTTPPassword: "s3cret"}, alive: true},
		{node: Node{ID: 8, Kind: StarRocks, Host: "127.0.0.1", HTTPPort: closedPort(t)}, errMsg: "connection refused"},
		{node: Node{ID: 9, Kind: Go, Host: bu.Hostname(), HTTPPort: bp}, errMsg: "HTTP 503"},
		{node: SelfNode(10), alive: true},
	}
	reg := NewRegistry(Options{LivenessTimeout: 2 * time.Second})
	for _, c := range cases {
		c.node.Alive = !c.alive // as configured or discovered: the checker must correct it
		reg.Add(c.node)
	}
	before := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		reg.RunLiveness(ctx, time.Hour)
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(reg.Health()) < len(cases) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	health := reg.Health()
	if len(health) != len(cases) {
		t.Fatalf("%d health entries, want %d", len(health), len(cases))
	}
	for i, c := range cases {
		h := health[i]
		n, _ := reg.lookup(c.node.ID)
		t.Logf("%v", h)
		if h.ID != c.node.ID || h.Alive != c.alive || n.Alive != c.alive {
			t.Errorf("node %d: health %+v, node alive %v; want alive %v", c.node.ID, h, n.Alive, c.alive)
		}
		if c.alive && (h.LastHeartbeat.Before(before) || !n.LastSeen.Equal(h.LastHeartbeat)) {
			t.Errorf("node %d: LastHeartbeat %v, node LastSeen %v", c.node.ID, h.LastHeartbeat, n.LastSeen)
		}
		if !c.alive && !h.LastHeartbeat.IsZero() {
			t.Errorf("node %d: a heartbeat it never gave: %v", c.node.ID, h.LastHeartbeat)
		}
		if (c.errMsg == "") != (h.ErrMsg == "") || !strings.Contains(h.ErrMsg, c.errMsg) || n.ErrMsg != h.ErrMsg {
			t.Errorf("node %d: ErrMsg %q (node %q), want %q", c.node.ID, h.ErrMsg, n.ErrMsg, c.errMsg)
		}
		if strings.Contains(h.ErrMsg, "s3cret") {
			t.Errorf("ErrMsg shows the password")
		}
	}
	if requestCount(t, "http://"+hostPort(jh, jp), "/status") != 1 || requestCount(t, "http://"+hostPort(jh, jp), "/pprof/symbol") != 1 {
		t.Errorf("jenode stats: want one liveness GET each")
	}
	_, rows := ShowBackendsResult(reg.List())
	for _, r := range rows {
		if r[0] == "1" && (r[7] == "NULL" || r[8] != "true") {
			t.Errorf("SHOW BACKENDS row %v: want a LastHeartbeat and Alive", r)
		}
		if r[0] == "8" && (r[8] != "false" || !strings.Contains(r[12], "connection refused")) {
			t.Errorf("SHOW BACKENDS row %v: want Alive false and ErrMsg", r)
		}
	}
}
