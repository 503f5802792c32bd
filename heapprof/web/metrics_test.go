package web

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
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
					if f := strings.TrimSuffix(family, suf); f != family && e.types[f] == "histogram" {
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
