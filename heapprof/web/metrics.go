package web

import (
	"bufio"
	"io"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
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

// statementKinds are the kinds the server counts (server/local.go,
// server/commands.go): their children exist from the start, so they are
// exposed as 0 before the first statement and Statement never creates them.
// A kind missing here still works, it is created on first use.
func statementKinds() []string {
	return []string{"forwarded", "local", "admin_execute", "show_backends"}
}

// Names and help texts of the proxy's own metric families.
const (
	connsOpenName   = "heapproxy_connections_open"
	connsTotalName  = "heapproxy_connections_total"
	statementsName  = "heapproxy_statements_total"
	dumpsName       = "heapproxy_dumps_total"
	dumpErrorsName  = "heapproxy_dump_errors_total"
	dumpLatencyName = "heapproxy_dump_duration_seconds"
	errorsName      = "heapproxy_errors_total"
	sqlErrorsName   = "heapproxy_sql_errors_total"
)

// Metrics counts what the proxy does, for Prometheus, in a registry of its
// own that also holds the Go runtime's (go_*) and the process's
// (process_*) collectors. It is safe for concurrent use; the zero value is
// not ready, use NewMetrics.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	connsOpen  prometheus.Gauge
	connsTotal prometheus.Counter
	// forwarded is statements of kind "forwarded", one per relayed client
	// command: held apart so the relay path is one comparison and one
	// atomic add.
	forwarded   prometheus.Counter
	statements  *bounded[string, prometheus.Counter]
	dumps       *bounded[string, prometheus.Counter]
	dumpErrors  *bounded[string, prometheus.Counter]
	dumpLatency *bounded[string, prometheus.Observer]
	errors      *bounded[string, prometheus.Counter]
	sqlErrors   *bounded[uint16, prometheus.Counter]
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
	if len(b) == 0 {
		// No finite bound: only the +Inf bucket. An empty list would make
		// client_golang use its default buckets.
		b = []float64{math.Inf(1)}
	}

	m := &Metrics{reg: prometheus.NewRegistry()}
	m.connsOpen = prometheus.NewGauge(prometheus.GaugeOpts{Name: connsOpenName, Help: "Client connections currently open."})
	m.connsTotal = prometheus.NewCounter(prometheus.CounterOpts{Name: connsTotalName, Help: "Client connections accepted."})
	statements := prometheus.NewCounterVec(prometheus.CounterOpts{Name: statementsName, Help: "Client statements by kind."}, []string{"kind"})
	dumps := prometheus.NewCounterVec(prometheus.CounterOpts{Name: dumpsName, Help: "Heap profile dumps by node kind."}, []string{"node_kind"})
	dumpErrors := prometheus.NewCounterVec(prometheus.CounterOpts{Name: dumpErrorsName, Help: "Failed heap profile dumps by node kind."}, []string{"node_kind"})
	dumpLatency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: dumpLatencyName,
		Help: "Time to dump a node's heap profile, failed dumps included.", Buckets: b}, []string{"node_kind"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: errorsName, Help: "Errors by kind."}, []string{"kind"})
	sqlErrors := prometheus.NewCounterVec(prometheus.CounterOpts{Name: sqlErrorsName,
		Help: "SQL errors sent to clients by MySQL error code."}, []string{"code"})
	m.reg.MustRegister(m.connsOpen, m.connsTotal, statements, dumps, dumpErrors, dumpLatency, errs, sqlErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))

	m.statements = newBounded(labelString, statements.WithLabelValues, statementKinds()...)
	m.forwarded = m.statements.get("forwarded")
	m.dumps = newBounded(labelString, dumps.WithLabelValues)
	m.dumpErrors = newBounded(labelString, dumpErrors.WithLabelValues)
	m.dumpLatency = newBounded(labelString, dumpLatency.WithLabelValues)
	m.errors = newBounded(labelString, errs.WithLabelValues)
	m.sqlErrors = newBounded(labelCode, sqlErrors.WithLabelValues)

	// A scrape still gets the proxy's metrics if a collector fails, e.g.
	// the process collector where /proc is mounted with hidepid.
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
	return m
}

// ConnOpened counts a client connection that was accepted.
func (m *Metrics) ConnOpened() {
	m.connsOpen.Inc()
	m.connsTotal.Inc()
}

// ConnClosed counts a client connection that ended.
func (m *Metrics) ConnClosed() { m.connsOpen.Dec() }

// Statement counts one client statement of the kind (e.g. "admin_execute",
// "forward", "show_backends").
func (m *Metrics) Statement(kind string) {
	if kind == "forwarded" {
		m.forwarded.Inc()
		return
	}
	m.statements.get(kind).Inc()
}

// Dump counts one dump of a node of nodeKind that took d; err != nil
// counts it as failed too. Failed dumps are in the latency histogram as
// well: a node that times out is exactly the latency one wants to see.
func (m *Metrics) Dump(nodeKind string, d time.Duration, err error) {
	m.dumps.get(nodeKind).Inc()
	if err != nil {
		m.dumpErrors.get(nodeKind).Inc()
	}
	m.dumpLatency.get(nodeKind).Observe(d.Seconds())
}

// Error counts an error of the kind (e.g. "auth", "upstream", "snapshot").
func (m *Metrics) Error(kind string) { m.errors.get(kind).Inc() }

// SQLError counts one SQL error (ERR packet) sent to a client, by its
// MySQL error code (e.g. 1064), as heapproxy_sql_errors_total{code="1064"}.
func (m *Metrics) SQLError(code uint16) { m.sqlErrors.get(code).Inc() }

// ServeHTTP serves all metrics, the proxy's, go_* and process_*, in the
// format the scraper asks for (the text format 0.0.4 by default).
func (m *Metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if r.Method == http.MethodHead {
		// What a GET would get, without gathering: the process collector
		// reads /proc.
		w.Header().Set("Content-Type", string(expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)))
		return
	}
	m.handler.ServeHTTP(w, r)
}

// Write writes the proxy's own metrics (heapproxy_*, not go_* and
// process_*) in the Prometheus text exposition format 0.0.4. The families
// heapproxy has always exposed are written with HELP and TYPE even before
// their first sample; heapproxy_sql_errors_total, like any client_golang
// vector, appears with its first error.
func (m *Metrics) Write(w io.Writer) error {
	families, err := m.reg.Gather()
	if err != nil {
		return err
	}
	own := ownFamilies()
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		if _, ok := own[f.GetName()]; ok {
			byName[f.GetName()] = f
		}
	}
	b := bufio.NewWriter(w)
	for _, name := range slices.Sorted(maps.Keys(own)) {
		f := byName[name]
		switch {
		case f != nil:
			if _, err := expfmt.MetricFamilyToText(b, f); err != nil {
				return err
			}
		case own[name].announce:
			// expfmt refuses a family without metrics.
			b.WriteString("# HELP " + name + " " + own[name].help + "\n# TYPE " + name + " " + own[name].typ + "\n")
		}
	}
	return b.Flush()
}

// family is what Write needs to know of one of the proxy's metric families.
type family struct {
	help, typ string
	// announce writes HELP and TYPE for the family before its first sample.
	announce bool
}

// ownFamilies returns the proxy's metric families by name; the help texts
// are those NewMetrics registers.
func ownFamilies() map[string]family {
	return map[string]family{
		connsOpenName:   {"Client connections currently open.", "gauge", true},
		connsTotalName:  {"Client connections accepted.", "counter", true},
		statementsName:  {"Client statements by kind.", "counter", true},
		dumpsName:       {"Heap profile dumps by node kind.", "counter", true},
		dumpErrorsName:  {"Failed heap profile dumps by node kind.", "counter", true},
		dumpLatencyName: {"Time to dump a node's heap profile, failed dumps included.", "histogram", true},
		errorsName:      {"Errors by kind.", "counter", true},
		sqlErrorsName:   {"SQL errors sent to clients by MySQL error code.", "counter", false},
	}
}

// bounded hands out the children of one metric vector by key, for at most
// maxLabelValues label values, the overflow value included: beyond that,
// new keys share the overflow child.
//
// Known keys cost an atomic load and a map lookup, without a lock: the map
// is copied on write, and writes are rare (a new key, at most
// maxLabelValues-1 times per vector).
type bounded[K comparable, T any] struct {
	label    func(K) string
	child    func(...string) T
	children atomic.Pointer[map[K]T]

	mu       sync.Mutex // serializes writers of children
	overflow *T         // created on first overflow, under mu
}

// newBounded returns a bounded vector whose label value for a key is
// label(key), with children from child (a vector's WithLabelValues),
// creating those of known now.
func newBounded[K comparable, T any](label func(K) string, child func(...string) T, known ...K) *bounded[K, T] {
	v := &bounded[K, T]{label: label, child: child}
	v.children.Store(&map[K]T{})
	for _, k := range known {
		v.get(k)
	}
	return v
}

// get returns the child for key.
func (v *bounded[K, T]) get(key K) T {
	if c, ok := (*v.children.Load())[key]; ok {
		return c
	}
	return v.add(key)
}

// add creates the child for key, or returns the overflow child.
func (v *bounded[K, T]) add(key K) T {
	v.mu.Lock()
	defer v.mu.Unlock()
	old := *v.children.Load()
	if c, ok := old[key]; ok {
		return c
	}
	// One place stays free for the overflow value.
	if len(old) >= maxLabelValues-1 {
		if v.overflow == nil {
			c := v.child(overflowLabel)
			v.overflow = &c
		}
		return *v.overflow
	}
	c := v.child(v.label(key))
	next := maps.Clone(old)
	next[key] = c
	v.children.Store(&next)
	return c
}

// labelString is a kind as a label value, which must be valid UTF-8.
func labelString(s string) string {
	if !utf8.ValidString(s) {
		return strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// labelCode is a MySQL error code as a label value.
func labelCode(code uint16) string { return strconv.FormatUint(uint64(code), 10) }
