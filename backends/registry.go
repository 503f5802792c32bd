package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// DefaultDiscoverInterval is the least time between two discoveries
// triggered by unknown ids, so a client cannot make heapproxy hammer the FE.
const DefaultDiscoverInterval = 5 * time.Second

// Discoverer lists the nodes an upstream FE knows (SHOW BACKENDS / SHOW
// COMPUTE NODES); the server implements it. Discover may return nodes
// together with an error wrapping *RowError (rows it left out): the nodes
// are registered and the error reported. Any other error leaves the
// discovered nodes as they were.
type Discoverer interface {
	Discover(ctx context.Context) ([]Node, error)
}

// Options configure a Registry. Zero values take the defaults.
type Options struct {
	// Timeout bounds each HTTP call to a node (DefaultTimeout).
	Timeout time.Duration
	// MaxResponseBytes bounds each answer read (DefaultMaxResponseBytes).
	MaxResponseBytes int64
	// HTTPClient is used for all calls; nil means a client that uses no
	// proxy and follows no redirects, so only registered addresses are
	// contacted.
	HTTPClient *http.Client
	// Discoverer, if set, is asked on Refresh and on unknown ids.
	Discoverer Discoverer
	// DiscoverInterval is the least time between discoveries on misses
	// (DefaultDiscoverInterval).
	DiscoverInterval time.Duration
	// SelfMemProfileRate is what enabling the Self node sets
	// runtime.MemProfileRate to (DefaultSelfMemProfileRate).
	SelfMemProfileRate int
	// Logger logs background refresh failures; nil means no logging.
	Logger *zap.Logger
	// AllowLinkLocal lets heapproxy contact nodes at link-local
	// (169.254.0.0/16, fe80::/10), multicast, unspecified and cloud
	// metadata addresses (169.254.169.254, fd00:ec2::254, 100.100.100.200),
	// which are refused by default, at discovery and at connect time, so a
	// hostile or broken FE cannot point heapproxy at the metadata service.
	// YAML: discovery.allow_link_local.
	AllowLinkLocal bool
	// SymbolTimeout bounds one RemoteSymbolizer.Symbolize call
	// (DefaultSymbolTimeout); each request also within Timeout.
	SymbolTimeout time.Duration
	// MaxSymbolAnswerBytes bounds one answer of a node's symbolizer
	// (DefaultMaxSymbolAnswerBytes), MaxSymbolNameBytes one name
	// (DefaultMaxSymbolNameBytes; longer names are cut) and MaxSymbolBytes
	// all names a Symbolize call adds (DefaultMaxSymbolBytes).
	MaxSymbolAnswerBytes int64
	MaxSymbolNameBytes   int
	MaxSymbolBytes       int64
	// LivenessTimeout bounds one liveness check (DefaultLivenessTimeout;
	// at most Timeout). The checker runs with RunLiveness.
	LivenessTimeout time.Duration
	// TiKVHeapWindow is how long TiKV 7.4 and 5.2 or older sample before
	// answering a dump (/debug/pprof/heap?seconds=; DefaultTiKVHeapWindow,
	// whole seconds, at most half of Timeout when Timeout is shorter than
	// the window plus 5 s). TiKV 7.5+ dump at once.
	TiKVHeapWindow time.Duration
}

// Registry holds the nodes heapproxy may contact and their drivers. Only
// registered nodes are ever contacted. It is safe for concurrent use.
type Registry struct {
	opts    Options
	log     *zap.Logger
	caller  *caller
	drivers map[Kind]Driver

	mu     sync.RWMutex
	nodes  map[int64]Node
	health map[int64]Health // the liveness checker's last results

	discoverMu   sync.Mutex // serialises discoveries
	lastDiscover time.Time  // guarded by discoverMu

	flights singleflight.Group // node id -> the dump under way
}

// NewRegistry makes an empty registry with one driver per Kind.
func NewRegistry(opts Options) *Registry {
	if opts.DiscoverInterval <= 0 {
		opts.DiscoverInterval = DefaultDiscoverInterval
	}
	log := opts.Logger
	if log == nil {
		log = zap.NewNop()
	}
	c := newCaller(opts.HTTPClient, opts.Timeout, opts.MaxResponseBytes, opts.AllowLinkLocal)
	return &Registry{
		opts:   opts,
		log:    log,
		caller: c,
		drivers: map[Kind]Driver{
			StarRocks:  starRocksDriver{c},
			Doris:      dorisDriver{c},
			Databend:   databendDriver{c},
			GreptimeDB: greptimeDriver{c},
			TiKV:       tikvDriver{c: c, window: opts.TiKVHeapWindow},
			Go:         goDriver{c},
			Self:       newSelfDriver(opts.SelfMemProfileRate),
		},
		nodes: make(map[int64]Node),
	}
}

// Add registers nodes, replacing any with the same id. A node without a
// Source counts as configured.
func (r *Registry) Add(nodes ...Node) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range nodes {
		if n.Source == "" {
			n.Source = SourceConfig
		}
		r.nodes[n.ID] = n
	}
}

func (r *Registry) lookup(id int64) (Node, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	n, ok := r.nodes[id]
	return n, ok
}

// Get returns the node with the id. On a miss it asks the Discoverer (at
// most once per DiscoverInterval) and looks again; then it fails with
// *NodeNotFoundError.
func (r *Registry) Get(ctx context.Context, id int64) (Node, error) {
	if n, ok := r.lookup(id); ok {
		return n, nil
	}
	if r.opts.Discoverer == nil {
		return Node{}, &NodeNotFoundError{ID: id}
	}
	r.discoverMu.Lock()
	// Another caller may have discovered while we waited.
	if n, ok := r.lookup(id); ok {
		r.discoverMu.Unlock()
		return n, nil
	}
	var derr error
	if time.Since(r.lastDiscover) >= r.opts.DiscoverInterval {
		derr = r.refreshLocked(ctx)
	}
	r.discoverMu.Unlock()
	if n, ok := r.lookup(id); ok {
		return n, nil
	}
	return Node{}, &NodeNotFoundError{ID: id, DiscoverErr: derr}
}

// List returns all nodes sorted by id.
func (r *Registry) List() []Node {
	r.mu.RLock()
	out := make([]Node, 0, len(r.nodes))
	for _, n := range r.nodes {
		out = append(out, n)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b Node) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	return out
}

// Driver returns the driver for a kind.
func (r *Registry) Driver(kind Kind) (Driver, error) {
	d, ok := r.drivers[kind]
	if !ok {
		return nil, fmt.Errorf("no driver for node kind %q", kind)
	}
	return d, nil
}

// Refresh asks the Discoverer for the current nodes: discovered nodes are
// replaced by its answer; configured and builtin nodes stay and win over a
// discovered node with the same id.
func (r *Registry) Refresh(ctx context.Context) error {
	if r.opts.Discoverer == nil {
		return nil
	}
	r.discoverMu.Lock()
	defer r.discoverMu.Unlock()
	return r.refreshLocked(ctx)
}

func (r *Registry) refreshLocked(ctx context.Context) error {
	r.lastDiscover = time.Now()
	found, err := r.opts.Discoverer.Discover(ctx)
	if err != nil && !errors.As(err, new(*RowError)) {
		return fmt.Errorf("discover nodes: %w", err)
	}
	// Rows the Discoverer refused were left out; the rest is the FE's
	// current answer. Each node's address is checked again here, whatever
	// the Discoverer.
	problems := []error{err}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, n := range r.nodes {
		if n.Source == SourceDiscovered {
			delete(r.nodes, id)
		}
	}
	for _, n := range found {
		if old, ok := r.nodes[n.ID]; ok && old.Source != SourceDiscovered {
			continue
		}
		if err := CheckAddr(n.Host, n.HTTPPort, r.opts.AllowLinkLocal); err != nil {
			problems = append(problems, fmt.Errorf("discovered node %d left out: %w", n.ID, err))
			continue
		}
		n.Source = SourceDiscovered
		r.nodes[n.ID] = n
	}
	if err := errors.Join(problems...); err != nil {
		return fmt.Errorf("discover nodes (the other nodes were registered): %w", err)
	}
	return nil
}

// Run refreshes every interval until ctx ends; failures are logged.
func (r *Registry) Run(ctx context.Context, every time.Duration) {
	if r.opts.Discoverer == nil || every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := r.Refresh(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("node discovery failed", zap.Error(err))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// resolve maps a caller's node to the registered one and its driver, so
// that only registered addresses are contacted.
func (r *Registry) resolve(node Node) (Node, Driver, error) {
	n, ok := r.lookup(node.ID)
	if !ok {
		return Node{}, nil, &NodeNotFoundError{ID: node.ID}
	}
	d, err := r.Driver(n.Kind)
	if err != nil {
		return Node{}, nil, err
	}
	return n, d, nil
}

// Enable starts heap sampling on a registered node.
func (r *Registry) Enable(ctx context.Context, node Node) error {
	n, d, err := r.resolve(node)
	if err != nil {
		return err
	}
	return d.Enable(ctx, n)
}

// Disable stops heap sampling on a registered node.
func (r *Registry) Disable(ctx context.Context, node Node) error {
	n, d, err := r.resolve(node)
	if err != nil {
		return err
	}
	return d.Disable(ctx, n)
}

// Status reports whether a registered node samples its heap.
func (r *Registry) Status(ctx context.Context, node Node) (bool, error) {
	n, d, err := r.resolve(node)
	if err != nil {
		return false, err
	}
	return d.Status(ctx, n)
}

// Dump fetches a registered node's heap profile. One dump per node is in
// flight at a time: callers that arrive meanwhile share its result (the
// returned *Dump is shared; do not modify it). A caller whose ctx ends stops
// waiting; the dump itself runs on, bounded by Options.Timeout, for the
// others.
func (r *Registry) Dump(ctx context.Context, node Node) (*Dump, error) {
	n, d, err := r.resolve(node)
	if err != nil {
		return nil, err
	}
	// Detached from the first caller's cancellation: others may be
	// waiting on it. The driver's own timeout still bounds it.
	fctx := context.WithoutCancel(ctx)
	ch := r.flights.DoChan(strconv.FormatInt(n.ID, 10), func() (any, error) { return d.Dump(fctx, n) })
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, res.Err
		}
		return res.Val.(*Dump), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the dump of node %d: %w", n.ID, ctx.Err())
	}
}
