package backends

import (
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
		{name: "no HttpPort column", kind: StarRocks, columns: []string{"BackendId", "IP"}, wantErr: "no HttpPort column"},
		{name: "no id column", kind: StarRocks, columns: []string{"Id", "IP", "HttpPort"}, wantErr: "no BackendId or ComputeNodeId column"},
		{
			name: "bad id", kind: StarRocks, columns: starRocksBackendColumns,
			rows:    [][]string{row(starRocksBackendColumns, with(map[string]string{"BackendId": "ten", "IP": "h"}))},
			wantErr: `show backends row 1: BackendId "ten"`,
		},
		{
			name: "bad port", kind: StarRocks, columns: starRocksBackendColumns,
			rows:    [][]string{row(starRocksBackendColumns, with(map[string]string{"BackendId": "1", "IP": "h", "HttpPort": "80400"}))},
			wantErr: `show backends row 1: HttpPort "80400" is not a port`,
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
				return
			}
			if err != nil {
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
