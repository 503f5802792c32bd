package profiling

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/pprof/profile"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// captured is a snapshot with its symbolized profile (nil for a graph
// rendered on the node).
type captured struct {
	snap *snapshot.Snapshot
	prof *profile.Profile
	// saved is closed once the snapshot is stored (at once for a store
	// that saves in the caller); saveErr is then the outcome.
	saved   chan struct{}
	saveErr error
	// refs counts who still reads it: each caller until it has rendered
	// its answer, the store until the snapshot is saved. The last one
	// gives its place among the held dumps back (release; see held.go).
	refs    atomic.Int32
	release func()
}

// unref is called by each holder of a reference once done with c.
func (c *captured) unref() {
	if c.refs.Add(-1) == 0 {
		c.release()
	}
}

// waitSaved waits, within ctx, until the capture's snapshot is stored:
// snapshot() answers a name that list_snapshots() and the heapprof
// schema already show (dump_dot_snapshot() does not wait: its user waits
// for the graph, not for the archive).
func (c *captured) waitSaved(ctx context.Context) error {
	select {
	case <-c.saved:
	case <-ctx.Done():
		return fmt.Errorf("store snapshot %s: %w", c.snap.ID, context.Cause(ctx))
	}
	var re *snapshot.RetentionError
	if c.saveErr != nil && !errors.As(c.saveErr, &re) {
		return fmt.Errorf("store snapshot %s: %w", c.snap.ID, c.saveErr)
	}
	return nil
}

// flight is a capture in progress, shared by the callers that ask for its
// node meanwhile. Its fields are guarded by Service.mu until done is
// closed.
type flight struct {
	done    chan struct{}
	ended   bool
	c       *captured
	err     error
	callers int // waiting on it: each gets a reference on c when it ends
}

// capture dumps a node, symbolizes the profile and stores both: in the
// background when the store can (backgroundStore), so the caller renders
// and answers without waiting for the write. Callers that ask for the
// same node while a capture runs share it (one fetch, one parse, one
// snapshot), each waiting within its own ctx. The shared work has the
// first caller's deadline but goes on if that caller is killed or leaves,
// for the others; Close stops it. The caller calls unref on the result
// once done with it.
func (s *Service) capture(ctx context.Context, node backends.Node) (*captured, error) {
	s.mu.Lock()
	f := s.flights[node.ID]
	if f == nil {
		f = &flight{done: make(chan struct{})}
		s.flights[node.ID] = f
		go s.fly(ctx, node, f)
	}
	f.callers++
	s.mu.Unlock()
	select {
	case <-f.done:
	case <-ctx.Done():
		done := false
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			// The shared work ends at the same deadline with an error
			// that says what it was waiting for.
			select {
			case <-f.done:
				done = true
			case <-time.After(100 * time.Millisecond):
			}
		}
		if !done {
			s.leave(f)
			return nil, fmt.Errorf("dump of node %d: %w", node.ID, context.Cause(ctx))
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.c, nil
}

// leave gives up a caller's share of f.
func (s *Service) leave(f *flight) {
	s.mu.Lock()
	ended := f.ended
	if !ended {
		f.callers--
	}
	s.mu.Unlock()
	if ended && f.c != nil {
		f.c.unref() // the reference it was given as f ended
	}
}

// fly runs a flight's capture and hands its result to the callers.
func (s *Service) fly(ctx context.Context, node backends.Node, f *flight) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	if d, ok := ctx.Deadline(); ok {
		var cancelDeadline context.CancelFunc
		cctx, cancelDeadline = context.WithDeadline(cctx, d)
		defer cancelDeadline()
	} else if s.opt.Timeout > 0 {
		var cancelTimeout context.CancelFunc
		cctx, cancelTimeout = context.WithTimeout(cctx, s.opt.Timeout)
		defer cancelTimeout()
	}
	stop := context.AfterFunc(s.ctx, cancel)
	defer stop()
	c, err := s.captureOnce(cctx, node)
	if err != nil {
		c = nil // a panic's partial result
	}
	s.mu.Lock()
	delete(s.flights, node.ID)
	f.ended, f.c, f.err = true, c, err
	if c != nil {
		c.refs.Add(int32(f.callers))
	}
	close(f.done)
	s.mu.Unlock()
	if c != nil {
		c.unref() // the flight's own
	}
}

func (s *Service) captureOnce(ctx context.Context, node backends.Node) (c *captured, err error) {
	defer s.RecoverAsError(node, &err)
	// The bound (held.go): at most MaxHeldDumps dumps in memory at once.
	// The place is taken before the fetch (the dump is in memory from its
	// first byte on) and given back by the last reference (unref).
	release, err := s.held.acquire(ctx, fmt.Sprintf("dump of node %d", node.ID))
	if err != nil {
		return nil, err
	}
	kept := false
	defer func() {
		if !kept { // an error or a panic: nobody holds the dump
			release()
		}
	}()
	start := time.Now()
	d, err := s.opt.Registry.Dump(ctx, node)
	s.metrics.Dump(string(node.Kind), time.Since(start), err)
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
	c = &captured{snap: snap, saved: make(chan struct{}), release: release}
	c.refs.Store(2) // the flight's, until its callers have theirs; the store's, until saved
	if d.Format != backends.FormatDOT {
		if c.prof, err = s.symbolized(ctx, node, d.Data); err != nil {
			return nil, err
		}
	}
	if bg, ok := s.opt.Store.(backgroundStore); ok {
		// The answer goes out now; the store writes the snapshot after
		// (and resolves its name meanwhile).
		if err := bg.SaveBackground(ctx, snap, s.prepareSnapshot(node, c.prof), func(err error) {
			s.savedSnapshot(node, snap.ID, err)
			c.saveErr = err
			close(c.saved)
			c.unref()
		}); err != nil {
			return nil, fmt.Errorf("save snapshot of node %d: %w", node.ID, err)
		}
		kept = true
		return c, nil
	}
	defer close(c.saved)
	funcs, stacks, err := s.prepareSnapshot(node, c.prof)(ctx, snap)
	if err != nil {
		return nil, err
	}
	if err := s.opt.Store.Save(ctx, snap, funcs, stacks); err != nil {
		var re *snapshot.RetentionError
		if !errors.As(err, &re) {
			return nil, fmt.Errorf("save snapshot of node %d: %w", node.ID, err)
		}
		s.log.Warn("snapshot retention", zap.Error(err))
	}
	kept = true
	c.unref() // saved
	return c, nil
}

// backgroundStore is a Store that saves snapshots in the background
// (snapshot.Dir and snapshot.MySQL: see snapshot.Queue). SaveBackground
// returns once s is queued, waiting within ctx while the queue is full;
// the store's Get finds s from then on, and its Close saves what is
// queued.
type backgroundStore interface {
	SaveBackground(ctx context.Context, s *snapshot.Snapshot, prepare snapshot.Prepare, done func(error)) error
}

// prepareSnapshot returns the step that completes a capture's snapshot
// before it is stored: the protobuf, the totals and the rows of the
// symbolized profile prof (nil for a graph rendered on the node), in a
// dump slot (CPU work). In the background it runs with the store's
// context, bounded by Options.Timeout.
func (s *Service) prepareSnapshot(node backends.Node, prof *profile.Profile) snapshot.Prepare {
	return func(ctx context.Context, snap *snapshot.Snapshot) (_ []snapshot.Function, _ []snapshot.Stack, err error) {
		if prof == nil {
			return nil, nil, nil
		}
		defer s.RecoverAsError(node, &err)
		if _, ok := ctx.Deadline(); !ok && s.opt.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.opt.Timeout)
			defer cancel()
		}
		release, err := s.dumpSlot(ctx, node)
		if err != nil {
			return nil, nil, err
		}
		defer release()
		funcs, stacks, err := snap.Attach(prof)
		if err != nil {
			return nil, nil, fmt.Errorf("snapshot of node %d: %w", node.ID, err)
		}
		return funcs, stacks, nil
	}
}

// savedSnapshot reports how a background save ended: its caller has had
// its answer, so a failure is logged and counted.
func (s *Service) savedSnapshot(node backends.Node, id string, err error) {
	var re *snapshot.RetentionError
	switch {
	case err == nil:
	case errors.As(err, &re):
		s.log.Warn("snapshot retention", zap.Error(err))
	default:
		s.metrics.Error("snapshot_save")
		s.log.Error("snapshot not stored", zap.Int64("node", node.ID), zap.String("snapshot", id), zap.Error(err))
	}
}

// stored loads a snapshot by name with its symbolized profile, once check
// accepts it (before the profile is parsed). The caller calls unref on
// the result once done with it.
func (s *Service) stored(ctx context.Context, id string, check func(*snapshot.Snapshot) error) (*captured, error) {
	release, err := s.loads.acquire(ctx, "snapshot "+id)
	if err != nil {
		return nil, err
	}
	kept := false
	defer func() {
		if !kept {
			release()
		}
	}()
	snap, err := s.opt.Store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := check(snap); err != nil {
		return nil, err
	}
	c := &captured{snap: snap, release: release}
	c.refs.Store(1)
	if len(snap.Profile) > 0 {
		slot, err := s.dumpSlot(ctx, backends.Node{ID: snap.NodeID})
		if err != nil {
			return nil, err
		}
		defer slot()
		if c.prof, err = heapprof.ParseLimit(ctx, snap.Profile, s.opt.MaxDumpBytes); err != nil {
			return nil, fmt.Errorf("snapshot %s: %w", id, err)
		}
	}
	kept = true
	return c, nil
}

// renderDOT renders jeprof's DOT graph of a capture, minus base if given.
func (s *Service) renderDOT(ctx context.Context, node backends.Node, c *captured, base *profile.Profile, baseName string) (string, error) {
	if c.prof == nil {
		return string(c.snap.Raw), nil // rendered on the node
	}
	release, err := s.dumpSlot(ctx, node)
	if err != nil {
		return "", err
	}
	defer release()
	opt := heapprof.DefaultOptions()
	if node.Kind == backends.Go || node.Kind == backends.Self {
		opt.Names = heapprof.NamesGo // go tool pprof's names, receivers kept
	}
	opt.Base = base
	opt.Program = node.Binary
	if opt.Program == "" {
		opt.Program = fmt.Sprintf("%s-node-%d", node.Kind, node.ID)
	}
	var buf bytes.Buffer
	if err := heapprof.WriteDOTContext(ctx, &buf, c.prof, opt); err != nil {
		if errors.Is(err, heapprof.ErrNoNodes) {
			if base != nil {
				// jeprof prints nothing and exits 1; a SQL user needs an
				// answer: a valid graph that says nothing changed.
				return emptyDiffDOT(opt.Program, baseName), nil
			}
			return "", fmt.Errorf("node %d: no nodes to print: the profile has no allocations above jeprof's thresholds (is profiling enabled? run enable_prof() first)", node.ID)
		}
		return "", fmt.Errorf("render dump of node %d: %w", node.ID, err)
	}
	return buf.String(), nil
}

// emptyDiffDOT is the graph of a diff with nothing above jeprof's
// thresholds: jeprof's header and legend, no nodes.
func emptyDiffDOT(program, base string) string {
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ")
	p := esc.Replace(program)
	return fmt.Sprintf("digraph \"%s; nothing changed\" {\nnode [width=0.375,height=0.25];\n"+
		"Legend [shape=box,fontsize=24,shape=plaintext,label=\"%s\\lNothing changed above jeprof's thresholds since %s\\l\"];\n}\n",
		p, p, esc.Replace(base))
}

// dumpSlot waits, within ctx, until fewer than Options.MaxDumps dumps are
// worked on, so that a statement over a whole cluster (or many sessions
// at once) does not take every core. Only CPU work holds a slot: waiting
// on a node does not. Memory is bounded by the held dumps (held.go).
// release frees the slot.
func (s *Service) dumpSlot(ctx context.Context, node backends.Node) (release func(), err error) {
	select {
	case s.dumps <- struct{}{}:
		return func() { <-s.dumps }, nil
	default:
	}
	start := time.Now()
	select {
	case s.dumps <- struct{}{}:
		s.log.Info("dump waited for a slot", zap.Int64("node", node.ID),
			zap.Int("max_dumps", cap(s.dumps)), zap.Duration("waited", time.Since(start)))
		return func() { <-s.dumps }, nil
	case <-ctx.Done():
		s.metrics.Error("dump_slots_busy")
		return nil, fmt.Errorf("dump of node %d: all %d dump slots (max_dumps) stayed busy for %s: %w",
			node.ID, cap(s.dumps), time.Since(start).Round(time.Millisecond), ctx.Err())
	}
}

// HoldSlot takes a dump slot until release is called (tests and callers
// that do CPU work of their own on a profile).
func (s *Service) HoldSlot(ctx context.Context) (release func(), err error) {
	return s.dumpSlot(ctx, backends.Node{})
}
