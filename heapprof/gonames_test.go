package heapprof

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/funcname"
	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// freePort returns a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// goService starts a real Go service from Debian (prometheus or etcd) on
// loopback ports in a temporary directory, puts some load on it and
// returns its /debug/pprof/heap.
func goService(t *testing.T, name string) []byte {
	t.Helper()
	if name == "prometheus" {
		c := &http.Client{Timeout: 10 * time.Second}
		return get(t, c, fmt.Sprintf("http://127.0.0.1:%d/debug/pprof/heap?gc=1", nodetest.StartPrometheus(t)))
	}
	dir := t.TempDir()
	var args []string
	var base string
	load := func(*http.Client) {}
	switch name {
	case "etcd":
		client, peer := freePort(t), freePort(t)
		base = fmt.Sprintf("http://127.0.0.1:%d", client)
		peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
		args = []string{"--name=hp", "--data-dir=" + filepath.Join(dir, "etcd"), "--enable-pprof",
			"--listen-client-urls=" + base, "--advertise-client-urls=" + base,
			"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
			"--initial-cluster=hp=" + peerURL}
		load = func(c *http.Client) {
			for i := range 300 {
				body := fmt.Sprintf(`{"key":"%s","value":"%s"}`, b64(fmt.Sprintf("key%d", i)), b64(strings.Repeat("v", 1000+i)))
				resp, err := c.Post(base+"/v3/kv/put", "application/json", strings.NewReader(body))
				if err != nil {
					t.Fatalf("etcd put: %v", err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "/usr/bin/"+name, args...)
	cmd.Dir = dir
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("%s: %v (install Debian's %s)", name, err, map[string]string{"prometheus": "prometheus", "etcd": "etcd-server"}[name])
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	c := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := c.Get(base + "/debug/pprof/heap")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not come up: %v\n%s", name, err, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	load(c)
	return get(t, c, base+"/debug/pprof/heap?gc=1")
}

func b64(s string) string {
	const enc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	var b strings.Builder
	for i := 0; i < len(s); i += 3 {
		var v uint32
		n := min(3, len(s)-i)
		for j := range 3 {
			v <<= 8
			if j < n {
				v |= uint32(s[i+j])
			}
		}
		for j := range 4 {
			if j <= n {
				b.WriteByte(enc[v>>(18-6*j)&63])
			} else {
				b.WriteByte('=')
			}
		}
	}
	return b.String()
}

func get(t *testing.T, c *http.Client, url string) []byte {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return body
}

var (
	// A node of heapproxy's (jeprof's) DOT: name lines, flat, cum.
	ourNodeRE = regexp.MustCompile(`(?m)^N\d+ \[label="(.*)\\n(-?[0-9.]+) \([^()]*\)(?:\\rof (-?[0-9.]+) \([^()]*\))?\\r",shape=box`)
	ourTotal  = regexp.MustCompile(`Total MB: (-?[0-9.]+)\\l`)
	// A node of pprof's DOT: its label, and its function's full name in
	// the tooltip.
	pprofNodeRE  = regexp.MustCompile(`(?m)^N\d+ \[label="(.*)" id="node\d+" fontsize=\d+ shape=\w+ tooltip="(.*) \([^()]*\)" color=`)
	pprofValueRE = regexp.MustCompile(`(?:0|(-?[0-9.]+[a-zA-Z]*) \([^()]*\))(?:(?:\\n| )of (-?[0-9.]+[a-zA-Z]*) \([^()]*\))?$`)
	pprofTotal   = regexp.MustCompile(`of (-?[0-9.]+[a-zA-Z]*) total`)
)

// pprofMB turns pprof's "4259.79kB" into MB.
func pprofMB(t *testing.T, s string) float64 {
	t.Helper()
	if s == "" || s == "0" {
		return 0
	}
	i := strings.IndexFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' })
	unit := 1.0
	if i >= 0 {
		unit = map[string]float64{"B": 1, "kB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}[s[i:]]
		s = s[:i]
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || unit == 0 {
		t.Fatalf("pprof value %q", s)
	}
	return v * unit / (1 << 20)
}

// pprofLabel is how pprof lays a short name out in a node label.
func pprofLabel(short string) string {
	s := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\l`).Replace(short)
	s = strings.NewReplacer("::", `\n`, "[...]", "[…]", ".", `\n`).Replace(s)
	return s + `\n`
}

type goNode struct {
	flat, cum float64 // MB
}

// TestGoProfilesAsGoToolPprof renders the heap profiles of real Prometheus
// and etcd servers (Debian's) with WriteDOT and with `go tool pprof -dot`,
// every node shown, and checks that both have the same total, the same
// nodes under the same names (pprof's label layout of our node name) with
// the same flat and cum values, and so that no two Go functions share a
// node. jeprof's own naming merged methods of different types
// ("tsdb..appender").
func TestGoProfilesAsGoToolPprof(t *testing.T) {
	for _, svc := range []string{"prometheus", "etcd"} {
		t.Run(svc, func(t *testing.T) {
			data := goService(t, svc)
			file := filepath.Join(t.TempDir(), svc+".heap")
			if err := os.WriteFile(file, data, 0o644); err != nil {
				t.Fatal(err)
			}
			p, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			if !IsGoProfile(p) {
				t.Fatal("IsGoProfile: false")
			}
			for _, index := range []string{"inuse_space", "alloc_space"} {
				t.Run(index, func(t *testing.T) { compareWithGoToolPprof(t, p, file, index) })
			}
		})
	}
}

func compareWithGoToolPprof(t *testing.T, p *profile.Profile, file, index string) {
	opt := DefaultOptions()
	opt.SampleType = index
	opt.NodeCount, opt.NodeFraction, opt.EdgeFraction = 100000, 0, 0
	var dot bytes.Buffer
	if err := WriteDOT(&dot, p, opt); err != nil {
		t.Fatal(err)
	}
	ours := map[string]goNode{}
	for _, m := range ourNodeRE.FindAllStringSubmatch(dot.String(), -1) {
		name := strings.ReplaceAll(m[1], `\n`, " ")
		flat, _ := strconv.ParseFloat(m[2], 64)
		cum := flat
		if m[3] != "" {
			cum, _ = strconv.ParseFloat(m[3], 64)
		}
		if _, dup := ours[name]; dup {
			t.Fatalf("two nodes named %q", name)
		}
		ours[name] = goNode{flat, cum}
	}
	if n := strings.Count(dot.String(), ",shape=box,"); n != len(ours) || n == 0 {
		t.Fatalf("parsed %d of %d nodes:\n%s", len(ours), n, dot.String())
	}

	cmd := exec.Command("go", "tool", "pprof", "-dot", "-sample_index="+index, "-nodecount=100000",
		"-nodefraction=0", "-edgefraction=0", file)
	cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, stderr.String())
	}
	type pnode struct {
		label, full string
		flat, cum   float64
	}
	var theirs []pnode
	for _, m := range pprofNodeRE.FindAllStringSubmatch(string(out), -1) {
		v := pprofValueRE.FindStringSubmatchIndex(m[1])
		if v == nil {
			t.Fatalf("pprof label %q: no value", m[1])
		}
		n := pnode{label: m[1][:v[0]], full: m[2]}
		if v[2] >= 0 {
			n.flat = pprofMB(t, m[1][v[2]:v[3]])
		}
		n.cum = n.flat
		if v[4] >= 0 {
			n.cum = pprofMB(t, m[1][v[4]:v[5]])
		}
		theirs = append(theirs, n)
	}
	if n := strings.Count(string(out), `" id="node`); n != len(theirs) || n == 0 {
		t.Fatalf("parsed %d of pprof's %d nodes", len(theirs), n)
	}

	// Totals.
	tm := pprofTotal.FindStringSubmatch(string(out))
	om := ourTotal.FindStringSubmatch(dot.String())
	if tm == nil || om == nil {
		t.Fatalf("no total: pprof %v, ours %v", tm, om)
	}
	ourTot, _ := strconv.ParseFloat(om[1], 64)
	theirTot := pprofMB(t, tm[1])
	if math.Abs(ourTot-theirTot) > 0.051 {
		t.Errorf("total: ours %.1f MB, pprof %s (%.3f MB)", ourTot, tm[1], theirTot)
	}

	// One node per function, named as pprof names it.
	if len(ours) != len(theirs) {
		t.Errorf("%d nodes, pprof %d", len(ours), len(theirs))
	}
	byLabel := map[string]string{}
	for name := range ours {
		byLabel[pprofLabel(name)] = name
	}
	// Functions of the profile sharing a short name are named in full
	// (pprof shows them as nodes of equal labels), whether or not all of
	// them have a node in this graph.
	shared := map[string]int{}
	for _, f := range p.Function {
		shared[funcname.Pprof(f.Name)]++
	}
	collisions := 0
	for _, n := range theirs {
		want := n.label
		if shared[funcname.Pprof(n.full)] > 1 {
			want = pprofLabel(n.full)
			collisions++
		}
		name, ok := byLabel[want]
		if !ok {
			t.Errorf("pprof's node %q (%s) has no node here", n.label, n.full)
			continue
		}
		o := ours[name]
		if math.Abs(o.flat-n.flat) > 0.051 || math.Abs(o.cum-n.cum) > 0.051 {
			t.Errorf("%s: flat %.1f cum %.1f MB; pprof flat %.3f cum %.3f MB", name, o.flat, o.cum, n.flat, n.cum)
		}
		if short := funcname.Short(n.full); want == n.label && name != funcname.Pprof(n.full) {
			t.Errorf("%s: node %q, want %q (jeprof's %q)", n.full, name, funcname.Pprof(n.full), short)
		}
	}
	// What jeprof's naming would have merged.
	jeprof := map[string]int{}
	for _, n := range theirs {
		jeprof[funcname.Short(n.full)]++
	}
	merged := 0
	for _, c := range jeprof {
		merged += c - 1
	}
	t.Logf("%s: total %.1f MB (pprof %s); %d nodes as pprof; %d short names shared (full names used); jeprof's names would merge %d",
		index, ourTot, tm[1], len(theirs), collisions, merged)
}

// TestIsGoProfile checks the rule that picks Go's naming.
func TestIsGoProfile(t *testing.T) {
	fn := func(files ...string) *profile.Profile {
		p := &profile.Profile{}
		for i, f := range files {
			p.Function = append(p.Function, &profile.Function{ID: uint64(i + 1), Name: fmt.Sprint("f", i), Filename: f})
		}
		return p
	}
	for _, c := range []struct {
		name string
		p    *profile.Profile
		want bool
	}{
		{"Go", fn("/usr/lib/go/src/runtime/proc.go", "github.com/x/y/z.go"), true},
		{"C++ from DWARF", fn("/src/be/a.cpp", "/usr/include/c++/12/bits/vector.tcc", "x.h"), false},
		{"Rust", fn("src/main.rs", "/rustc/abc/library/alloc/src/vec.rs"), false},
		{"no file names (nm only)", fn("", "", ""), false},
		{"cgo, mostly Go", fn("a.go", "b.go", "c.c"), true},
		{"mostly C, some Go", fn("a.go", "b.c", "c.c"), false},
		{"half and half", fn("a.go", "b.c"), false},
		{"nil", nil, false},
	} {
		if got := IsGoProfile(c.p); got != c.want {
			t.Errorf("%s: IsGoProfile = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestGoNodeNames checks that Go functions whose pprof names coincide keep
// nodes of their own, named in full, and that inlined Go frames are their
// function's node with a dashed edge.
func TestGoNodeNames(t *testing.T) {
	mk := func(names ...string) *profile.Profile {
		p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}}}
		var locs []*profile.Location
		for i, n := range names {
			f := &profile.Function{ID: uint64(i + 1), Name: n, SystemName: n, Filename: "x.go"}
			p.Function = append(p.Function, f)
			l := &profile.Location{ID: uint64(i + 1), Address: uint64(0x1000 * (i + 1)), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, l)
			locs = append([]*profile.Location{l}, locs...)
		}
		p.Sample = []*profile.Sample{{Location: locs, Value: []int64{8 << 20}}}
		return p
	}
	for _, c := range []struct {
		name  string
		funcs []string
		want  []string
	}{
		{"receivers kept", []string{"main.main", "github.com/p/tsdb.(*Head).appender", "github.com/p/tsdb.(*RangeHead).appender"},
			[]string{"main.main", "tsdb.(*Head).appender", "tsdb.(*RangeHead).appender"}},
		{"equal short names: full names", []string{"main.main", "github.com/a/x.F", "github.com/b/x.F", "github.com/c/y.F"},
			[]string{"main.main", "github.com/a/x.F", "github.com/b/x.F", "y.F"}},
		{"a full name equal to another's short", []string{"x.F", "github.com/a/x.F"}, []string{"x.F", "github.com/a/x.F"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := mk(c.funcs...)
			names := GoNodeNames(p)
			var dot bytes.Buffer
			opt := DefaultOptions()
			if err := WriteDOT(&dot, p, opt); err != nil {
				t.Fatal(err)
			}
			for i, f := range c.funcs {
				if names[f] != c.want[i] {
					t.Errorf("GoNodeNames[%q] = %q, want %q", f, names[f], c.want[i])
				}
				if !strings.Contains(dot.String(), `[label="`+c.want[i]+`\n`) {
					t.Errorf("no node %q in\n%s", c.want[i], dot.String())
				}
			}
		})
	}

	// f inlined into g at one call, called by h at another: one node f,
	// the edge g -> f dashed, h -> f not.
	f := &profile.Function{ID: 1, Name: "main.f", Filename: "m.go"}
	g := &profile.Function{ID: 2, Name: "main.g", Filename: "m.go"}
	h := &profile.Function{ID: 3, Name: "main.h", Filename: "m.go"}
	inl := &profile.Location{ID: 1, Address: 0x10, Line: []profile.Line{{Function: f}, {Function: g}}}
	lf := &profile.Location{ID: 2, Address: 0x20, Line: []profile.Line{{Function: f}}}
	lh := &profile.Location{ID: 3, Address: 0x30, Line: []profile.Line{{Function: h}}}
	p := &profile.Profile{SampleType: []*profile.ValueType{{Type: "inuse_space", Unit: "bytes"}},
		Function: []*profile.Function{f, g, h}, Location: []*profile.Location{inl, lf, lh},
		Sample: []*profile.Sample{
			{Location: []*profile.Location{inl}, Value: []int64{4 << 20}},
			{Location: []*profile.Location{lf, lh}, Value: []int64{2 << 20}},
		}}
	var dot bytes.Buffer
	if err := WriteDOT(&dot, p, DefaultOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`N1 [label="main.f\n6.0 (100.0%)\r"`,
		`N2 -> N1 [label=4.0, weight=43237, style="setlinewidth(2.000000),dashed"];`,
		`N3 -> N1 [label=2.0, weight=26615, style="setlinewidth(2.000000)"];`,
	} {
		if !strings.Contains(dot.String(), want) {
			t.Errorf("no %s in\n%s", want, dot.String())
		}
	}
	// The same profile named as jeprof names it: "main.f (inline)".
	opt := DefaultOptions()
	opt.Names = NamesJeprof
	dot.Reset()
	if err := WriteDOT(&dot, p, opt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(dot.String(), `main.f\n(inline)`) {
		t.Errorf("NamesJeprof: no inline node in\n%s", dot.String())
	}
}
