package backends

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"sync"
	"time"

	"github.com/google/pprof/profile"
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
// with rate 0 no new allocations are sampled, while the samples already
// taken stay in the profile as long as their memory is in use.
type selfDriver struct {
	mu   sync.Mutex
	rate int // the rate Enable sets
	// sampledAt is the last nonzero runtime.MemProfileRate this driver
	// saw: the rate the profile's samples were taken at, which Dump scales
	// by once sampling is off.
	sampledAt int
}

func newSelfDriver(rate int) *selfDriver {
	if rate <= 0 {
		rate = DefaultSelfMemProfileRate
	}
	// Until someone changes it, the process samples at Go's default rate
	// (heapproxy sets 0 at start when self_profile_active is false: what was
	// sampled before that was sampled at the default).
	sampledAt := runtime.MemProfileRate
	if sampledAt <= 0 {
		sampledAt = DefaultSelfMemProfileRate
	}
	return &selfDriver{rate: rate, sampledAt: sampledAt}
}

func (d *selfDriver) Enable(context.Context, Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	runtime.MemProfileRate = d.rate
	d.sampledAt = d.rate
	return nil
}

func (d *selfDriver) Disable(context.Context, Node) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := runtime.MemProfileRate; r > 0 {
		d.sampledAt = r
	}
	runtime.MemProfileRate = 0
	return nil
}

func (d *selfDriver) Status(context.Context, Node) (bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return runtime.MemProfileRate > 0, nil
}

// Dump writes the heap profile as net/http/pprof does. runtime/pprof
// scales samples by the current runtime.MemProfileRate, and leaves them
// unscaled when it is 0: after disable_prof the in-use heap would read as
// the raw sampled bytes (a fraction of a percent of it). With sampling off,
// Dump scales the samples by the rate they were taken at instead.
func (d *selfDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	if err := ctx.Err(); err != nil {
		return nil, &NodeError{Node: n, Op: OpDump, Err: err}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	rate := runtime.MemProfileRate
	if rate > 0 {
		d.sampledAt = rate
	}
	// The heap profile is as of the last GC; collect so recent
	// allocations show, as net/http/pprof's ?gc=1 does.
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return nil, &NodeError{Node: n, Op: OpDump, Err: fmt.Errorf("runtime/pprof heap: %w", err)}
	}
	data := buf.Bytes()
	if rate <= 0 {
		var err error
		if data, err = scaleHeapProfile(data, d.sampledAt); err != nil {
			return nil, &NodeError{Node: n, Op: OpDump, Err: fmt.Errorf("runtime/pprof heap: %w", err)}
		}
	}
	return &Dump{Data: data, Format: FormatPprof, TakenAt: time.Now(), Node: n}, nil
}

// scaleHeapProfile takes a heap profile runtime/pprof wrote unscaled (at
// rate 0: the sampled counts and bytes as they are) and scales each
// (objects, bytes) pair as runtime/pprof does at the given sampling rate:
// a sample of average size s stands for 1/(1-exp(-s/rate)) as many.
func scaleHeapProfile(data []byte, rate int) ([]byte, error) {
	p, err := profile.ParseData(data)
	if err != nil {
		return nil, err
	}
	idx := map[string]int{}
	for i, st := range p.SampleType {
		idx[st.Type] = i
	}
	type pair struct{ objects, bytes int }
	var pairs []pair
	for _, k := range [][2]string{{"alloc_objects", "alloc_space"}, {"inuse_objects", "inuse_space"}} {
		o, ok1 := idx[k[0]]
		b, ok2 := idx[k[1]]
		if ok1 && ok2 {
			pairs = append(pairs, pair{o, b})
		}
	}
	if len(pairs) == 0 {
		return nil, fmt.Errorf("not a heap profile: sample types %v", p.SampleType)
	}
	for _, s := range p.Sample {
		for _, pr := range pairs {
			if pr.objects < len(s.Value) && pr.bytes < len(s.Value) {
				s.Value[pr.objects], s.Value[pr.bytes] = scaleHeapSample(s.Value[pr.objects], s.Value[pr.bytes], int64(rate))
			}
		}
	}
	p.Period = int64(rate)
	var out bytes.Buffer
	if err := p.Write(&out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// scaleHeapSample turns sampled (count, size) into the estimate of what
// was allocated, for Go's sampling by a Poisson process with the given
// mean period (rate 1: every allocation was recorded).
func scaleHeapSample(count, size, rate int64) (int64, int64) {
	switch {
	case count == 0 || size == 0:
		return 0, 0
	case rate <= 1:
		return count, size
	}
	scale := 1 / (1 - math.Exp(-float64(size)/float64(count)/float64(rate)))
	return int64(float64(count) * scale), int64(float64(size) * scale)
}

// SymbolURL is empty: Go profiles arrive symbolized.
func (d *selfDriver) SymbolURL(Node) string { return "" }
