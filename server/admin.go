package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/google/pprof/profile"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
	"github.com/heapproxy/heapproxy/parser"
)

// SnapshotStore keeps the dumps heapproxy takes.
type SnapshotStore interface {
	Save(ctx context.Context, s *snapshot.Snapshot, funcs []snapshot.Function, stacks []snapshot.Stack) error
	Get(ctx context.Context, id string) (*snapshot.Snapshot, error)
	List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error)
}

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
	Snapshots  SnapshotStore
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
}

type noMetrics struct{}

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
	node   backends.Node
	output string
	err    error
}

func (s *session) adminExecute(a *parser.AdminExecuteStmt, query []byte) error {
	if e := s.mayProfile("run ADMIN EXECUTE HeapProf"); e != nil {
		return s.sendError(e)
	}
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	defer done()
	started := time.Now()
	single := a.Target.Frontend || len(a.Target.IDs) == 1
	if single {
		id := s.srv.deps.SelfID
		if !a.Target.Frontend {
			id = a.Target.IDs[0]
		}
		node, err := s.srv.deps.Registry.Get(ctx, id)
		if err != nil {
			return s.sendError(adminError(err))
		}
		out, err := s.srv.runHeapProf(ctx, node, a.Call)
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
		return s.writeLines(out)
	}
	nodes, err := s.srv.targetNodes(ctx, a.Target)
	if err != nil {
		return s.sendError(adminError(err))
	}
	answers := make([]nodeAnswer, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = nodeAnswer{node: n}
			answers[i].output, answers[i].err = s.srv.runHeapProf(ctx, n, a.Call)
			s.logAdmin(a, n, started, answers[i].err)
		}()
	}
	wg.Wait()
	done()
	if e := interrupted(ctx); e != nil && e.Code == mysql.ER_QUERY_INTERRUPTED {
		return s.sendError(e)
	}
	w, err := s.startResult(intColumn("node_id"), textColumn("status"), textColumn("result"))
	if err != nil {
		return err
	}
	for _, ans := range answers {
		status, result := "OK", strings.TrimSuffix(ans.output, "\n")
		if ans.err != nil {
			status, result = "ERROR", adminError(ans.err).Message
		}
		if err := w.writeRow(intValue(ans.node.ID), str(status), str(result)); err != nil {
			return err
		}
	}
	return w.finish()
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
	w, err := s.startResult(textColumn("result"))
	if err != nil {
		return err
	}
	out = strings.TrimRight(out, "\n")
	for len(out) > 0 {
		line, rest, _ := strings.Cut(out, "\n")
		if err := w.writeRow(str(line)); err != nil {
			return err
		}
		out = rest
	}
	return w.finish()
}

// forwardQuery sends a COM_QUERY to the upstream and relays its answer.
func (s *session) forwardQuery(query []byte) error {
	if err := s.forwardCommand(command{data: append([]byte{mysql.COM_QUERY}, query...)}); err != nil {
		return s.upstreamLost(err)
	}
	if err := s.relayResults(); err != nil {
		return s.upstreamLost(err)
	}
	return s.client.flush()
}

// targetNodes resolves a fan-out target, sorted by id like StarRocks.
func (srv *Server) targetNodes(ctx context.Context, t parser.Target) ([]backends.Node, error) {
	var nodes []backends.Node
	switch {
	case t.AllBackends, t.AllComputeNodes:
		for _, n := range srv.deps.Registry.List() {
			if n.Kind == backends.Self || srv.isCompute(n.ID) != t.AllComputeNodes {
				continue
			}
			nodes = append(nodes, n)
		}
		if len(nodes) == 0 {
			what := "backends"
			if t.AllComputeNodes {
				what = "compute nodes"
			}
			return nil, fmt.Errorf("no %s are registered: configure nodes or point heapproxy at a StarRocks/Doris FE with discovery credentials", what)
		}
	default:
		for _, id := range t.IDs {
			n, err := srv.deps.Registry.Get(ctx, id)
			if err != nil {
				return nil, err
			}
			if !slices.ContainsFunc(nodes, func(m backends.Node) bool { return m.ID == id }) {
				nodes = append(nodes, n)
			}
		}
	}
	slices.SortFunc(nodes, func(a, b backends.Node) int { return int(a.ID - b.ID) })
	return nodes, nil
}

// runHeapProf performs one HeapProf method on one node and returns what
// StarRocks' System.print would print.
func (srv *Server) runHeapProf(ctx context.Context, node backends.Node, call parser.Call) (out string, err error) {
	// A fan-out runs this on goroutines of its own, outside the session's
	// recover: a bug on one node's profile becomes that node's error.
	defer srv.recoverAsError(node, &err)
	reg := srv.deps.Registry
	switch call.Method {
	case parser.MethodEnableProf:
		if err := reg.Enable(ctx, node); err != nil {
			return "", err
		}
		return heapProfOK, nil
	case parser.MethodDisableProf:
		if err := reg.Disable(ctx, node); err != nil {
			return "", err
		}
		return heapProfOK, nil
	case parser.MethodHasEnable:
		on, err := reg.Status(ctx, node)
		if err != nil {
			return "", err
		}
		return strconv.FormatBool(on), nil
	case parser.MethodSnapshot:
		c, err := srv.capture(ctx, node)
		if err != nil {
			return "", err
		}
		return c.snap.ID, nil
	case parser.MethodToDotFormat:
		var c *captured
		var err error
		if arg := call.Args[0]; arg.Kind == parser.ArgSnapshotCall {
			c, err = srv.capture(ctx, node)
		} else {
			c, err = srv.stored(ctx, arg.Str)
		}
		if err != nil {
			return "", err
		}
		if c.snap.NodeID != node.ID {
			// Rendered under this node's name, another node's graph
			// would be taken for this one's.
			return "", fmt.Errorf("snapshot %s is of node %d, not of node %d: run ADMIN EXECUTE ON %d to render it",
				c.snap.ID, c.snap.NodeID, node.ID, c.snap.NodeID)
		}
		return srv.renderDOT(ctx, node, c, nil)
	case parser.MethodDumpDotSnapshot:
		c, err := srv.capture(ctx, node)
		if err != nil {
			return "", err
		}
		return srv.renderDOT(ctx, node, c, nil)
	case parser.MethodDiffDotSnapshot:
		base, err := srv.stored(ctx, call.Args[0].Str)
		if err != nil {
			return "", err
		}
		if base.snap.NodeID != node.ID {
			return "", fmt.Errorf("snapshot %s is of node %d, not of node %d: a diff compares two snapshots of one node",
				base.snap.ID, base.snap.NodeID, node.ID)
		}
		if base.prof == nil {
			return "", fmt.Errorf("snapshot %s holds a graph rendered on the node, not a profile: it cannot be a diff base", base.snap.ID)
		}
		c, err := srv.capture(ctx, node)
		if err != nil {
			return "", err
		}
		return srv.renderDOT(ctx, node, c, base.prof)
	case parser.MethodListSnapshots:
		return srv.listSnapshots(ctx, node)
	case parser.MethodScheduleSnapshots:
		every, err := time.ParseDuration(call.Args[0].Str)
		if err != nil || every < minScheduleEvery || every > maxScheduleEvery {
			return "", fmt.Errorf("schedule_snapshots: interval %q must be a duration from 1s to 24h, e.g. \"30s\" or \"5m\"", call.Args[0].Str)
		}
		srv.startSchedule(node.ID, every)
		return fmt.Sprintf("snapshots of node %d every %s", node.ID, every), nil
	case parser.MethodUnscheduleSnapshots:
		if !srv.schedule.stop(node.ID) {
			return "", fmt.Errorf("node %d has no scheduled snapshots", node.ID)
		}
		return fmt.Sprintf("snapshots of node %d stopped", node.ID), nil
	}
	return "", fmt.Errorf("HeapProf method %s is not implemented", call.Method)
}

// startSchedule snapshots node id every interval. The node is looked up at
// each tick: a node discovered from the FE may join after the schedule.
func (srv *Server) startSchedule(id int64, every time.Duration) {
	srv.schedule.start(id, every, func(ctx context.Context) (err error) {
		node, err := srv.deps.Registry.Get(ctx, id)
		if err != nil {
			return err
		}
		defer srv.recoverAsError(node, &err)
		_, err = srv.capture(ctx, node)
		return err
	})
}

// recoverAsError turns a panic while working on node's profile into *err,
// logged with its stack and counted, so that one bad profile does not end
// the process. Call it deferred.
func (srv *Server) recoverAsError(node backends.Node, err *error) {
	r := recover()
	if r == nil {
		return
	}
	srv.log.Error("heapprof work panicked", zap.Int64("node", node.ID), zap.Any("panic", r), zap.Stack("stack"))
	srv.deps.Metrics.Error("panic")
	*err = fmt.Errorf("node %d: heapproxy failed on its profile (a bug; the log has the details): %v", node.ID, r)
}

// dumpSlot waits, within ctx, until fewer than Config.MaxDumps dumps are
// worked on, so that a statement over a whole cluster (or many sessions at
// once) does not hold every node's profile in memory together nor take
// every core. Only CPU work holds a slot: waiting on a node does not, so
// slow or dead nodes cannot starve healthy ones. release frees the slot.
func (srv *Server) dumpSlot(ctx context.Context, node backends.Node) (release func(), err error) {
	select {
	case srv.dumps <- struct{}{}:
		return func() { <-srv.dumps }, nil
	default:
	}
	start := time.Now()
	select {
	case srv.dumps <- struct{}{}:
		srv.log.Info("dump waited for a slot", zap.Int64("node", node.ID),
			zap.Int("max_dumps", cap(srv.dumps)), zap.Duration("waited", time.Since(start)))
		return func() { <-srv.dumps }, nil
	case <-ctx.Done():
		srv.deps.Metrics.Error("dump_slots_busy")
		return nil, fmt.Errorf("dump of node %d: all %d dump slots (max_dumps) stayed busy for %s: %w",
			node.ID, cap(srv.dumps), time.Since(start).Round(time.Millisecond), ctx.Err())
	}
}

// captured is a snapshot with its symbolized profile (nil for a graph
// rendered on the node).
type captured struct {
	snap *snapshot.Snapshot
	prof *profile.Profile
}

// capture dumps a node, symbolizes the profile and stores both. Callers
// that ask for the same node while a capture runs share it (one fetch, one
// parse, one snapshot), each waiting within its own ctx. The shared work
// has the first caller's deadline but goes on if that caller is killed or
// leaves, for the others; the shutdown stops it.
func (srv *Server) capture(ctx context.Context, node backends.Node) (*captured, error) {
	ch := srv.captures.DoChan(strconv.FormatInt(node.ID, 10), func() (any, error) {
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		if d, ok := ctx.Deadline(); ok {
			var cancelDeadline context.CancelFunc
			cctx, cancelDeadline = context.WithDeadline(cctx, d)
			defer cancelDeadline()
		}
		stop := context.AfterFunc(srv.ctx, cancel)
		defer stop()
		return srv.captureOnce(cctx, node)
	})
	var r singleflight.Result
	select {
	case r = <-ch:
	case <-ctx.Done():
		if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return nil, fmt.Errorf("dump of node %d: %w", node.ID, context.Cause(ctx))
		}
		// The shared work ends at the same deadline with an error that
		// says what it was waiting for.
		select {
		case r = <-ch:
		case <-time.After(100 * time.Millisecond):
			return nil, fmt.Errorf("dump of node %d: %w", node.ID, context.Cause(ctx))
		}
	}
	if r.Err != nil {
		return nil, r.Err
	}
	return r.Val.(*captured), nil
}

func (srv *Server) captureOnce(ctx context.Context, node backends.Node) (c *captured, err error) {
	defer srv.recoverAsError(node, &err)
	start := time.Now()
	d, err := srv.deps.Registry.Dump(ctx, node)
	srv.deps.Metrics.Dump(string(node.Kind), time.Since(start), err)
	if err != nil {
		return nil, err
	}
	snap := &snapshot.Snapshot{
		ID:       snapshot.NewID(node.ID, d.TakenAt),
		NodeID:   node.ID,
		NodeKind: string(node.Kind),
		NodeAddr: node.Addr(),
		TakenAt:  d.TakenAt,
		Format:   d.Format.String(),
		Raw:      d.Data,
	}
	c = &captured{snap: snap}
	var funcs []snapshot.Function
	var stacks []snapshot.Stack
	if d.Format != backends.FormatDOT {
		if c.prof, err = srv.symbolized(ctx, node, d.Data); err != nil {
			return nil, err
		}
		release, err := srv.dumpSlot(ctx, node)
		if err != nil {
			return nil, err
		}
		funcs, stacks, err = snap.Attach(c.prof)
		release()
		if err != nil {
			return nil, err
		}
	}
	if err := srv.deps.Snapshots.Save(ctx, snap, funcs, stacks); err != nil {
		var re *snapshot.RetentionError
		if !errors.As(err, &re) {
			return nil, fmt.Errorf("save snapshot of node %d: %w", node.ID, err)
		}
		srv.log.Warn("snapshot retention", zap.Error(err))
	}
	return c, nil
}

// stored loads a snapshot by name with its symbolized profile.
func (srv *Server) stored(ctx context.Context, id string) (*captured, error) {
	snap, err := srv.deps.Snapshots.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &captured{snap: snap}
	if len(snap.Profile) > 0 {
		release, err := srv.dumpSlot(ctx, backends.Node{ID: snap.NodeID})
		if err != nil {
			return nil, err
		}
		defer release()
		if c.prof, err = heapprof.Parse(snap.Profile); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", id, err)
		}
	}
	return c, nil
}

// symbolized parses a dump and names its addresses: with the node's binary
// when configured, else through its /pprof/symbol endpoint, else from the
// mapped files on this machine. Go profiles arrive symbolized.
func (srv *Server) symbolized(ctx context.Context, node backends.Node, raw []byte) (*profile.Profile, error) {
	release, err := srv.dumpSlot(ctx, node)
	if err != nil {
		return nil, err
	}
	defer func() { release() }()
	p, err := heapprof.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse dump of node %d: %w", node.ID, err)
	}
	if p.HasFunctions() {
		return p, nil
	}
	var sym heapprof.Symbolizer = &symbolize.Local{Binary: node.Binary, SearchPath: srv.deps.SymbolPath, Cache: srv.deps.Symbols}
	if node.Binary == "" {
		if remote, err := srv.deps.Registry.RemoteSymbolizer(node); err == nil {
			// The node names the addresses: a wait on the network, which
			// holds no slot.
			sym = remote
			release()
			release = func() {}
		}
	}
	if err := sym.Symbolize(ctx, p); err != nil {
		return nil, fmt.Errorf("symbolize dump of node %d: %w", node.ID, err)
	}
	return p, nil
}

// renderDOT renders jeprof's DOT graph of a capture, minus base if given.
func (srv *Server) renderDOT(ctx context.Context, node backends.Node, c *captured, base *profile.Profile) (string, error) {
	if c.prof == nil {
		return string(c.snap.Raw), nil // rendered on the node
	}
	release, err := srv.dumpSlot(ctx, node)
	if err != nil {
		return "", err
	}
	defer release()
	opt := heapprof.DefaultOptions()
	opt.Base = base
	opt.Program = node.Binary
	if opt.Program == "" {
		opt.Program = fmt.Sprintf("%s-node-%d", node.Kind, node.ID)
	}
	var buf bytes.Buffer
	if err := heapprof.WriteDOT(&buf, c.prof, opt); err != nil {
		if errors.Is(err, heapprof.ErrNoNodes) {
			if base != nil {
				return "", fmt.Errorf("node %d: no nodes to print: nothing changed above jeprof's thresholds since the base snapshot", node.ID)
			}
			return "", fmt.Errorf("node %d: no nodes to print: the profile has no allocations above jeprof's thresholds (is profiling enabled? run enable_prof() first)", node.ID)
		}
		return "", fmt.Errorf("render dump of node %d: %w", node.ID, err)
	}
	return buf.String(), nil
}

// listSnapshots prints a node's snapshots, newest first, one per line:
// name, time taken (UTC), in-use MB, format.
func (srv *Server) listSnapshots(ctx context.Context, node backends.Node) (string, error) {
	id := node.ID
	snaps, err := srv.deps.Snapshots.List(ctx, snapshot.Filter{NodeID: &id})
	if err != nil {
		return "", fmt.Errorf("list snapshots of node %d: %w", id, err)
	}
	var b strings.Builder
	for _, s := range snaps {
		fmt.Fprintf(&b, "%s\t%s\t%.1f MB\t%s\n", s.ID, s.TakenAt.UTC().Format("2006-01-02 15:04:05"), float64(s.TotalBytes)/(1<<20), s.Format)
	}
	return b.String(), nil
}

// adminError turns a dispatch failure into the error packet StarRocks' FE
// would send (every user error as 1064/HY000), except operations a node
// cannot do at all, which say so as 1235.
func adminError(err error) *mysql.MyError {
	var unsupported *backends.UnsupportedError
	if errors.As(err, &unsupported) {
		return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, err.Error())
	}
	return &mysql.MyError{Code: mysql.ER_PARSE_ERROR, State: "HY000", Message: err.Error()}
}

// showBackends forwards SHOW BACKENDS / SHOW COMPUTE NODES when the
// upstream answers them (a StarRocks or Doris FE) and otherwise answers
// from heapproxy's registry with StarRocks' leading columns.
func (s *session) showBackends(query []byte, kind parser.Kind) error {
	if s.up != nil {
		if err := s.forwardCommand(command{data: append([]byte{mysql.COM_QUERY}, query...)}); err != nil {
			return s.upstreamLost(err)
		}
		head, err := s.up.readPacket(inspectLimit)
		if err != nil {
			return s.upstreamLost(err)
		}
		if len(head) == 0 || head[0] != hdrErr {
			if err := s.client.writePacket(head); err != nil {
				return err
			}
			if err := s.relayResultsFrom(head); err != nil {
				return s.upstreamLost(err)
			}
			return s.client.flush()
		}
	}
	if e := s.mayProfile("see the nodes' addresses (SHOW BACKENDS)"); e != nil {
		return s.sendError(e)
	}
	compute := kind == parser.ShowComputeNodes
	var nodes []backends.Node
	for _, n := range s.srv.deps.Registry.List() {
		if s.srv.isCompute(n.ID) == compute {
			nodes = append(nodes, n)
		}
	}
	names, cells := backends.ShowBackendsResult(nodes)
	cols := make([]column, len(names))
	for i, name := range names {
		cols[i] = textColumn(name)
		if strings.HasSuffix(name, "Port") || i == 0 {
			cols[i] = intColumn(name)
		}
	}
	if compute {
		cols[0] = intColumn("ComputeNodeId")
	}
	rows := make([][]value, len(cells))
	for i, r := range cells {
		rows[i] = make([]value, len(r))
		for j, c := range r {
			if c != "NULL" {
				rows[i][j] = str(c)
			}
		}
	}
	return s.writeResult(cols, rows)
}

func (srv *Server) isCompute(id int64) bool {
	return srv.deps.IsCompute != nil && srv.deps.IsCompute(id)
}
