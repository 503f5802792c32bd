package backends

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// showBackendsTime is the FE's layout for LastStartTime/LastHeartbeat
// (TimeUtils.longToTimeString).
const showBackendsTime = "2006-01-02 15:04:05"

// NodesFromShowBackends reads the result of SHOW BACKENDS or SHOW COMPUTE
// NODES from a StarRocks or Doris FE. Columns are found by name, so the
// layouts of all versions work: StarRocks (BackendId|ComputeNodeId, IP,
// HeartbeatPort, BePort, HttpPort, BrpcPort, LastStartTime, LastHeartbeat,
// Alive, ...), Doris (BackendId, Host, HeartbeatPort, BePort, HttpPort,
// BrpcPort, ...), and the old ones with a leading Cluster column. The nodes
// get the given kind and Source "discovered".
func NodesFromShowBackends(kind Kind, columns []string, rows [][]string) ([]Node, error) {
	idx := make(map[string]int, len(columns))
	for i, c := range columns {
		key := strings.ToLower(strings.TrimSpace(c))
		if _, dup := idx[key]; !dup {
			idx[key] = i
		}
	}
	col := func(names ...string) int {
		for _, name := range names {
			if i, ok := idx[strings.ToLower(name)]; ok {
				return i
			}
		}
		return -1
	}
	idCol := col("BackendId", "ComputeNodeId")
	hostCol := col("IP", "Host", "HostName")
	httpCol := col("HttpPort")
	for name, i := range map[string]int{"BackendId or ComputeNodeId": idCol, "IP or Host": hostCol, "HttpPort": httpCol} {
		if i < 0 {
			return nil, fmt.Errorf("show backends: no %s column in %q", name, columns)
		}
	}
	hbCol, beCol, brpcCol := col("HeartbeatPort"), col("BePort"), col("BrpcPort")
	aliveCol, lastCol, kindCol := col("Alive"), col("LastHeartbeat"), col("Kind")

	nodes := make([]Node, 0, len(rows))
	for r, row := range rows {
		cell := func(i int) string {
			if i < 0 || i >= len(row) {
				return ""
			}
			return strings.TrimSpace(row[i])
		}
		id, err := strconv.ParseInt(cell(idCol), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("show backends row %d: %s %q: %w", r+1, columns[idCol], cell(idCol), err)
		}
		n := Node{ID: id, Kind: kind, Host: cell(hostCol), Source: SourceDiscovered}
		if n.Host == "" {
			return nil, fmt.Errorf("show backends row %d: empty %s", r+1, columns[hostCol])
		}
		for _, p := range []struct {
			col int
			dst *int
		}{{httpCol, &n.HTTPPort}, {hbCol, &n.HeartbeatPort}, {beCol, &n.BePort}, {brpcCol, &n.BrpcPort}} {
			v := cell(p.col)
			if v == "" || p.col < 0 {
				continue
			}
			port, err := strconv.Atoi(v)
			if err != nil || port < 0 || port > 65535 {
				return nil, fmt.Errorf("show backends row %d: %s %q is not a port", r+1, columns[p.col], v)
			}
			*p.dst = port
		}
		if n.HTTPPort == 0 {
			// Nothing to contact over HTTP: a heapproxy's own built-in node
			// (another heapproxy acting as the FE), or a node without one.
			continue
		}
		if k, err := ParseKind(cell(kindCol)); err == nil && k != Self {
			n.Kind = k // a heapproxy upstream says what each node is
		}
		n.Alive = strings.EqualFold(cell(aliveCol), "true")
		if t, err := time.ParseInLocation(showBackendsTime, cell(lastCol), time.Local); err == nil {
			n.LastSeen = t
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// showBackendsColumns are the columns heapproxy answers SHOW BACKENDS with
// when the upstream cannot: StarRocks' leading columns, then what heapproxy
// knows of each node.
var showBackendsColumns = []string{"BackendId", "IP", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort",
	"LastStartTime", "LastHeartbeat", "Alive", "Kind", "Source", "Binary"}

// ShowBackendsResult renders nodes as a SHOW BACKENDS result set, one row per
// node in the given order; NodesFromShowBackends reads it back.
func ShowBackendsResult(nodes []Node) (columns []string, rows [][]string) {
	columns = append([]string(nil), showBackendsColumns...)
	rows = make([][]string, 0, len(nodes))
	for _, n := range nodes {
		last := "NULL"
		if !n.LastSeen.IsZero() {
			last = n.LastSeen.In(time.Local).Format(showBackendsTime)
		}
		rows = append(rows, []string{
			strconv.FormatInt(n.ID, 10), n.Host, strconv.Itoa(n.HeartbeatPort), strconv.Itoa(n.BePort),
			strconv.Itoa(n.HTTPPort), strconv.Itoa(n.BrpcPort), "NULL", last, strconv.FormatBool(n.Alive),
			string(n.Kind), n.Source, n.Binary,
		})
	}
	return columns, rows
}
