package web

import (
	"bufio"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultDumpBuckets returns the upper bounds, in seconds, of the dump latency
// histogram: a Go node answers in milliseconds, a jemalloc dump with
// symbolization of a large binary takes seconds, StarRocks' own path took
// 30 s (DESIGN §6) and the FE gives up after 60 s.
func DefaultDumpBuckets() []float64 {
	return []float64{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}
}

// maxLabelValues bounds how many distinct label values one metric keeps,
// the overflow value included.
// Kinds come from the server's own code, but a bug or a hostile node kind
// must not grow the exposition without bound; the rest count as "other".
const maxLabelValues = 64

// overflowLabel is the label value that counts everything beyond maxLabelValues.
const overflowLabel = "other"

// Metrics counts what the proxy does, for Prometheus. It is safe for
// concurrent use; the zero value is not ready, use NewMetrics.
type Metrics struct {
	buckets []float64

	// forwarded counts statements of kind "forwarded", one per relayed
	// client command: an atomic keeps the relay path off the mutex that
	// every session would otherwise take per statement.
	forwarded atomic.Uint64

	mu          sync.Mutex
	connsOpen   int64
	connsTotal  uint64
	statements  labeled[uint64]
	dumps       labeled[uint64]
	dumpErrors  labeled[uint64]
	dumpLatency labeled[histogram]
	errors      labeled[uint64]
}

// NewMetrics returns empty metrics whose dump latency histogram uses
// buckets (upper bounds in seconds); nil means DefaultDumpBuckets().
func NewMetrics(buckets []float64) *Metrics {
	if buckets == nil {
		buckets = DefaultDumpBuckets()
	}
	b := slices.Clone(buckets)
	slices.Sort(b)
	b = slices.Compact(b)
	// +Inf is implicit in the exposition; keep only finite bounds.
	b = slices.DeleteFunc(b, func(f float64) bool { return math.IsInf(f, 0) || math.IsNaN(f) })
	return &Metrics{buckets: b}
}

// ConnOpened counts a client connection that was accepted.
func (m *Metrics) ConnOpened() {
	m.mu.Lock()
	m.connsOpen++
	m.connsTotal++
	m.mu.Unlock()
}

// ConnClosed counts a client connection that ended.
func (m *Metrics) ConnClosed() {
	m.mu.Lock()
	m.connsOpen--
	m.mu.Unlock()
}

// Statement counts one client statement of the kind (e.g. "admin_execute",
// "forward", "show_backends").
func (m *Metrics) Statement(kind string) {
	if kind == "forwarded" {
		m.forwarded.Add(1)
		return
	}
	m.mu.Lock()
	*m.statements.at(kind)++
	m.mu.Unlock()
}

// Dump counts one dump of a node of nodeKind that took d; err != nil
// counts it as failed too. Failed dumps are in the latency histogram as
// well: a node that times out is exactly the latency one wants to see.
func (m *Metrics) Dump(nodeKind string, d time.Duration, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.dumps.at(nodeKind)++
	if err != nil {
		*m.dumpErrors.at(nodeKind)++
	}
	m.dumpLatency.at(nodeKind).observe(m.buckets, d.Seconds())
}

// Error counts an error of the kind (e.g. "auth", "upstream", "snapshot").
func (m *Metrics) Error(kind string) {
	m.mu.Lock()
	*m.errors.at(kind)++
	m.mu.Unlock()
}

// ServeHTTP writes the metrics in the Prometheus text exposition format 0.0.4.
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if r.Method == http.MethodHead {
		return
	}
	// The client going away is the only write error; nothing to do about it.
	_ = m.Write(w)
}

// Write writes the metrics in the Prometheus text exposition format 0.0.4.
func (m *Metrics) Write(w io.Writer) error {
	// Copy under the lock, format outside it: a slow scraper must not stall
	// the proxy's connections.
	m.mu.Lock()
	open, total := m.connsOpen, m.connsTotal
	statements, dumps, dumpErrors, errs := m.statements.snapshot(same), m.dumps.snapshot(same), m.dumpErrors.snapshot(same), m.errors.snapshot(same)
	latency := m.dumpLatency.snapshot(func(h histogram) histogram {
		h.counts = slices.Clone(h.counts)
		return h
	})
	m.mu.Unlock()
	if n := m.forwarded.Load(); n > 0 {
		statements["forwarded"] += n
	}

	b := bufio.NewWriter(w)
	header(b, "heapproxy_connections_open", "gauge", "Client connections currently open.")
	sample(b, "heapproxy_connections_open", "", strconv.FormatInt(open, 10))
	header(b, "heapproxy_connections_total", "counter", "Client connections accepted.")
	sample(b, "heapproxy_connections_total", "", strconv.FormatUint(total, 10))
	counterVec(b, "heapproxy_statements_total", "Client statements by kind.", "kind", statements)
	counterVec(b, "heapproxy_dumps_total", "Heap profile dumps by node kind.", "node_kind", dumps)
	counterVec(b, "heapproxy_dump_errors_total", "Failed heap profile dumps by node kind.", "node_kind", dumpErrors)

	const hname = "heapproxy_dump_duration_seconds"
	header(b, hname, "histogram", "Time to dump a node's heap profile, failed dumps included.")
	for _, kind := range sortedKeys(latency) {
		h := latency[kind]
		kl := label("node_kind", kind)
		var cum uint64
		for i, le := range m.buckets {
			cum += h.counts[i]
			sample(b, hname+"_bucket", kl+","+label("le", formatFloat(le)), strconv.FormatUint(cum, 10))
		}
		sample(b, hname+"_bucket", kl+","+label("le", "+Inf"), strconv.FormatUint(h.count, 10))
		sample(b, hname+"_sum", kl, formatFloat(h.sum))
		sample(b, hname+"_count", kl, strconv.FormatUint(h.count, 10))
	}
	counterVec(b, "heapproxy_errors_total", "Errors by kind.", "kind", errs)
	return b.Flush()
}

// labeled is one metric's values by label value, bounded in size.
type labeled[T any] struct{ m map[string]*T }

// at returns the value for the label, creating it; beyond maxLabelValues
// distinct values, the overflow slot.
func (l *labeled[T]) at(value string) *T {
	if l.m == nil {
		l.m = map[string]*T{}
	}
	// One place stays free for the overflow slot itself.
	if _, ok := l.m[value]; !ok && len(l.m) >= maxLabelValues-1 {
		value = overflowLabel
	}
	p := l.m[value]
	if p == nil {
		p = new(T)
		l.m[value] = p
	}
	return p
}

// snapshot copies the values; the caller holds the lock.
func (l *labeled[T]) snapshot(cp func(T) T) map[string]T {
	out := make(map[string]T, len(l.m))
	for k, p := range l.m {
		out[k] = cp(*p)
	}
	return out
}

func same[T any](v T) T { return v }

// histogram counts observations per bucket (not cumulative).
type histogram struct {
	counts []uint64
	count  uint64
	sum    float64
}

func (h *histogram) observe(buckets []float64, v float64) {
	if h.counts == nil {
		h.counts = make([]uint64, len(buckets))
	}
	h.count++
	h.sum += v
	if i, _ := slices.BinarySearch(buckets, v); i < len(buckets) {
		h.counts[i]++
	}
}

func header(b *bufio.Writer, name, typ, help string) {
	b.WriteString("# HELP " + name + " " + help + "\n")
	b.WriteString("# TYPE " + name + " " + typ + "\n")
}

// sample writes one sample line; labels is `a="x",b="y"` or empty.
func sample(b *bufio.Writer, name, labels, value string) {
	if labels != "" {
		name += "{" + labels + "}"
	}
	b.WriteString(name + " " + value + "\n")
}

// label formats one label pair with its value escaped.
func label(name, value string) string { return name + `="` + escapeLabel(value) + `"` }

func counterVec(b *bufio.Writer, name, help, labelName string, values map[string]uint64) {
	header(b, name, "counter", help)
	for _, k := range sortedKeys(values) {
		sample(b, name, label(labelName, k), strconv.FormatUint(values[k], 10))
	}
}

// escapeLabel escapes a label value as the text format requires.
func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func formatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func sortedKeys[T any](m map[string]T) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
