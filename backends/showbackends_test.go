package backends

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Column lists as the FEs define them (see README.md for the sources).
var (
	// StarRocks fe/.../common/proc/BackendsProcDir.java (shared-nothing).
	starRocksBackendColumns = strings.Split("BackendId,IP,HeartbeatPort,BePort,HttpPort,BrpcPort,LastStartTime,"+
		"LastHeartbeat,Alive,SystemDecommissioned,ClusterDecommissioned,TabletNum,DataUsedCapacity,AvailCapacity,"+
		"TotalCapacity,UsedPct,MaxDiskUsedPct,ErrMsg,Version,Status,DataTotalCapacity,DataUsedPct,CpuCores,"+
		"NumRunningQueries,MemUsedPct,CpuUsedPct,DataCacheMetrics,location", ",")
	// StarRocks fe/.../common/proc/ComputeNodeProcDir.java.
	starRocksComputeNodeColumns = strings.Split("ComputeNodeId,IP,HeartbeatPort,BePort,HttpPort,BrpcPort,"+
		"LastStartTime,LastHeartbeat,Alive,SystemDecommissioned,ClusterDecommissioned,ErrMsg,Version,CpuCores,"+
		"MemLimit,NumRunningQueries,MemUsedPct,CpuUsedPct,DataCacheMetrics,HasStoragePath,StatusCode", ",")
	// Doris fe/.../common/proc/BackendsProcDir.java (2.x).
	dorisBackendColumns = strings.Split("BackendId,Host,HeartbeatPort,BePort,HttpPort,BrpcPort,ArrowFlightSqlPort,"+
		"LastStartTime,LastHeartbeat,Alive,SystemDecommissioned,TabletNum,DataUsedCapacity,TrashUsedCapcacity,"+
		"AvailCapacity,TotalCapacity,UsedPct,MaxDiskUsedPct,RemoteUsedCapacity,Tag,ErrMsg,Version,Status,"+
		"HeartbeatFailureCounter,NodeRole", ",")
	// Palo/early Doris: a leading Cluster column, IP and HostName, no BrpcPort.
	paloBackendColumns = strings.Split("Cluster,BackendId,IP,HostName,HeartbeatPort,BePort,HttpPort,LastStartTime,"+
		"LastHeartbeat,Alive,SystemDecommissioned,ClusterDecommissioned,TabletNum", ",")
)

// row fills a row for columns from name=value pairs; other cells get "x".
func row(columns []string, kv map[string]string) []string {
	out := make([]string, len(columns))
	for i, c := range columns {
		v, ok := kv[c]
		if !ok {
			v = "x"
		}
		out[i] = v
	}
	return out
}

func starRocksRow(id, host string, httpPort int, alive string) []string {
	return row(starRocksBackendColumns, map[string]string{
		"BackendId": id, "IP": host, "HeartbeatPort": "9050", "BePort": "9060",
		"HttpPort": strconv.Itoa(httpPort), "BrpcPort": "8060", "Alive": alive,
		"LastHeartbeat": "2024-05-06 07:08:09",
	})
}

func TestNodesFromShowBackends(t *testing.T) {
	ports := map[string]string{"HeartbeatPort": "9050", "BePort": "9060", "HttpPort": "8040", "BrpcPort": "8060",
		"Alive": "true", "LastHeartbeat": "2024-05-06 07:08:09"}
	with := func(kv map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range ports {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	seen := time.Date(2024, 5, 6, 7, 8, 9, 0, time.Local)
	tests := []struct {
		name    string
		kind    Kind
		columns []string
		rows    [][]string
		want    []Node
		wantErr string
		fatal   bool // no nodes at all, not bad rows
	}{
		{
			name: "StarRocks backends", kind: StarRocks, columns: starRocksBackendColumns,
			rows: [][]string{
				row(starRocksBackendColumns, with(map[string]string{"BackendId": "10001", "IP": "10.0.0.1"})),
				row(starRocksBackendColumns, with(map[string]string{"BackendId": "10002", "IP": "10.0.0.2", "Alive": "false", "LastHeartbeat": "NULL"})),
			},
			want: []Node{
				{ID: 10001, Kind: StarRocks, Host: "10.0.0.1", HTTPPort: 8040, HeartbeatPort: 9050, BePort: 9060, BrpcPort: 8060, Source: SourceDiscovered, Alive: true, LastSeen: seen},
				{ID: 10002, Kind: StarRocks, Host: "10.0.0.2", HTTPPort: 8040, HeartbeatPort: 9050, BePort: 9060, BrpcPort: 8060, Source: SourceDiscovered},
			},
		},
		{
			name: "StarRocks compute nodes", kind: StarRocks, columns: starRocksComputeNodeColumns,
			rows: [][]string{row(starRocksComputeNodeColumns, with(map[string]string{"ComputeNodeId": "20001", "IP": "cn-1", "HttpPort": "8041"}))},
			want: []Node{{ID: 20001, Kind: StarRocks, Host: "cn-1", HTTPPort: 8041, HeartbeatPort: 9050, BePort: 9060, BrpcPort: 8060, Source: SourceDiscovered, Alive: true, LastSeen: seen}},
		},
		{
			name: "Doris backends", kind: Doris, columns: dorisBackendColumns,
			rows: [][]string{row(dorisBackendColumns, with(map[string]string{"BackendId": "11003", "Host": "be-3.local"}))},
			want: []Node{{ID: 11003, Kind: Doris, Host: "be-3.local", HTTPPort: 8040, HeartbeatPort: 9050, BePort: 9060, BrpcPort: 8060, Source: SourceDiscovered, Alive: true, LastSeen: seen}},
		},
		{
			name: "Palo layout", kind: Doris, columns: paloBackendColumns,
			rows: [][]string{row(paloBackendColumns, with(map[string]string{"BackendId": "10001", "IP": "10.0.0.9", "HostName": "palo-be"}))},
			want: []Node{{ID: 10001, Kind: Doris, Host: "10.0.0.9", HTTPPort: 8040, HeartbeatPort: 9050, BePort: 9060, Source: SourceDiscovered, Alive: true, LastSeen: seen}},
		},
		{name: "no rows", kind: StarRocks, columns: starRocksBackendColumns, want: []Node{}},
		{name: "no HttpPort column", kind: StarRocks, columns: []string{"BackendId", "IP"}, wantErr: "no HttpPort column", fatal: true},
		{name: "no id column", kind: StarRocks, columns: []string{"Id", "IP", "HttpPort"}, wantErr: "no BackendId or ComputeNodeId column", fatal: true},
		{
			name: "bad id", kind: StarRocks, columns: starRocksBackendColumns,
			rows:    [][]string{row(starRocksBackendColumns, with(map[string]string{"BackendId": "ten", "IP": "h"}))},
			wantErr: `show backends row 1 (id "ten", host "h"): BackendId is not a number`,
		},
		{
			name: "bad port", kind: StarRocks, columns: starRocksBackendColumns,
			rows:    [][]string{row(starRocksBackendColumns, with(map[string]string{"BackendId": "1", "IP": "h", "HttpPort": "80400"}))},
			wantErr: `show backends row 1 (id "1", host "h"): bad node address: HttpPort "80400" is not a port`,
		},
		{
			// A row without an HttpPort (another heapproxy's built-in node)
			// has nothing to contact: skipped, not an error for the rest.
			name: "short row skipped", kind: StarRocks, columns: starRocksBackendColumns,
			rows: [][]string{{"10001", "h"}},
			want: []Node{},
		},
		{
			name: "heapproxy upstream names each node's kind", kind: StarRocks,
			columns: []string{"BackendId", "IP", "HttpPort", "Kind"},
			rows:    [][]string{{"1", "localhost", "0", "heapproxy"}, {"7", "h7", "4000", "greptimedb"}},
			want:    []Node{{ID: 7, Kind: GreptimeDB, Host: "h7", HTTPPort: 4000, Source: SourceDiscovered}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := NodesFromShowBackends(tc.kind, tc.columns, tc.rows)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				if errors.As(err, new(*RowError)) == tc.fatal {
					t.Errorf("err %v: a *RowError is %v, want %v", err, !tc.fatal, !tc.fatal)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d nodes, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if !got[i].LastSeen.Equal(tc.want[i].LastSeen) {
					t.Errorf("node %d LastSeen %v, want %v", i, got[i].LastSeen, tc.want[i].LastSeen)
				}
				got[i].LastSeen, tc.want[i].LastSeen = time.Time{}, time.Time{}
				if got[i] != tc.want[i] {
					t.Errorf("node %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestShowBackendsRoundTrip: what heapproxy answers for SHOW BACKENDS reads
// back into the same nodes.
func TestShowBackendsRoundTrip(t *testing.T) {
	seen := time.Date(2026, 11, 22, 19, 0, 0, 0, time.Local)
	nodes := []Node{
		{ID: 10001, Kind: StarRocks, Host: "10.0.0.1", HTTPPort: 8040, HeartbeatPort: 9050, BePort: 9060, BrpcPort: 8060, Alive: true, LastSeen: seen},
		{ID: 10002, Kind: StarRocks, Host: "be-2", HTTPPort: 8041},
	}
	cols, rows := ShowBackendsResult(nodes)
	if cols[0] != "BackendId" || cols[1] != "IP" || cols[4] != "HttpPort" || cols[8] != "Alive" {
		t.Fatalf("columns %v", cols)
	}
	back, err := NodesFromShowBackends(StarRocks, cols, rows)
	if err != nil {
		t.Fatal(err)
	}
	for i := range nodes {
		want := nodes[i]
		want.Source = SourceDiscovered
		if !back[i].LastSeen.Equal(want.LastSeen) {
			t.Errorf("node %d LastSeen %v, want %v", i, back[i].LastSeen, want.LastSeen)
		}
		back[i].LastSeen, want.LastSeen = time.Time{}, time.Time{}
		if back[i] != want {
			t.Errorf("node %d:\n got %+v\nwant %+v", i, back[i], want)
		}
	}
	if rows[1][7] != "NULL" || rows[0][9] != "starrocks" {
		t.Errorf("rows %v", rows)
	}
}

// TestHostileShowBackends: rows an FE (broken or hostile) may send. Bad rows
// are reported naming the row and left out; the good rows still become
// nodes; no URL ever leaves the row's host and port.
func TestHostileShowBackends(t *testing.T) {
	cols := []string{"BackendId", "IP", "HttpPort", "Alive"}
	cases := []struct {
		host, port string
		allowLL    bool
		wantErr    string // "" when the row is good
		wantURL    string
	}{
		{host: "10.0.0.5", port: "8040", wantURL: "http://10.0.0.5:8040"},
		{host: "be-1.example.com", port: "8040", wantURL: "http://be-1.example.com:8040"},
		{host: "::1", port: "8040", wantURL: "http://[::1]:8040"},
		{host: "::ffff:127.0.0.1", port: "8040", wantURL: "http://[::ffff:127.0.0.1]:8040"},
		{host: "::ffff:127.0.0.1]:9/x?[", port: "8040", wantErr: "is not an IP address"},
		{host: "127.0.0.1/x?", port: "8040", wantErr: "not an IP address or a DNS name (character '/')"},
		{host: "127.0.0.1:9", port: "8040", wantErr: "is not an IP address"},
		{host: "user@evil", port: "8040", wantErr: "character '@'"},
		{host: "[::1]", port: "8040", wantErr: "is not an IP address"},
		{host: "fe80::1%eth0", port: "8040", wantErr: "is not an IP address"},
		{host: "127.1", port: "8040", wantErr: "its last label is numeric"},
		{host: "169.254.169.254", port: "80", wantErr: "is the cloud instance metadata address; set discovery.allow_link_local"},
		{host: "169.254.169.254", port: "80", allowLL: true, wantURL: "http://169.254.169.254:80"},
		{host: "::ffff:169.254.169.254", port: "80", wantErr: "metadata address"},
		{host: "169.254.10.1", port: "8040", wantErr: "is a link-local address"},
		{host: "fe80::1", port: "8040", wantErr: "is a link-local address"},
		{host: "fd00:ec2::254", port: "80", wantErr: "metadata address"},
		{host: "0.0.0.0", port: "8040", wantErr: "unspecified address"},
		{host: "10.0.0.6", port: "-1", wantErr: `HttpPort "-1" is not a port`},
		{host: "10.0.0.6", port: "8040/x", wantErr: `HttpPort "8040/x" is not a port`},
		{host: "", port: "8040", wantErr: "empty host"},
	}
	for _, c := range cases {
		t.Run(c.host+"_"+c.port, func(t *testing.T) {
			rows := [][]string{{"1", "10.0.0.1", "8040", "true"}, {"2", c.host, c.port, "true"}, {"3", "be-3", "8040", "false"}}
			nodes, err := ParseShowBackends(StarRocks, cols, rows, c.allowLL)
			if c.wantErr == "" {
				if err != nil || len(nodes) != 3 {
					t.Fatalf("%d nodes, %v", len(nodes), err)
				}
				if got := nodes[1].BaseURL(); got != c.wantURL {
					t.Fatalf("BaseURL %s, want %s", got, c.wantURL)
				}
				return
			}
			var re *RowError
			if !errors.As(err, &re) || re.Row != 2 || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("err = %v, want row 2 %q", err, c.wantErr)
			}
			if !strings.Contains(err.Error(), "show backends row 2 (id \"2\", host ") {
				t.Errorf("error does not name the row: %v", err)
			}
			if len(nodes) != 2 || nodes[0].ID != 1 || nodes[1].ID != 3 {
				t.Fatalf("good rows lost: %+v", nodes)
			}
		})
	}
}

// rowsDiscoverer answers like an FE whose rows went through
// ParseShowBackends: the good nodes with the bad rows' errors.
type rowsDiscoverer struct {
	cols []string
	rows [][]string
}

func (d rowsDiscoverer) Discover(context.Context) ([]Node, error) {
	return ParseShowBackends(StarRocks, d.cols, d.rows, true)
}

// TestRefreshKeepsGoodRows: a registry registers the good rows of a partly
// bad discovery, re-checks addresses itself (here the Discoverer allowed
// link-local, the registry does not), and reports the rest.
func TestRefreshKeepsGoodRows(t *testing.T) {
	d := rowsDiscoverer{cols: []string{"BackendId", "IP", "HttpPort"},
		rows: [][]string{{"1", "10.0.0.1", "8040"}, {"2", "127.0.0.1/x?", "8040"}, {"3", "169.254.169.254", "80"}, {"4", "be-4", "8040"}}}
	reg := NewRegistry(Options{Discoverer: d})
	err := reg.Refresh(context.Background())
	t.Log(err)
	for _, want := range []string{"the other nodes were registered", `show backends row 2 (id "2", host "127.0.0.1/x?")`,
		"discovered node 3 left out", "discovery.allow_link_local"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Refresh error %v lacks %q", err, want)
		}
	}
	var ids []int64
	for _, n := range reg.List() {
		ids = append(ids, n.ID)
	}
	if len(ids) != 2 || ids[0] != 1 || ids[1] != 4 {
		t.Fatalf("registered %v, want [1 4]", ids)
	}
	allow := NewRegistry(Options{Discoverer: d, AllowLinkLocal: true})
	_ = allow.Refresh(context.Background())
	if _, ok := allow.lookup(3); !ok {
		t.Error("AllowLinkLocal did not register the link-local node")
	}
}

// TestNoContactBeyondTheRow: a node whose address would smuggle a port or
// path is never contacted, and a link-local one is refused at connect time
// even when it comes in by name.
func TestNoContactBeyondTheRow(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		node Node
		want string
	}{
		{Node{ID: 1, Kind: Go, Host: "::ffff:127.0.0.1]:1/x?[", HTTPPort: 8040}, "is not an IP address"},
		{Node{ID: 2, Kind: Go, Host: "127.0.0.1/x?", HTTPPort: 8040}, "character '/'"},
		{Node{ID: 3, Kind: Go, Host: "169.254.169.254", HTTPPort: 80}, "metadata address"},
		{Node{ID: 4, Kind: Go, Host: "10.0.0.1", HTTPPort: 0}, "port 0 is not 1-65535"},
	} {
		reg := NewRegistry(Options{Timeout: 2 * time.Second})
		reg.Add(c.node)
		_, err := reg.Dump(ctx, c.node)
		if !errors.Is(err, ErrBadAddress) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("node %q:%d: %v, want %q", c.node.Host, c.node.HTTPPort, err, c.want)
		}
	}
	// At connect time: the dialer sees the resolved address.
	if err := dialControl(false)("tcp", "169.254.169.254:80", nil); !errors.Is(err, ErrBadAddress) {
		t.Errorf("dial control let the metadata address through: %v", err)
	}
	if err := dialControl(false)("tcp", "[fe80::1]:80", nil); !errors.Is(err, ErrBadAddress) {
		t.Errorf("dial control let a link-local address through: %v", err)
	}
	if err := dialControl(false)("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("dial control refused loopback: %v", err)
	}
}
