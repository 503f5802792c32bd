package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// testEnv is the real MariaDB the server tests run against, started once
// per package run, with a throwaway TLS certificate.
type testEnv struct {
	db       *mariadbtest.Server
	addr     string // 127.0.0.1:port
	socket   string
	certDir  string
	certFile string
	keyFile  string
}

// Set once by TestMain, read-only afterwards.
var (
	env   *testEnv
	nodes *nodetest.Programs
)

func TestMain(m *testing.M) {
	e, err := startMariaDB()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start MariaDB:", err)
		os.Exit(1)
	}
	env = e
	nodes, err = nodetest.Build()
	if err != nil {
		e.stop()
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	nodes.Remove()
	e.stop()
	os.Exit(code)
}

func startMariaDB() (*testEnv, error) {
	dir, err := os.MkdirTemp("", "heapproxy-tls-")
	if err != nil {
		return nil, err
	}
	e := &testEnv{certDir: dir}
	if e.certFile, e.keyFile, err = writeSelfSignedCert(dir, "127.0.0.1"); err != nil {
		e.stop()
		return nil, err
	}
	e.db, err = mariadbtest.Start(mariadbtest.Options{TCP: true, Args: []string{
		"--max-allowed-packet=256M", "--local-infile=1", "--innodb-buffer-pool-size=256M",
		"--ssl-cert=" + e.certFile, "--ssl-key=" + e.keyFile,
		"--plugin-maturity=unknown"}}) // auth_test_plugin is a test plugin
	if err != nil {
		e.stop()
		return nil, err
	}
	e.addr, e.socket = e.db.Addr, e.db.Socket
	// clr logs in with mysql_clear_password, as LDAP and PAM users do:
	// cleartext_plugin_server of auth_test_plugin (Debian's mariadb-test)
	// compares the clear text with its AS string. dlg asks two questions
	// through the dialog plugin (dialog_examples' two_questions), which
	// heapproxy's own logins cannot answer. tlsu must use TLS.
	setup := `
INSTALL SONAME 'auth_ed25519';
CREATE USER app@'%' IDENTIFIED BY 'secret';
CREATE USER app@localhost IDENTIFIED BY 'secret';
GRANT ALL ON *.* TO app@'%';
GRANT ALL ON *.* TO app@localhost;
CREATE USER edu@'%' IDENTIFIED VIA ed25519 USING PASSWORD('edpass');
CREATE USER edu@localhost IDENTIFIED VIA ed25519 USING PASSWORD('edpass');
GRANT ALL ON *.* TO edu@'%';
GRANT ALL ON *.* TO edu@localhost;
INSTALL SONAME 'auth_test_plugin';
CREATE USER clr@'%' IDENTIFIED VIA cleartext_plugin_server AS 'clearpass';
CREATE USER clr@localhost IDENTIFIED VIA cleartext_plugin_server AS 'clearpass';
GRANT SELECT ON *.* TO clr@'%';
GRANT SELECT ON *.* TO clr@localhost;
INSTALL SONAME 'dialog_examples';
CREATE USER dlg@'%' IDENTIFIED VIA two_questions AS 'dlgpw';
CREATE USER dlg@localhost IDENTIFIED VIA two_questions AS 'dlgpw';
CREATE USER tlsu@'%' IDENTIFIED BY 'tlspw' REQUIRE SSL;
CREATE USER tlsu@localhost IDENTIFIED BY 'tlspw' REQUIRE SSL;
CREATE DATABASE t;`
	if out, err := exec.Command("mariadb", "--no-defaults", "-uroot", "-S", e.socket, "-e", setup).CombinedOutput(); err != nil {
		e.stop()
		return nil, fmt.Errorf("setup users: %v\n%s", err, out)
	}
	return e, nil
}

func (e *testEnv) stop() {
	if e.db != nil {
		e.db.Stop()
	}
	os.RemoveAll(e.certDir)
}

// writeSelfSignedCert writes a throwaway certificate for host.
func writeSelfSignedCert(dir, host string) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.ParseIP(host)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", "", err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", "", err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, nil
}

// startProxy runs an in-process heapproxy (embedded default unless
// cfg.Upstream is set) whose registry holds only its own node, id 1.
func startProxy(t testing.TB, cfg Config) *Server {
	t.Helper()
	return startProxyWith(t, cfg, testDeps(t), zap.WarnLevel)
}

// startProxyWith runs an in-process heapproxy until the test ends.
func startProxyWith(t testing.TB, cfg Config, deps Deps, level zapcore.Level) *Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	def := DefaultConfig()
	if cfg.Timeouts == (Timeouts{}) {
		cfg.Timeouts = def.Timeouts
	}
	if cfg.ProfileUsers == nil {
		cfg.ProfileUsers = def.ProfileUsers
	}
	if cfg.ServerVersion == "" {
		cfg.ServerVersion = def.ServerVersion
	}
	var log *zap.Logger
	if tt, ok := t.(*testing.T); ok {
		log = zaptest.NewLogger(tt, zaptest.Level(level))
	} else {
		log = zap.NewNop()
	}
	if cfg.Upstream == "" && deps.SQL == nil {
		// What production runs: the embedded default answers with the
		// heapprof SQL engine over the same store.
		engine, err := sqlview.New(deps.Snapshots.(snapshot.Store))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { engine.Close() })
		deps.SQL = engine
	}
	srv, err := New(cfg, log, deps)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		<-done
	})
	return srv
}

// testDeps is a registry holding heapproxy's own node, id 1, and nodes,
// with a snapshot store in a temporary directory.
func testDeps(t testing.TB, nodes ...backends.Node) Deps {
	reg := backends.NewRegistry(backends.Options{Timeout: 10 * time.Second})
	reg.Add(backends.SelfNode(1))
	reg.Add(nodes...)
	return Deps{Registry: reg, SelfID: 1, Snapshots: testStore(t)}
}

func testStore(t testing.TB) *snapshot.Dir {
	st, err := snapshot.OpenDir(t.TempDir(), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func upstreamProxy(t testing.TB) *Server {
	return startProxy(t, Config{Upstream: env.addr})
}

func hostPort(srv *Server) (string, string) {
	h, p, _ := net.SplitHostPort(srv.Addr().String())
	return h, p
}

// cli runs the real mariadb client against addr and returns its output.
func cli(t *testing.T, host, port, user, password string, extra ...string) (string, error) {
	t.Helper()
	args := append([]string{"--no-defaults", "-h", host, "-P", port, "-u", user, "--password=" + password}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "mariadb", args...).CombinedOutput()
	return string(out), err
}

// openDB opens go-sql-driver/mysql on database t of the upstream.
func openDB(t testing.TB, addr, user, password, params string) *sql.DB {
	t.Helper()
	return openSchema(t, addr, user, password, "t", params)
}

func openSchema(t testing.TB, addr, user, password, schema, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("%s:%s@tcp(%s)/%s?%s", user, password, addr, schema, params)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// rootExec runs statements on the upstream directly as root.
func rootExec(t testing.TB, stmts string) string {
	t.Helper()
	out, err := exec.Command("mariadb", "--no-defaults", "-uroot", "-S", env.socket, "-N", "-B", "-e", stmts).CombinedOutput()
	if err != nil {
		t.Fatalf("direct %q: %v\n%s", stmts, err, out)
	}
	return strings.TrimSpace(string(out))
}
