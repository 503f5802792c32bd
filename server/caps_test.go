package server

import (
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// capsRecorder greets as a Doris FE does (the capabilities
// MysqlCapability.DEFAULT_CAPABILITY of Doris 2.0 and later advertise: no
// CLIENT_MULTI_STATEMENTS), records the flags of the login that answers,
// and refuses it.
func capsRecorder(t *testing.T) (addr string, got <-chan uint32) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	ch := make(chan uint32, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				w := mysqlwire.NewConn(c)
				g := &mysqlwire.Greeting{Version: "5.7.99", ConnID: 7, Salt: []byte("abcdefghijklmnopqrst"), Charset: 33,
					Caps: gomysql.CLIENT_PROTOCOL_41 | gomysql.CLIENT_CONNECT_WITH_DB | gomysql.CLIENT_SECURE_CONNECTION |
						gomysql.CLIENT_PLUGIN_AUTH | gomysql.CLIENT_LONG_FLAG | gomysql.CLIENT_LOCAL_FILES,
					Plugin: nativePassword}
				if w.WritePacket(g.Encode()) != nil || w.Flush() != nil {
					return
				}
				p, err := w.ReadPacket(1 << 20)
				if err != nil {
					return
				}
				r, err := mysqlwire.ParseHandshakeResponse(p)
				if err != nil {
					return
				}
				ch <- r.Caps
				w.WritePacket(mysqlwire.ErrPacket(&gomysql.MyError{Code: 1045, State: "28000", Message: "recorded"}))
				w.Flush()
			}()
		}
	}()
	return ln.Addr().String(), ch
}

// A client's CLIENT_MULTI_STATEMENTS reaches an upstream that does not
// advertise it, as it does directly: Doris reads the client's flag.
func TestClientOnlyCapsReachTheUpstream(t *testing.T) {
	addr, got := capsRecorder(t)
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
			t.Fatal("no login reached the recorder")
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
