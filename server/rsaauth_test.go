package server

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	gmserver "github.com/go-mysql-org/go-mysql/server"
	"github.com/go-sql-driver/mysql"
)

// rsaUpstream is an upstream whose accounts use an RSA password plugin
// (caching_sha2_password or sha256_password); the first is
// MySQL 8's default plugin. No MySQL 8 can be installed in CI (Debian 12
// ships none; CI reaches only Debian's and Go's package mirrors), so it is
// go-mysql's server (v1.16.0), which implements the plugin as MySQL's
// sql/auth/sha2_password.cc does (mysql/mysql-server 9cb1b994, 8.0): fast
// auth from a cache of earlier logins; otherwise "perform full
// authentication", after which the password comes in clear over TLS, or
// RSA-encrypted (OAEP) over a plain connection, the client asking for the
// server's public key with 0x02. Like MySQL it decides by its own side of
// the connection, TLS or not.
type rsaUpstream struct {
	user, password string
	addr           string           // the listener's, as the cache keys it
	srv            *gmserver.Server // one cache of fast-auth entries
	fe             fakeFE           // answers CURRENT_USER()
	// conns hold every byte heapproxy sent, per connection.
	mu    sync.Mutex
	conns []*recordingConn
}

func newRSAUpstream(t *testing.T, plugin string) (*rsaUpstream, string) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// It offers TLS, as MySQL 8 does by default, whether heapproxy uses
	// it (upstream_tls) or not (go-mysql's server also refuses
	// sha256_password's key request without it).
	cert, err := tls.LoadX509KeyPair(env.certFile, env.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert}}
	u := &rsaUpstream{user: "sha2u", password: "sha2-secret",
		srv: gmserver.NewServer("8.0.36", gomysql.DEFAULT_COLLATION_ID, plugin, key, conf)}
	u.fe.currentUser = "sha2u@%"
	u.addr = serveMySQL(t, func(c net.Conn) (*gmserver.Conn, error) {
		rec := &recordingConn{Conn: c}
		u.mu.Lock()
		u.conns = append(u.conns, rec)
		u.mu.Unlock()
		users := gmserver.NewInMemoryAuthenticationHandler(plugin)
		if err := users.AddUser(u.user, u.password); err != nil {
			return nil, err
		}
		return u.srv.NewCustomizedConn(rec, users, &u.fe)
	})
	return u, u.addr
}

// forget empties the upstream's cache of fast-auth entries, as a restart
// or FLUSH PRIVILEGES does on MySQL: the next login authenticates fully.
func (u *rsaUpstream) forget() { u.srv.InvalidateCache(u.user, u.addr) }

// sawCleartext says whether the password crossed a plain connection in
// clear: heapproxy must encrypt it there as a client would.
func (u *rsaUpstream) sawCleartext() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, c := range u.conns {
		if bytes.Contains(c.bytes(), []byte(u.password)) {
			return true
		}
	}
	return false
}

// keysSent counts the connections on which the upstream sent its public
// key: the logins that took the RSA path over a plain connection.
func (u *rsaUpstream) keysSent() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, c := range u.conns {
		if c.wrote.Load() {
			n++
		}
	}
	return n
}

// recordingConn keeps what it reads (TLS records stay ciphertext) and
// notes a public key written in clear.
type recordingConn struct {
	net.Conn
	mu    sync.Mutex
	buf   bytes.Buffer
	wrote atomic.Bool // a PEM public key, in clear
}

func (r *recordingConn) Write(b []byte) (int, error) {
	if bytes.Contains(b, []byte("-----BEGIN PUBLIC KEY-----")) {
		r.wrote.Store(true)
	}
	return r.Conn.Write(b)
}

func (r *recordingConn) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

func (r *recordingConn) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.mu.Lock()
	r.buf.Write(b[:n])
	r.mu.Unlock()
	return n, err
}

// The RSA password plugins through heapproxy in passthrough, whichever
// side of heapproxy is TLS: caching_sha2_password's full authentication
// and sha256_password's login take the password itself, which the client
// sends by the security of its own connection (clear text over TLS, RSA
// otherwise) and the upstream reads by the security of its own, so where
// they differ heapproxy answers each side as that side expects. The
// password never crosses a plain connection in clear. Each real client
// logs in twice (caching_sha2's second login by the upstream's cache:
// fast authentication) and is refused a wrong password with 1045. Until
// 2026-11-25 a TLS client's password reached a plain upstream in clear and
// failed, and a plain client's failed against upstream_tls.
func TestRSAPasswordPluginsAcrossTLS(t *testing.T) {
	for _, plugin := range []string{cachingSHA2Password, sha256Password} {
		for _, c := range []struct {
			name             string
			clientTLS, upTLS bool
		}{
			{"plain both sides", false, false},
			{"TLS both sides", true, true},
			{"client TLS, upstream plain", true, false},
			{"client plain, upstream TLS", false, true},
		} {
			t.Run(plugin+", "+c.name, func(t *testing.T) {
				testRSAPasswordPlugin(t, plugin, c.clientTLS, c.upTLS)
			})
		}
	}
}

func testRSAPasswordPlugin(t *testing.T, plugin string, clientTLS, upTLS bool) {
	up, addr := newRSAUpstream(t, plugin)
	cfg := Config{Upstream: addr, TLS: TLSConfig{Cert: env.certFile, Key: env.keyFile}}
	if upTLS {
		cfg.UpstreamTLS = UpstreamTLSConfig{Enabled: true, InsecureSkipVerify: true}
	}
	srv := startProxy(t, cfg)
	h, p := hostPort(srv)

	params, cliTLS, pyTLS := "tls=false", "--skip-ssl", "None"
	if clientTLS {
		params, cliTLS, pyTLS = "tls=skip-verify", "--ssl", "ctx"
	}
	for _, login := range []string{"first login", "second login"} {
		db := openDB(t, srv.Addr().String(), up.user, up.password, params)
		var u string
		if err := db.QueryRow("SELECT CURRENT_USER()").Scan(&u); err != nil || u != "sha2u@%" {
			t.Fatalf("go-sql-driver, %s: %v %q", login, err, u)
		}
		db.Close()
	}
	bad := openDB(t, srv.Addr().String(), up.user, "wrong", params)
	var me *mysql.MySQLError
	if err := bad.Ping(); !errors.As(err, &me) || me.Number != 1045 {
		t.Fatalf("go-sql-driver, wrong password: %v, want 1045", err)
	}

	// The mariadb CLI (libmariadb's plugins ask for the key themselves
	// on a plain connection). Its sha256_password client is refused by
	// go-mysql's server even directly over TLS (1045), so that plugin is
	// left to the other two clients here.
	clients := 3
	if plugin == sha256Password {
		clients = 2
	} else {
		testCLILogins(t, up, h, p, cliTLS)
	}

	// PyMySQL (with python3-cryptography for RSA).
	up.forget()
	script := fmt.Sprintf(`import pymysql, ssl
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
for pw in (%[3]q, %[3]q, "wrong"):
    try:
        c = pymysql.connect(host=%[1]q, port=%[2]s, user="sha2u", password=pw, ssl=%[4]s, autocommit=None)
        cur = c.cursor(); cur.execute("SELECT CURRENT_USER()"); print(cur.fetchone()[0]); c.close()
    except pymysql.err.OperationalError as e:
        print("refused", e.args[0])
`, h, p, up.password, pyTLS)
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if want := "sha2u@%\nsha2u@%\nrefused 1045\n"; err != nil || string(out) != want {
		t.Fatalf("PyMySQL: %v\n%s\nwant %q", err, out, want)
	}

	if !upTLS {
		if up.sawCleartext() {
			t.Fatal("the password crossed the plain connection to the upstream in clear")
		}
		// Per client: caching_sha2 authenticates fully once (then from
		// its cache) and for the wrong password; sha256_password every
		// time.
		want := clients * 2
		if plugin == sha256Password {
			want = clients * 3
		}
		if n := up.keysSent(); n != want {
			t.Fatalf("%d logins took the RSA path over the plain upstream connection, want %d", n, want)
		}
	}
}

// Under auth: local heapproxy logs in to a caching_sha2_password upstream
// itself, for a user it checked: RSA-encrypted over a plain connection,
// in clear over upstream_tls, then by the upstream's cache.
func TestLocalLoginToCachingSHA2Upstream(t *testing.T) {
	for _, upTLS := range []bool{false, true} {
		t.Run(fmt.Sprintf("upstream TLS %v", upTLS), func(t *testing.T) {
			up, addr := newRSAUpstream(t, cachingSHA2Password)
			cfg := Config{Upstream: addr, Auth: AuthLocal, Users: []User{
				{Name: "bob", Password: "bobpw", UpstreamUser: up.user, UpstreamPassword: up.password}}}
			if upTLS {
				cfg.UpstreamTLS = UpstreamTLSConfig{Enabled: true, InsecureSkipVerify: true}
			}
			srv := startProxy(t, cfg)
			h, p := hostPort(srv)
			for _, login := range []string{"full authentication", "fast authentication"} {
				out, err := cli(t, h, p, "bob", "bobpw", "-N", "-e", "SELECT CURRENT_USER()")
				if err != nil || strings.TrimSpace(out) != "sha2u@%" {
					t.Fatalf("%s: %v\n%s", login, err, out)
				}
			}
			if !upTLS && up.sawCleartext() {
				t.Fatal("heapproxy sent the upstream password in clear over a plain connection")
			}
		})
	}
}

// testCLILogins logs in with the mariadb CLI twice, then with a wrong
// password, from an empty fast-auth cache.
func testCLILogins(t *testing.T, up *rsaUpstream, h, p, cliTLS string) {
	t.Helper()
	up.forget()
	for _, login := range []string{"first login", "second login"} {
		out, err := cli(t, h, p, up.user, up.password, cliTLS, "-N", "-e", "SELECT CURRENT_USER()")
		if err != nil || strings.TrimSpace(out) != "sha2u@%" {
			t.Fatalf("mariadb CLI, %s: %v\n%s", login, err, out)
		}
	}
	if out, err := cli(t, h, p, up.user, "wrong", cliTLS, "-N", "-e", "SELECT 1"); err == nil || !strings.Contains(out, "ERROR 1045 (28000)") {
		t.Fatalf("mariadb CLI, wrong password: %v\n%s", err, out)
	}
}
