package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// readmeQueries returns the SQL blocks of README.md in order.
func readmeQueries(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// grafanaTimeFilter expands $__timeFilter(col) as Grafana's MySQL data
// source does.
func grafanaTimeFilter(q string, from, to time.Time) string {
	return regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`).ReplaceAllString(q,
		fmt.Sprintf("$1 BETWEEN FROM_UNIXTIME(%d) AND FROM_UNIXTIME(%d)", from.Unix(), to.Unix()))
}

// TestMySQLREADMEQueries stores real snapshots (node 10001 before and after
// its leak grew, node 10002 once) in the `heapprof` database and runs the
// README's queries as a BI tool would, checking the answers against the
// store's own rows.
func TestMySQLREADMEQueries(t *testing.T) {
	ctx := context.Background()
	bin, heaps := leakProg(t)
	m, err := OpenMySQL(ctx, mariaDSN(t, ""), Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	for _, table := range []string{storeFunctions, storeStacks, storeSnapshots} {
		if _, err := m.DB().ExecContext(ctx, "DELETE FROM "+table); err != nil {
			t.Fatal(err)
		}
	}
	type saved struct {
		s      *Snapshot
		funcs  []Function
		stacks []Stack
	}
	save := func(node int64, heap string, at time.Time) saved {
		r, err := loadRows(bin, heap)
		if err != nil {
			t.Fatal(err)
		}
		s, funcs, stacks := snapFrom(r, node, at)
		if err := m.Save(ctx, s, funcs, stacks); err != nil {
			t.Fatal(err)
		}
		return saved{s, funcs, stacks}
	}
	before := save(10001, heaps[0], base)
	other := save(10002, heaps[1], base.Add(30*time.Minute))
	after := save(10001, heaps[2], base.Add(time.Hour))

	db, err := sql.Open("mysql", mariaDSN(t, "heapprof")+"?parseTime=true&loc=UTC&time_zone=%27%2B00%3A00%27")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	query := func(q string) [][]string {
		t.Helper()
		rows, err := db.QueryContext(ctx, grafanaTimeFilter(q, base.Add(-time.Minute), base.Add(2*time.Hour)))
		if err != nil {
			t.Fatalf("%v\n%s", err, q)
		}
		defer rows.Close()
		vals, err := mariadbtest.Scan(rows)
		if err != nil {
			t.Fatal(err)
		}
		out := make([][]string, len(vals))
		for i, row := range vals {
			for _, v := range row {
				out[i] = append(out[i], v.String)
			}
		}
		return out
	}
	qs := readmeQueries(t)
	if len(qs) != 4 {
		t.Fatalf("README.md has %d sql blocks, the test knows 4", len(qs))
	}
	ts := func(at time.Time) string { return at.UTC().Format("2006-01-02T15:04:05.999999Z") }
	// functions.name is the full name (a C function's is its name).
	fn := func(fs []Function, name string) Function {
		for _, f := range fs {
			if f.Name == name {
				return f
			}
		}
		t.Fatalf("no function %s", name)
		return Function{}
	}

	// Heap of each node over time.
	got := query(qs[0])
	want := [][]string{}
	for _, sv := range []saved{before, other, after} {
		want = append(want, []string{ts(sv.s.TakenAt), fmt.Sprintf("node %d", sv.s.NodeID), fmt.Sprint(sv.s.TotalBytes)})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("heap over time:\n got %q\nwant %q", got, want)
	}

	// One function over time.
	got = query(qs[1])
	want = want[:0]
	for _, sv := range []saved{before, other, after} {
		want = append(want, []string{ts(sv.s.TakenAt), fmt.Sprintf("node %d", sv.s.NodeID), fmt.Sprint(fn(sv.funcs, "segment_load").CumBytes)})
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("segment_load over time:\n got %q\nwant %q", got, want)
	}

	// What grew: computed here from the rows the store holds.
	got = query(qs[2])
	prev := map[string]Function{}
	for _, f := range before.funcs {
		prev[f.Name] = f
	}
	growth := map[string]string{}
	for _, f := range after.funcs {
		growth[f.Name] = fmt.Sprint(f.FlatBytes-prev[f.Name].FlatBytes, f.CumBytes-prev[f.Name].CumBytes)
	}
	if len(got) != len(growth) || len(got) == 0 || got[0][0] != "agg_hash_grow" {
		t.Fatalf("growth: %q; want %d rows, agg_hash_grow (the leak) first", got, len(growth))
	}
	for i, row := range got {
		if growth[row[0]] != row[1]+" "+row[2] {
			t.Errorf("growth of %s: SQL %s %s, store rows %s", row[0], row[1], row[2], growth[row[0]])
		}
		if i > 0 && atoi(t, got[i-1][1]) < atoi(t, row[1]) {
			t.Errorf("growth not sorted at %q", row)
		}
	}

	// Largest stacks of each node's newest snapshot.
	got = query(qs[3])
	stacksOf := map[string][]Stack{"10001": after.stacks, "10002": other.stacks}
	if len(got) != min(20, len(after.stacks)+len(other.stacks)) {
		t.Errorf("largest stacks: %d rows", len(got))
	}
	for i, row := range got {
		found := false
		for _, st := range stacksOf[row[0]] {
			if st.Frames == row[3] && fmt.Sprint(st.Bytes, st.Objects) == row[1]+" "+row[2] {
				found = true
			}
		}
		if !found {
			t.Errorf("largest stacks row %q is not a stack of node %s's newest snapshot", row, row[0])
		}
		if i > 0 && got[i-1][0] == row[0] && atoi(t, got[i-1][1]) < atoi(t, row[1]) {
			t.Errorf("largest stacks not sorted at %q", row)
		}
	}
	if !strings.Contains(fmt.Sprint(got), "main;query;agg_hash_grow") {
		t.Errorf("largest stacks lack the leak's stack: %q", got)
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	var v int64
	if _, err := fmt.Sscan(s, &v); err != nil {
		t.Fatalf("not a number: %q", s)
	}
	return v
}
