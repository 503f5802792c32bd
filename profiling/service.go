// Package profiling is heapproxy's HeapProf service: it switches nodes'
// heap profiling, captures dumps (fetch, parse, symbolize, store), renders
// them and runs periodic snapshots. It knows nothing of the MySQL wire:
// server calls it and turns its answers and errors into packets.
//
// Where a change goes: a new HeapProf method is a Service method here and
// a case in server's dispatch; a new node kind is a driver in backends; a
// new output format is a renderer in heapprof.
package profiling

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// Store keeps the dumps the service takes.
type Store interface {
	Save(ctx context.Context, s *snapshot.Snapshot, funcs []snapshot.Function, stacks []snapshot.Stack) error
	Get(ctx context.Context, id string) (*snapshot.Snapshot, error)
	List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error)
}

// Metrics is what the service reports.
type Metrics interface {
	// Dump records one dump of a node of the kind.
	Dump(nodeKind string, d time.Duration, err error)
	// Error counts errors by where they happened.
	Error(kind string)
}

// Options configure a Service.
type Options struct {
	Registry *backends.Registry
	Store    Store
	Metrics  Metrics // nil counts nothing
	Log      *zap.Logger
	// Symbols caches opened binaries across dumps; nil makes one.
	Symbols    *symbolize.Cache
	SymbolPath []string
	// SymbolServers are debuginfod servers (symbol_servers), asked by
	// build-id for the debug files of stripped programs and libraries;
	// see symbolchain.go for the order symbolizers are tried in.
	SymbolServers []string
	// SymbolCacheDir keeps the files they send (symbol_cache.dir); ""
	// means <the user's cache directory>/heapproxy/debuginfod.
	SymbolCacheDir string
	// SymbolCacheMaxBytes caps that directory (symbol_cache.max_bytes),
	// least recently used files evicted first; 0 means 4 GiB.
	SymbolCacheMaxBytes int64
	// SymbolServerTimeout bounds one request to a symbol server; 0 means
	// 2 minutes.
	SymbolServerTimeout time.Duration
	// IsCompute tells the ids ALL COMPUTE NODES covers; nil means none.
	IsCompute func(id int64) bool
	// MaxDumps bounds the dumps worked on at once (CPU work only); 0 means
	// one per CPU.
	MaxDumps int
	// MaxHeldDumps bounds the dumps in memory at once, from the start of
	// their fetch until their answers are rendered and their snapshots
	// stored (see held.go); 0 means two per dump slot (2 x MaxDumps):
	// each slot's dump and the next one, fetched meanwhile.
	MaxHeldDumps int
	// Timeout bounds a capture shared by several callers and a scheduled
	// one.
	Timeout time.Duration
	// MaxDumpBytes bounds a dump after decompression (max_dump_bytes);
	// 0 means heapprof.MaxProfileBytes.
	MaxDumpBytes int64
}

// Service is the HeapProf service.
type Service struct {
	opt     Options
	log     *zap.Logger
	metrics Metrics
	dumps   chan struct{} // one token per dump worked on (Options.MaxDumps)
	// held and loads bound the profiles in memory (see held.go).
	held, loads *permits
	// flights are the captures in progress, by node id, shared by the
	// callers that ask for the node meanwhile.
	mu       sync.Mutex
	flights  map[int64]*flight
	schedule *scheduler
	// debuginfod fetches debug files from Options.SymbolServers; nil
	// without servers.
	debuginfod *symbolize.Debuginfod

	// ctx ends with Close: it stops shared and scheduled captures.
	ctx    context.Context
	cancel context.CancelFunc
}

// New returns a Service.
func New(opt Options) (*Service, error) {
	if opt.Registry == nil {
		return nil, errors.New("profiling: no node registry")
	}
	if opt.Store == nil {
		return nil, errors.New("profiling: no snapshot store")
	}
	if opt.MaxDumps < 0 {
		return nil, fmt.Errorf("max_dumps is %d: it must be 0 (one per CPU) or more", opt.MaxDumps)
	}
	if opt.MaxHeldDumps < 0 {
		return nil, fmt.Errorf("max held dumps is %d: it must be 0 (two per dump slot) or more", opt.MaxHeldDumps)
	}
	if opt.Log == nil {
		opt.Log = zap.NewNop()
	}
	if opt.Symbols == nil {
		opt.Symbols = symbolize.NewCache()
	}
	s := &Service{opt: opt, log: opt.Log, metrics: opt.Metrics}
	var err error
	if s.debuginfod, err = newDebuginfod(opt); err != nil {
		return nil, err
	}
	if s.metrics == nil {
		s.metrics = noMetrics{}
	}
	n := opt.MaxDumps
	if n == 0 {
		n = runtime.NumCPU()
	}
	s.dumps = make(chan struct{}, n)
	held, what := opt.MaxHeldDumps, "dumps held in memory"
	if held == 0 {
		held, what = 2*n, what+" (2 x max_dumps)"
	}
	s.held = newPermits(held, what, s.log, s.metrics)
	s.loads = newPermits(n, "stored profiles loaded at once (max_dumps)", s.log, s.metrics)
	s.flights = map[int64]*flight{}
	s.schedule = newScheduler(opt.Log, opt.Timeout)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

type noMetrics struct{}

func (noMetrics) Dump(string, time.Duration, error) {}
func (noMetrics) Error(string)                      {}

// Close stops the schedules and shared captures, and waits for the
// scheduled captures that run.
func (s *Service) Close() {
	s.cancel()
	s.schedule.close()
}

// StopSchedules ends every periodic snapshot (the shutdown's first step).
func (s *Service) StopSchedules() { s.schedule.close() }

// Node finds a node by id.
func (s *Service) Node(ctx context.Context, id int64) (backends.Node, error) {
	return s.opt.Registry.Get(ctx, id)
}

// Nodes lists the registered nodes.
func (s *Service) Nodes() []backends.Node { return s.opt.Registry.List() }

// IsCompute tells whether a node is a compute node.
func (s *Service) IsCompute(id int64) bool {
	return s.opt.IsCompute != nil && s.opt.IsCompute(id)
}

// Targets resolves a fan-out, sorted by id like StarRocks: the registered
// backends or compute nodes (not heapproxy's own node), or the ids given.
func (s *Service) Targets(ctx context.Context, allBackends, allCompute bool, ids []int64) ([]backends.Node, error) {
	var nodes []backends.Node
	switch {
	case allBackends, allCompute:
		for _, n := range s.opt.Registry.List() {
			if n.Kind == backends.Self || s.IsCompute(n.ID) != allCompute {
				continue
			}
			nodes = append(nodes, n)
		}
		if len(nodes) == 0 {
			what := "backends"
			if allCompute {
				what = "compute nodes"
			}
			return nil, fmt.Errorf("no %s are registered: configure nodes or point heapproxy at a StarRocks/Doris FE with discovery credentials", what)
		}
	default:
		for _, id := range ids {
			n, err := s.opt.Registry.Get(ctx, id)
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

// Enable switches a node's heap profiling on.
func (s *Service) Enable(ctx context.Context, node backends.Node) error {
	return s.opt.Registry.Enable(ctx, node)
}

// Disable switches it off.
func (s *Service) Disable(ctx context.Context, node backends.Node) error {
	return s.opt.Registry.Disable(ctx, node)
}

// Status tells whether it is on.
func (s *Service) Status(ctx context.Context, node backends.Node) (bool, error) {
	return s.opt.Registry.Status(ctx, node)
}

// Answer is a HeapProf answer with the warnings of the profiles behind it:
// what the symbolizer chain could not name, and why (the server sends them
// as the statement's warnings). A graph rendered on the node has none.
type Answer struct {
	Text     string
	Warnings []string
}

// Snapshot dumps a node and stores the snapshot; the answer is its name,
// once the snapshot is stored.
func (s *Service) Snapshot(ctx context.Context, node backends.Node) (Answer, error) {
	c, err := s.capture(ctx, node)
	if err != nil {
		return Answer{}, err
	}
	defer c.unref()
	if err := c.waitSaved(ctx); err != nil {
		return Answer{}, err
	}
	return Answer{Text: c.snap.ID, Warnings: Warnings(c.prof)}, nil
}

// DumpDOT dumps a node now and renders jeprof's DOT graph.
func (s *Service) DumpDOT(ctx context.Context, node backends.Node) (Answer, error) {
	c, err := s.capture(ctx, node)
	if err != nil {
		return Answer{}, err
	}
	defer c.unref() // the profile is let go once rendered
	dot, err := s.renderDOT(ctx, node, c, nil, "")
	if err != nil {
		return Answer{}, err
	}
	return Answer{Text: dot, Warnings: Warnings(c.prof)}, nil
}

// StoredDOT renders a stored snapshot of node, with the warnings recorded
// when it was taken.
func (s *Service) StoredDOT(ctx context.Context, node backends.Node, name string) (Answer, error) {
	c, err := s.stored(ctx, name, func(snap *snapshot.Snapshot) error {
		if snap.NodeID != node.ID {
			// Rendered under this node's name, another node's graph would
			// be taken for this one's.
			return fmt.Errorf("snapshot %s is of node %d, not of node %d: run ADMIN EXECUTE ON %d to render it",
				snap.ID, snap.NodeID, node.ID, snap.NodeID)
		}
		return nil
	})
	if err != nil {
		return Answer{}, err
	}
	defer c.unref()
	dot, err := s.renderDOT(ctx, node, c, nil, "")
	if err != nil {
		return Answer{}, err
	}
	return Answer{Text: dot, Warnings: Warnings(c.prof)}, nil
}

// DiffDOT dumps a node now and renders its growth since a stored snapshot,
// with the warnings of both profiles (the base's first).
func (s *Service) DiffDOT(ctx context.Context, node backends.Node, base string) (Answer, error) {
	// The base is loaded first (a wrong name dumps nothing), and with a
	// place of its own (loads): waiting for the capture's place while
	// holding one of the same kind could wait forever.
	b, err := s.stored(ctx, base, func(snap *snapshot.Snapshot) error {
		if snap.NodeID != node.ID {
			return fmt.Errorf("snapshot %s is of node %d, not of node %d: a diff compares two snapshots of one node",
				snap.ID, snap.NodeID, node.ID)
		}
		if len(snap.Profile) == 0 {
			return fmt.Errorf("snapshot %s holds a graph rendered on the node, not a profile: it cannot be a diff base", snap.ID)
		}
		return nil
	})
	if err != nil {
		return Answer{}, err
	}
	defer b.unref()
	c, err := s.capture(ctx, node)
	if err != nil {
		return Answer{}, err
	}
	defer c.unref()
	dot, err := s.renderDOT(ctx, node, c, b.prof, b.snap.ID)
	if err != nil {
		return Answer{}, err
	}
	var w []string
	for _, x := range Warnings(b.prof) {
		w = append(w, "base "+b.snap.ID+": "+x)
	}
	return Answer{Text: dot, Warnings: append(w, Warnings(c.prof)...)}, nil
}

// Snapshots lists a node's snapshots, newest first.
func (s *Service) Snapshots(ctx context.Context, node backends.Node) ([]snapshot.Snapshot, error) {
	id := node.ID
	snaps, err := s.opt.Store.List(ctx, snapshot.Filter{NodeID: &id})
	if err != nil {
		return nil, fmt.Errorf("list snapshots of node %d: %w", id, err)
	}
	return snaps, nil
}

// Bounds of a snapshot interval, for schedules from the config and from
// schedule_snapshots alike.
const (
	MinScheduleEvery = time.Second
	MaxScheduleEvery = 24 * time.Hour
)

// Schedule snapshots node id every interval (replacing its schedule). The
// node is looked up at each tick: a node discovered from the FE may join
// after the schedule.
func (s *Service) Schedule(id int64, every time.Duration) error {
	if every < MinScheduleEvery || every > MaxScheduleEvery {
		return fmt.Errorf("snapshot interval %s must be from %s to %s", every, MinScheduleEvery, MaxScheduleEvery)
	}
	s.schedule.start(id, every, func(ctx context.Context) (err error) {
		node, err := s.opt.Registry.Get(ctx, id)
		if err != nil {
			return err
		}
		defer s.RecoverAsError(node, &err)
		c, err := s.capture(ctx, node)
		if err != nil {
			return err
		}
		c.unref()
		return nil
	})
	return nil
}

// Unschedule ends a node's schedule; false when it had none.
func (s *Service) Unschedule(id int64) bool { return s.schedule.stop(id) }

// RecoverAsError turns a panic while working on node's profile into *err,
// logged with its stack and counted, so that one bad profile does not end
// the process. Call it deferred.
func (s *Service) RecoverAsError(node backends.Node, err *error) {
	r := recover()
	if r == nil {
		return
	}
	s.log.Error("heapprof work panicked", zap.Int64("node", node.ID), zap.Any("panic", r), zap.Stack("stack"))
	s.metrics.Error("panic")
	*err = fmt.Errorf("node %d: heapproxy failed on its profile (a bug; the log has the details): %v", node.ID, r)
}
