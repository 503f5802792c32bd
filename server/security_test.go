package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// profile_users is checked against the account MariaDB authenticated, not
// the name the client typed: with an anonymous account, "ops" with no
// password logs in as ”@localhost and may not profile.
func TestProfileUsersMatchTheUpstreamAccount(t *testing.T) {
	db, err := mariadbtest.Start(mariadbtest.Options{TCP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Stop)
	setup := `DROP USER IF EXISTS ''@'localhost'; CREATE USER ''@'localhost'; CREATE USER ''@'%';
CREATE USER dev@'%' IDENTIFIED BY 'devpw'; CREATE USER dev@localhost IDENTIFIED BY 'devpw';`
	if out, err := exec.Command("mariadb", "--no-defaults", "-uroot", "-S", db.Socket, "-e", setup).CombinedOutput(); err != nil {
		t.Fatalf("setup: %v\n%s", err, out)
	}
	srv := startProxy(t, Config{Upstream: db.Addr, ProfileUsers: []string{"ops", "dev"}})
	h, p := hostPort(srv)
	has := adminSQL("1", "has_enable()")
	for _, c := range []struct {
		user, password, want string
	}{
		// The anonymous account accepts any name: the login works ...
		{"ops", "", "ERROR 1227 (42000) at line 1: Access denied; account ''@'localhost' (logged in as 'ops') may not run ADMIN EXECUTE HeapProf"},
		{"dev", "devpw", "true"},
	} {
		out, err := cli(t, h, p, c.user, c.password, "-N", "-e", "SELECT CURRENT_USER(); "+has)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if got := lines[len(lines)-1]; !strings.HasPrefix(got, c.want) {
			t.Errorf("%s/%q: %v\n%s\nwant last line %q", c.user, c.password, err, out, c.want)
		}
	}
	// An entry naming the host matches that account only.
	srv = startProxy(t, Config{Upstream: db.Addr, ProfileUsers: []string{"dev@localhost"}})
	h, p = hostPort(srv)
	if out, err := cli(t, h, p, "dev", "devpw", "-N", "-e", has); err != nil || strings.TrimSpace(out) != "true" {
		t.Errorf("dev@localhost in profile_users: %v %q", err, out)
	}
}

// auth: local checks COM_CHANGE_USER against heapproxy's user list like a
// first login: a name not in the list, or a profile user's name with the
// upstream's password, is refused and ends the session; a local user
// changes to itself with its local password.
func TestChangeUserUnderLocalAuth(t *testing.T) {
	srv := startProxy(t, Config{Upstream: env.addr, Auth: AuthLocal, ProfileUsers: []string{"bob"}, Users: []User{
		{Name: "bob", Password: "bobpw", UpstreamUser: "app", UpstreamPassword: "secret"},
		{Name: "eve", Password: "evepw", UpstreamUser: "app", UpstreamPassword: "secret"},
	}})
	h, p := hostPort(srv)
	script := fmt.Sprintf(`
import MySQLdb
def attempt(user, pw):
    c = MySQLdb.connect(host=%q, port=%s, user="eve", passwd="evepw")
    try:
        c.change_user(user, pw)
    except MySQLdb.OperationalError as e:
        return "refused %%d" %% e.args[0]
    cur = c.cursor()
    cur.execute("SELECT CURRENT_USER()")
    who = cur.fetchone()[0]
    try:
        cur.execute("ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().has_enable())'")
        return who + " profiles " + cur.fetchone()[0]
    except MySQLdb.OperationalError as e:
        return who + " refused %%d" %% e.args[0]
for user, pw in [("ghost", ""), ("app", "secret"), ("bob", ""), ("bob", "secret"), ("bob", "bobpw"), ("eve", "evepw")]:
    print(user, pw, "->", attempt(user, pw))
`, h, p)
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `ghost  -> refused 1045
app secret -> refused 1045
bob  -> refused 1045
bob secret -> refused 1045
bob bobpw -> app@% profiles true
eve evepw -> app@% refused 1227
`
	if got := strings.ReplaceAll(string(out), "app@localhost", "app@%"); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// The embedded default answers COM_CHANGE_USER from its user list.
func TestChangeUserOnEmbeddedDefault(t *testing.T) {
	srv := startProxy(t, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "v"}}})
	h, p := hostPort(srv)
	script := fmt.Sprintf(`
import MySQLdb
c = MySQLdb.connect(host=%q, port=%s, user="viewer", passwd="v")
c.change_user("root", "")
cur = c.cursor(); cur.execute("ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().has_enable())'"); print(cur.fetchone()[0])
try:
    c.change_user("nobody", "")
    print("changed")
except MySQLdb.OperationalError as e:
    print("refused", e.args[0])
`, h, p)
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := string(out); got != "true\nrefused 1045\n" && got != "false\nrefused 1045\n" {
		t.Errorf("got %q", got)
	}
}

// Node addresses are for profile users: SHOW BACKENDS from anyone else is
// refused like ADMIN EXECUTE.
func TestShowBackendsNeedsProfileUser(t *testing.T) {
	srv := startProxy(t, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "v"}}})
	h, p := hostPort(srv)
	if out, err := cli(t, h, p, "viewer", "v", "-e", "SHOW BACKENDS"); err == nil ||
		!strings.Contains(out, "ERROR 1227 (42000) at line 1: Access denied; account 'viewer' (logged in as 'viewer') may not see the nodes' addresses") {
		t.Errorf("viewer: %v %q", err, out)
	}
	if out, err := cli(t, h, p, "viewer", "v", "-e", "SHOW FRONTENDS"); err == nil || !strings.Contains(out, "ERROR 1227 (42000)") {
		t.Errorf("viewer SHOW FRONTENDS: %v %q", err, out)
	}
	if out, err := cli(t, h, p, "root", "", "-N", "-e", "SHOW FRONTENDS"); err != nil || !strings.HasPrefix(out, "1\t") {
		t.Errorf("root: %v %q", err, out)
	}
}

// An idle session keeps no large buffer: 30 sessions that each sent a
// 16 MiB command hold kilobytes each afterwards, not 16 MiB.
func TestIdleSessionsReleaseLargeBuffers(t *testing.T) {
	srv := startProxy(t, Config{})
	const sessions = 30
	before := heapInUse()
	conns := make([]*client.Conn, sessions)
	for i := range conns {
		c, err := client.Connect(srv.Addr().String(), "root", "", "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		// COM_PING with 16 MiB - 1 bytes of payload: one physical packet.
		data := make([]byte, 4+mysqlwire.MaxPayload-1)
		data[4] = gomysql.COM_PING
		c.ResetSequence()
		if err := c.WritePacket(data); err != nil {
			t.Fatal(err)
		}
		if p, err := c.ReadPacket(); err != nil || p[0] != 0 {
			t.Fatalf("ping: %v %q", err, p)
		}
		conns[i] = c
	}
	grown := heapInUse() - before
	t.Logf("heap in use grew %.1f MB for %d idle sessions that each sent 16 MiB", float64(grown)/(1<<20), sessions)
	if perSession := grown / sessions; perSession > 256<<10 {
		t.Errorf("an idle session holds %d KB after a 16 MiB command, want at most 256 KB", perSession>>10)
	}
	for _, c := range conns {
		if err := c.Ping(); err != nil {
			t.Fatal(err)
		}
	}
}

func heapInUse() int64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// Silent TCP connections cannot use up the upstream's connections: at most
// max_pending_logins of them hold one; the rest wait, then get ERR 1040.
func TestPendingLoginsBounded(t *testing.T) {
	const pending, silent = 4, 40
	cfg := Config{Upstream: env.addr, MaxPendingLogins: pending, Timeouts: DefaultConfig().Timeouts}
	cfg.Timeouts.Handshake = 3 * time.Second
	srv := startProxy(t, cfg)
	unauthenticated := func() int {
		var n int
		fmt.Sscan(rootExec(t, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = 'unauthenticated user'"), &n)
		return n
	}
	base := unauthenticated()
	conns := make([]net.Conn, silent)
	for i := range conns {
		c, err := net.Dial("tcp", srv.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	time.Sleep(time.Second)
	if n := unauthenticated() - base; n > pending {
		t.Errorf("%d silent clients hold %d upstream connections, want at most max_pending_logins = %d", silent, n, pending)
	}
	// The others wait; past timeouts.handshake they get ERR 1040 in place
	// of a greeting.
	// Slots freed as the first logins time out may go to clients still
	// waiting; whoever is left at its deadline gets ERR 1040.
	greeted, refused := 0, 0
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		p, err := mysqlwire.NewConn(c).ReadPacket(1 << 16)
		switch {
		case err == nil && len(p) > 0 && p[0] == 10: // protocol version 10: a greeting
			greeted++
		case err == nil && len(p) > 3 && p[0] == mysqlwire.HdrErr && mysqlwire.ParseErrPacket(p).Code == gomysql.ER_CON_COUNT_ERROR:
			refused++
		default: // a slot came, and the handshake time ran out upstream
		}
	}
	t.Logf("%d of %d silent clients greeted (slots freed at the handshake deadline pass on), %d refused with ERR 1040", greeted, silent, refused)
	if refused < silent/2 {
		t.Errorf("%d of %d silent clients refused with ERR 1040, want most", refused, silent)
	}
	for _, c := range conns {
		c.Close()
	}
	db := openDB(t, srv.Addr().String(), "app", "secret", "")
	if err := db.Ping(); err != nil {
		t.Errorf("a login after the silent clients left: %v", err)
	}
}

// to_dot_format and diff_dot_snapshot refuse a snapshot of another node
// instead of rendering it under the wrong node's name.
func TestSnapshotOfAnotherNodeRefused(t *testing.T) {
	deps := testDeps(t, backends.Node{ID: 10002, Kind: backends.Go, Host: "127.0.0.1", HTTPPort: 1})
	srv := startProxyDeps(t, Config{}, deps)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	name := mustLines(t, db, adminSQL("1", "snapshot()"))[0]
	for _, method := range []string{"to_dot_format", "diff_dot_snapshot"} {
		_, err := queryLines(t, db, adminSQL("10002", fmt.Sprintf("%s(%q)", method, name)))
		wantMySQLError(t, err, 1064, "HY000", "is of node 1, not of node 10002")
	}
	if lines := mustLines(t, db, adminSQL("1", fmt.Sprintf("to_dot_format(%q)", name))); !strings.HasPrefix(lines[0], "digraph") {
		t.Errorf("own node's snapshot: %q", lines[0])
	}
}

// A heapprof SQL statement stops when its client KILLs it or disconnects,
// instead of running on for nobody: while it runs, and while it is still
// being planned (go-mysql-server plans 15 nested scalar subqueries for
// over a minute, and never looks at the context while planning: sqlview's
// interruptRule does).
func TestSQLStatementKilledOrAbandoned(t *testing.T) {
	srv, _, _ := startSchemaProxy(t, 2)
	addr := srv.Addr().String()
	nested := nestedScalarSubqueries(15)
	for _, tc := range []struct{ name, query string }{
		{"executing", `SELECT COUNT(*) FROM heapprof.functions a, heapprof.functions b, heapprof.functions c,
heapprof.functions d, heapprof.functions e, heapprof.functions f`},
		{"planning", "SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id > (" + nested + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) { killOrAbandon(t, srv, addr, tc.query) })
	}
}

// timeouts.admin stops a statement still being planned with MySQL's
// ERROR 3024, and the session goes on.
func TestSQLStatementTimeoutWhilePlanning(t *testing.T) {
	cfg := Config{Timeouts: DefaultConfig().Timeouts}
	cfg.Timeouts.Admin = 2 * time.Second
	srv, _, _ := startSchemaProxyWith(t, 2, cfg)
	nested := nestedScalarSubqueries(15)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	db.SetMaxOpenConns(1)
	var n int64
	err := db.QueryRow("SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id > (" + nested + ")").Scan(&n)
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 3024 {
		t.Fatalf("got %v, want ERROR 3024 after timeouts.admin", err)
	}
	if err := db.QueryRow("SELECT COUNT(*) FROM heapprof.snapshots").Scan(&n); err != nil || n != 2 {
		t.Errorf("the session after the timeout: %d %v", n, err)
	}
}

// nestedScalarSubqueries is SELECT (SELECT (... 1)) n deep: planned in
// time growing 2.6 times per level (over a minute at 15) by
// go-mysql-server, and stopped by sqlview's interruptRule.
func nestedScalarSubqueries(n int) string {
	q := "SELECT 1"
	for range n {
		q = fmt.Sprintf("SELECT (%s) AS x", q)
	}
	return q
}

func killOrAbandon(t *testing.T, srv *Server, addr, heavy string) {
	db := openSchema(t, addr, "root", "", "", "")
	ctx := context.Background()
	victim, id := connWithID(t, db)
	defer victim.Close()
	result := make(chan error, 1)
	go func() {
		var n int64
		result <- victim.QueryRowContext(ctx, heavy).Scan(&n)
	}()
	time.Sleep(500 * time.Millisecond)
	if _, err := db.Exec(fmt.Sprintf("KILL QUERY %d", id)); err != nil {
		t.Fatalf("KILL QUERY: %v", err)
	}
	select {
	case err := <-result:
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != gomysql.ER_QUERY_INTERRUPTED {
			t.Errorf("killed statement: %v, want ERROR 1317", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("KILL QUERY did not stop the statement")
	}
	var one int
	if err := victim.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("the killed session after KILL QUERY: %v", err)
	}

	// A client that goes away mid-statement: its session ends.
	others := srv.liveSessionCount()
	gone, err := client.Connect(addr, "root", "", "")
	if err != nil {
		t.Fatal(err)
	}
	gone.ResetSequence()
	if err := gone.WritePacket(append(make([]byte, 4), append([]byte{gomysql.COM_QUERY}, heavy...)...)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	gone.Close()
	deadline := time.Now().Add(30 * time.Second)
	for srv.liveSessionCount() > others {
		if time.Now().After(deadline) {
			t.Fatalf("the abandoned statement still runs: %d sessions", srv.liveSessionCount())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Dump slots limit CPU work only: with max_dumps 1, a dump waiting on a node
// that accepts and never answers does not hold the slot, so a healthy
// node's dump goes through meanwhile.
//
// The dead node's timeout (60 s) is far beyond the healthy dump (seconds on
// a loaded 2-core CI machine: it symbolizes the test binary; a 5 s timeout
// lost that race once); once the healthy graph is in, the node hangs up, and
// the waiting dump must report that as its error.
func TestDumpSlotNotHeldWhileWaitingOnANode(t *testing.T) {
	port, hangUp := hangingNode(t)
	reg := backends.NewRegistry(backends.Options{Timeout: 60 * time.Second})
	reg.Add(backends.SelfNode(1), backends.Node{ID: 10009, Kind: backends.Go, Host: "127.0.0.1", HTTPPort: port})
	srv := startProxyDeps(t, Config{MaxDumps: 1}, Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)})
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	db.SetMaxOpenConns(4)
	order := make(chan string, 2)
	go func() {
		_, err := queryLines(t, db, adminSQL("10009", "dump_dot_snapshot()"))
		order <- fmt.Sprintf("dead node: %v", err)
	}()
	time.Sleep(300 * time.Millisecond)
	go func() {
		lines, err := queryLines(t, db, adminSQL("1", "dump_dot_snapshot()"))
		if err == nil && len(lines) > 0 && strings.HasPrefix(lines[0], "digraph") {
			order <- "healthy node: ok"
			return
		}
		order <- fmt.Sprintf("healthy node: %v", err)
	}()
	select {
	case first := <-order:
		if first != "healthy node: ok" {
			t.Errorf("first answer: %q, want the healthy node's graph while the dead node's dump waits", first)
		}
	case <-time.After(45 * time.Second):
		// Held slot: the healthy dump would wait for the dead node,
		// which answers only after it.
		t.Error("no answer from either node in 45 s: the waiting dump holds the slot")
	}
	hangUp()
	if second := <-order; !strings.HasPrefix(second, "dead node: ") || strings.HasSuffix(second, "<nil>") {
		t.Errorf("dead node: %q, want its error", second)
	}
}

// The web view's logins follow ADMIN EXECUTE's rule: a right password of an
// account in profile_users, checked where a MySQL login's is.
func TestWebAuthenticator(t *testing.T) {
	local := Config{Users: []User{{Name: "root"}, {Name: "ops", Password: "opspw"}, {Name: "viewer", Password: "v"}},
		ProfileUsers: []string{"root", "ops"}, Timeouts: DefaultConfig().Timeouts}
	upstream := Config{Upstream: env.addr, ProfileUsers: []string{"app", "clr", "tlsu"}, Timeouts: DefaultConfig().Timeouts}
	upstreamTLS := upstream
	upstreamTLS.UpstreamTLS = UpstreamTLSConfig{Enabled: true, InsecureSkipVerify: true}
	for _, c := range []struct {
		name           string
		cfg            Config
		user, password string
		want           bool
	}{
		{"local profile user", local, "ops", "opspw", true},
		{"local empty password", local, "root", "", true},
		{"local empty password given one", local, "root", "x", false},
		{"local wrong password", local, "ops", "nope", false},
		{"local user not in profile_users", local, "viewer", "v", false},
		{"unknown local user", local, "ghost", "", false},
		{"upstream profile user", upstream, "app", "secret", true},
		{"upstream wrong password", upstream, "app", "wrong", false},
		{"upstream user not in profile_users", upstream, "edu", "edpass", false},
		{"upstream ed25519 user (auth switch)", Config{Upstream: env.addr, ProfileUsers: []string{"edu"}, Timeouts: DefaultConfig().Timeouts}, "edu", "edpass", true},
		// MariaDB switches clr to mysql_clear_password, as Doris does its
		// LDAP users (Doris reads the answer up to a NUL: TestDorisLDAPWebLogin).
		{"upstream clear-text user", upstream, "clr", "clearpass", true},
		{"upstream clear-text user, wrong password", upstream, "clr", "nope", false},
		// tlsu is REQUIRE SSL: upstream_tls must hold for the web view's
		// logins as for sessions'.
		{"upstream_tls, user requiring TLS", upstreamTLS, "tlsu", "tlspw", true},
		{"upstream_tls, password user", upstreamTLS, "app", "secret", true},
		{"no upstream_tls, user requiring TLS", upstream, "tlsu", "tlspw", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewWebAuthenticator(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second answer may come from the cache
				ok, err := a.Authenticate(context.Background(), c.user, c.password)
				if err != nil || ok != c.want {
					t.Fatalf("Authenticate(%q, %q) = %v, %v; want %v", c.user, c.password, ok, err, c.want)
				}
			}
		})
	}
}

// The heapprof schema is profile data: on the embedded default a user not
// in profile_users is refused it, through text and binary protocol, and
// keeps a usable session.
func TestHeapprofSchemaNeedsProfileUser(t *testing.T) {
	srv, _, _ := startSchemaProxyWith(t, 1, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "v"}}})
	h, p := hostPort(srv)
	for _, q := range []string{"SELECT COUNT(*) FROM heapprof.snapshots", "USE heapprof"} {
		out, err := cli(t, h, p, "viewer", "v", "-N", "-e", q)
		if err == nil || !strings.Contains(out, "ERROR 1044 (42000) at line 1: Access denied for user 'viewer' to database 'heapprof'") {
			t.Errorf("viewer %q: %v %q", q, err, out)
		}
	}
	db := openSchema(t, srv.Addr().String(), "viewer", "v", "", "")
	var me *mysql.MySQLError
	if _, err := db.Prepare("SELECT id FROM heapprof.snapshots WHERE node_id = ?"); !errors.As(err, &me) || me.Number != 1044 {
		t.Errorf("viewer prepare: %v, want 1044", err)
	}
	var one int
	if err := db.QueryRow("SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Errorf("viewer SELECT 1 after a refusal: %v", err)
	}
	if out, err := cli(t, h, p, "root", "", "-N", "-e", "SELECT COUNT(*) > 0 FROM heapprof.snapshots"); err != nil || strings.TrimSpace(out) != "1" {
		t.Errorf("root: %v %q", err, out)
	}
}

// Any user may ask SHOW GRANTS; a non-profile user's has no heapprof.
func TestShowGrantsForEveryone(t *testing.T) {
	srv, _, _ := startSchemaProxyWith(t, 1, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "v"}}})
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "viewer", "v", "-N", "-e", "SHOW GRANTS")
	if err != nil || !strings.Contains(out, "USAGE") || strings.Contains(out, "heapprof") {
		t.Errorf("viewer SHOW GRANTS: %v %q", err, out)
	}
	out, err = cli(t, h, p, "root", "", "-N", "-e", "SHOW GRANTS")
	if err != nil || !strings.Contains(out, "heapprof") {
		t.Errorf("root SHOW GRANTS: %v %q", err, out)
	}
}
