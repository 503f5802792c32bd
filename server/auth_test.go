package server

import (
	"bytes"
	"context"
	"crypto/tls"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// Authentication passes through to MariaDB: native password and ed25519
// users log in with their own credentials; heapproxy holds no password.
func TestPassThroughAuth(t *testing.T) {
	srv := upstreamProxy(t)
	h, p := hostPort(srv)
	for _, c := range []struct {
		name, user, password string
		wantErr              string
	}{
		{"native password", "app", "secret", ""},
		{"ed25519 (auth switch to client_ed25519)", "edu", "edpass", ""},
		{"wrong password", "app", "wrong", "ERROR 1045 (28000): Access denied for user 'app'@'localhost' (using password: YES)"},
		{"ed25519 wrong password", "edu", "nope", "ERROR 1045 (28000)"},
		{"unknown user", "ghost", "x", "ERROR 1045 (28000): Access denied for user 'ghost'@'localhost'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, err := cli(t, h, p, c.user, c.password, "-N", "-e", "SELECT CURRENT_USER()")
			if c.wantErr == "" {
				if err != nil || !strings.HasPrefix(strings.TrimSpace(out), c.user+"@") {
					t.Fatalf("login as %s: %v\n%s", c.user, err, out)
				}
				return
			}
			if err == nil || !strings.Contains(out, c.wantErr) {
				t.Fatalf("want %q, got %v\n%s", c.wantErr, err, out)
			}
		})
	}
	// go-sql-driver speaks ed25519 too.
	db := openDB(t, srv.Addr().String(), "edu", "edpass", "")
	pingEd25519(t, db)
	var u string
	if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&u); err != nil || !strings.HasPrefix(u, "edu@") {
		t.Fatalf("go driver ed25519: %v %q", err, u)
	}
	bad := openDB(t, srv.Addr().String(), "app", "wrong", "")
	var me *mysql.MySQLError
	if err := bad.Ping(); !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("go driver wrong password: %v", err)
	}
}

// A user whose plugin takes the password in clear text (as LDAP and PAM
// users') logs in through heapproxy as directly: naming
// mysql_clear_password in the first packet (forwarded as the client wrote
// it), or answering MariaDB's switch to it. Wrong passwords get MariaDB's
// 1045 either way.
func TestClearTextLogin(t *testing.T) {
	srv := upstreamProxy(t)
	ph, pp := hostPort(srv)
	dh, dp, _ := net.SplitHostPort(env.addr)
	for _, c := range []struct {
		name, password string
		args           []string
		want           string
	}{
		{"first packet", "clearpass", []string{"--default-auth=mysql_clear_password"}, "clr@localhost"},
		{"auth switch", "clearpass", nil, "clr@localhost"},
		{"first packet, wrong password", "nope", []string{"--default-auth=mysql_clear_password"}, "ERROR 1045 (28000): Access denied for user 'clr'@'localhost' (using password: YES)"},
		{"auth switch, wrong password", "nope", nil, "ERROR 1045 (28000): Access denied for user 'clr'@'localhost' (using password: YES)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-N", "-e", "SELECT CURRENT_USER()"}, c.args...)
			direct, derr := cli(t, dh, dp, "clr", c.password, args...)
			proxied, perr := cli(t, ph, pp, "clr", c.password, args...)
			if strings.TrimSpace(direct) != c.want || (derr == nil) != (perr == nil) || proxied != direct {
				t.Fatalf("want %q\ndirect: %v %q\nthrough heapproxy: %v %q", c.want, derr, direct, perr, proxied)
			}
		})
	}
	// go-sql-driver answers the switch when it may send clear text.
	db := openDB(t, srv.Addr().String(), "clr", "clearpass", "allowCleartextPasswords=true")
	var u string
	if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&u); err != nil || u != "clr@localhost" {
		t.Fatalf("go driver clear text: %v %q", err, u)
	}
}

// COM_CHANGE_USER through MySQLdb (Debian python3-mysqldb): the new user is
// authenticated by the upstream through a fresh auth switch.
func TestChangeUser(t *testing.T) {
	srv := upstreamProxy(t)
	h, p := hostPort(srv)
	script := fmt.Sprintf(`
import MySQLdb
c = MySQLdb.connect(host=%q, port=%s, user="app", passwd="secret", db="t")
c.change_user("edu", "edpass", "mysql")
cur = c.cursor(); cur.execute("SELECT CURRENT_USER(), DATABASE()"); print(cur.fetchone())
try:
    c.change_user("app", "wrong")
    print("changed")
except MySQLdb.OperationalError as e:
    print("refused", e.args[0])
`, h, p)
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "('edu@%', 'mysql')\nrefused 1045\n"
	if strings.ReplaceAll(string(out), "edu@localhost", "edu@%") != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}

// COM_PING, COM_FIELD_LIST, COM_INIT_DB, COM_STATISTICS and
// COM_RESET_CONNECTION from go-mysql's client.
func TestOtherCommands(t *testing.T) {
	srv := upstreamProxy(t)
	c, err := client.Connect(srv.Addr().String(), "app", "secret", "t")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ping(); err != nil {
		t.Fatal("COM_PING:", err)
	}
	if _, err := c.Execute("CREATE TABLE IF NOT EXISTS fl (a INT, b VARCHAR(10))"); err != nil {
		t.Fatal(err)
	}
	fields, err := c.FieldList("fl", "")
	if err != nil {
		t.Fatal("COM_FIELD_LIST:", err)
	}
	if len(fields) != 2 || string(fields[0].Name) != "a" || string(fields[1].Name) != "b" {
		t.Fatalf("COM_FIELD_LIST returned %d fields", len(fields))
	}
	if _, err := c.FieldList("no_such_table", ""); err == nil {
		t.Fatal("COM_FIELD_LIST of a missing table succeeded")
	}
	if err := c.UseDB("mysql"); err != nil {
		t.Fatal("COM_INIT_DB:", err)
	}
	if err := c.UseDB("no_such_db"); err == nil {
		t.Fatal("COM_INIT_DB to a missing database succeeded")
	}
	r, err := c.Execute("SELECT DATABASE()")
	if err != nil {
		t.Fatal(err)
	}
	if db, _ := r.GetString(0, 0); db != "mysql" {
		t.Fatalf("after COM_INIT_DB, DATABASE() = %q", db)
	}
	// COM_RESET_CONNECTION clears user variables on the upstream session.
	c.Execute("SET @v = 42")
	c.ResetSequence()
	if err := c.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_RESET_CONNECTION}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadOKPacket(); err != nil {
		t.Fatal("COM_RESET_CONNECTION:", err)
	}
	r, err = c.Execute("SELECT @v IS NULL")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.GetInt(0, 0); v != 1 {
		t.Fatal("user variable survived COM_RESET_CONNECTION")
	}
	// COM_STATISTICS answers a bare string packet.
	c.ResetSequence()
	c.WritePacket([]byte{0, 0, 0, 0, gomysql.COM_STATISTICS})
	stats, err := c.ReadPacket()
	if err != nil || !strings.Contains(string(stats), "Uptime") {
		t.Fatalf("COM_STATISTICS: %v %q", err, stats)
	}
	if _, err := c.Execute("SELECT 1"); err != nil {
		t.Fatal("session unusable after COM_STATISTICS:", err)
	}
	out, err := exec.Command("mariadb-admin", "--no-defaults", "-h", "127.0.0.1", "-P", portOf(srv), "-uapp", "--password=secret", "ping").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "mysqld is alive") {
		t.Fatalf("mariadb-admin ping: %v %s", err, out)
	}
}

func portOf(srv *Server) string { _, p := hostPort(srv); return p }

// TLS from clients to heapproxy, and from heapproxy to the upstream.
func TestTLS(t *testing.T) {
	srv := startProxy(t, Config{
		Upstream:    env.addr,
		TLS:         TLSConfig{Cert: env.certFile, Key: env.keyFile},
		UpstreamTLS: UpstreamTLSConfig{Enabled: true, InsecureSkipVerify: true},
	})
	mysql.RegisterTLSConfig("heapproxy-test", &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // self-signed test certificate
	db := openDB(t, srv.Addr().String(), "app", "secret", "tls=heapproxy-test")
	var name, cipher string
	if err := db.QueryRow("SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil {
		t.Fatal(err)
	}
	if cipher == "" {
		t.Fatal("the upstream connection is not encrypted")
	}
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "app", "secret", "--ssl", "--ssl-verify-server-cert=0", "-N", "-e", "\\s")
	if err != nil || !strings.Contains(out, "Cipher in use") {
		t.Fatalf("mariadb --ssl through the proxy: %v\n%s", err, out)
	}
	// ed25519 over TLS on both legs.
	ed := openDB(t, srv.Addr().String(), "edu", "edpass", "tls=heapproxy-test")
	pingEd25519(t, ed)
}

// pingEd25519 logs in with go-sql-driver as an ed25519 user. The driver
// (v1.10.1, readAuthResult) cuts a trailing 0 from the auth switch data, so
// when MariaDB's random 32-byte ed25519 challenge ends in 0 (one login in
// 256, directly against MariaDB as well) it fails with ErrMalformPkt before
// heapproxy sees an answer; only that failure is retried, with a fresh
// challenge.
func pingEd25519(t *testing.T, db *sql.DB) {
	t.Helper()
	var err error
	for range 4 {
		if err = db.Ping(); !errors.Is(err, mysql.ErrMalformPkt) {
			break
		}
	}
	if err != nil {
		t.Fatalf("go driver ed25519 login: %v", err)
	}
}

// TestSwitchSaltEd25519: heapproxy's own ed25519 login (auth: local) keeps
// all 32 bytes of a challenge that ends in 0; the native plugin's salt
// loses its NUL terminator.
func TestSwitchSaltEd25519(t *testing.T) {
	challenge := bytes.Repeat([]byte{0x5a}, 31)
	challenge = append(challenge, 0)
	got := switchSalt("client_ed25519", challenge)
	if len(got) != 32 {
		t.Fatalf("ed25519 challenge cut to %d bytes", len(got))
	}
	if sig, err := scramble("client_ed25519", got, "edpass"); err != nil || len(sig) != 64 {
		t.Fatalf("ed25519 answer: %d bytes, %v", len(sig), err)
	}
	native := append(bytes.Repeat([]byte{0x21}, 20), 0)
	if got := switchSalt(nativePassword, native); len(got) != 20 {
		t.Fatalf("native salt %d bytes, want 20", len(got))
	}
}

// SIGTERM semantics: a running statement finishes, idle sessions close, new
// connections are refused.
func TestGracefulShutdown(t *testing.T) {
	srv, err := New(Config{Listen: "127.0.0.1:0", Upstream: env.addr, Timeouts: DefaultConfig().Timeouts}, zap.NewNop(), testDeps(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve() }()
	addr := srv.Addr().String()
	busy := openDB(t, addr, "app", "secret", "")
	idle := openDB(t, addr, "app", "secret", "")
	if err := idle.Ping(); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		var v int
		err := busy.QueryRow("SELECT SLEEP(1.5) + 1").Scan(&v)
		if err == nil && v != 1 {
			err = fmt.Errorf("got %d", v)
		}
		result <- err
	}()
	time.Sleep(300 * time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("statement running at shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := client.Connect(addr, "app", "secret", ""); err == nil {
		t.Fatal("connected after shutdown")
	}
}

// A statement still running when the shutdown timeout ends gets an error,
// on either relay, and Shutdown returns.
func TestShutdownTimeoutEndsRunningStatements(t *testing.T) {
	for _, loops := range []int{0, -1} {
		srv, err := New(Config{Listen: "127.0.0.1:0", Upstream: env.addr, Timeouts: DefaultConfig().Timeouts, EventLoops: loops}, zap.NewNop(), testDeps(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Listen(); err != nil {
			t.Fatal(err)
		}
		go srv.Serve()
		db := openDB(t, srv.Addr().String(), "app", "secret", "")
		result := make(chan error, 1)
		go func() {
			var v int
			result <- db.QueryRow("SELECT SLEEP(30)").Scan(&v)
		}()
		time.Sleep(300 * time.Millisecond)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err = srv.Shutdown(ctx)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "closed sessions still running") {
			t.Errorf("event_loops %d: Shutdown: %v, want the sessions it closed named", loops, err)
		}
		select {
		case err := <-result:
			if err == nil {
				t.Errorf("event_loops %d: the statement cut by the shutdown reported success", loops)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event_loops %d: the client still waits after the shutdown", loops)
		}
	}
}

// auth: local in front of an upstream: heapproxy checks its own user list,
// then logs in to MariaDB with each user's upstream account, answering the
// upstream's plugin (native password, ed25519 and clear text after an auth
// switch).
func TestLocalAuthInFrontOfUpstream(t *testing.T) {
	srv := startProxy(t, Config{Upstream: env.addr, Auth: AuthLocal, Users: []User{
		{Name: "bob", Password: "bobpw", UpstreamUser: "app", UpstreamPassword: "secret"},
		{Name: "eddie", PasswordHash: "*" + strings.ToUpper(fmt.Sprintf("%x", gomysql.NativePasswordHash([]byte("e")))), UpstreamUser: "edu", UpstreamPassword: "edpass"},
		{Name: "stale", Password: "s", UpstreamUser: "app", UpstreamPassword: "old"},
		{Name: "carol", Password: "c", UpstreamUser: "clr", UpstreamPassword: "clearpass"},
		{Name: "dave", Password: "d", UpstreamUser: "dlg", UpstreamPassword: "dlgpw"},
	}})
	h, p := hostPort(srv)
	for _, c := range []struct{ user, password, want string }{
		{"bob", "bobpw", "app@"},
		{"eddie", "e", "edu@"},
		{"carol", "c", "clr@"},
		{"dave", "d", `ERROR 1251 (08004): upstream asks for auth plugin "dialog", which heapproxy cannot answer for a local user`},
		{"bob", "secret", "ERROR 1045 (28000): Access denied for user 'bob'"},
		{"app", "secret", "ERROR 1045 (28000): Access denied for user 'app'"},
		{"stale", "s", "ERROR 1045 (28000): Access denied for user 'app'"},
	} {
		out, err := cli(t, h, p, c.user, c.password, "-N", "-e", "SELECT CURRENT_USER()")
		if !strings.HasPrefix(out, c.want) || (err == nil) != (c.want[0] != 'E') {
			t.Errorf("%s/%s: %v %q, want %q", c.user, c.password, err, out, c.want)
		}
	}
}

// Over max_connections a client gets ERR 1040 (08004) instead of the
// greeting, as from MySQL; a freed session makes room again.
func TestMaxConnections(t *testing.T) {
	srv := startProxy(t, Config{MaxConnections: 2})
	addr := srv.Addr().String()
	var held []*client.Conn
	for range 2 {
		c, err := client.Connect(addr, "root", "", "")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	// The mariadb CLI, which wants TLS first, reports the error as 2002
	// with the server's code and message.
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "1040 - Too many connections: heapproxy serves at most 2 (max_connections)") {
		t.Fatalf("third connection, mariadb CLI: %v %s", err, out)
	}
	err = openDB(t, addr, "root", "", "").Ping()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1040 || string(me.SQLState[:]) != "08004" {
		t.Fatalf("third connection, go-sql-driver: %v", err)
	}
	held[0].Close()
	// The session ends when heapproxy reads the client's COM_QUIT.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := client.Connect(addr, "root", "", "")
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after one session closed: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	held[1].Close()
}

// A login packet cut inside a length-encoded field (the auth data here) is
// refused, and heapproxy goes on serving: it once read past the packet's end
// and took the whole process down.
func TestTruncatedLoginPacket(t *testing.T) {
	srv := startProxy(t, Config{})
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	pc := mysqlwire.NewConn(c)
	if _, err := pc.ReadPacket(1 << 16); err != nil { // the greeting
		t.Fatal(err)
	}
	caps := uint32(gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_SECURE_CONNECTION | gomysql.CLIENT_PLUGIN_AUTH |
		gomysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
	login := append(binary.LittleEndian.AppendUint32(nil, caps), make([]byte, 28)...)
	pc.SetSeq(1)
	if err := pc.WritePacket(append(login, "root\x00\xfc"...)); err != nil {
		t.Fatal(err)
	}
	pc.Flush()
	if p, err := pc.ReadPacket(1 << 16); err == nil && (len(p) == 0 || p[0] != 0xff) {
		t.Fatalf("answer to a cut login: %q", p)
	}
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	if err := db.Ping(); err != nil {
		t.Fatalf("after a cut login: %v", err)
	}
}
