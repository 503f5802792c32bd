package backends

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Liveness defaults.
const (
	// DefaultLivenessTimeout bounds one liveness check.
	DefaultLivenessTimeout = 5 * time.Second
	// livenessMaxBytes bounds a liveness answer: only its status matters.
	livenessMaxBytes = 64 << 10
)

// livenessPath is a cheap GET every node of the kind answers without side
// effects: the gperftools symbolizer's "num_symbols" (StarRocks, Doris, Go
// net/http/pprof), TiKV's empty /status, GreptimeDB's profiling status
// (v0.16+). Databend has none known: any HTTP answer proves it serves.
func livenessPath(k Kind) string {
	switch k {
	case StarRocks, Doris:
		return "/pprof/symbol"
	case TiKV:
		return "/status"
	case GreptimeDB:
		return "/debug/prof/mem/status"
	case Go:
		return "/debug/pprof/symbol"
	}
	return "/"
}

// Health is what the liveness checker last saw of a node.
type Health struct {
	ID   int64
	Kind Kind
	// Alive: the node answered HTTP below 500 at the last check.
	Alive bool
	// LastHeartbeat is the last check the node passed (zero: never).
	LastHeartbeat time.Time
	// LastCheck is when it was last checked (zero: never).
	LastCheck time.Time
	// ErrMsg says why the last check failed, or what was odd about a
	// passing answer (a 401 proves the node serves, and needs credentials).
	ErrMsg string
}

// checkOne checks one node: any HTTP answer below 500 on its kind's cheap
// route proves the process serves.
func (r *Registry) checkOne(ctx context.Context, n Node) Health {
	h := Health{ID: n.ID, Kind: n.Kind, LastCheck: time.Now()}
	if n.Kind == Self {
		h.Alive, h.LastHeartbeat = true, h.LastCheck
		return h
	}
	c := *r.caller
	c.timeout = min(c.timeout, r.livenessTimeout())
	c.maxBytes = livenessMaxBytes
	path := livenessPath(n.Kind)
	a, err := c.do(ctx, n, "liveness", http.MethodGet, path, nil)
	switch {
	case err != nil:
		h.ErrMsg = err.Error()
	case a.status >= 500:
		h.ErrMsg = (&NodeError{Node: n, Op: "liveness", Err: a.statusErr(http.MethodGet, path)}).Error()
	default:
		h.Alive, h.LastHeartbeat = true, h.LastCheck
		if a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
			h.ErrMsg = a.statusErr(http.MethodGet, path).Error()
		}
	}
	return h
}

func (r *Registry) livenessTimeout() time.Duration {
	if r.opts.LivenessTimeout > 0 {
		return r.opts.LivenessTimeout
	}
	return DefaultLivenessTimeout
}

// CheckLiveness checks every registered node once, in parallel, and
// records the result: Health(), and the nodes' Alive, LastSeen (SHOW
// BACKENDS' LastHeartbeat) and ErrMsg.
func (r *Registry) CheckLiveness(ctx context.Context) {
	nodes := r.List()
	results := make([]Health, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.checkOne(ctx, n)
		}()
	}
	wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.health == nil {
		r.health = make(map[int64]Health)
	}
	for i, h := range results {
		n, ok := r.nodes[h.ID]
		if !ok || n.Host != nodes[i].Host || n.HTTPPort != nodes[i].HTTPPort {
			continue // replaced or gone meanwhile
		}
		if prev, ok := r.health[h.ID]; ok && !h.Alive {
			h.LastHeartbeat = prev.LastHeartbeat
		}
		r.health[h.ID] = h
		n.Alive, n.ErrMsg = h.Alive, h.ErrMsg
		if !h.LastHeartbeat.IsZero() {
			n.LastSeen = h.LastHeartbeat
		}
		r.nodes[h.ID] = n
	}
}

// Health returns what the liveness checker last saw of each node it has
// checked, sorted by id (for /metrics: heapproxy_node_up{id,kind} = Alive,
// heapproxy_node_last_heartbeat_seconds = LastHeartbeat).
func (r *Registry) Health() []Health {
	nodes := r.List()
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Health, 0, len(nodes))
	for _, n := range nodes {
		if h, ok := r.health[n.ID]; ok {
			out = append(out, h)
		}
	}
	return out
}

// RunLiveness checks every node at once and then every interval until ctx
// ends; nodes that go down or come back are logged.
func (r *Registry) RunLiveness(ctx context.Context, every time.Duration) {
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	was := map[int64]bool{}
	for {
		r.CheckLiveness(ctx)
		for _, h := range r.Health() {
			if up, seen := was[h.ID]; (!seen || up) && !h.Alive && ctx.Err() == nil {
				r.log.Warn("node down", zap.Int64("node", h.ID), zap.String("kind", string(h.Kind)), zap.String("error", h.ErrMsg))
			} else if seen && !up && h.Alive {
				r.log.Info("node up", zap.Int64("node", h.ID), zap.String("kind", string(h.Kind)))
			}
			was[h.ID] = h.Alive
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// String is for logs.
func (h Health) String() string {
	return fmt.Sprintf("node %d (%s): alive=%v last heartbeat %s %s", h.ID, h.Kind, h.Alive, h.LastHeartbeat.Format(time.RFC3339), h.ErrMsg)
}
