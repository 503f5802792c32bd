package server

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// TiKV releases as users run them, through the mariadb CLI and heapproxy:
// 7.5 switches through /config and dumps at once; 6.5 (LTS) has no heap
// route, and the error says which releases have one.
func TestTiKVReleasesOverSQL(t *testing.T) {
	h75, p75 := nodetest.StartJenode(t, nodes.Jenode, nodetest.Jenode{Product: "tikv", Version: "7.5"})
	h65, p65 := nodetest.StartJenode(t, nodes.Jenode, nodetest.Jenode{Product: "tikv", Version: "6.5"})
	srv := startProxyDeps(t, Config{}, testDeps(t,
		backends.Node{ID: 10075, Kind: backends.TiKV, Host: h75, HTTPPort: p75, Binary: nodes.Jenode},
		backends.Node{ID: 10065, Kind: backends.TiKV, Host: h65, HTTPPort: p65, Binary: nodes.Jenode}))
	h, p := hostPort(srv)
	sql := func(target, method string) (string, error) {
		return cli(t, h, p, "root", "", "-N", "-r", "-e", adminSQL(target, method))
	}
	for _, c := range []struct{ method, want string }{
		{"enable_prof()", "instance of HeapProf\n"},
		{"has_enable()", "true\n"},
	} {
		if out, err := sql("10075", c.method); err != nil || out != c.want {
			t.Errorf("TiKV 7.5 %s: %v %q, want %q", c.method, err, out, c.want)
		}
	}
	if out, err := sql("10075", "dump_dot_snapshot()"); err != nil || !strings.HasPrefix(out, "digraph ") {
		t.Errorf("TiKV 7.5 dump: %v\n%.300s", err, out)
	}
	out, err := sql("10065", "dump_dot_snapshot()")
	if err == nil || !strings.Contains(out, "ERROR 1064") || !strings.Contains(out, "7.3") || !strings.Contains(out, "6.5") {
		t.Errorf("TiKV 6.5 dump: %v %q, want an error naming the releases without the route", err, out)
	}
}

// Real Prometheus from Debian as a Go node, through the mariadb CLI: the
// graph names methods with their receivers, as go tool pprof does, and the
// heapprof schema's rows keep them apart.
func TestPrometheusAsGoNodeOverSQL(t *testing.T) {
	port := nodetest.StartPrometheus(t)
	srv := startProxyDeps(t, Config{}, testDeps(t, backends.Node{ID: 10090, Kind: backends.Go, Host: "127.0.0.1", HTTPPort: port}))
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-r", "-e", adminSQL("10090", "dump_dot_snapshot()"))
	if err != nil || !strings.HasPrefix(out, "digraph ") || !strings.Contains(out, ".(*") {
		t.Fatalf("Prometheus dump: %v\n%.500s", err, out)
	}
	// A method whose receiver jeprof's C++ shortening dropped reads
	// pkg..Method; Go itself names closures in package-level initializers
	// pkg.glob..funcN (sampled only now and then), which is right.
	for _, name := range regexp.MustCompile(`[\w./]*[a-z0-9]\.\.[A-Za-z]\w*`).FindAllString(out, -1) {
		if !regexp.MustCompile(`\.glob\.\.func\d+$`).MatchString(name) {
			t.Errorf("a Go method lost its receiver (jeprof's C++ shortening): %s in\n%s", name, out)
		}
	}
	dot := exec.Command("dot", "-Tsvg")
	dot.Stdin = strings.NewReader(out)
	if b, err := dot.CombinedOutput(); err != nil {
		t.Fatalf("Graphviz: %v\n%s", err, b)
	}
}
