package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	driver "github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// startSchemaProxy runs an embedded-default heapproxy serving the heapprof
// schema, with snapshots (jemalloc test node 10001) dumped between
// from and to.
func startSchemaProxy(t *testing.T, snapshots int) (srv *Server, from, to time.Time) {
	t.Helper()
	return startSchemaProxyWith(t, snapshots, Config{})
}

// startSchemaProxyWith is startSchemaProxy with cfg (root must stay a
// profile user with an empty password).
func startSchemaProxyWith(t *testing.T, snapshots int, cfg Config) (srv *Server, from, to time.Time) {
	t.Helper()
	host, port := startJenode(t)
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode})
	engine, err := sqlview.New(deps.Snapshots.(*snapshot.Dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	deps.SQL = engine
	srv = startProxyDeps(t, cfg, deps)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	from = time.Now().Add(-time.Second)
	for range snapshots {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mustLines(t, db, adminSQL("10001", "snapshot()"))
	}
	return srv, from, time.Now().Add(time.Second)
}

// BI tools query the snapshots over the MySQL protocol on the embedded
// default: the mariadb CLI, MariaDB Connector/J's DatabaseMetaData and a
// Grafana-style time range, PyMySQL.
func TestHeapprofSchemaForBI(t *testing.T) {
	srv, start, end := startSchemaProxy(t, 3)

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
	node := backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode}
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
	list := snapshotList(t, b, "10001")
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

// A multi-statement query (CLIENT_MULTI_STATEMENTS) on the embedded default
// answers every statement in turn, whoever answers it (heapproxy's own
// session statements, ADMIN EXECUTE, the heapprof engine), and stops at the
// first error, as MySQL does.
func TestMultiStatementsOnEmbeddedDefault(t *testing.T) {
	srv, _, _ := startSchemaProxy(t, 1)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "multiStatements=true")
	db.SetMaxOpenConns(1)
	results := func(q string) ([]string, error) {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []string
		for {
			cols, _ := rows.Columns()
			vals, err := mariadbtest.Scan(rows)
			if err != nil {
				return out, err
			}
			set := strings.Join(cols, ",") + ":"
			for _, r := range vals {
				set += " " + r[0].String
			}
			out = append(out, set)
			if !rows.NextResultSet() {
				return out, rows.Err()
			}
		}
	}
	got, err := results("SET NAMES utf8mb4; SELECT @@version_comment AS v; /* a comment; */ " +
		"SELECT COUNT(*) AS n FROM heapprof.snapshots; ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().has_enable())';")
	// database/sql passes over the SET's OK packet to the first result set.
	want := []string{"v: heapproxy embedded default (no upstream)", "n: 1", "result: true"}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
	got, err = results("SELECT 1 AS a; SELECT * FROM heapprof.no_such_table; SELECT 2 AS b")
	var me *driver.MySQLError
	if !reflect.DeepEqual(got, []string{"a: 1"}) || !errors.As(err, &me) || me.Number != 1146 {
		t.Fatalf("error in the middle: got %q, %v", got, err)
	}
	// Without CLIENT_MULTI_STATEMENTS, two statements are a syntax error.
	single := openSchema(t, srv.Addr().String(), "root", "", "", "")
	if _, err := single.Exec("SELECT 1; SELECT 2"); !errors.As(err, &me) || me.Number != 1064 {
		t.Fatalf("two statements without CLIENT_MULTI_STATEMENTS: %v", err)
	}
	// COM_SET_OPTION switches multi-statements off and on (PHP's mysqli
	// does around multi_query); the answer is an EOF packet.
	c, err := client.Connect(srv.Addr().String(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	raw := func(payload ...byte) []byte {
		t.Helper()
		c.ResetSequence()
		if err := c.WritePacket(append(make([]byte, 4), payload...)); err != nil {
			t.Fatal(err)
		}
		p, err := c.ReadPacket()
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	two := append([]byte{gomysql.COM_QUERY}, "SET @a = 1; SET @b = 2"...)
	for _, step := range []struct {
		payload []byte
		first   byte // of the answer: 0xfe EOF, 0x00 OK, 0xff ERR
	}{
		{[]byte{gomysql.COM_SET_OPTION, 1, 0}, 0xfe},
		{two, 0xff},
		{[]byte{gomysql.COM_SET_OPTION, 0, 0}, 0xfe},
		{two, 0x00},
		{[]byte{gomysql.COM_SET_OPTION, 7, 0}, 0xff},
	} {
		p := raw(step.payload...)
		if p[0] != step.first {
			t.Fatalf("%q: answer %q", step.payload, p)
		}
		if p[0] == 0x00 { // the first SET's OK flags a second result; read the second
			if status := binary.LittleEndian.Uint16(p[3:]); status&gomysql.SERVER_MORE_RESULTS_EXISTS == 0 {
				t.Fatalf("first OK of two: status %#x", status)
			}
			if p, err := c.ReadPacket(); err != nil || p[0] != 0x00 || binary.LittleEndian.Uint16(p[3:])&gomysql.SERVER_MORE_RESULTS_EXISTS != 0 {
				t.Fatalf("second OK: %q %v", p, err)
			}
		}
	}
	// The session goes on, and a single statement is unflagged again.
	got, err = results("SELECT 3 AS c")
	if err != nil || !reflect.DeepEqual(got, []string{"c: 3"}) {
		t.Fatalf("after the error: %q, %v", got, err)
	}
}
