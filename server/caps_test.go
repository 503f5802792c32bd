package server

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// A client's CLIENT_MULTI_STATEMENTS reaches an upstream that does not
// advertise it, as it does directly: Doris reads the client's flag.
func TestClientOnlyCapsReachTheUpstream(t *testing.T) {
	got := make(chan uint32, 4)
	addr := (&feLogin{doris: true, logins: got}).serve(t) // refuses the unknown user u
	// PyMySQL sends the flags it is given whatever the server advertises,
	// as MariaDB Connector/C does (go-sql-driver/mysql keeps only the
	// advertised ones).
	login := func(addr string) uint32 {
		host, port, _ := net.SplitHostPort(addr)
		script := fmt.Sprintf(`import pymysql
from pymysql.constants import CLIENT
try:
    pymysql.connect(host=%q, port=%s, user="u", password="p", client_flag=CLIENT.MULTI_STATEMENTS, connect_timeout=5)
except pymysql.err.OperationalError as e:
    print(e.args[0])
`, host, port)
		if out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "1045" {
			t.Fatalf("PyMySQL login: %v %s", err, out)
		}
		select {
		case c := <-got:
			return c
		case <-time.After(10 * time.Second):
			t.Fatal("no login reached the Doris stand-in")
		}
		return 0
	}
	direct := login(addr)
	srv := startProxy(t, Config{Upstream: addr})
	proxied := login(srv.Addr().String())
	for _, f := range []struct {
		name string
		bit  uint32
	}{{"CLIENT_MULTI_STATEMENTS", gomysql.CLIENT_MULTI_STATEMENTS}, {"CLIENT_MULTI_RESULTS", gomysql.CLIENT_MULTI_RESULTS}} {
		if direct&f.bit == 0 {
			t.Errorf("PyMySQL with CLIENT.MULTI_STATEMENTS did not send %s directly", f.name)
		}
		if proxied&f.bit != direct&f.bit {
			t.Errorf("%s: direct %v, through heapproxy %v", f.name, direct&f.bit != 0, proxied&f.bit != 0)
		}
	}
}
