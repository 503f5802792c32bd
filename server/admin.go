package server

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/parser"
	"github.com/heapproxy/heapproxy/profiling"
)

// SnapshotStore keeps the dumps heapproxy takes.
type SnapshotStore = profiling.Store

// Deps are the parts the server dispatches HeapProf statements to.
type Deps struct {
	Registry *backends.Registry
	// SelfID is the id of heapproxy's own built-in node (ADMIN EXECUTE ON
	// FRONTEND means it too).
	SelfID int64
	// IsCompute tells the ids ALL COMPUTE NODES and SHOW COMPUTE NODES
	// cover; nil means none.
	IsCompute  func(id int64) bool
	Symbols    *symbolize.Cache
	SymbolPath []string
	// MaxDumpBytes bounds a dump after decompression (max_dump_bytes); 0
	// means heapprof.MaxProfileBytes.
	MaxDumpBytes int64
	// Symbols is the symbolizer chain's configuration beyond the node's
	// own binary: debuginfod servers and their disk cache.
	SymbolServers       []string
	SymbolCacheDir      string
	SymbolCacheMaxBytes int64
	SymbolServerTimeout time.Duration
	Snapshots           SnapshotStore
	// Metrics counts what happens; nil counts nothing.
	Metrics Metrics
	// SQL answers, on the embedded default, the statements heapproxy does
	// not answer itself: the heapprof schema for BI tools. Nil refuses them.
	SQL *sqlview.Engine
}

// Metrics is what the server reports (heapprof/web serves it on /metrics).
type Metrics interface {
	ConnOpened()
	ConnClosed()
	// Statement counts a statement by what heapproxy did with it.
	Statement(kind string)
	// Dump records one dump of a node of the kind.
	Dump(nodeKind string, d time.Duration, err error)
	// Error counts errors by where they happened.
	Error(kind string)
	// SQLError counts the error packets heapproxy itself sends, by code.
	SQLError(code uint16)
}

type noMetrics struct{}

func (noMetrics) SQLError(uint16) {}

func (noMetrics) ConnOpened()                       {}
func (noMetrics) ConnClosed()                       {}
func (noMetrics) Statement(string)                  {}
func (noMetrics) Dump(string, time.Duration, error) {}
func (noMetrics) Error(string)                      {}

// heapProfOK is what StarRocks prints for enable_prof() and disable_prof():
// System.print of the HeapProf instance the method returns.
const heapProfOK = "instance of HeapProf"

// nodeAnswer is one node's outcome of a HeapProf call.
type nodeAnswer struct {
	id     int64
	node   backends.Node
	output string
	err    error
}

func (s *session) adminExecute(a *parser.AdminExecuteStmt, query []byte) error {
	if e := s.mayProfile("run ADMIN EXECUTE HeapProf"); e != nil {
		return s.sendError(e)
	}
	// heapproxy answers this statement: SHOW WARNINGS right after is
	// heapproxy's (none, or the symbolizer's), not the upstream's or the
	// engine's of an earlier statement.
	s.warnings = []string{}
	if s.up != nil && a.Call.Method == parser.MethodToDotFormat && a.Call.Args[0].Kind == parser.ArgString &&
		strings.Contains(a.Call.Args[0].Str, "/") {
		// A file on the BE, what StarRocks' own snapshot() returns: its
		// FE renders it (jeprof next to the BE binary).
		return s.forwardQuery(query)
	}
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	defer done()
	started := time.Now()
	targets, err := s.targets(ctx, a.Target)
	if err != nil {
		return s.sendError(adminError(err))
	}
	if len(targets) == 1 {
		// One node, however named: the single-node shape, as the FE does.
		node, err := targets[0].node, targets[0].err
		if err != nil {
			return s.sendError(adminError(err))
		}
		if a.Call.Method == parser.MethodListSnapshots {
			// heapproxy's own method: one column per field, so a client
			// (or a batch-mode CLI) gets names it can feed back.
			snaps, err := s.srv.prof.Snapshots(ctx, node)
			done()
			if err != nil {
				return s.sendError(adminError(err))
			}
			return s.writeSnapshotList(snaps)
		}
		ans, err := s.srv.runHeapProf(ctx, node, a.Call)
		s.logAdmin(a, node, started, err)
		done() // the client is read again from here on
		if e := interrupted(ctx); e != nil && err != nil && e.Code == mysql.ER_QUERY_INTERRUPTED {
			return s.sendError(e) // killed; a timeout's own error says more
		}
		if err != nil {
			if backends.ForwardToFE(err) && s.up != nil {
				// A StarRocks BE has no HTTP switch; its FE's own ADMIN
				// EXECUTE does this, so hand the statement to the FE.
				return s.forwardQuery(query)
			}
			return s.sendError(adminError(err))
		}
		s.warnings = append(s.warnings, ans.Warnings...)
		return s.writeLines(ans.Text)
	}
	if s.up != nil && switchesOnFE(a.Call.Method, targets) {
		// The newest FE switches its BEs' profiling over a whole target
		// list itself; heapproxy has no HTTP switch for a StarRocks BE.
		done()
		return s.forwardQuery(query)
	}
	answers := make([]nodeAnswer, len(targets))
	results := make([]profiling.Answer, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		answers[i] = nodeAnswer{node: t.node, id: t.id, err: t.err}
		if t.err != nil {
			continue // an unknown id is its own ERROR row
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], answers[i].err = s.srv.runHeapProf(ctx, t.node, a.Call)
			answers[i].output = results[i].Text
			s.logAdmin(a, t.node, started, answers[i].err)
		}()
	}
	wg.Wait()
	done()
	if e := interrupted(ctx); e != nil && e.Code == mysql.ER_QUERY_INTERRUPTED {
		return s.sendError(e)
	}
	for _, r := range results {
		s.warnings = append(s.warnings, r.Warnings...)
	}
	// The newest FE's fan-out shape: three string columns, one row per
	// target sorted by id (StarRocks fe-parser ExecuteScriptStmt @25219ddd).
	w, err := s.startTextResult(mysqlwire.TextColumn("node_id"), mysqlwire.TextColumn("status"), mysqlwire.TextColumn("result"))
	if err != nil {
		return err
	}
	w.Warnings = uint16(min(len(s.warnings), 65535))
	for _, ans := range answers {
		status, result := "OK", strings.TrimSuffix(ans.output, "\n")
		if ans.err != nil {
			status, result = "ERROR", adminError(ans.err).Message
		}
		if err := w.WriteRow(mysqlwire.IntValue(ans.id), mysqlwire.Str(status), mysqlwire.Str(result)); err != nil {
			return err
		}
	}
	return w.Finish()
}

// target is one node of an ADMIN EXECUTE target, or the error of an id
// that names none.
type target struct {
	id   int64
	node backends.Node
	err  error
}

// targets resolves ON FRONTEND, ON <id>, ..., ON ALL BACKENDS and ON ALL
// COMPUTE NODES. Listed ids keep their duplicates (each runs, as on the
// FE); an unknown one is its own error; the list is sorted by id.
func (s *session) targets(ctx context.Context, t parser.Target) ([]target, error) {
	switch {
	case t.Frontend:
		n, err := s.srv.prof.Node(ctx, s.srv.deps.SelfID)
		return []target{{id: s.srv.deps.SelfID, node: n, err: err}}, nil
	case t.AllBackends, t.AllComputeNodes:
		nodes, err := s.srv.prof.Targets(ctx, t.AllBackends, t.AllComputeNodes, nil)
		if err != nil {
			return nil, err
		}
		out := make([]target, len(nodes))
		for i, n := range nodes {
			out[i] = target{id: n.ID, node: n}
		}
		return out, nil
	}
	out := make([]target, len(t.IDs))
	for i, id := range t.IDs {
		n, err := s.srv.prof.Node(ctx, id)
		out[i] = target{id: id, node: n, err: err}
	}
	slices.SortStableFunc(out, func(a, b target) int { return cmp.Compare(a.id, b.id) })
	return out, nil
}

// switchesOnFE tells a fan-out of enable/disable/has_enable over StarRocks
// BEs, which only their FE can switch.
func switchesOnFE(m parser.Method, targets []target) bool {
	switch m {
	case parser.MethodEnableProf, parser.MethodDisableProf, parser.MethodHasEnable:
	default:
		return false
	}
	return slices.ContainsFunc(targets, func(t target) bool { return t.err == nil && t.node.Kind == backends.StarRocks })
}

// mayProfile refuses, as MySQL's 1227, what only profile_users may do:
// profiling, reading profile data and seeing node addresses.
func (s *session) mayProfile(what string) *mysql.MyError {
	if s.srv.cfg.MayProfile(s.account) {
		return nil
	}
	return mysql.NewError(mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR, fmt.Sprintf(
		"Access denied; account %s (logged in as '%s') may not %s: add it to heapproxy's profile_users (now: %s)",
		s.account, s.user, what, strings.Join(s.srv.cfg.ProfileUsers, ", ")))
}

func (s *session) logAdmin(a *parser.AdminExecuteStmt, n backends.Node, started time.Time, err error) {
	fields := []zap.Field{zap.Int64("node", n.ID), zap.String("kind", string(n.Kind)),
		zap.String("method", a.Call.Method.String()), zap.Duration("duration", time.Since(started))}
	if err != nil {
		s.log.Warn("heapprof call failed", append(fields, zap.Error(err))...)
		return
	}
	s.log.Info("heapprof call", fields...)
}

// writeLines answers like StarRocks' FE: one column "result", one row per
// line of the output (Java's split("\n"), so no trailing empty row).
func (s *session) writeLines(out string) error {
	w, err := s.startTextResult(mysqlwire.TextColumn("result"))
	if err != nil {
		return err
	}
	w.Warnings = uint16(min(len(s.warnings), 65535))
	out = strings.TrimRight(out, "\n")
	for len(out) > 0 {
		line, rest, _ := strings.Cut(out, "\n")
		if err := w.WriteRow(mysqlwire.Str(line)); err != nil {
			return err
		}
		out = rest
	}
	return w.Finish()
}

// forwardQuery sends a COM_QUERY to the upstream and relays its answer.
func (s *session) forwardQuery(query []byte) error {
	s.warnings = nil // the upstream answers, its warnings with it
	if err := s.forwardCommand(command{data: append([]byte{mysql.COM_QUERY}, query...)}); err != nil {
		return s.upstreamLost(err)
	}
	if err := s.relayResults(); err != nil {
		return s.upstreamLost(err)
	}
	return s.client.Flush()
}

// runHeapProf performs one HeapProf method on one node: what StarRocks'
// System.print would print, with the warnings of the profiles behind it.
func (srv *Server) runHeapProf(ctx context.Context, node backends.Node, call parser.Call) (ans profiling.Answer, err error) {
	// A fan-out runs this on goroutines of its own, outside the session's
	// recover: a bug on one node's profile becomes that node's error.
	defer srv.prof.RecoverAsError(node, &err)
	p := srv.prof
	text := func(s string, err error) (profiling.Answer, error) { return profiling.Answer{Text: s}, err }
	switch call.Method {
	case parser.MethodEnableProf:
		return text(heapProfOK, p.Enable(ctx, node))
	case parser.MethodDisableProf:
		return text(heapProfOK, p.Disable(ctx, node))
	case parser.MethodHasEnable:
		on, err := p.Status(ctx, node)
		return text(strconv.FormatBool(on), err)
	case parser.MethodSnapshot:
		return p.Snapshot(ctx, node)
	case parser.MethodToDotFormat:
		if arg := call.Args[0]; arg.Kind != parser.ArgSnapshotCall {
			return p.StoredDOT(ctx, node, arg.Str)
		}
		return p.DumpDOT(ctx, node)
	case parser.MethodDumpDotSnapshot:
		return p.DumpDOT(ctx, node)
	case parser.MethodDiffDotSnapshot:
		return p.DiffDOT(ctx, node, call.Args[0].Str)
	case parser.MethodListSnapshots:
		return text(srv.listSnapshots(ctx, node))
	case parser.MethodScheduleSnapshots:
		every, err := time.ParseDuration(call.Args[0].Str)
		if err != nil || every < profiling.MinScheduleEvery || every > profiling.MaxScheduleEvery {
			return text("", fmt.Errorf("schedule_snapshots: interval %q must be a duration from 1s to 24h, e.g. \"30s\" or \"5m\"", call.Args[0].Str))
		}
		if err := p.Schedule(node.ID, every); err != nil {
			return text("", err)
		}
		return text(fmt.Sprintf("snapshots of node %d every %s", node.ID, every), nil)
	case parser.MethodUnscheduleSnapshots:
		if !p.Unschedule(node.ID) {
			return text("", fmt.Errorf("node %d has no scheduled snapshots", node.ID))
		}
		return text(fmt.Sprintf("snapshots of node %d stopped", node.ID), nil)
	}
	return text("", fmt.Errorf("HeapProf method %s is not implemented", call.Method))
}

// writeSnapshotList answers list_snapshots() on one node: name, taken_at
// (UTC), inuse_mb, format, newest first.
func (s *session) writeSnapshotList(snaps []snapshot.Snapshot) error {
	rows := make([][]mysqlwire.Value, len(snaps))
	for i, sn := range snaps {
		rows[i] = []mysqlwire.Value{mysqlwire.Str(sn.ID), mysqlwire.Str(sn.TakenAt.UTC().Format("2006-01-02 15:04:05")),
			mysqlwire.Str(strconv.FormatFloat(float64(sn.TotalBytes)/(1<<20), 'f', 1, 64)), mysqlwire.Str(sn.Format)}
	}
	takenAt := mysqlwire.Column{Name: "taken_at", Type: mysql.MYSQL_TYPE_DATETIME, Charset: mysqlwire.BinaryCollation, Length: 19, Flags: mysql.BINARY_FLAG}
	inuse := mysqlwire.Column{Name: "inuse_mb", Type: mysql.MYSQL_TYPE_DOUBLE, Charset: mysqlwire.BinaryCollation, Length: 22, Decimals: 1,
		Flags: mysql.BINARY_FLAG | mysql.NUM_FLAG}
	return s.writeResult([]mysqlwire.Column{mysqlwire.TextColumn("name"), takenAt, inuse, mysqlwire.TextColumn("format")}, rows)
}

// listSnapshots prints a node's snapshots, newest first, one per line (a
// fan-out's result cell):
// name, time taken (UTC), in-use MB, format.
func (srv *Server) listSnapshots(ctx context.Context, node backends.Node) (string, error) {
	snaps, err := srv.prof.Snapshots(ctx, node)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, s := range snaps {
		fmt.Fprintf(&b, "%s\t%s\t%.1f MB\t%s\n", s.ID, s.TakenAt.UTC().Format("2006-01-02 15:04:05"), float64(s.TotalBytes)/(1<<20), s.Format)
	}
	return b.String(), nil
}

// showBackends forwards SHOW BACKENDS / SHOW COMPUTE NODES / SHOW FRONTENDS when the
// upstream answers them (a StarRocks or Doris FE) and otherwise answers
// from heapproxy's registry with StarRocks' leading columns.
func (s *session) showBackends(query []byte, kind parser.Kind) error {
	if s.up != nil {
		if err := s.forwardCommand(command{data: append([]byte{mysql.COM_QUERY}, query...)}); err != nil {
			return s.upstreamLost(err)
		}
		head, err := s.up.ReadPacket(mysqlwire.InspectLimit)
		if err != nil {
			return s.upstreamLost(err)
		}
		if len(head) == 0 || head[0] != mysqlwire.HdrErr {
			if err := s.client.WritePacket(head); err != nil {
				return err
			}
			if err := s.relayResultsFrom(head); err != nil {
				return s.upstreamLost(err)
			}
			return s.client.Flush()
		}
	}
	if e := s.mayProfile("see the nodes' addresses (SHOW BACKENDS)"); e != nil {
		return s.sendError(e)
	}
	s.warnings = []string{}
	// The lists agree with the fan-out targets: SHOW BACKENDS and SHOW
	// COMPUTE NODES are what ALL BACKENDS and ALL COMPUTE NODES reach;
	// heapproxy's own node (ON FRONTEND) is under SHOW FRONTENDS.
	compute := kind == parser.ShowComputeNodes
	frontends := kind == parser.ShowFrontends
	var nodes []backends.Node
	for _, n := range s.srv.prof.Nodes() {
		switch {
		case frontends:
			if n.Kind == backends.Self {
				nodes = append(nodes, n)
			}
		case n.Kind != backends.Self && s.srv.prof.IsCompute(n.ID) == compute:
			nodes = append(nodes, n)
		}
	}
	names, cells := backends.ShowBackendsResult(nodes)
	cols := make([]mysqlwire.Column, len(names))
	for i, name := range names {
		cols[i] = mysqlwire.TextColumn(name)
		if strings.HasSuffix(name, "Port") || i == 0 {
			cols[i] = mysqlwire.IntColumn(name)
		}
	}
	switch {
	case compute:
		cols[0] = mysqlwire.IntColumn("ComputeNodeId")
	case frontends:
		cols[0] = mysqlwire.IntColumn("FrontendId")
	}
	rows := make([][]mysqlwire.Value, len(cells))
	for i, r := range cells {
		rows[i] = make([]mysqlwire.Value, len(r))
		for j, c := range r {
			if c != "NULL" {
				rows[i][j] = mysqlwire.Str(c)
			}
		}
	}
	return s.writeResult(cols, rows)
}
