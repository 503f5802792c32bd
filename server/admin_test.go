package server

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// startJenode runs the real jemalloc node, profiling compiled in but
// inactive, sampling every 1 KiB.
func startJenode(t *testing.T) (string, int) {
	t.Helper()
	return nodetest.StartJenode(t, nodes.Jenode, nodetest.Jenode{})
}

func heapProf(method string) string {
	return fmt.Sprintf("System.print(HeapProf.getInstance().%s)", method)
}

func adminSQL(target, method string) string {
	return fmt.Sprintf("ADMIN EXECUTE ON %s '%s'", target, heapProf(method))
}

// queryLines runs a statement and returns the single column's rows.
func queryLines(t *testing.T, db *sql.DB, q string) ([]string, error) {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if len(cols) != 1 || cols[0] != "result" {
		t.Fatalf("%s: columns %v, want [result]", q, cols)
	}
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// snapshotList runs list_snapshots() on one node, which answers one column
// per field (name, taken_at, inuse_mb, format), and returns each row's
// fields joined by tabs.
func snapshotList(t *testing.T, db *sql.DB, node string) []string {
	t.Helper()
	q := adminSQL(node, "list_snapshots()")
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if strings.Join(cols, ",") != "name,taken_at,inuse_mb,format" {
		t.Fatalf("%s: columns %v, want name, taken_at, inuse_mb, format", q, cols)
	}
	var out []string
	for rows.Next() {
		var f [4]string
		if err := rows.Scan(&f[0], &f[1], &f[2], &f[3]); err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Join(f[:], "\t"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustLines(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	lines, err := queryLines(t, db, q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return lines
}

func wantMySQLError(t *testing.T, err error, code uint16, state, contains string) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != code || string(me.SQLState[:]) != state || !strings.Contains(me.Message, contains) {
		t.Fatalf("got %v, want ERROR %d (%s) containing %q", err, code, state, contains)
	}
}

// checkDOT asserts a DOT graph names the functions and is accepted by dot.
func checkDOT(t *testing.T, lines []string, functions ...string) {
	t.Helper()
	text := strings.Join(lines, "\n") + "\n"
	if !strings.HasPrefix(text, "digraph ") {
		t.Fatalf("not a DOT graph:\n%s", text)
	}
	for _, f := range functions {
		if !strings.Contains(text, f) {
			t.Fatalf("DOT lacks %s:\n%s", f, text)
		}
	}
	cmd := exec.Command("dot", "-Tsvg")
	cmd.Stdin = strings.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || !bytes.Contains(out, []byte("<svg")) {
		t.Fatalf("dot -Tsvg refused the graph: %v\n%s", err, out)
	}
}

// The full cycle on a real jemalloc node through the proxy, with the real
// mariadb CLI and go-sql-driver: has_enable false, enable, true, dump with
// the node's known functions, disable, false.
func TestHeapProfJemallocNode(t *testing.T) {
	host, port := startJenode(t)
	node := backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode}
	srv := startProxyDeps(t, Config{}, testDeps(t, node))
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	steps := []struct{ method, want string }{
		{"has_enable()", "false"},
		{"enable_prof()", "instance of HeapProf"},
		{"has_enable()", "true"},
	}
	for _, s := range steps {
		if got := mustLines(t, db, adminSQL("10001", s.method)); len(got) != 1 || got[0] != s.want {
			t.Fatalf("%s: got %q, want %q", s.method, got, s.want)
		}
	}
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	dot := mustLines(t, db, adminSQL("10001", "dump_dot_snapshot()"))
	checkDOT(t, dot, "jenode_segment_alloc", "jenode_tablet_schema_alloc")
	if !strings.Contains(dot[0], nodes.Jenode) {
		t.Fatalf("title should name the node's binary like jeprof: %s", dot[0])
	}
	// The real CLI shows the same shape StarRocks does.
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "--table", "-e", adminSQL("10001", "has_enable()"))
	if err != nil || !strings.Contains(out, "| result |") || !strings.Contains(out, "| true   |") {
		t.Fatalf("CLI: %v\n%s", err, out)
	}
	out, err = cli(t, h, p, "root", "", "-N", "-r", "-e", adminSQL("10001", "dump_dot_snapshot()")+";")
	if err != nil {
		t.Fatalf("CLI dump: %v\n%s", err, out)
	}
	checkDOT(t, strings.Split(strings.TrimSpace(out), "\n"), "jenode_segment_alloc", `\lTotal MB: `)
	// snapshot() names a snapshot; to_dot_format renders it again.
	name := mustLines(t, db, adminSQL("10001", "snapshot()"))
	if len(name) != 1 || !strings.HasPrefix(name[0], "heap_profile.10001.") {
		t.Fatalf("snapshot(): %q", name)
	}
	again := mustLines(t, db, adminSQL("10001", fmt.Sprintf(`to_dot_format(\"%s\")`, name[0])))
	checkDOT(t, again, "jenode_segment_alloc")
	nested := mustLines(t, db, adminSQL("10001", "to_dot_format(HeapProf.getInstance().snapshot())"))
	checkDOT(t, nested, "jenode_segment_alloc")
	_, err = queryLines(t, db, adminSQL("10001", `to_dot_format(\"heap_profile.10001.nope\")`))
	wantMySQLError(t, err, 1064, "HY000", "snapshot not found: heap_profile.10001.nope")
	for _, s := range []struct{ method, want string }{
		{"disable_prof()", "instance of HeapProf"},
		{"has_enable()", "false"},
	} {
		if got := mustLines(t, db, adminSQL("10001", s.method)); len(got) != 1 || got[0] != s.want {
			t.Fatalf("%s: got %q, want %q", s.method, got, s.want)
		}
	}
}

// A Go service: its heap profiling is always on, so has_enable is true and
// enable/disable say plainly that there is nothing to switch.
func TestHeapProfGoNode(t *testing.T) {
	host, port := nodetest.StartGonode(t, nodes.Gonode)
	srv := startProxyDeps(t, Config{}, testDeps(t, backends.Node{ID: 20001, Kind: backends.Go, Host: host, HTTPPort: port}))
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	if got := mustLines(t, db, adminSQL("20001", "has_enable()")); len(got) != 1 || got[0] != "true" {
		t.Fatalf("has_enable on a Go node: %q", got)
	}
	_, err := queryLines(t, db, adminSQL("20001", "enable_prof()"))
	wantMySQLError(t, err, 1235, "42000", "go node cannot enable heap profiling")
	checkDOT(t, mustLines(t, db, adminSQL("20001", "dump_dot_snapshot()")), "gonodeRetainBlocks")
}

// heapproxy's own built-in node, on the embedded default.
func TestHeapProfSelf(t *testing.T) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 0
	t.Cleanup(func() { runtime.MemProfileRate = old })
	// Sample every 4 KiB so the sessions opened below are sure to show.
	reg := backends.NewRegistry(backends.Options{SelfMemProfileRate: 4096})
	reg.Add(backends.SelfNode(1))
	srv := startProxyDeps(t, Config{}, Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	for _, s := range []struct{ target, method, want string }{
		{"1", "has_enable()", "false"},
		{"FRONTEND", "enable_prof()", "instance of HeapProf"},
		{"1", "has_enable()", "true"},
	} {
		if got := mustLines(t, db, adminSQL(s.target, s.method)); len(got) != 1 || got[0] != s.want {
			t.Fatalf("%s %s: got %q, want %q", s.target, s.method, got, s.want)
		}
	}
	// Allocate in the proxy: every open session holds its packet buffers.
	for range 100 {
		c := openSchema(t, srv.Addr().String(), "root", "", "", "")
		if err := c.Ping(); err != nil {
			t.Fatal(err)
		}
	}
	checkDOT(t, mustLines(t, db, adminSQL("1", "dump_dot_snapshot()")), "mysqlwire.NewConn")
	mustLines(t, db, adminSQL("1", "disable_prof()"))
	if got := mustLines(t, db, adminSQL("1", "has_enable()")); got[0] != "false" {
		t.Fatalf("after disable: %q", got)
	}
}

// Dumps beyond max_dumps wait for a slot within the admin timeout; the
// cheap calls do not queue behind them.
func TestDumpSlots(t *testing.T) {
	reg := backends.NewRegistry(backends.Options{})
	reg.Add(backends.SelfNode(1))
	cfg := Config{MaxDumps: 1, Timeouts: DefaultConfig().Timeouts}
	// Long enough for a dump on a loaded 2-core machine, short for a test
	// that waits it out once.
	cfg.Timeouts.Admin = 2 * time.Second
	srv := startProxyDeps(t, cfg, Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("1", "enable_prof()"))

	release, err := srv.prof.HoldSlot(context.Background()) // a dump in progress
	if err != nil {
		t.Fatal(err)
	}
	_, err = queryLines(t, db, adminSQL("1", "dump_dot_snapshot()"))
	if err == nil || !strings.Contains(err.Error(), "all 1 dump slots (max_dumps) stayed busy") {
		t.Fatalf("dump while the only slot is taken: %v", err)
	}
	if got := mustLines(t, db, adminSQL("1", "has_enable()")); got[0] != "true" {
		t.Fatalf("has_enable while a dump runs: %q", got)
	}
	release()
	checkDOT(t, mustLines(t, db, adminSQL("1", "dump_dot_snapshot()")), "runtime.main")
	if _, err := New(Config{Listen: "127.0.0.1:0", MaxDumps: -1}, zap.NewNop(), Deps{Registry: reg, Snapshots: testStore(t)}); err == nil ||
		!strings.Contains(err.Error(), "max_dumps") {
		t.Fatalf("max_dumps -1: %v", err)
	}
}

// Several targets: StarRocks' fan-out shape, one failing node reported in
// its row without failing the others.
func TestHeapProfFanOut(t *testing.T) {
	host, port := startJenode(t)
	dead, _ := mariadbtest.FreePort()
	srv := startProxyDeps(t, Config{}, testDeps(t,
		backends.Node{ID: 10002, Kind: backends.GreptimeDB, Host: host, HTTPPort: port},
		backends.Node{ID: 10001, Kind: backends.TiKV, Host: host, HTTPPort: port},
		backends.Node{ID: 10003, Kind: backends.GreptimeDB, Host: "127.0.0.1", HTTPPort: dead},
	))
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	for _, target := range []string{"10003, 10002", "ALL BACKENDS"} {
		rows, err := db.Query(adminSQL(target, "has_enable()"))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var got []string
		for rows.Next() {
			var id int64
			var status, result string
			rows.Scan(&id, &status, &result)
			if status == "ERROR" {
				result = strings.SplitN(result, ":", 2)[0]
			}
			got = append(got, fmt.Sprintf("%d %s %s", id, status, result))
		}
		rows.Close()
		want := []string{"10002 OK false", "10003 ERROR node 10003 (greptimedb at 127.0.0.1"}
		if target == "ALL BACKENDS" {
			want = []string{"10001 ERROR tikv node cannot report whether heap profiling is on", "10002 OK false", want[1]}
		}
		if strings.Join(cols, ",") != "node_id,status,result" || strings.Join(got, "|") != strings.Join(want, "|") {
			t.Fatalf("%s: columns %v rows %q, want %q", target, cols, got, want)
		}
	}
}

// Error paths: each gets a MySQL error naming what to fix, and the session
// stays usable.
func TestHeapProfErrors(t *testing.T) {
	// A node that accepts and never answers (a fault the real nodes do not
	// produce on demand), one that answers garbage, one that is down.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			defer c.Close()
		}
	}()
	garbage := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<html>this is not a heap profile</html>")
	})}
	gl, _ := net.Listen("tcp", "127.0.0.1:0")
	go garbage.Serve(gl)
	defer garbage.Close()
	dead, _ := mariadbtest.FreePort()
	port := func(l net.Listener) int { return l.Addr().(*net.TCPAddr).Port }
	reg := backends.NewRegistry(backends.Options{Timeout: 1 * time.Second})
	reg.Add(backends.SelfNode(1),
		backends.Node{ID: 30001, Kind: backends.TiKV, Host: "127.0.0.1", HTTPPort: port(silent)},
		backends.Node{ID: 30002, Kind: backends.TiKV, Host: "127.0.0.1", HTTPPort: port(gl)},
		backends.Node{ID: 30003, Kind: backends.TiKV, Host: "127.0.0.1", HTTPPort: dead},
	)
	srv := startProxyDeps(t, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "pw"}}}, Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	db.SetMaxOpenConns(1) // one session throughout: it must stay usable
	dump := "dump_dot_snapshot()"
	cases := []struct {
		name     string
		q        string
		code     uint16
		state    string
		contains string
	}{
		{"unknown id", adminSQL("42", "has_enable()"), 1064, "HY000", "node not found: 42"},
		{"slow node", adminSQL("30001", dump), 1064, "HY000", "node 30001 (tikv at 127.0.0.1:"},
		{"garbage", adminSQL("30002", dump), 1064, "HY000", "node 30002"},
		{"down", adminSQL("30003", dump), 1064, "HY000", "connection refused"},
		{"unknown method", adminSQL("1", "heap()"), 1064, "42000", "supported methods: enable_prof()"},
		{"other class", `ADMIN EXECUTE ON 1 'System.print(ExecEnv.getInstance())'`, 1064, "42000", "HeapProf"},
		{"no System.print", `ADMIN EXECUTE ON 1 'HeapProf.getInstance().has_enable()'`, 1064, "42000", "System.print"},
		{"wrong argument count", adminSQL("1", "has_enable(1)"), 1064, "42000", "has_enable"},
		{"bad target", `ADMIN EXECUTE ON nodes 'x'`, 1064, "42000", "expected node id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := queryLines(t, db, c.q)
			wantMySQLError(t, err, c.code, c.state, c.contains)
			var v string
			if err := db.QueryRow("SELECT @@version_comment").Scan(&v); err != nil {
				t.Fatalf("session unusable after the error: %v", err)
			}
		})
	}
	// A user not in profile_users is refused before any node is contacted.
	before := accepted.Load()
	viewer := openSchema(t, srv.Addr().String(), "viewer", "pw", "", "")
	_, err = queryLines(t, viewer, adminSQL("30001", dump))
	wantMySQLError(t, err, 1227, "42000", "may not run ADMIN EXECUTE")
	if accepted.Load() != before {
		t.Fatal("a refused user's statement contacted the node")
	}
}

// SHOW BACKENDS: answered from the registry on the embedded default and when
// the upstream (MariaDB) does not know the statement.
func TestShowBackends(t *testing.T) {
	for _, upstream := range []string{"", env.addr} {
		// Node addresses are for profile users.
		srv := startProxyDeps(t, Config{Upstream: upstream, ProfileUsers: []string{"root", "app"}}, testDeps(t,
			backends.Node{ID: 10001, Kind: backends.StarRocks, Host: "10.0.0.7", HTTPPort: 8040}))
		h, p := hostPort(srv)
		user, pw := "root", ""
		if upstream != "" {
			user, pw = "app", "secret"
		}
		out, err := cli(t, h, p, user, pw, "-e", "SHOW BACKENDS")
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 || !strings.HasPrefix(lines[0], "BackendId\tIP\tHeartbeatPort\tBePort\tHttpPort\tBrpcPort\tLastStartTime\tLastHeartbeat\tAlive") ||
			!strings.HasPrefix(lines[1], "10001\t10.0.0.7\t0\t0\t8040\t") {
			t.Fatalf("upstream %q: SHOW BACKENDS:\n%s", upstream, out)
		}
		// heapproxy itself (ON FRONTEND, node 1) is a frontend, as ALL
		// BACKENDS does not reach it.
		out, err = cli(t, h, p, user, pw, "-e", "SHOW FRONTENDS")
		lines = strings.Split(strings.TrimSpace(out), "\n")
		if err != nil || len(lines) != 2 || !strings.HasPrefix(lines[0], "FrontendId\tIP\t") || !strings.HasPrefix(lines[1], "1\tlocalhost\t") {
			t.Fatalf("upstream %q: SHOW FRONTENDS: %v\n%s", upstream, err, out)
		}
	}
}

// Discovery from an FE: heapproxy B sits in front of heapproxy A (which
// answers SHOW BACKENDS like an FE) and learns A's nodes with its discovery
// account, then profiles them by id.
func TestDiscoveryFromFE(t *testing.T) {
	host, port := startJenode(t)
	fe := startProxyDeps(t, Config{}, testDeps(t, backends.Node{ID: 10005, Kind: backends.GreptimeDB, Host: host, HTTPPort: port}))
	disc := &FEDiscoverer{Addr: fe.Addr().String(), User: "root", Kind: backends.GreptimeDB, Timeout: 5 * time.Second}
	reg := backends.NewRegistry(backends.Options{Discoverer: disc, Timeout: 10 * time.Second})
	reg.Add(backends.SelfNode(1))
	proxy := startProxyDeps(t, Config{Upstream: fe.Addr().String()}, Deps{Registry: reg, SelfID: 1, IsCompute: disc.IsCompute, Snapshots: testStore(t)})
	db := openSchema(t, proxy.Addr().String(), "root", "", "", "")
	if _, err := disc.Discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := mustLines(t, db, adminSQL("10005", "has_enable()")); len(got) != 1 || got[0] != "false" {
		t.Fatalf("discovered node: %q", got)
	}
	n, err := reg.Get(context.Background(), 10005)
	if err != nil || n.Source != backends.SourceDiscovered || n.HTTPPort != port {
		t.Fatalf("registry after discovery: %+v %v", n, err)
	}
}

// The embedded default answers what clients send on connect, and what is
// outside the heapprof schema with the engine's MySQL errors.
func TestEmbeddedDefault(t *testing.T) {
	srv := startProxy(t, Config{})
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-e",
		"SELECT @@version_comment LIMIT 1; SET NAMES utf8mb4; SELECT DATABASE(), @@max_allowed_packet, @@character_set_client; SHOW DATABASES; SHOW WARNINGS; USE information_schema; SELECT DATABASE()")
	// As production runs it: with the heapprof schema.
	want := "heapproxy embedded default (no upstream)\nNULL\t67108864\tutf8mb4\nheapprof\ninformation_schema\ninformation_schema\n"
	if err != nil || out != want {
		t.Fatalf("got %v\n%q\nwant %q", err, out, want)
	}
	// A table the schema does not have: the engine's MySQL error.
	out, err = cli(t, h, p, "root", "", "-e", "SELECT * FROM t.x")
	if err == nil || !strings.Contains(out, "ERROR 1049") {
		t.Fatalf("a statement outside the heapprof schema on the embedded default: %v\n%s", err, out)
	}
	out, err = cli(t, h, p, "root", "wrong", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 1045 (28000)") {
		t.Fatalf("wrong password: %v\n%s", err, out)
	}
	// go-sql-driver and a JDBC-style variable query.
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	var a, b, c, d string
	if err := db.QueryRow("SELECT @@max_allowed_packet,@@system_time_zone,@@time_zone,@@auto_increment_increment").Scan(&a, &b, &c, &d); err != nil {
		t.Fatal(err)
	}
	// What MariaDB Connector/J sends on connect.
	if _, err := db.Exec("set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')"); err != nil {
		t.Fatal(err)
	}
	// A configured user list replaces the default root account.
	srv2 := startProxy(t, Config{Users: []User{{Name: "ops", Password: "s3cret"}}})
	h2, p2 := hostPort(srv2)
	if out, err := cli(t, h2, p2, "ops", "s3cret", "-N", "-e", "SELECT CURRENT_USER()"); err != nil || out != "ops@%\n" {
		t.Fatalf("configured user: %v %q", err, out)
	}
	if out, err := cli(t, h2, p2, "root", "", "-e", "SELECT 1"); err == nil || !strings.Contains(out, "1045") {
		t.Fatalf("root with a configured user list: %v %q", err, out)
	}
}

func startProxyDeps(t *testing.T, cfg Config, deps Deps) *Server {
	t.Helper()
	return startProxyWith(t, cfg, deps, zap.WarnLevel)
}

// Periodic capture on the real jemalloc node: a 1 s schedule produces
// growing snapshots, list_snapshots shows them, and the diff against the
// first one points at the function that leaks.
func TestScheduledSnapshotsAndDiff(t *testing.T) {
	host, port := startJenode(t)
	node := backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode}
	srv := startProxyDeps(t, Config{}, testDeps(t, node))
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	base := mustLines(t, db, adminSQL("10001", "snapshot()"))[0]
	if got := mustLines(t, db, adminSQL("10001", `schedule_snapshots(\"1s\")`)); got[0] != "snapshots of node 10001 every 1s" {
		t.Fatalf("schedule_snapshots: %q", got)
	}
	alloc := func() {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	list := waitSnapshots(t, db, "10001", 4, alloc)
	if len(list) < 4 {
		t.Fatalf("after the schedule ran: %q", list)
	}
	if got := mustLines(t, db, adminSQL("10001", "unschedule_snapshots()")); got[0] != "snapshots of node 10001 stopped" {
		t.Fatalf("unschedule: %q", got)
	}
	_, err := queryLines(t, db, adminSQL("10001", "unschedule_snapshots()"))
	wantMySQLError(t, err, 1064, "HY000", "node 10001 has no scheduled snapshots")
	// Newest first; each line: name, time, MB, format. The heap grew.
	mb := func(line string) float64 {
		var v float64
		fmt.Sscanf(strings.Split(line, "\t")[2], "%f MB", &v)
		return v
	}
	if !strings.HasPrefix(list[len(list)-1], base+"\t") || mb(list[0]) <= mb(list[len(list)-1]) {
		t.Fatalf("snapshots should grow from the base %s:\n%s", base, strings.Join(list, "\n"))
	}
	diff := mustLines(t, db, adminSQL("10001", fmt.Sprintf(`diff_dot_snapshot(\"%s\")`, base)))
	checkDOT(t, diff, "jenode_leak_step")
	_, err = queryLines(t, db, adminSQL("10001", `schedule_snapshots(\"10ms\")`))
	wantMySQLError(t, err, 1064, "HY000", "from 1s to 24h")
}

// waitSnapshots lists a node's snapshots until it has n (at most 30 s),
// calling between before each look; it returns the last list.
func waitSnapshots(t *testing.T, db *sql.DB, node string, n int, between func()) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var list []string
	for len(list) < n && time.Now().Before(deadline) {
		between()
		time.Sleep(250 * time.Millisecond)
		list = snapshotList(t, db, node)
	}
	return list
}

// Schedules in the configuration start with the server and can be
// stopped like those of schedule_snapshots; bad ones are refused at start.
func TestConfiguredSchedules(t *testing.T) {
	reg := backends.NewRegistry(backends.Options{SelfMemProfileRate: 4096})
	reg.Add(backends.SelfNode(1))
	srv := startProxyDeps(t, Config{Schedules: []Schedule{{Node: 1, Every: time.Second}}},
		Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("1", "enable_prof()"))
	list := waitSnapshots(t, db, "1", 2, func() {})
	if len(list) < 2 {
		t.Fatalf("configured schedule: %q", list)
	}
	if got := mustLines(t, db, adminSQL("1", "unschedule_snapshots()")); got[0] != "snapshots of node 1 stopped" {
		t.Fatalf("unschedule: %q", got)
	}
	for _, bad := range [][]Schedule{{{Node: 1, Every: 10 * time.Millisecond}}, {{Node: 1, Every: time.Minute}, {Node: 1, Every: time.Hour}}} {
		_, err := New(Config{Listen: "127.0.0.1:0", Schedules: bad}, zap.NewNop(), Deps{Registry: reg, Snapshots: testStore(t)})
		if err == nil || !strings.Contains(err.Error(), "schedules[") {
			t.Errorf("schedules %v: %v", bad, err)
		}
	}
}

// In front of an upstream, an ADMIN EXECUTE whose script is not a HeapProf
// call is the FE's business and is forwarded (MariaDB answers it with its own
// syntax error); a malformed HeapProf call still gets heapproxy's error.
func TestNonHeapProfScriptForwarded(t *testing.T) {
	srv := upstreamProxy(t)
	db := openDB(t, srv.Addr().String(), "app", "secret", "")
	_, err := db.Exec(`ADMIN EXECUTE ON 10001 'System.print(ExecEnv.get_stack_trace_for_all_threads())'`)
	wantMySQLError(t, err, 1064, "42000", "MariaDB server version")
	_, err = db.Exec(adminSQL("10001", "no_such_method()"))
	wantMySQLError(t, err, 1064, "42000", "supported methods: enable_prof()")
}
