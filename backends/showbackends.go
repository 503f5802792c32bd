package backends

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// showBackendsTime is the FE's layout for LastStartTime/LastHeartbeat
// (TimeUtils.longToTimeString).
const showBackendsTime = "2006-01-02 15:04:05"

// RowError is a row of SHOW BACKENDS / SHOW COMPUTE NODES that was left
// out: it names the row (1-based), its id and host cells as the FE sent
// them, and why.
type RowError struct {
	Row  int
	ID   string
	Host string
	Err  error
}

func (e *RowError) Error() string {
	return fmt.Sprintf("show backends row %d (id %s, host %s): %v", e.Row, quoteCell(e.ID), quoteCell(e.Host), e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// quoteCell quotes an FE's cell for a message, cut to 80 bytes.
func quoteCell(s string) string {
	if len(s) > 80 {
		return fmt.Sprintf("%q...", s[:80])
	}
	return fmt.Sprintf("%q", s)
}

// NodesFromShowBackends is ParseShowBackends refusing link-local and
// metadata addresses.
func NodesFromShowBackends(kind Kind, columns []string, rows [][]string) ([]Node, error) {
	return ParseShowBackends(kind, columns, rows, false)
}

// ParseShowBackends reads the result of SHOW BACKENDS or SHOW COMPUTE
// NODES from a StarRocks or Doris FE. Columns are found by name, so the
// layouts of all versions work: StarRocks (BackendId|ComputeNodeId, IP,
// HeartbeatPort, BePort, HttpPort, BrpcPort, LastStartTime, LastHeartbeat,
// Alive, ...), Doris (BackendId, Host, HeartbeatPort, BePort, HttpPort,
// BrpcPort, ...), and the old ones with a leading Cluster column. The nodes
// get the given kind and Source "discovered".
//
// Every row is checked: the id a number, the host an IP address or DNS name
// (CheckHost), the ports 0-65535 and the HTTP port 1-65535 (a row without
// one, 0, is skipped: nothing to contact), and, unless allowLinkLocal, the
// host not a link-local or metadata address (CheckAddr). A bad row is left
// out and reported as a *RowError in the returned error (errors.Join of
// all of them) next to the good rows' nodes: one broken row does not hide
// the others. Only a missing column fails the whole result (nil nodes).
func ParseShowBackends(kind Kind, columns []string, rows [][]string, allowLinkLocal bool) ([]Node, error) {
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
	for _, c := range []struct {
		name string
		i    int
	}{{"BackendId or ComputeNodeId", idCol}, {"IP or Host", hostCol}, {"HttpPort", httpCol}} {
		if c.i < 0 {
			return nil, fmt.Errorf("show backends: no %s column in %q", c.name, columns)
		}
	}
	hbCol, beCol, brpcCol := col("HeartbeatPort"), col("BePort"), col("BrpcPort")
	aliveCol, lastCol, kindCol := col("Alive"), col("LastHeartbeat"), col("Kind")

	nodes := make([]Node, 0, len(rows))
	var bad []error
	for r, row := range rows {
		cell := func(i int) string {
			if i < 0 || i >= len(row) {
				return ""
			}
			return strings.TrimSpace(row[i])
		}
		rowErr := func(err error) {
			bad = append(bad, &RowError{Row: r + 1, ID: cell(idCol), Host: cell(hostCol), Err: err})
		}
		id, err := strconv.ParseInt(cell(idCol), 10, 64)
		if err != nil {
			rowErr(fmt.Errorf("%s is not a number", columns[idCol]))
			continue
		}
		n := Node{ID: id, Kind: kind, Host: cell(hostCol), Source: SourceDiscovered}
		if err := CheckHost(n.Host); err != nil {
			rowErr(fmt.Errorf("%s: %w", columns[hostCol], err))
			continue
		}
		portErr := error(nil)
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
				portErr = fmt.Errorf("%w: %s %s is not a port", ErrBadAddress, columns[p.col], quoteCell(v))
				break
			}
			*p.dst = port
		}
		if portErr != nil {
			rowErr(portErr)
			continue
		}
		if n.HTTPPort == 0 {
			// Nothing to contact over HTTP: a heapproxy's own built-in node
			// (another heapproxy acting as the FE), or a node without one.
			continue
		}
		if err := CheckAddr(n.Host, n.HTTPPort, allowLinkLocal); err != nil {
			rowErr(err)
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
	return nodes, errors.Join(bad...)
}

// showBackendsColumns are the columns heapproxy answers SHOW BACKENDS with
// when the upstream cannot: StarRocks' leading columns, then what heapproxy
// knows of each node.
var showBackendsColumns = []string{"BackendId", "IP", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort",
	"LastStartTime", "LastHeartbeat", "Alive", "Kind", "Source", "Binary", "ErrMsg"}

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
			string(n.Kind), n.Source, n.Binary, n.ErrMsg,
		})
	}
	return columns, rows
}
