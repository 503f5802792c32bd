package backends

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"
)

// DefaultSelfMemProfileRate is Go's own default sampling period.
const DefaultSelfMemProfileRate = 512 * 1024

// SelfNode is heapproxy itself as a node, so the embedded default can be
// profiled with no cluster.
func SelfNode(id int64) Node {
	return Node{ID: id, Kind: Self, Host: "localhost", Source: SourceBuiltin, Alive: true, LastSeen: time.Now()}
}

// selfDriver profiles the heapproxy process. Enable/Disable set
// runtime.MemProfileRate, the Go counterpart of jemalloc's prof.active:
// with rate 0 no new allocations are sampled.
type selfDriver struct {
	mu   sync.Mutex
	rate int // the rate Enable sets
}

func newSelfDriver(rate int) *selfDriver {
	if rate <= 0 {
		rate = DefaultSelfMemProfileRate
	}
	return &selfDriver{rate: rate}
}

func (d *selfDriver) Enable(context.Context, Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.MemProfileRate = d.rate
	return nil
}

func (d *selfDriver) Disable(context.Context, Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.MemProfileRate = 0
	return nil
}

func (d *selfDriver) Status(context.Context, Node) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return runtime.MemProfileRate > 0, nil
}

func (d *selfDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	if err := ctx.Err(); err != nil {
		return nil, &NodeError{Node: n, Op: OpDump, Err: err}
	}
	// The heap profile is as of the last GC; collect so recent
	// allocations show, as net/http/pprof's ?gc=1 does.
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return nil, &NodeError{Node: n, Op: OpDump, Err: fmt.Errorf("runtime/pprof heap: %w", err)}
	}
	return &Dump{Data: buf.Bytes(), Format: FormatPprof, TakenAt: time.Now(), Node: n}, nil
}

// SymbolURL is empty: Go profiles arrive symbolized.
func (d *selfDriver) SymbolURL(Node) string { return "" }
