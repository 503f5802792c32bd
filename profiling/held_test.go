package profiling

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
)

// dumpCounter counts the dump requests sent to nodes: what the nodes see,
// whatever the service believes it holds.
type dumpCounter struct {
	next  http.RoundTripper
	begun atomic.Int64
}

func (d *dumpCounter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/pprof/heap" {
		d.begun.Add(1)
	}
	return d.next.RoundTrip(r)
}

// A fan-out holds at most the bound's dumps in memory. Every snapshot's
// save waits at a gate, so each dump fetched stays held (its snapshot is
// queued); once the queue holds the bound's snapshots, the nodes must have
// been asked for exactly that many dumps, the other callers waiting for a
// place without fetching. Then the gate opens and every caller is
// answered; the most places ever taken is the bound, and none is left
// taken (callers that leave, shared captures, saves give theirs back).
func TestHeldDumpsBound(t *testing.T) {
	const n = 6 // real jenode nodes, more than any bound below
	var nodes []backends.Node
	for i := range n {
		host, port := runJenode(t, bins.full)
		nodes = append(nodes, backends.Node{ID: int64(10001 + i), Kind: backends.StarRocks, Host: host, HTTPPort: port, Binary: bins.full})
	}
	dumpDOT := func(ctx context.Context, s *Service, node backends.Node) (string, error) {
		a, err := s.DumpDOT(ctx, node)
		return a.Text, err
	}
	for _, c := range []struct {
		name                 string
		maxDumps, maxHeld    int
		bound                int
		callersPerNode       int
		lastCallersLeave     bool // the last caller of each node leaves while the gate is shut
		call                 func(context.Context, *Service, backends.Node) (string, error)
		want                 string // each answer's prefix
		fetchesAreOnePerNode bool
	}{
		{"dump_dot_snapshot, max_dumps 1, 2 held", 1, 2, 2, 1, false, dumpDOT, "digraph", true},
		{"dump_dot_snapshot, max_dumps 2, default bound", 2, 0, 4, 1, false, dumpDOT, "digraph", true},
		{"snapshot(): callers wait for the save", 1, 2, 2, 1, false, func(ctx context.Context, s *Service, node backends.Node) (string, error) {
			a, err := s.Snapshot(ctx, node)
			return a.Text, err
		}, "heap_profile.", true},
		// A second caller of a node shares its capture when it arrives
		// before the capture ends, else it starts one of its own.
		{"two callers per node", 1, 2, 2, 2, false, dumpDOT, "digraph", false},
		{"callers that leave", 1, 2, 2, 2, true, dumpDOT, "digraph", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			g := newGatedStore(t)
			if c.bound > g.queue.Limit() {
				t.Fatalf("bound %d over the gated queue's %d places: the queue would hold the test up", c.bound, g.queue.Limit())
			}
			counter := &dumpCounter{next: &http.Transport{}}
			reg := backends.NewRegistry(backends.Options{Timeout: time.Minute, HTTPClient: &http.Client{Transport: counter,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}})
			reg.Add(nodes...)
			s, err := New(Options{Registry: reg, Store: g, Log: zap.NewNop(), Timeout: time.Minute,
				MaxDumps: c.maxDumps, MaxHeldDumps: c.maxHeld})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			if got := cap(s.held.tokens); got != c.bound {
				t.Fatalf("bound = %d, want %d", got, c.bound)
			}

			type answer struct {
				node    int64
				leaving bool
				text    string
				err     error
			}
			answers := make(chan answer, n*c.callersPerNode)
			leaveCtx, leave := context.WithCancel(ctx)
			defer leave()
			var wg sync.WaitGroup
			for _, node := range nodes {
				for k := range c.callersPerNode {
					leaving := c.lastCallersLeave && k == c.callersPerNode-1
					cctx := ctx
					if leaving {
						cctx = leaveCtx
					}
					wg.Go(func() {
						text, err := c.call(cctx, s, node)
						answers <- answer{node.ID, leaving, text, err}
					})
				}
			}
			// The bound's snapshots queued, their saves shut out: no
			// place is free until the gate opens.
			for len(g.queue.Pending()) < c.bound {
				select {
				case <-ctx.Done():
					t.Fatalf("%d snapshots queued, want %d: %v", len(g.queue.Pending()), c.bound, context.Cause(ctx))
				case <-time.After(10 * time.Millisecond):
				}
			}
			if got := counter.begun.Load(); got != int64(c.bound) {
				t.Errorf("the nodes were asked for %d dumps while %d snapshots wait to be saved: want exactly %d (fetched ahead of the bound: %v)",
					got, c.bound, c.bound, got > int64(c.bound))
			}
			if got := s.held.taken.Load(); got != int64(c.bound) {
				t.Errorf("%d places taken while the gate is shut, want %d", got, c.bound)
			}
			leave()
			g.open()
			wg.Wait()
			close(answers)
			answered := map[int64]int{}
			for a := range answers {
				switch {
				case a.leaving && errors.Is(a.err, context.Canceled):
				case a.err != nil:
					t.Errorf("node %d: %v", a.node, a.err)
				case !strings.HasPrefix(a.text, c.want):
					t.Errorf("node %d answered %.80q, want %s...", a.node, a.text, c.want)
				default:
					answered[a.node]++
				}
			}
			if len(answered) != n {
				t.Errorf("answers from %d nodes, want %d: %v", len(answered), n, answered)
			}
			g.flush(t)
			fetched := counter.begun.Load()
			if c.fetchesAreOnePerNode && fetched != n {
				t.Errorf("%d dumps fetched, want one per node (%d)", fetched, n)
			}
			g.mu.Lock()
			saved := len(g.saved)
			g.mu.Unlock()
			if int64(saved) != fetched {
				t.Errorf("%d snapshots saved of %d dumps fetched", saved, fetched)
			}
			if peak := s.held.peak.Load(); peak != int64(c.bound) {
				t.Errorf("most dumps held at once: %d, want the bound, %d", peak, c.bound)
			}
			if taken := s.held.taken.Load(); taken != 0 {
				t.Errorf("%d places still taken after every answer and save", taken)
			}
			t.Logf("%d dumps fetched, %d nodes answered, at most %d held", fetched, len(answered), s.held.peak.Load())
		})
	}
}
