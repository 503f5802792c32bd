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
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
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
	// views'. LONGTEXT's length is a known difference (README).
	types := "SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, DATA_TYPE, " +
		"IF(DATA_TYPE = 'longtext', NULL, CHARACTER_MAXIMUM_LENGTH), DATETIME_PRECISION " +
		"FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = '%s' AND TABLE_NAME IN ('snapshots', 'functions', 'stacks', 'diffs') ORDER BY 1, 3"
	got, err := engineAnswer(ctx, e, s, fmt.Sprintf(types, "heapprof"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := cliAnswer(ctx, "heapprof_ext", fmt.Sprintf(types, "heapprof_ext"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.rows) != 41 || fmt.Sprint(got.rows) != fmt.Sprint(want.rows) {
		t.Errorf("columns (%d):\nembedded %s\nexternal %s", len(got.rows), got, want)
	}

	qs := readmeQueries(t)
	if len(qs) != 4 {
		t.Fatalf("README.md has %d sql blocks, the test knows 4", len(qs))
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
