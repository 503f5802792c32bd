package sqlview

// One schema in both modes: the external store (snapshot.MySQL, views over
// its storage tables in a real MariaDB) and the embedded default (this
// engine) answer the README's example queries with the same rows, and the
// views have the engine's columns and types. And the embedded default's
// DDL restores in MariaDB: mariadb-dump of it, loaded into MariaDB, holds
// the same rows.

import (
	"context"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// recentFixture is fixture() moved in time so that its newest snapshot is
// an hour old: the README's queries look at the last day.
func recentFixture() *memSource {
	src := fixture()
	var newest time.Time
	for _, s := range src.snaps {
		if s.TakenAt.After(newest) {
			newest = s.TakenAt
		}
	}
	shift := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).Sub(newest.Truncate(time.Second))
	for i := range src.snaps {
		src.snaps[i].TakenAt = src.snaps[i].TakenAt.Add(shift)
	}
	return src
}

// saveToStore writes src's snapshots into a snapshot store as heapproxy
// would, with the raw dump and the stacks' depth the fixture leaves out.
func saveToStore(ctx context.Context, st snapshot.Store, src *memSource) error {
	for _, s := range src.snaps {
		sts := slices.Clone(src.stk[s.ID])
		for i := range sts {
			sts[i].Depth = strings.Count(sts[i].Frames, ";") + 1
		}
		sn := s
		sn.Raw = []byte("raw")
		if err := st.Save(ctx, &sn, src.fns[s.ID], sts); err != nil {
			return fmt.Errorf("save %s: %w", s.ID, err)
		}
	}
	return nil
}

// cliAnswer asks the reference MariaDB as root in database db.
func cliAnswer(ctx context.Context, db, q string) (answer, error) {
	out, err := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-uroot", "-S", ref.socket,
		"--default-character-set=utf8mb4", "-B", "-e", "SET time_zone = '+00:00'; "+q, db).CombinedOutput()
	if err != nil {
		return answer{}, fmt.Errorf("%v: %s", err, out)
	}
	var a answer
	if len(out) == 0 {
		return a, nil
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	a.cols = strings.Split(lines[0], "\t")
	for _, l := range lines[1:] {
		a.rows = append(a.rows, strings.Split(l, "\t"))
	}
	return a, nil
}

// readmeQueries returns the ```sql blocks of README.md, Grafana's
// $__timeFilter expanded over the last two days.
func readmeQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().Unix()
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		q := regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`).ReplaceAllString(m[1],
			fmt.Sprintf("$1 BETWEEN FROM_UNIXTIME(%d) AND FROM_UNIXTIME(%d)", now-2*86400, now))
		out = append(out, strings.TrimSuffix(strings.TrimSpace(q), ";"))
	}
	return out
}

func TestExternalStoreSameSchema(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	src := recentFixture()
	st, err := snapshot.OpenMySQL(ctx, ref.srv.DSN("root", "", "heapprof_ext"), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := saveToStore(ctx, st, src); err != nil {
		t.Fatal(err)
	}
	e, s := newTestEngine(t, src)
	if _, err := e.Query(ctx, s, "USE heapprof"); err != nil {
		t.Fatal(err)
	}

	// Columns and types: the engine's information_schema against the
	// views'.
	types := "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, " +
		"CHARACTER_MAXIMUM_LENGTH, COLLATION_NAME, DATETIME_PRECISION " +
		"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME IN ('snapshots', 'functions', 'stacks', 'diffs') ORDER BY 1, 3"
	got, err := engineAnswer(ctx, e, s, fmt.Sprintf(types, "heapprof"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := cliAnswer(ctx, "heapprof_ext", fmt.Sprintf(types, "heapprof_ext"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.rows) != 43 || fmt.Sprint(got.rows) != fmt.Sprint(want.rows) {
		t.Errorf("columns (%d):\nembedded %s\nexternal %s", len(got.rows), got, want)
	}

	qs := readmeQueries(t)
	if len(qs) != 5 {
		t.Fatalf("README.md has %d sql blocks, the test knows 5", len(qs))
	}
	for i, q := range qs {
		t.Run(fmt.Sprint("readme ", i), func(t *testing.T) {
			got, err := engineAnswer(ctx, e, s, q)
			if err != nil {
				t.Fatalf("embedded: %v\n%s", err, q)
			}
			want, err := cliAnswer(ctx, "heapprof_ext", strings.ReplaceAll(q, "heapprof.", "heapprof_ext."))
			if err != nil {
				t.Fatalf("external: %v\n%s", err, q)
			}
			if len(got.rows) == 0 || !sameAnswer(got, want) {
				t.Errorf("%s\nembedded:\n%s\nexternal:\n%s", q, got, want)
			}
		})
	}
}

// sameAnswer compares two answers, numbers by value: MariaDB prints
// ROUND(x, 1) of a DOUBLE as 0.0 where the engine prints 0 (README).
func sameAnswer(a, b answer) bool {
	if fmt.Sprint(a.cols) != fmt.Sprint(b.cols) || len(a.rows) != len(b.rows) {
		return false
	}
	for i := range a.rows {
		if len(a.rows[i]) != len(b.rows[i]) {
			return false
		}
		for j, x := range a.rows[i] {
			y := b.rows[i][j]
			if x == y {
				continue
			}
			fx, ex := strconv.ParseFloat(x, 64)
			fy, ey := strconv.ParseFloat(y, 64)
			if ex != nil || ey != nil || fx != fy {
				return false
			}
		}
	}
	return true
}

// TestMariaDBDumpRestores dumps the embedded default with the real
// mariadb-dump, loads the dump into MariaDB with the mariadb client, and
// compares every table's rows.
func TestMariaDBDumpRestores(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, s := newTestEngine(t, fixture())
	addr := startFront(t, e)
	host, port, _ := net.SplitHostPort(addr)
	dump, err := exec.CommandContext(ctx, "mariadb-dump", "--no-defaults", "-h", host, "-P", port, "-ubi", "-pbi",
		"--default-character-set=utf8mb4", "heapprof").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("mariadb-dump: %v\n%s\n%s", err, stderr, dump)
	}
	for _, q := range []string{"DROP DATABASE IF EXISTS dumped", "CREATE DATABASE dumped"} {
		if _, err := cliAnswer(ctx, "mysql", q); err != nil {
			t.Fatal(err)
		}
	}
	load := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-uroot", "-S", ref.socket, "dumped")
	load.Stdin = strings.NewReader(string(dump))
	if out, err := load.CombinedOutput(); err != nil {
		t.Fatalf("loading the dump: %v\n%s\n%s", err, out, dump)
	}
	tables := map[string]string{
		TableSnapshots: "id",
		TableFunctions: "snapshot_id, name",
		TableStacks:    "snapshot_id, stack_id",
		TableDiffs:     "node_id, from_snapshot_id, name",
	}
	for name, order := range tables {
		t.Run(name, func(t *testing.T) {
			q := "SELECT * FROM " + name + " ORDER BY " + order
			got, err := cliAnswer(ctx, "dumped", q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := engineAnswer(ctx, e, s, "SELECT * FROM heapprof."+name+" ORDER BY "+order)
			if err != nil {
				t.Fatal(err)
			}
			if len(want.rows) == 0 || got.String() != want.String() {
				t.Errorf("restored:\n%s\nembedded:\n%s", got, want)
			}
		})
	}
	// The restored tables declare the keys.
	keys, err := cliAnswer(ctx, "dumped", "SELECT TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME"+
		" FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'dumped' ORDER BY 1")
	if err != nil {
		t.Fatal(err)
	}
	if w := "[[functions snapshot_id snapshots id] [snapshots id NULL NULL] [stacks snapshot_id snapshots id]]"; fmt.Sprint(keys.rows) != w {
		t.Errorf("restored keys %v, want %s", keys.rows, w)
	}
}

// overloadRows profiles testdata/progs/templates.cc, whose engine::work(int)
// and engine::work(double) share jeprof's short name engine::work, with
// every allocation sampled (lg_prof_sample:0: exact values), and returns
// its symbolized profile and rows.
func overloadRows(ctx context.Context, t *testing.T) (*profile.Profile, []snapshot.Function, []snapshot.Stack, *snapshot.Snapshot) {
	t.Helper()
	src, err := filepath.Abs("../../testdata/progs")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, heap := filepath.Join(dir, "templates"), filepath.Join(dir, "templates.heap")
	for _, c := range [][]string{
		{"g++", "-g", "-O0", "-I", src, "-o", bin, filepath.Join(src, "templates.cc"), "-ljemalloc"},
		{bin, heap},
	} {
		cmd := exec.CommandContext(ctx, c[0], c[1:]...)
		cmd.Env = append(os.Environ(), "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
	raw, err := os.ReadFile(heap)
	if err != nil {
		t.Fatal(err)
	}
	p, err := heapprof.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&symbolize.Local{Binary: bin}).Symbolize(ctx, p); err != nil {
		t.Fatal(err)
	}
	s := &snapshot.Snapshot{NodeID: 10009, NodeKind: "starrocks", NodeAddr: "10.0.0.9:8040", Format: "jemalloc", Raw: raw}
	fns, stacks, err := s.Attach(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, fns, stacks, s
}

// graphNode is what jeprof's graph shows of the nodes of one short name:
// how many there are, their flat MB (one decimal, summed) and objects.
type graphNode struct {
	nodes   int
	mb      float64
	objects int64
}

// graphNodes reads p's graph from heapprof.WriteText (jeprof --text: the
// DOT graph's nodes and values), once in bytes and once in objects, and
// sums the nodes that allocate per short name. jeprof names overloads it
// found by nm "short@offset", one node each: those are summed under
// their short name.
func graphNodes(t *testing.T, p *profile.Profile) map[string]graphNode {
	t.Helper()
	line := regexp.MustCompile(`^ *(\S+) +\S+ +\S+ +\S+ +\S+ (.+)$`)
	at := regexp.MustCompile(`([^@])@[0-9a-f]+$`)
	read := func(sampleType string) map[string]string {
		opt := heapprof.DefaultOptions()
		opt.SampleType = sampleType
		var b strings.Builder
		if err := heapprof.WriteText(&b, p, opt); err != nil {
			t.Fatal(err)
		}
		flat := map[string]string{}
		for _, l := range strings.Split(b.String(), "\n")[1:] {
			if m := line.FindStringSubmatch(l); m != nil {
				flat[m[2]] = m[1]
			}
		}
		return flat
	}
	mb, objs := read("inuse_space"), read("inuse_objects")
	out := map[string]graphNode{}
	for name, o := range objs {
		n, err := strconv.ParseInt(o, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			continue
		}
		f, err := strconv.ParseFloat(mb[name], 64)
		if err != nil {
			t.Fatalf("node %s: %v", name, err)
		}
		short := at.ReplaceAllString(name, "$1")
		g := out[short]
		g.nodes++
		g.mb += f
		g.objects += n
		out[short] = g
	}
	return out
}

// TestOverloadsStayApart: two C++ overloads with one short name are two
// rows of functions and two of diffs, in the embedded default and in the
// external store alike, and SUM(flat_*) GROUP BY short_name gives the
// graph's node values.
func TestOverloadsStayApart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	p, fns, stacks, first := overloadRows(ctx, t)
	const short, intName, doubleName = "engine::work", "engine::work(int)", "engine::work(double)"
	var overloads []string
	for _, f := range fns {
		if f.ShortName == short {
			overloads = append(overloads, f.Name)
		}
	}
	if slices.Sort(overloads); !slices.Equal(overloads, []string{doubleName, intName}) {
		t.Fatalf("Summarize's rows of %s: %q, want the two overloads", short, overloads)
	}
	// Two snapshots of the node: the profile, then the same without
	// work(double)'s row, as if its memory had been freed.
	at := time.Date(2026, 11, 21, 9, 0, 0, 250000000, time.UTC)
	first.ID, first.TakenAt = "heap_profile.10009.0", at
	second := *first
	second.ID, second.TakenAt = "heap_profile.10009.1", at.Add(time.Hour)
	fewer := slices.DeleteFunc(slices.Clone(fns), func(f snapshot.Function) bool { return f.Name == doubleName })
	save := func(st snapshot.Store) {
		t.Helper()
		for _, sv := range []struct {
			s   snapshot.Snapshot
			fns []snapshot.Function
		}{{*first, fns}, {second, fewer}} {
			if err := st.Save(ctx, &sv.s, sv.fns, stacks); err != nil {
				t.Fatal(err)
			}
		}
	}

	dir, err := snapshot.OpenDir(t.TempDir(), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	save(dir)
	e, s := newTestEngine(t, dir)
	ext, err := snapshot.OpenMySQL(ctx, ref.srv.DSN("root", "", "heapprof_overloads"), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	save(ext)
	modes := []struct {
		name string
		ask  func(q string) (answer, error)
	}{
		{"embedded", func(q string) (answer, error) { return engineAnswer(ctx, e, s, q) }},
		{"external", func(q string) (answer, error) {
			return cliAnswer(ctx, "heapprof_overloads", strings.ReplaceAll(q, "heapprof.", "heapprof_overloads."))
		}},
	}

	byName := map[string]snapshot.Function{}
	shorts := map[string]bool{}
	for _, f := range fns {
		byName[f.Name] = f
		shorts[f.ShortName] = true
	}
	bytesOf := func(name string) string { return fmt.Sprint(byName[name].FlatBytes) }
	tests := []struct {
		name, query string
		want        [][]string
	}{
		{"functions: a row per overload", "SELECT name, short_name, flat_bytes FROM heapprof.functions" +
			" WHERE snapshot_id = 'heap_profile.10009.0' AND short_name = 'engine::work' ORDER BY name",
			[][]string{{doubleName, short, bytesOf(doubleName)}, {intName, short, bytesOf(intName)}}},
		{"diffs: a row per overload", "SELECT name, short_name, flat_bytes_before, flat_bytes_after, flat_bytes_delta" +
			" FROM heapprof.diffs WHERE node_id = 10009 AND short_name = 'engine::work' ORDER BY name",
			[][]string{
				{doubleName, short, bytesOf(doubleName), "0", "-" + bytesOf(doubleName)},
				{intName, short, bytesOf(intName), bytesOf(intName), "0"},
			}},
		{"diffs: a row per function", "SELECT COUNT(*), COUNT(DISTINCT name), COUNT(DISTINCT short_name) FROM heapprof.diffs",
			[][]string{{fmt.Sprint(len(fns)), fmt.Sprint(len(fns)), fmt.Sprint(len(shorts))}}},
	}
	for _, m := range modes {
		for _, tt := range tests {
			t.Run(m.name+" "+tt.name, func(t *testing.T) {
				got, err := m.ask(tt.query)
				if err != nil {
					t.Fatalf("%v\n%s", err, tt.query)
				}
				if !slices.EqualFunc(got.rows, tt.want, slices.Equal) {
					t.Errorf("%s\ngot  %q\nwant %q", tt.query, got.rows, tt.want)
				}
			})
		}
		// The graph's nodes are short names: summing the functions that
		// share one gives the node's flat value (the nodes', where jeprof
		// told overloads apart by address).
		t.Run(m.name+" graph nodes", func(t *testing.T) {
			got, err := m.ask("SELECT short_name, SUM(flat_bytes), SUM(flat_objects) FROM heapprof.functions" +
				" WHERE snapshot_id = 'heap_profile.10009.0' GROUP BY short_name HAVING SUM(flat_objects) > 0 ORDER BY 1")
			if err != nil {
				t.Fatal(err)
			}
			graph := graphNodes(t, p)
			if len(got.rows) < 3 || len(got.rows) != len(graph) {
				t.Errorf("%d short names allocate, the graph has %d: %q, %v", len(got.rows), len(graph), got.rows, graph)
			}
			for _, r := range got.rows {
				bytes, err := strconv.ParseFloat(r[1], 64)
				if err != nil {
					t.Fatal(err)
				}
				g := graph[r[0]]
				// The graph prints each node's MB rounded to 0.1.
				if math.Abs(bytes/1048576-g.mb) > 0.05*float64(g.nodes)+1e-9 || fmt.Sprint(g.objects) != r[2] {
					t.Errorf("%s: graph %.1f MB, %d objects in %d nodes; SUM over its functions %s bytes, %s objects",
						r[0], g.mb, g.objects, g.nodes, r[1], r[2])
				}
			}
			if graph[short].objects == 0 {
				t.Errorf("the graph has no node %s: %v", short, graph)
			}
		})
	}
}
