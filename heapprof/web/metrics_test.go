package web

import (
	"bufio"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// exposition is a parsed Prometheus text exposition (format 0.0.4).
type exposition struct {
	types   map[string]string  // metric family -> type
	samples map[string]float64 // `name{labels}` as written -> value
	order   []string
}

var (
	// https://prometheus.io/docs/instrumenting/exposition_formats/
	metricName = `[a-zA-Z_:][a-zA-Z0-9_:]*`
	labelPair  = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*"`
	sampleRE   = regexp.MustCompile(`^(` + metricName + `)(\{(?:` + labelPair + `)(?:,` + labelPair + `)*\})? (\S+)$`)
	helpRE     = regexp.MustCompile(`^# HELP (` + metricName + `) (.*)$`)
	typeRE     = regexp.MustCompile(`^# TYPE (` + metricName + `) (counter|gauge|histogram|summary|untyped)$`)
)

// parseExposition checks every line against the text format's grammar and
// its rules: TYPE before the family's samples and at most once, sample
// names belong to a typed family, values parse, no duplicate samples.
func parseExposition(text string) (*exposition, error) {
	e := &exposition{types: map[string]string{}, samples: map[string]float64{}}
	seenSample := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "# HELP "):
			if !helpRE.MatchString(line) {
				return nil, fmt.Errorf("line %d: bad HELP: %q", n, line)
			}
		case strings.HasPrefix(line, "# TYPE "):
			m := typeRE.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: bad TYPE: %q", n, line)
			}
			if _, dup := e.types[m[1]]; dup {
				return nil, fmt.Errorf("line %d: second TYPE for %s", n, m[1])
			}
			if seenSample[m[1]] {
				return nil, fmt.Errorf("line %d: TYPE for %s after its samples", n, m[1])
			}
			e.types[m[1]] = m[2]
		case strings.HasPrefix(line, "#"):
		default:
			m := sampleRE.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("line %d: bad sample: %q", n, line)
			}
			family := m[1]
			if e.types[family] == "" {
				for _, suf := range []string{"_bucket", "_sum", "_count"} {
					// A summary (go_gc_duration_seconds) has _sum and _count too.
					f := strings.TrimSuffix(family, suf)
					if f != family && (e.types[f] == "histogram" || e.types[f] == "summary" && suf != "_bucket") {
						family = f
					}
				}
			}
			if e.types[family] == "" {
				return nil, fmt.Errorf("line %d: sample of untyped family %s", n, m[1])
			}
			seenSample[family] = true
			v, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: value: %w", n, err)
			}
			key := m[1] + m[2]
			if _, dup := e.samples[key]; dup {
				return nil, fmt.Errorf("line %d: duplicate sample %s", n, key)
			}
			e.samples[key] = v
			e.order = append(e.order, key)
		}
	}
	if !strings.HasSuffix(text, "\n") {
		return nil, errors.New("exposition does not end with a newline")
	}
	return e, sc.Err()
}

func TestMetricsExposition(t *testing.T) {
	m := NewMetrics([]float64{0.1, 1, 10})
	// Concurrent updates: run with -race.
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			m.ConnOpened()
			m.Statement("admin_execute")
			m.Statement("forward")
			m.Statement("forwarded")
			m.Statement("forwarded")
			m.Dump("jemalloc", 50*time.Millisecond, nil)
			m.Dump("go", 2*time.Second, nil)
			m.Dump("go", 20*time.Second, errors.New("timeout"))
			m.Error("upstream")
		})
	}
	wg.Wait()
	for range 3 {
		m.ConnClosed()
	}
	m.Statement(`we"ird\kind` + "\nx")

	srv, _ := newTestServer(t, Options{Metrics: m})
	resp, body := get(t, srv.URL+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type %q", ct)
	}
	e, err := parseExposition(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	tests := []struct {
		sample string
		want   float64
	}{
		{"heapproxy_connections_open", 7},
		{"heapproxy_connections_total", 10},
		{`heapproxy_statements_total{kind="admin_execute"}`, 10},
		{`heapproxy_statements_total{kind="forward"}`, 10},
		{`heapproxy_statements_total{kind="forwarded"}`, 20},
		{`heapproxy_statements_total{kind="we\"ird\\kind\nx"}`, 1},
		{`heapproxy_dumps_total{node_kind="go"}`, 20},
		{`heapproxy_dumps_total{node_kind="jemalloc"}`, 10},
		{`heapproxy_dump_errors_total{node_kind="go"}`, 10},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="go",le="0.1"}`, 0},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="go",le="1"}`, 0},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="go",le="10"}`, 10},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="go",le="+Inf"}`, 20},
		{`heapproxy_dump_duration_seconds_count{node_kind="go"}`, 20},
		{`heapproxy_dump_duration_seconds_sum{node_kind="go"}`, 220},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="jemalloc",le="0.1"}`, 10},
		{`heapproxy_dump_duration_seconds_bucket{node_kind="jemalloc",le="+Inf"}`, 10},
		{`heapproxy_errors_total{kind="upstream"}`, 10},
	}
	for _, tt := range tests {
		got, ok := e.samples[tt.sample]
		if !ok {
			t.Errorf("missing %s", tt.sample)
			continue
		}
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s = %v, want %v", tt.sample, got, tt.want)
		}
	}
	for family, typ := range map[string]string{
		"heapproxy_connections_open": "gauge", "heapproxy_connections_total": "counter",
		"heapproxy_statements_total": "counter", "heapproxy_dumps_total": "counter",
		"heapproxy_dump_errors_total": "counter", "heapproxy_dump_duration_seconds": "histogram",
		"heapproxy_errors_total": "counter",
	} {
		if e.types[family] != typ {
			t.Errorf("TYPE of %s = %q, want %s", family, e.types[family], typ)
		}
	}
	checkHistograms(t, e)
}

// checkHistograms checks the histogram rules: buckets ascending in le and
// cumulative, the +Inf bucket last and equal to _count.
func checkHistograms(t *testing.T, e *exposition) {
	t.Helper()
	leRE := regexp.MustCompile(`^(\w+)_bucket\{(.*),le="([^"]+)"\}$`)
	last := map[string][2]float64{} // series -> (le, count)
	inf := map[string]float64{}
	for _, key := range e.order {
		m := leRE.FindStringSubmatch(key)
		if m == nil {
			continue
		}
		series := m[1] + "{" + m[2] + "}"
		le := math.Inf(1)
		if m[3] != "+Inf" {
			var err error
			if le, err = strconv.ParseFloat(m[3], 64); err != nil {
				t.Fatalf("%s: le: %v", key, err)
			}
		}
		if p, ok := last[series]; ok && (le <= p[0] || e.samples[key] < p[1]) {
			t.Errorf("%s: le or count not ascending after le=%v count=%v", key, p[0], p[1])
		}
		last[series] = [2]float64{le, e.samples[key]}
		if math.IsInf(le, 1) {
			inf[series] = e.samples[key]
		}
	}
	if len(last) == 0 {
		t.Fatal("no histogram buckets")
	}
	for series, p := range last {
		if !math.IsInf(p[0], 1) {
			t.Errorf("%s: last bucket le=%v, want +Inf", series, p[0])
		}
		name, labels, _ := strings.Cut(series, "{")
		count := e.samples[name+"_count{"+labels]
		if inf[series] != count {
			t.Errorf("%s: +Inf bucket %v != _count %v", series, inf[series], count)
		}
	}
}

func TestMetricsEmptyAndBounded(t *testing.T) {
	m := NewMetrics(nil)
	var b strings.Builder
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	e, err := parseExposition(b.String())
	if err != nil {
		t.Fatalf("empty: %v\n%s", err, b.String())
	}
	if e.samples["heapproxy_connections_open"] != 0 || len(e.types) != 7 {
		t.Errorf("empty metrics: %v %v", e.samples, e.types)
	}

	// Label values beyond the bound are counted as "other", not dropped.
	for i := range maxLabelValues + 10 {
		m.Statement(fmt.Sprint("kind", i))
		m.Dump(fmt.Sprint("node", i), time.Millisecond, nil)
	}
	b.Reset()
	if err := m.Write(&b); err != nil {
		t.Fatal(err)
	}
	if e, err = parseExposition(b.String()); err != nil {
		t.Fatal(err)
	}
	var kinds int
	var sum float64
	for k, v := range e.samples {
		if strings.HasPrefix(k, "heapproxy_statements_total{") {
			kinds++
			sum += v
		}
	}
	if kinds != maxLabelValues || sum != maxLabelValues+10 {
		t.Errorf("statements: %d label values summing to %v, want %d summing to %d", kinds, sum, maxLabelValues, maxLabelValues+10)
	}
	if got := e.samples[`heapproxy_dump_duration_seconds_count{node_kind="other"}`]; got != 11 {
		t.Errorf(`dump count for "other" = %v, want 11`, got)
	}

	// HEAD and other methods.
	srv, _ := newTestServer(t, Options{Metrics: m})
	resp, err := http.Post(srv.URL+"/metrics", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d", resp.StatusCode)
	}
}

// scrape serves m's /metrics to a GET with the headers and returns the
// response and its body.
func scrape(t *testing.T, m *Metrics, method string, header http.Header) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, "/metrics", nil)
	maps.Copy(req.Header, header)
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, req)
	return rec.Result(), rec.Body.String()
}

// helpTexts returns the HELP text of every family in an exposition.
func helpTexts(text string) map[string]string {
	help := map[string]string{}
	for line := range strings.Lines(text) {
		if m := helpRE.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			help[m[1]] = m[2]
		}
	}
	return help
}

func TestMetricsFamilies(t *testing.T) {
	m := NewMetrics(nil)
	var empty strings.Builder
	if err := m.Write(&empty); err != nil {
		t.Fatal(err)
	}
	m.ConnOpened()
	m.Statement("local")
	m.Dump("go", time.Second, errors.New("timeout"))
	m.Error("parse")
	m.SQLError(1064)
	_, body := scrape(t, m, http.MethodGet, nil)
	e, err := parseExposition(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	served, written := helpTexts(body), helpTexts(empty.String())
	tests := []struct {
		family, typ, help string
		inWrite           bool // Write announces it before its first sample
	}{
		{"heapproxy_connections_open", "gauge", "Client connections currently open.", true},
		{"heapproxy_connections_total", "counter", "Client connections accepted.", true},
		{"heapproxy_statements_total", "counter", "Client statements by kind.", true},
		{"heapproxy_dumps_total", "counter", "Heap profile dumps by node kind.", true},
		{"heapproxy_dump_errors_total", "counter", "Failed heap profile dumps by node kind.", true},
		{"heapproxy_dump_duration_seconds", "histogram", "Time to dump a node's heap profile, failed dumps included.", true},
		{"heapproxy_errors_total", "counter", "Errors by kind.", true},
		{"heapproxy_sql_errors_total", "counter", "SQL errors sent to clients by MySQL error code.", false},
		// The runtime's and the process's own collectors.
		{"go_goroutines", "gauge", "", false},
		{"go_memstats_heap_alloc_bytes", "gauge", "", false},
	}
	// Other collectors' help texts change between client_golang versions:
	// "" wants any.
	if runtime.GOOS == "linux" {
		tests = append(tests, struct {
			family, typ, help string
			inWrite           bool
		}{"process_resident_memory_bytes", "gauge", "", false})
	}
	for _, tt := range tests {
		t.Run(tt.family, func(t *testing.T) {
			if e.types[tt.family] != tt.typ {
				t.Errorf("TYPE %q, want %s", e.types[tt.family], tt.typ)
			}
			if got := served[tt.family]; got == "" || tt.help != "" && got != tt.help {
				t.Errorf("HELP %q, want %q", got, tt.help)
			}
			if got, ok := written[tt.family]; ok != tt.inWrite || ok && got != tt.help {
				t.Errorf("in Write before the first sample: %v with HELP %q, want %v", ok, got, tt.inWrite)
			}
		})
	}
	// Write has the proxy's families only.
	for family := range written {
		if !strings.HasPrefix(family, "heapproxy_") {
			t.Errorf("Write has %s", family)
		}
	}
}

func TestMetricsSQLErrors(t *testing.T) {
	tests := []struct {
		name   string
		codes  []uint16
		want   map[string]float64 // sample -> value
		series int
	}{
		{
			name:   "codes",
			codes:  []uint16{1064, 1064, 1045, 1064, 0, 65535},
			want:   map[string]float64{`{code="1064"}`: 3, `{code="1045"}`: 1, `{code="0"}`: 1, `{code="65535"}`: 1},
			series: 4,
		},
		{
			name: "bounded",
			codes: func() []uint16 {
				var c []uint16
				for i := range maxLabelValues + 20 {
					c = append(c, uint16(1000+i))
				}
				return append(c, 1000, 1000+maxLabelValues) // a known code, an overflowed one
			}(),
			want:   map[string]float64{`{code="1000"}`: 2, `{code="other"}`: 22},
			series: maxLabelValues,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics(nil)
			for _, c := range tt.codes {
				m.SQLError(c)
			}
			var b strings.Builder
			if err := m.Write(&b); err != nil {
				t.Fatal(err)
			}
			e, err := parseExposition(b.String())
			if err != nil {
				t.Fatalf("%v\n%s", err, b.String())
			}
			for sample, want := range tt.want {
				if got := e.samples["heapproxy_sql_errors_total"+sample]; got != want {
					t.Errorf("%s = %v, want %v", sample, got, want)
				}
			}
			var series int
			var sum float64
			for k, v := range e.samples {
				if strings.HasPrefix(k, "heapproxy_sql_errors_total{") {
					series++
					sum += v
				}
			}
			if series != tt.series || sum != float64(len(tt.codes)) {
				t.Errorf("%d series summing to %v, want %d summing to %d", series, sum, tt.series, len(tt.codes))
			}
		})
	}
}

func TestMetricsLabelValues(t *testing.T) {
	tests := []struct {
		name, kind, sample string
	}{
		{"plain", "admin_execute", `heapproxy_statements_total{kind="admin_execute"}`},
		{"invalid UTF-8", "bad\xffkind", `heapproxy_statements_total{kind="bad` + "\uFFFD" + `kind"}`},
		{"empty", "", `heapproxy_statements_total{kind=""}`},
		{"the overflow value itself", "other", `heapproxy_statements_total{kind="other"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewMetrics(nil)
			m.Statement(tt.kind)
			m.Statement(tt.kind)
			_, body := scrape(t, m, http.MethodGet, nil)
			e, err := parseExposition(body)
			if err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			if got := e.samples[tt.sample]; got != 2 {
				t.Errorf("%s = %v, want 2", tt.sample, got)
			}
		})
	}
}

// Each Metrics has its own registry: two count apart, and nothing is
// registered in client_golang's default registry.
func TestMetricsOwnRegistry(t *testing.T) {
	a, b := NewMetrics(nil), NewMetrics([]float64{1})
	a.ConnOpened()
	a.ConnOpened()
	b.ConnOpened()
	tests := []struct {
		name string
		m    *Metrics
		want float64
	}{{"a", a, 2}, {"b", b, 1}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, body := scrape(t, tt.m, http.MethodGet, nil)
			e, err := parseExposition(body)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.samples["heapproxy_connections_total"]; got != tt.want {
				t.Errorf("connections_total = %v, want %v", got, tt.want)
			}
		})
	}
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if strings.HasPrefix(f.GetName(), "heapproxy_") {
			t.Errorf("default registry has %s", f.GetName())
		}
	}
}

func TestMetricsHTTP(t *testing.T) {
	m := NewMetrics(nil)
	m.Statement("local")
	tests := []struct {
		name, method string
		header       http.Header
		code         int
		contentType  string // prefix
		body         bool
	}{
		{"GET", http.MethodGet, nil, http.StatusOK, "text/plain; version=0.0.4", true},
		{"HEAD", http.MethodHead, nil, http.StatusOK, "text/plain; version=0.0.4", false},
		{"protobuf", http.MethodGet,
			http.Header{"Accept": {"application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"}},
			http.StatusOK, "application/vnd.google.protobuf", true},
		{"POST", http.MethodPost, nil, http.StatusMethodNotAllowed, "text/plain", true},
		{"DELETE", http.MethodDelete, nil, http.StatusMethodNotAllowed, "text/plain", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := scrape(t, m, tt.method, tt.header)
			if resp.StatusCode != tt.code {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.code)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.contentType) {
				t.Errorf("Content-Type %q, want %s...", ct, tt.contentType)
			}
			if (body != "") != tt.body {
				t.Errorf("body %d bytes, want a body: %v", len(body), tt.body)
			}
			if tt.code == http.StatusMethodNotAllowed && resp.Header.Get("Allow") != "GET, HEAD" {
				t.Errorf("Allow %q", resp.Header.Get("Allow"))
			}
		})
	}
}
