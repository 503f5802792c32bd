package web

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// run runs a test tool (gcc, jeprof, the test program) and returns stdout.
func run(t *testing.T, env []string, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// jeprofText is jeprof --text's answer: the total and the functions with
// allocations of their own, in MB as jeprof prints them.
type jeprofText struct {
	totalMB float64
	flatMB  map[string]float64
}

func parseJeprofText(t *testing.T, out []byte) jeprofText {
	t.Helper()
	r := jeprofText{flatMB: map[string]float64{}}
	totalRE := regexp.MustCompile(`^Total: ([\d.]+) MB$`)
	rowRE := regexp.MustCompile(`^\s*([\d.]+)\s+[\d.]+%\s+[\d.]+%\s+[\d.]+\s+[\d.]+%\s+(.+)$`)
	for _, line := range strings.Split(string(out), "\n") {
		if m := totalRE.FindStringSubmatch(line); m != nil {
			r.totalMB, _ = strconv.ParseFloat(m[1], 64)
		}
		if m := rowRE.FindStringSubmatch(line); m != nil {
			if v, _ := strconv.ParseFloat(m[1], 64); v > 0 {
				r.flatMB[m[2]] = v
			}
		}
	}
	if r.totalMB == 0 || len(r.flatMB) == 0 {
		t.Fatalf("no total or rows in jeprof --text output:\n%s", out)
	}
	return r
}

// argsRE matches an argument list in a C++ function name.
var argsRE = regexp.MustCompile(`\([^()]*\)`)

// TestJemallocSnapshot renders a real jemalloc dump the way snapshots are
// stored (heapprof.Parse, symbolize.Local, heapprof.WriteProto) and checks
// the web view's top and graph pages against jeprof --text on the same
// binary and dump: the same total and every function jeprof charges
// memory to.
func TestJemallocSnapshot(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "jeprog")
	run(t, nil, "gcc", "-g", "-O1", "-o", bin, "testdata/jeprog.c", "-ljemalloc")
	dump := filepath.Join(dir, "jeprog.heap")
	// One sample per KiB: every allocation of the program is seen.
	run(t, []string{"MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10"}, bin, dump)
	want := parseJeprofText(t, run(t, nil, "jeprof", "--text", bin, dump))

	raw, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	p, err := heapprof.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&symbolize.Local{Binary: bin}).Symbolize(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	var pb bytes.Buffer
	if err := heapprof.WriteProto(&pb, p); err != nil {
		t.Fatal(err)
	}
	store := &memStore{profiles: map[string][]byte{"je": pb.Bytes()}}
	srv, _ := newTestServer(t, Options{Store: store})

	resp, top := get(t, srv.URL+"/snapshots/je/top")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("top: %d %.300s", resp.StatusCode, top)
	}
	// The top page's table is drawn by a script from this call's data.
	m := regexp.MustCompile(`makeTopTable\(\s*(\d+)\s*,\s*(\[.*\])\);`).FindStringSubmatch(top)
	if m == nil {
		t.Fatalf("top page has no table data:\n%.3000s", top)
	}
	var rows []struct {
		Name string
		Flat int64
	}
	if err := json.Unmarshal([]byte(m[2]), &rows); err != nil {
		t.Fatalf("top table data: %v", err)
	}
	const mb = 1 << 20
	total, _ := strconv.ParseFloat(m[1], 64)
	// jeprof prints MB with one decimal.
	if math.Abs(total/mb-want.totalMB) > 0.05+1e-9 {
		t.Errorf("top total %.3f MB, jeprof --text %.1f MB", total/mb, want.totalMB)
	}
	flat := map[string]float64{}
	for _, r := range rows {
		if r.Flat != 0 {
			// jeprof prints short names (ShortFunctionName drops argument lists).
			flat[argsRE.ReplaceAllString(r.Name, "")] += float64(r.Flat) / mb
		}
	}
	for fn, jmb := range want.flatMB {
		if got, ok := flat[fn]; !ok || math.Abs(got-jmb) > 0.05+1e-9 {
			t.Errorf("top: %s flat %.3f MB (listed %v), jeprof --text %.1f MB", fn, got, ok, jmb)
		}
	}
	for fn, got := range flat {
		if _, ok := want.flatMB[fn]; !ok && got >= 0.05 {
			t.Errorf("top: %s flat %.3f MB, jeprof --text charges it nothing", fn, got)
		}
	}
	resp, graph := get(t, srv.URL+"/snapshots/je/graph")
	if resp.StatusCode != http.StatusOK || !strings.Contains(graph, "<svg") {
		t.Fatalf("graph: %d, svg %v", resp.StatusCode, strings.Contains(graph, "<svg"))
	}
	for fn, jmb := range want.flatMB {
		// The graph draws nodes above its node fraction only.
		if jmb/want.totalMB >= 0.01 && !regexp.MustCompile(`<text[^>]*>`+regexp.QuoteMeta(fn)+`</text>`).MatchString(graph) {
			t.Errorf("graph lacks a node for %s (jeprof: %.1f MB flat)", fn, jmb)
		}
	}
}
