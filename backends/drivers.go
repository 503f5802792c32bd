package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// jemallocDump fetches a raw jemalloc dump with one request and checks it is
// one (a tcmalloc build's gperftools text is accepted too).
func jemallocDump(ctx context.Context, c *caller, n Node, method, path string) (*Dump, error) {
	body, err := c.call(ctx, n, OpDump, method, path, nil)
	if err != nil {
		return nil, err
	}
	return jemallocAnswer(n, method, path, body)
}

// jemallocAnswer checks a 2xx dump answer is a jemalloc heap profile (or a
// tcmalloc build's gperftools text).
func jemallocAnswer(n Node, method, path string, body []byte) (*Dump, error) {
	switch {
	case hasPrefixLine(body, "heap_v2/"):
		return &Dump{Data: body, Format: FormatJemalloc, TakenAt: time.Now(), Node: n}, nil
	case hasPrefixLine(body, "heap profile:"):
		return &Dump{Data: body, Format: FormatGperftools, TakenAt: time.Now(), Node: n}, nil
	}
	return nil, badAnswer(n, OpDump, method, path, "a jemalloc heap profile (heap_v2/...); is the node started with MALLOC_CONF prof:true?", body)
}

// starRocksDriver: StarRocks BE/CN, be/src/http/action/pprof_actions.cpp.
type starRocksDriver struct{ c *caller }

const starRocksNoSwitch = "a StarRocks BE/CN has no HTTP switch for jemalloc prof.active; on StarRocks 3.1.6+ " +
	"the FE's own ADMIN EXECUTE ON <id> 'System.print(HeapProf.getInstance().%s())' does it, older versions " +
	"profile only when the BE was started with prof:true in JEMALLOC_CONF (then active from the start)"

func (d starRocksDriver) Enable(context.Context, Node) error {
	return &UnsupportedError{Kind: StarRocks, Op: OpEnable, Reason: fmt.Sprintf(starRocksNoSwitch, "enable_prof")}
}

func (d starRocksDriver) Disable(context.Context, Node) error {
	return &UnsupportedError{Kind: StarRocks, Op: OpDisable, Reason: fmt.Sprintf(starRocksNoSwitch, "disable_prof")}
}

func (d starRocksDriver) Status(context.Context, Node) (bool, error) {
	return false, &UnsupportedError{Kind: StarRocks, Op: OpStatus, Reason: fmt.Sprintf(starRocksNoSwitch, "has_enable")}
}

func (d starRocksDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	// On jemalloc builds HeapAction runs prof.dump and sends the file; when
	// prof.dump fails it sends an empty 200.
	return jemallocDump(ctx, d.c, n, http.MethodGet, "/pprof/heap")
}

func (d starRocksDriver) SymbolURL(n Node) string { return n.BaseURL() + "/pprof/symbol" }

// dorisDriver: Doris BE, be/src/http/action/jeprofile_actions.cpp.
type dorisDriver struct{ c *caller }

func (d dorisDriver) setActive(ctx context.Context, n Node, op string, on bool) error {
	path := "/jeheap/active/false"
	if on {
		path = "/jeheap/active/true"
	}
	a, err := d.c.do(ctx, n, op, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if a.status == http.StatusNotFound {
		return &UnsupportedError{Kind: Doris, Op: op, Reason: "this Doris BE has no /jeheap/active (added in 2.1.8/3.0.4); " +
			"profiling is on only when be.conf's JEMALLOC_CONF has prof:true,prof_active:true"}
	}
	if a.status != http.StatusOK {
		return &NodeError{Node: n, Op: op, Err: a.statusErr(http.MethodGet, path)}
	}
	return nil
}

func (d dorisDriver) Enable(ctx context.Context, n Node) error {
	return d.setActive(ctx, n, OpEnable, true)
}

func (d dorisDriver) Disable(ctx context.Context, n Node) error {
	return d.setActive(ctx, n, OpDisable, false)
}

func (d dorisDriver) Status(context.Context, Node) (bool, error) {
	return false, &UnsupportedError{Kind: Doris, Op: OpStatus, Reason: "a Doris BE has no HTTP endpoint that reports jemalloc prof.active " +
		"(/jeheap/dump answers HTTP 500 \"Jemalloc heap profiler is not enabled\" while it is off)"}
}

// dorisTrailer starts the help text Doris appends after the DOT.
const dorisTrailer = "\n-------------------------------------------------------"

const dorisFilePath = "dump file path: "

func (d dorisDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	const path = "/jeheap/dump"
	body, err := d.c.call(ctx, n, OpDump, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	a := parseDorisDump(body)
	switch {
	case a.dot != nil:
		return &Dump{Data: a.dot, Format: FormatDOT, TakenAt: time.Now(), Node: n}, nil
	case a.file != "":
		return nil, &UnsupportedError{Kind: Doris, Op: OpDump, Reason: fmt.Sprintf("this Doris BE's /jeheap/dump writes the heap dump to its own disk "+
			"(%s) and does not send it over HTTP (Doris 1.2.2-2.1.7); copy that file from the node, or use a BE whose "+
			"/jeheap/dump answers jeprof's graph (2.1.8/3.0.4+)", a.file)}
	case a.noNodes:
		return nil, &NodeError{Node: n, Op: OpDump, Err: fmt.Errorf("GET %s: jeprof on the node printed no graph (No nodes to print): "+
			"nothing was sampled since the profiler started", path)}
	case a.truncated:
		return nil, badAnswer(n, OpDump, http.MethodGet, path, "a complete DOT graph from jeprof", body)
	}
	return nil, badAnswer(n, OpDump, http.MethodGet, path, "a DOT graph or a dump file path", body)
}

// dorisDumpAnswer is what a Doris BE's /jeheap/dump said.
type dorisDumpAnswer struct {
	dot       []byte // the graph, trailer and jeprof's stderr cut off
	file      string // the old answer: where the dump was written
	noNodes   bool   // jeprof found nothing to draw
	truncated bool   // a graph that does not end
}

// parseDorisDump reads both versions' answers: 2.1.8+/3.0.4+ send jeprof's
// stderr, the DOT, then a help trailer after a line of dashes; 1.2.2-2.1.7
// send "... dump file path: <path>".
func parseDorisDump(body []byte) dorisDumpAnswer {
	if i := bytes.Index(body, []byte("digraph ")); i >= 0 {
		dot := body[i:]
		if j := bytes.Index(dot, []byte(dorisTrailer)); j >= 0 {
			dot = dot[:j]
		}
		dot = bytes.TrimRight(dot, "\r\n\t ")
		if !bytes.HasSuffix(dot, []byte("}")) {
			return dorisDumpAnswer{truncated: true}
		}
		out := make([]byte, len(dot)+1)
		copy(out, dot)
		out[len(dot)] = '\n'
		return dorisDumpAnswer{dot: out}
	}
	// Both versions write "dump file path: " in lower case (the sentence
	// starts "Jemalloc" or "jemalloc").
	if i := bytes.Index(body, []byte(dorisFilePath)); i >= 0 {
		line, _, _ := bytes.Cut(body[i+len(dorisFilePath):], []byte("\n"))
		if file := strings.TrimSpace(string(line)); file != "" {
			return dorisDumpAnswer{file: file}
		}
	}
	return dorisDumpAnswer{noNodes: bytes.Contains(body, []byte("No nodes to print"))}
}

func (d dorisDriver) SymbolURL(n Node) string { return n.BaseURL() + "/pprof/symbol" }

// greptimeDriver: GreptimeDB, src/servers/src/http/mem_prof.rs.
type greptimeDriver struct{ c *caller }

const greptimeOld = "this GreptimeDB is older than v0.16.0 and has only the dump route (POST /debug/prof/mem; " +
	"/v1/prof/mem before v0.10), no activate/deactivate/status; profiling follows MALLOC_CONF (prof:true, prof_active) set at start"

// greptimeUnsupported maps "no such route" and "feature disabled" to
// UnsupportedError.
func greptimeUnsupported(op string, a answer) error {
	switch a.status {
	case http.StatusNotFound, http.StatusMethodNotAllowed:
		return &UnsupportedError{Kind: GreptimeDB, Op: op, Reason: greptimeOld}
	case http.StatusNotImplemented:
		return &UnsupportedError{Kind: GreptimeDB, Op: op, Reason: "the node answers " + snippet(a.body) +
			": it was built without the mem-prof feature"}
	}
	return nil
}

func (d greptimeDriver) post(ctx context.Context, n Node, op, path string) error {
	a, err := d.c.do(ctx, n, op, http.MethodPost, path, nil)
	if err != nil {
		return err
	}
	if err := greptimeUnsupported(op, a); err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return &NodeError{Node: n, Op: op, Err: a.statusErr(http.MethodPost, path)}
	}
	return nil
}

func (d greptimeDriver) Enable(ctx context.Context, n Node) error {
	return d.post(ctx, n, OpEnable, "/debug/prof/mem/activate")
}

func (d greptimeDriver) Disable(ctx context.Context, n Node) error {
	return d.post(ctx, n, OpDisable, "/debug/prof/mem/deactivate")
}

func (d greptimeDriver) Status(ctx context.Context, n Node) (bool, error) {
	const path = "/debug/prof/mem/status"
	a, err := d.c.do(ctx, n, OpStatus, http.MethodGet, path, nil)
	if err != nil {
		return false, err
	}
	if err := greptimeUnsupported(OpStatus, a); err != nil {
		return false, err
	}
	if a.status != http.StatusOK {
		return false, &NodeError{Node: n, Op: OpStatus, Err: a.statusErr(http.MethodGet, path)}
	}
	var st struct {
		Active *bool `json:"active"`
	}
	if err := json.Unmarshal(a.body, &st); err != nil || st.Active == nil {
		return false, badAnswer(n, OpStatus, http.MethodGet, path, `{"active": true|false}`, a.body)
	}
	return *st.Active, nil
}

// Dump asks a node without a local binary (Node.Binary == "") for
// ?output=proto, a pprof protobuf symbolized on the node (v0.15+); older
// releases ignore the parameter and send the raw dump, which is taken as
// it is, and a 400 about the parameter falls back to the raw dump. With a
// binary it asks for the raw jemalloc dump (output=text, the default),
// which heapproxy symbolizes itself. v0.9 and older serve /v1/prof/mem
// instead of /debug/prof/mem: a 404 there is retried on the old path.
func (d greptimeDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	const path = "/debug/prof/mem"
	if n.Binary == "" {
		const proto = path + "?output=proto"
		a, err := d.c.do(ctx, n, OpDump, http.MethodPost, proto, nil)
		if err != nil {
			return nil, err
		}
		switch {
		case a.status >= 200 && a.status <= 299 && hasPrefixLine(a.body, "heap_v2/"):
			// v0.10-v0.14: no output parameter, the raw dump.
			return jemallocAnswer(n, http.MethodPost, proto, a.body)
		case a.status >= 200 && a.status <= 299:
			return pprofAnswer(n, http.MethodPost, proto, a.body, d.c.maxBytes,
				"a gzipped pprof protobuf (GreptimeDB v0.15+ ?output=proto)")
		case a.status == http.StatusNotFound:
			return d.legacyDump(ctx, n, a.statusErr(http.MethodPost, path))
		case a.status == http.StatusBadRequest && bytes.Contains(bytes.ToLower(a.body), []byte("query")):
			// The node refuses the parameter: ask for the default output.
		default:
			return nil, &NodeError{Node: n, Op: OpDump, Err: a.statusErr(http.MethodPost, proto)}
		}
	}
	a, err := d.c.do(ctx, n, OpDump, http.MethodPost, path, nil)
	if err != nil {
		return nil, err
	}
	switch {
	case a.status >= 200 && a.status <= 299:
		return jemallocAnswer(n, http.MethodPost, path, a.body)
	case a.status == http.StatusNotFound:
		return d.legacyDump(ctx, n, a.statusErr(http.MethodPost, path))
	}
	return nil, &NodeError{Node: n, Op: OpDump, Err: a.statusErr(http.MethodPost, path)}
}

// legacyDump is GreptimeDB v0.9 and older: POST /v1/prof/mem, the raw dump
// (the query is not read). notFound is the 404 of the current path.
func (d greptimeDriver) legacyDump(ctx context.Context, n Node, notFound *statusError) (*Dump, error) {
	const path = "/v1/prof/mem"
	a, err := d.c.do(ctx, n, OpDump, http.MethodPost, path, nil)
	if err != nil {
		return nil, err
	}
	if a.status >= 200 && a.status <= 299 {
		return jemallocAnswer(n, http.MethodPost, path, a.body)
	}
	if a.status == http.StatusNotFound {
		notFound.Hint = missingRouteHint(GreptimeDB, notFound.Path) + "; POST /v1/prof/mem answered 404 too"
		return nil, &NodeError{Node: n, Op: OpDump, Err: notFound}
	}
	return nil, &NodeError{Node: n, Op: OpDump, Err: a.statusErr(http.MethodPost, path)}
}

// pprofAnswer inflates a pprof answer within limit and checks it parses;
// Dump.Data is the flat protobuf.
func pprofAnswer(n Node, method, path string, body []byte, limit int64, want string) (*Dump, error) {
	// profile.ParseData would inflate a gzip bomb without bound: inflate
	// here within max_dump_bytes, then hand on the flat protobuf, so no
	// later reader of Dump.Data inflates node data again.
	flat, err := inflate(body, limit)
	if err != nil {
		return nil, &NodeError{Node: n, Op: OpDump, Err: fmt.Errorf("%s %s: %w", method, path, err)}
	}
	if _, err := profile.ParseData(flat); err != nil {
		return nil, badAnswer(n, OpDump, method, path, want, body)
	}
	return &Dump{Data: flat, Format: FormatPprof, TakenAt: time.Now(), Node: n}, nil
}

// SymbolURL is empty: GreptimeDB's symbolicate route takes a whole dump and
// answers a flame graph, not the gperftools protocol.
func (d greptimeDriver) SymbolURL(Node) string { return "" }

// databendDriver: Databend query/meta admin API (debug_jeprof_dump_handler).
type databendDriver struct{ c *caller }

const databendNoSwitch = "Databend has no runtime switch for jemalloc profiling; start databend-query with " +
	"MALLOC_CONF=prof:true (then it is always active)"

func (d databendDriver) Enable(context.Context, Node) error {
	return &UnsupportedError{Kind: Databend, Op: OpEnable, Reason: databendNoSwitch}
}

func (d databendDriver) Disable(context.Context, Node) error {
	return &UnsupportedError{Kind: Databend, Op: OpDisable, Reason: databendNoSwitch}
}

func (d databendDriver) Status(context.Context, Node) (bool, error) {
	return false, &UnsupportedError{Kind: Databend, Op: OpStatus, Reason: databendNoSwitch}
}

func (d databendDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	// jeprof appends ?seconds=30; Databend ignores it and dumps at once.
	return jemallocDump(ctx, d.c, n, http.MethodGet, "/debug/mem/pprof/profile?seconds=0")
}

func (d databendDriver) SymbolURL(Node) string { return "" }

// goDriver: any Go service with net/http/pprof.
type goDriver struct{ c *caller }

const goAlwaysOn = "a Go service samples its heap always, at runtime.MemProfileRate (512 KiB by default); " +
	"there is no HTTP switch, the service itself sets the rate"

func (d goDriver) Enable(context.Context, Node) error {
	return &UnsupportedError{Kind: Go, Op: OpEnable, Reason: goAlwaysOn}
}

func (d goDriver) Disable(context.Context, Node) error {
	return &UnsupportedError{Kind: Go, Op: OpDisable, Reason: goAlwaysOn}
}

// Status is always true: Go's heap profiling cannot be switched off over
// HTTP (only by the service setting runtime.MemProfileRate=0 itself).
func (d goDriver) Status(context.Context, Node) (bool, error) { return true, nil }

func (d goDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	const path = "/debug/pprof/heap"
	body, err := d.c.call(ctx, n, OpDump, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	return pprofAnswer(n, http.MethodGet, path, body, d.c.maxBytes, "a gzipped pprof protobuf (net/http/pprof); is this node a Go service?")
}

func (d goDriver) SymbolURL(n Node) string { return n.BaseURL() + "/debug/pprof/symbol" }

// IsUnsupported reports whether err says an operation cannot be done on that
// kind of node.
func IsUnsupported(err error) bool {
	var u *UnsupportedError
	return errors.As(err, &u)
}
