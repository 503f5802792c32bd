package profiling

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
)

// The bound on the profiles in memory at once.
//
// Dump slots (max_dumps) bound CPU work only, so that waiting on a node
// takes no core; on their own they let every node's dump be fetched and
// held while it waits for a slot (bench/snapshot/fanout.sh, 100 nodes of
// 15 MB dumps: 5.8 GB peak RSS; 0.54 GB with this bound). So each capture also takes a place among Service.held
// (Options.MaxHeldDumps, by default 2 x max_dumps) before its fetch
// starts, and gives it back only when nothing reads the dump any more:
// every caller has rendered its answer (dump_dot_snapshot) or seen it
// stored (snapshot()), and the store has saved the snapshot, queued or
// not (captured.refs). A profile loaded from the store (to_dot_format by
// name, a diff's base) takes a place among Service.loads (max_dumps)
// until rendered. Hence at most
//
//	MaxHeldDumps + max_dumps profiles in memory,
//
// each at most max_dump_bytes of dump and what parsing, symbolizing and
// rendering it take (measured up to ~12x the dump while parsed, inside a
// slot). Fetches still overlap CPU work: a held dump beyond the slots'
// is being fetched, or waits for a slot with its bytes in hand. Nothing
// waits for a place while holding one of the same kind, so the places
// cannot deadlock; a diff takes its loads place before its capture's.
// What a caller keeps after giving its place back is its rendered answer
// (a DOT graph: jeprof's 80 nodes, tens of KB).
//
// The cost: a node that does not answer holds its place until it times
// out (node_timeout), a fetch being the only way to learn that.

// permits is a counting semaphore, FIFO for its waiters (a channel's
// blocked senders), that remembers the most taken at once.
type permits struct {
	tokens  chan struct{}
	what    string // for the error and log of a wait that ends with ctx
	log     *zap.Logger
	metrics Metrics
	taken   atomic.Int64
	peak    atomic.Int64
}

func newPermits(n int, what string, log *zap.Logger, m Metrics) *permits {
	return &permits{tokens: make(chan struct{}, n), what: what, log: log, metrics: m}
}

// acquire waits within ctx for a place for who ("dump of node 10001");
// release gives it back (once, however often it is called).
func (p *permits) acquire(ctx context.Context, who string) (release func(), err error) {
	select {
	case p.tokens <- struct{}{}:
	default:
		start := time.Now()
		select {
		case p.tokens <- struct{}{}:
			p.log.Info("waited for a place in memory", zap.String("for", who), zap.String("bound", p.what),
				zap.Int("places", cap(p.tokens)), zap.Duration("waited", time.Since(start)))
		case <-ctx.Done():
			p.metrics.Error("dump_memory_busy")
			return nil, fmt.Errorf("%s: all %d places for %s stayed taken for %s: %w",
				who, cap(p.tokens), p.what, time.Since(start).Round(time.Millisecond), context.Cause(ctx))
		}
	}
	n := p.taken.Add(1)
	for {
		peak := p.peak.Load()
		if n <= peak || p.peak.CompareAndSwap(peak, n) {
			break
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			p.taken.Add(-1)
			<-p.tokens
		})
	}, nil
}
