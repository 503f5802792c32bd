package server

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// A diff with nothing above jeprof's thresholds is a valid graph that says
// so (Graphviz accepts it), not an error; list_snapshots answers one
// column per field, and its name column feeds diff_dot_snapshot.
func TestEmptyDiffAndSnapshotList(t *testing.T) {
	// An idle node: sampling about every GiB, so the buffers the node
	// holds while it serves each dump request are never sampled (with
	// jenode's usual 1 KiB they are, at random, and two dumps differ).
	host, port := nodetest.StartJenode(t, nodes.Jenode, nodetest.Jenode{MallocConf: "prof:true,prof_active:false,lg_prof_sample:30"})
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode})
	srv := startProxyDeps(t, Config{}, deps)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	name := mustLines(t, db, adminSQL("10001", "snapshot()"))[0]
	list := snapshotList(t, db, "10001")
	if len(list) != 1 || strings.Split(list[0], "\t")[0] != name {
		t.Fatalf("list_snapshots: %q, want one row named %s", list, name)
	}
	lines := mustLines(t, db, adminSQL("10001", fmt.Sprintf(`diff_dot_snapshot(\"%s\")`, strings.Split(list[0], "\t")[0])))
	graph := strings.Join(lines, "\n") + "\n"
	if !strings.HasPrefix(lines[0], `digraph "`) || !strings.Contains(graph, "Nothing changed above jeprof's thresholds since "+name) {
		t.Fatalf("diff of an idle node:\n%s", graph)
	}
	dot := exec.Command("dot", "-Tsvg")
	dot.Stdin = strings.NewReader(graph)
	if out, err := dot.CombinedOutput(); err != nil {
		t.Fatalf("Graphviz refuses the empty diff: %v\n%s", err, out)
	}
}

// What the symbolizer chain could not name reaches the client as the
// statement's warnings: the graph is still answered, SHOW WARNINGS right
// after lists why, and the next statement clears them.
func TestSymbolizerWarnings(t *testing.T) {
	host, port := startJenode(t)
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: "/nonexistent/jenode"})
	srv := startProxyDeps(t, Config{}, deps)
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-r", "--show-warnings", "-e",
		adminSQL("10001", "enable_prof()")+"; "+adminSQL("10001", "dump_dot_snapshot()")+"; SHOW WARNINGS; SELECT 1; SHOW WARNINGS")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "digraph \"") || !strings.Contains(out, "/nonexistent/jenode") {
		t.Fatalf("want the graph and a warning naming the missing binary:\n%s", out)
	}
	// --show-warnings prints the statement's warnings; SHOW WARNINGS lists them again.
	for _, want := range []string{"Warning (Code 1105): node 10001: ", "Warning\t1105\tnode 10001: ", "shown as hex"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	tail := out[strings.LastIndex(out, "1\n"):]
	if strings.Contains(tail, "Warning") {
		t.Errorf("warnings outlived the next statement:\n%s", out)
	}
}

// The newest StarRocks FE's fan-out: string columns, an unknown id is its
// own ERROR row, duplicates run twice, and a target that resolves to one
// node answers the single-node shape.
func TestFanOutShape(t *testing.T) {
	host, port := startJenode(t)
	srv := startProxyDeps(t, Config{}, testDeps(t, backends.Node{ID: 10002, Kind: backends.GreptimeDB, Host: host, HTTPPort: port}))
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	rows, err := db.Query(adminSQL("42, 10002, 10002", "has_enable()"))
	if err != nil {
		t.Fatal(err)
	}
	types, _ := rows.ColumnTypes()
	var got []string
	for rows.Next() {
		var id, status, result string
		if err := rows.Scan(&id, &status, &result); err != nil {
			t.Fatal(err)
		}
		got = append(got, id+" "+status+" "+result)
	}
	rows.Close()
	if want := "42 ERROR node not found: 42|10002 OK false|10002 OK false"; strings.Join(got, "|") != want {
		t.Errorf("rows %q, want %q", got, want)
	}
	for _, c := range types {
		if c.DatabaseTypeName() != "VARCHAR" {
			t.Errorf("column %s is %s, want a string as the FE sends", c.Name(), c.DatabaseTypeName())
		}
	}
	// ALL BACKENDS that is one node: the single `result` shape.
	if got := mustLines(t, db, adminSQL("ALL BACKENDS", "has_enable()")); len(got) != 1 || got[0] != "false" {
		t.Errorf("ALL BACKENDS over one node: %q", got)
	}
}

// In front of a StarRocks FE, enable/disable/has_enable over several BEs go
// to the FE (which switches its BEs; heapproxy has no HTTP switch for
// them), and to_dot_format of a BE file path too. Here the FE is another
// heapproxy, which answers them from its own registry.
func TestFanOutSwitchForwardedToFE(t *testing.T) {
	host, port := startJenode(t)
	fe := startProxyDeps(t, Config{}, testDeps(t,
		backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port},
		backends.Node{ID: 10002, Kind: backends.GreptimeDB, Host: host, HTTPPort: port}))
	proxy := startProxyDeps(t, Config{Upstream: fe.Addr().String()}, testDeps(t,
		backends.Node{ID: 10001, Kind: backends.StarRocks, Host: host, HTTPPort: port},
		backends.Node{ID: 10002, Kind: backends.StarRocks, Host: host, HTTPPort: port},
		backends.Node{ID: 10003, Kind: backends.StarRocks, Host: host, HTTPPort: port}))
	db := openSchema(t, proxy.Addr().String(), "root", "", "", "")
	rows, err := db.Query(adminSQL("10001, 10002", "has_enable()"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var id, status, result string
		rows.Scan(&id, &status, &result)
		got = append(got, id+" "+status+" "+result)
	}
	rows.Close()
	if want := "10001 OK false|10002 OK false"; strings.Join(got, "|") != want {
		t.Errorf("fan-out has_enable in front of the FE: %q, want the FE's %q", got, want)
	}
	// Node 10003 is only the proxy's: the FE's answer says it has none.
	_, err = queryLines(t, db, adminSQL("10003", `to_dot_format(\"/opt/starrocks/be/heap_profile.123.abc\")`))
	wantMySQLError(t, err, 1064, "HY000", "node not found: 10003")
}

// SHOW WARNINGS after a statement heapproxy answered is heapproxy's (here:
// none), not the upstream's from an earlier statement.
func TestShowWarningsAfterAdminInFrontOfUpstream(t *testing.T) {
	srv := startProxy(t, Config{Upstream: env.addr, ProfileUsers: []string{"app"}})
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "app", "secret", "-N", "-e",
		"SELECT CAST('x' AS SIGNED); SHOW WARNINGS; "+adminSQL("1", "has_enable()")+"; SHOW WARNINGS")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if n := strings.Count(out, "Truncated incorrect INTEGER value"); n != 1 || !strings.HasPrefix(lines[len(lines)-1], "true") && !strings.HasPrefix(lines[len(lines)-1], "false") {
		t.Errorf("the upstream's warning should show once, after its own statement:\n%s", out)
	}
}

// The embedded default keeps MySQL's transaction flag for drivers that read
// it (PDO, JDBC) and answers COM_STATISTICS with MySQL's status line.
func TestEmbeddedTransactionFlagAndStatistics(t *testing.T) {
	srv := startProxy(t, Config{})
	c, err := client.Connect(srv.Addr().String(), "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, step := range []struct {
		stmt  string
		inTxn bool
	}{{"BEGIN", true}, {"SELECT 1", true}, {"COMMIT", false}, {"START TRANSACTION", true}, {"ROLLBACK", false}} {
		if _, err := c.Execute(step.stmt); err != nil {
			t.Fatalf("%s: %v", step.stmt, err)
		}
		if c.IsInTransaction() != step.inTxn {
			t.Errorf("after %s: in transaction %v, want %v", step.stmt, c.IsInTransaction(), step.inTxn)
		}
	}
	c.ResetSequence()
	if err := c.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_STATISTICS}); err != nil {
		t.Fatal(err)
	}
	stats, err := c.ReadPacket()
	if err != nil || !strings.HasPrefix(string(stats), "Uptime: ") || !strings.Contains(string(stats), "  Threads: 1  Questions: ") {
		t.Fatalf("COM_STATISTICS: %v %q", err, stats)
	}
	if err := c.Ping(); err != nil {
		t.Fatalf("after COM_STATISTICS: %v", err)
	}
}

// Under autocommit=0 the embedded default opens a transaction where MariaDB
// does (PDO and Connector/J read SERVER_STATUS_IN_TRANS): a statement that
// reads a table opens it; FROM-less SELECTs, SHOW and information_schema
// do not; COMMIT, ROLLBACK and SET autocommit=1 end it. The same steps run
// on MariaDB directly (an InnoDB table standing for heapprof.snapshots)
// and on the embedded default must flip the flag at the same steps.
func TestEmbeddedAutocommitTransactionLikeMariaDB(t *testing.T) {
	rootExec(t, "CREATE TABLE IF NOT EXISTS t.txn_probe (id INT) ENGINE=InnoDB; INSERT INTO t.txn_probe VALUES (1)")
	steps := []string{"SET autocommit=0", "SELECT 1", "SELECT @@version", "SHOW VARIABLES LIKE 'autocommit'",
		"SELECT * FROM information_schema.SCHEMATA", "SELECT * FROM %s", "SELECT 1", "SET @x = 1", "COMMIT",
		"SELECT COUNT(*) FROM %s", "ROLLBACK", "SELECT * FROM %s", "SET autocommit=0", "SET autocommit=1",
		"SELECT * FROM %s", "START TRANSACTION", "COMMIT"}
	run := func(addr, user, password, table string) []bool {
		c, err := client.Connect(addr, user, password, "")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var flags []bool
		for _, step := range steps {
			q := step
			if strings.Contains(q, "%s") {
				q = fmt.Sprintf(q, table)
			}
			if _, err := c.Execute(q); err != nil {
				t.Fatalf("%s on %s: %v", q, addr, err)
			}
			flags = append(flags, c.IsInTransaction())
		}
		return flags
	}
	want := run(env.addr, "app", "secret", "t.txn_probe")
	srv := startProxy(t, Config{})
	got := run(srv.Addr().String(), "root", "", "heapprof.snapshots")
	if !slices.Contains(want, true) {
		t.Fatalf("MariaDB never set IN_TRANS: %v", want)
	}
	for i := range steps {
		if got[i] != want[i] {
			t.Errorf("after %q: embedded default in transaction %v, MariaDB %v", steps[i], got[i], want[i])
		}
	}
}

// SHOW PROCESSLIST on the embedded default lists heapproxy's sessions: all
// of them for a profile user, a user's own for others.
func TestEmbeddedProcesslist(t *testing.T) {
	srv := startProxy(t, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "v"}}})
	viewer := openSchema(t, srv.Addr().String(), "viewer", "v", "", "")
	if err := viewer.Ping(); err != nil {
		t.Fatal(err)
	}
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-e", "SHOW FULL PROCESSLIST")
	if err != nil || !strings.Contains(out, "\tviewer\t") || !strings.Contains(out, "\troot\t") ||
		!strings.Contains(out, "\tQuery\t") || !strings.Contains(out, "SHOW FULL PROCESSLIST") || !strings.Contains(out, "\tSleep\t") {
		t.Fatalf("root's processlist: %v\n%s", err, out)
	}
	rows, err := viewer.Query("SHOW PROCESSLIST")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, tm int64
		var user, host, command, state string
		var db, info *string
		if err := rows.Scan(&id, &user, &host, &db, &command, &tm, &state, &info); err != nil {
			t.Fatal(err)
		}
		if user != "viewer" {
			t.Errorf("a non-profile user sees %s's session", user)
		}
	}
}
