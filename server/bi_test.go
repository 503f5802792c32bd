package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
)

// BI tools query the snapshots over the MySQL protocol on the embedded
// default: the mariadb CLI, MariaDB Connector/J's DatabaseMetaData and a
// Grafana-style time range, PyMySQL.
func TestHeapprofSchemaForBI(t *testing.T) {
	host, port := startJenode(t)
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.jenode})
	engine, err := sqlview.New(SQLSource(deps.Snapshots.(*snapshot.Dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer engine.Close()
	deps.SQL = engine
	srv := startProxyDeps(t, Config{}, deps)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	start := time.Now().Add(-time.Second)
	for range 3 {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mustLines(t, db, adminSQL("10001", "snapshot()"))
	}
	end := time.Now().Add(time.Second)

	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-e", `SHOW DATABASES; SHOW TABLES FROM heapprof;
SELECT node_id, COUNT(*) FROM heapprof.snapshots GROUP BY node_id;
USE heapprof; SELECT name FROM functions f JOIN snapshots s ON f.snapshot_id = s.id
 WHERE s.taken_at = (SELECT MAX(taken_at) FROM snapshots) AND f.name LIKE 'jenode_segment%' ORDER BY f.name LIMIT 1;`)
	want := "heapprof\ninformation_schema\ndiffs\nfunctions\nsnapshots\nstacks\n10001\t3\njenode_segment_alloc\n"
	if err != nil || out != want {
		t.Fatalf("mariadb CLI: %v\n%s\nwant:\n%s", err, out, want)
	}
	// JDBC: DatabaseMetaData lists the tables and columns; a Grafana-style
	// $__timeFilter time series over the dumps.
	grafana := fmt.Sprintf("SELECT UNIX_TIMESTAMP(taken_at) AS time_sec, total_bytes AS value, CAST(node_id AS CHAR) AS metric "+
		"FROM heapprof.snapshots WHERE taken_at BETWEEN FROM_UNIXTIME(%d) AND FROM_UNIXTIME(%d) ORDER BY taken_at", start.Unix(), end.Unix())
	out = jdbc(t, fmt.Sprintf("jdbc:mariadb://%s:%s/heapprof", h, p), "root", "",
		"tables:heapprof", "columns:heapprof:snapshots", grafana)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 4+9+3 || lines[0] != "diffs" || lines[2] != "snapshots" || lines[4] != "id\tVARCHAR" || !strings.HasPrefix(lines[8], "taken_at\tDATETIME") {
		t.Fatalf("JDBC metadata and time series:\n%s", out)
	}
	series := lines[len(lines)-3:]
	for _, l := range series {
		f := strings.Split(l, "\t")
		if len(f) != 3 || f[2] != "10001" || f[1] == "0" {
			t.Fatalf("time series row %q in:\n%s", l, out)
		}
	}
	// PyMySQL: which functions grew between the first and the last dump.
	out = pymysql(t, h, p, "root", "", `"heapprof"`, `cur.execute("SELECT name, SUM(flat_bytes_delta) d FROM diffs WHERE node_id = 10001 GROUP BY name HAVING d > 0 ORDER BY d DESC")
print([r[0] for r in cur.fetchall()])`)
	if !strings.Contains(out, "jenode_leak_step") {
		t.Fatalf("PyMySQL diffs: %s", out)
	}
	// Read-only: a write is refused with a clear error, the session goes on.
	out, err = cli(t, h, p, "root", "", "-e", "DELETE FROM heapprof.snapshots")
	if err == nil || !strings.Contains(out, "ERROR") {
		t.Fatalf("DELETE on the heapprof schema: %v\n%s", err, out)
	}
}

// Two proxies share one MySQL-compatible store (the test MariaDB, which is
// also their upstream): what one dumps, the other lists, and BI queries on
// the heapprof database reach it through plain forwarding.
func TestSharedMySQLStore(t *testing.T) {
	host, port := startJenode(t)
	node := backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.jenode}
	// A database of its own, so reruns in one MariaDB start empty.
	dbName := fmt.Sprintf("heapprof_shared_%d", time.Now().UnixNano())
	t.Cleanup(func() { rootExec(t, "DROP DATABASE IF EXISTS "+dbName) })
	dsn := fmt.Sprintf("app:secret@tcp(%s)/%s", env.addr, dbName)
	var proxies []*Server
	for range 2 {
		st, err := snapshot.OpenMySQL(context.Background(), dsn, snapshot.Retention{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		deps := testDeps(t, node)
		deps.Snapshots = st
		proxies = append(proxies, startProxyDeps(t, Config{Upstream: env.addr, ProfileUsers: []string{"app"}}, deps))
	}
	a := openSchema(t, proxies[0].Addr().String(), "app", "secret", "", "")
	b := openSchema(t, proxies[1].Addr().String(), "app", "secret", "", "")
	mustLines(t, a, adminSQL("10001", "enable_prof()"))
	resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	name := mustLines(t, a, adminSQL("10001", "snapshot()"))[0]
	list := mustLines(t, b, adminSQL("10001", "list_snapshots()"))
	if len(list) != 1 || !strings.HasPrefix(list[0], name+"\t") {
		t.Fatalf("proxy B lists %q, want proxy A's %s", list, name)
	}
	checkDOT(t, mustLines(t, b, adminSQL("10001", fmt.Sprintf(`to_dot_format(\"%s\")`, name))), "jenode_segment_alloc")
	var n int
	var fn string
	if err := b.QueryRow("SELECT COUNT(*) FROM " + dbName + ".snapshots WHERE node_id = 10001").Scan(&n); err != nil || n != 1 {
		t.Fatalf("BI query through the upstream: %d, %v", n, err)
	}
	if err := b.QueryRow("SELECT name FROM "+dbName+".functions WHERE snapshot_id = ? AND name LIKE 'jenode_segment%'", name).Scan(&fn); err != nil {
		t.Fatalf("functions of the snapshot: %v", err)
	}
}
