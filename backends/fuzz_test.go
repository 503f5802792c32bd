package backends

import (
	"bytes"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseDorisDump: any answer is read without panicking, and a graph it
// returns starts at "digraph " and ends with "}\n".
func FuzzParseDorisDump(f *testing.F) {
	f.Add([]byte("Using local file /x.\ndigraph \"a; 1 MB\" {\nN1 -> N2;\n}\n\n-------------------------------------------------------\naddr2line: x\n"))
	f.Add([]byte("Jemalloc heap dump success, dump file path: /tmp/jeheap_dump.1.2.3.heap\n"))
	f.Add([]byte("jemalloc heap dump success, dump file path: \n"))
	f.Add([]byte("digraph \"x\" {\nN1"))
	f.Add([]byte("No nodes to print\n"))
	f.Fuzz(func(t *testing.T, body []byte) {
		a := parseDorisDump(body)
		if a.dot != nil {
			if !bytes.HasPrefix(a.dot, []byte("digraph ")) || !bytes.HasSuffix(a.dot, []byte("}\n")) {
				t.Fatalf("graph %q", a.dot)
			}
			if a.file != "" || a.truncated {
				t.Fatalf("both graph and %+v", a)
			}
		}
		if strings.ContainsAny(a.file, "\n") {
			t.Fatalf("file %q", a.file)
		}
	})
}

// FuzzParseSymbolAnswer: any answer either parses or is ErrBadAnswer.
func FuzzParseSymbolAnswer(f *testing.F) {
	f.Add([]byte("0x55a107bdf9df\tjenode_tablet_schema_alloc\n0x7f964a645305\t__libc_start_main\n"))
	f.Add([]byte("num_symbols: 1\n0x4a2b3c main.gonodeRetainBlocks\n"))
	f.Add([]byte("0xzz\tx\n"))
	f.Add([]byte("0x5621d0c3a1b2 tikv::server::status_server::get_symbol--core::ops::function::FnOnce::call_once\n0x1 ??\n"))
	f.Add([]byte("<html>nope</html>"))
	f.Fuzz(func(t *testing.T, body []byte) {
		names := map[uint64][]string{}
		if err := parseSymbolAnswer(body, true, testBudget(), names); err != nil {
			if !strings.Contains(err.Error(), ErrBadAnswer.Error()) {
				t.Fatalf("error %v is not ErrBadAnswer", err)
			}
			return
		}
		for _, frames := range names {
			if len(frames) == 0 {
				t.Fatal("address with no frames")
			}
			for _, n := range frames {
				if n == "" || n == "??" || strings.TrimSpace(n) != n || len(n) > DefaultMaxSymbolNameBytes {
					t.Fatalf("name %q", n)
				}
			}
		}
	})
}

// FuzzNodesFromShowBackends: any result set (columns in the first line,
// rows after, cells separated by '|') parses or errs, never panics, and
// every node has an HTTP port. Without an error, every row is a node but
// those without an HTTP port (empty or 0: nothing to contact), which are
// skipped by design.
func FuzzNodesFromShowBackends(f *testing.F) {
	f.Add(strings.Join(starRocksBackendColumns, "|") + "\n" + strings.Join(starRocksRow("10001", "10.0.0.1", 8040, "true"), "|"))
	f.Add(strings.Join(dorisBackendColumns, "|") + "\n11003|be-3|9050|9060|8040|8060")
	f.Add("ComputeNodeId|IP|HttpPort\n1|h|0\n2||8040\nx|h|1")
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		cols := strings.Split(lines[0], "|")
		var rows [][]string
		for _, l := range lines[1:] {
			rows = append(rows, strings.Split(l, "|"))
		}
		nodes, err := NodesFromShowBackends(StarRocks, cols, rows)
		if err != nil {
			return
		}
		httpCol := slices.IndexFunc(cols, func(c string) bool { return strings.ToLower(strings.TrimSpace(c)) == "httpport" })
		noPort := 0
		for _, r := range rows {
			v := ""
			if httpCol < len(r) {
				v = strings.TrimSpace(r[httpCol])
			}
			if p, err := strconv.Atoi(v); v == "" || err == nil && p == 0 {
				noPort++
			}
		}
		if len(nodes) != len(rows)-noPort {
			t.Fatalf("%d nodes from %d rows, %d of them without an HTTP port", len(nodes), len(rows), noPort)
		}
		for _, n := range nodes {
			if n.HTTPPort <= 0 || n.HTTPPort > 65535 || n.Host == "" || n.Source != SourceDiscovered {
				t.Fatalf("node %+v", n)
			}
		}
	})
}

// FuzzCheckAddr: a host and port CheckAddr accepts always make a URL whose
// host and port are exactly those, with no path, query, user or fragment,
// and never a link-local or metadata IP; CheckHost never accepts what a
// URL parser would read as more than a host.
func FuzzCheckAddr(f *testing.F) {
	for _, h := range []string{"10.0.0.1", "be-1.example.com", "::1", "::ffff:127.0.0.1]:9/x?[", "127.0.0.1/x?",
		"169.254.169.254", "fe80::1%eth0", "[::1]", "127.1", "0x7f.1", "a..b", "user@h", "h#f", "0.0.0.0",
		"::ffff:169.254.169.254", "fd00:ec2::254", "xn--bcher-kva.example", "h\r\nX: y", "-h", "h_1.local."} {
		f.Add(h, 8040)
	}
	f.Add("h", 0)
	f.Add("h", 65536)
	f.Fuzz(func(t *testing.T, host string, port int) {
		if err := CheckAddr(host, port, false); err != nil {
			if !errors.Is(err, ErrBadAddress) {
				t.Fatalf("error %v is not ErrBadAddress", err)
			}
			return
		}
		n := Node{Host: host, HTTPPort: port}
		u, err := url.Parse(n.BaseURL() + "/x")
		if err != nil {
			t.Fatalf("%q:%d: URL %s does not parse: %v", host, port, n.BaseURL(), err)
		}
		if u.Hostname() != host || u.Port() != strconv.Itoa(port) || u.Path != "/x" || u.RawQuery != "" ||
			u.User != nil || u.Fragment != "" {
			t.Fatalf("%q:%d: URL %s has host %q port %q path %q", host, port, n.BaseURL(), u.Hostname(), u.Port(), u.Path)
		}
		if h, p, err := net.SplitHostPort(u.Host); err != nil || h != host || p != strconv.Itoa(port) {
			t.Fatalf("%q:%d: %s splits as %q %q %v", host, port, u.Host, h, p, err)
		}
		if a, err := netip.ParseAddr(host); err == nil && refusedIP(a) != "" {
			t.Fatalf("%q accepted: %s", host, refusedIP(a))
		}
	})
}
