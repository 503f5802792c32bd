package server

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	gmserver "github.com/go-mysql-org/go-mysql/server"

	"github.com/heapproxy/heapproxy/backends"
)

// fakeFE is a MySQL-protocol server (go-mysql's server package) that
// answers SHOW BACKENDS and SHOW COMPUTE NODES with the given rows, as a
// broken or hostile FE could, and CURRENT_USER() as a StarRocks or Doris FE
// writes it (no FE runs here: both are Java builds from Maven Central).
type fakeFE struct {
	cols   []string
	rows   [][]string
	cnCols []string // nil: SHOW COMPUTE NODES fails, as on Doris
	cnRows [][]string
	// currentUser answers SELECT CURRENT_USER(), as the FE writes it.
	currentUser string
	// tls, when set, is offered to clients; tlsLogins counts the TLS
	// handshakes made.
	tls       *tls.Config
	tlsLogins atomic.Int32
	queries   []string
	mu        sync.Mutex
}

func (f *fakeFE) UseDB(string) error { return nil }
func (f *fakeFE) HandleQuery(q string) (*mysql.Result, error) {
	f.mu.Lock()
	f.queries = append(f.queries, q)
	f.mu.Unlock()
	cols, rows := f.cols, f.rows
	switch strings.ToUpper(q) {
	case "SHOW BACKENDS":
	case "SELECT CURRENT_USER()":
		cols, rows = []string{"CURRENT_USER()"}, [][]string{{f.currentUser}}
	case "SHOW COMPUTE NODES":
		if f.cnCols == nil {
			return nil, mysql.NewError(mysql.ER_PARSE_ERROR, "Unknown statement")
		}
		cols, rows = f.cnCols, f.cnRows
	default:
		return nil, mysql.NewError(mysql.ER_UNKNOWN_ERROR, "unexpected "+q)
	}
	// Built by hand: go-mysql's result set pool is shared with the client
	// in this process, and BuildSimpleTextResultset keeps a reused set's
	// old fields.
	rs := &mysql.Resultset{FieldNames: map[string]int{}}
	for i, c := range cols {
		rs.Fields = append(rs.Fields, &mysql.Field{Name: []byte(c), Charset: 33, Type: mysql.MYSQL_TYPE_VAR_STRING})
		rs.FieldNames[c] = i
	}
	for _, r := range rows {
		var data []byte
		for _, c := range r {
			data = append(data, mysql.PutLengthEncodedString([]byte(c))...)
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	return mysql.NewResult(rs), nil
}
func (f *fakeFE) HandleFieldList(string, string) ([]*mysql.Field, error) { return nil, nil }
func (f *fakeFE) HandleStmtPrepare(string) (int, int, any, error)        { return 0, 0, nil, nil }
func (f *fakeFE) HandleStmtExecute(any, string, []any) (*mysql.Result, error) {
	return nil, errors.New("no")
}
func (f *fakeFE) HandleStmtClose(any) error                     { return nil }
func (f *fakeFE) HandleOtherCommand(byte, []byte) error         { return errors.New("no") }
func (f *fakeFE) HandleQueryAttrs(string, map[string]any) error { return nil }

// serve runs the fake FE on a loopback port for user monitor/pw.
func (f *fakeFE) serve(t *testing.T) string {
	t.Helper()
	return serveMySQL(t, func(c net.Conn) (*gmserver.Conn, error) {
		srv := gmserver.NewDefaultServer()
		if f.tls != nil {
			conf := f.tls.Clone()
			conf.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
				f.tlsLogins.Add(1)
				return nil, nil
			}
			srv = gmserver.NewServer("8.0.11", mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, conf)
		}
		return srv.NewConn(c, "monitor", "pw", f)
	})
}

// serveMySQL runs a go-mysql server on a loopback port until the test
// ends; login makes the server side of each connection accepted.
func serveMySQL(t *testing.T, login func(net.Conn) (*gmserver.Conn, error)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(20 * time.Second))
				conn, err := login(c)
				if err != nil {
					t.Logf("server side of a test connection: login: %v", err)
					return
				}
				for !conn.Closed() {
					if err := conn.HandleCommand(); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestFEDiscovererHostileRows: the rows a broken or hostile FE may send are
// each reported naming the row and left out; the good rows become nodes
// (with the discovery HTTP credentials); link-local needs AllowLinkLocal.
func TestFEDiscovererHostileRows(t *testing.T) {
	cols := []string{"BackendId", "IP", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "LastStartTime", "LastHeartbeat", "Alive"}
	good := func(id, host string) []string {
		return []string{id, host, "9050", "9060", "8040", "8060", "NULL", "NULL", "true"}
	}
	bad := func(id, host, port string) []string {
		return []string{id, host, "9050", "9060", port, "8060", "NULL", "NULL", "true"}
	}
	cases := []struct {
		name      string
		row       []string
		allowLL   bool
		wantErr   string // "" for a good row
		wantCount int
	}{
		{"good", good("10002", "10.0.0.2"), false, "", 3},
		{"port and path smuggled in an IPv6 host", bad("10002", "::ffff:127.0.0.1]:9999/x?[", "8040"), false, "is not an IP address", 2},
		{"path in an IPv4 host", bad("10002", "127.0.0.1/x?", "8040"), false, "character '/'", 2},
		{"metadata address", bad("10002", "169.254.169.254", "80"), false, "cloud instance metadata address; set discovery.allow_link_local", 2},
		{"metadata address allowed", bad("10002", "169.254.169.254", "80"), true, "", 3},
		{"unparsable id", bad("ten", "10.0.0.2", "8040"), false, `row 2 (id "ten"`, 2},
		{"port out of range", bad("10002", "10.0.0.2", "80400"), false, `HttpPort "80400" is not a port`, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fe := &fakeFE{cols: cols, rows: [][]string{good("10001", "10.0.0.1"), c.row, good("10003", "be-3.example")},
				cnCols: []string{"ComputeNodeId", "IP", "HttpPort"}, cnRows: [][]string{{"20001", "cn-1", "8040"}, {"20002", "cn-2/x?", "8040"}}}
			d := &FEDiscoverer{Addr: fe.serve(t), User: "monitor", Password: "pw", Kind: backends.StarRocks,
				Timeout: 5 * time.Second, AllowLinkLocal: c.allowLL, HTTPUser: "root", HTTPPassword: "s3cret"}
			nodes, err := d.Discover(context.Background())
			t.Log(err)
			for _, n := range nodes {
				if want := map[int64]string{10001: "10.0.0.1", 10003: "be-3.example", 20001: "cn-1"}[n.ID]; want != "" && n.Host != want {
					t.Errorf("node %d host %q, want %q (the FE's answer was altered)", n.ID, n.Host, want)
				}
			}
			// The compute node with a path in its host is always a bad row.
			if err == nil || !strings.Contains(err.Error(), `SHOW COMPUTE NODES at `) || !strings.Contains(err.Error(), `row 2 (id "20002", host "cn-2/x?")`) {
				t.Fatalf("err %v does not report the bad compute node row", err)
			}
			if c.wantErr != "" && (!strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "SHOW BACKENDS at ")) {
				t.Errorf("err %v lacks %q", err, c.wantErr)
			}
			if c.wantErr == "" && strings.Contains(err.Error(), "SHOW BACKENDS at ") {
				t.Errorf("a good row reported: %v", err)
			}
			var backendsFound int
			for _, n := range nodes {
				if n.HTTPUser != "root" || n.HTTPPassword != "s3cret" {
					t.Errorf("node %d lacks the discovery HTTP credentials", n.ID)
				}
				if n.ID < 20000 {
					backendsFound++
				}
			}
			if backendsFound != c.wantCount || !d.IsCompute(20001) || d.IsCompute(20002) {
				t.Fatalf("nodes %v: %d backends, want %d; compute 20001 %v", nodes, backendsFound, c.wantCount, d.IsCompute(20001))
			}
			// Through a registry: the good nodes are registered, the rest reported.
			reg := backends.NewRegistry(backends.Options{Discoverer: d, AllowLinkLocal: c.allowLL})
			if err := reg.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "the other nodes were registered") {
				t.Errorf("Refresh = %v", err)
			}
			if got := len(reg.List()); got != c.wantCount+1 {
				t.Errorf("registry holds %d nodes, want %d", got, c.wantCount+1)
			}
		})
	}
}

// The discovery account logs in over upstream_tls as sessions do: to an FE
// that offers TLS it uses it, and it refuses one that does not.
func TestFEDiscovererUpstreamTLS(t *testing.T) {
	cert, err := tls.LoadX509KeyPair(env.certFile, env.keyFile)
	if err != nil {
		t.Fatal(err)
	}
	cols := []string{"BackendId", "IP", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "LastStartTime", "LastHeartbeat", "Alive"}
	rows := [][]string{{"10001", "10.0.0.1", "9050", "9060", "8040", "8060", "NULL", "NULL", "true"}}
	withTLS := &fakeFE{cols: cols, rows: rows, tls: &tls.Config{Certificates: []tls.Certificate{cert}}}
	// The StarRocks login stand-in offers no TLS, as an FE without
	// ssl enabled (go-mysql's default server always does).
	plain := &feLogin{native: map[string]string{"monitor": "pw"}}
	upTLS, err := (&Config{UpstreamTLS: UpstreamTLSConfig{Enabled: true, InsecureSkipVerify: true}}).UpstreamClientTLS()
	if err != nil {
		t.Fatal(err)
	}
	d := &FEDiscoverer{Addr: withTLS.serve(t), User: "monitor", Password: "pw", Kind: backends.StarRocks, Timeout: 5 * time.Second, TLS: upTLS}
	if nodes, err := d.Discover(context.Background()); err != nil || len(nodes) != 1 || withTLS.tlsLogins.Load() != 1 {
		t.Errorf("FE offering TLS: %d nodes, %d TLS logins, %v; want 1, 1, nil", len(nodes), withTLS.tlsLogins.Load(), err)
	}
	d.Addr = plain.serve(t)
	if _, err := d.Discover(context.Background()); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("FE without TLS, upstream_tls on: %v, want a refusal naming TLS", err)
	}
}
