package sqlview

// Issue 14's sweep: every SQL statement of the READMEs that document the
// schema, and the differences the sweep and BI users found, answered by
// the engine as by MariaDB (rows, types, column definitions, error codes
// and SQLSTATEs).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// readmeStatements are the statements of the ```sql blocks of the file
// at path, from the line heading starts to the next heading of its level
// (the whole file for ""): split at a ';' that ends a line, comments
// dropped. Grafana's $__timeFilter becomes the range it expands to over
// the fixture, NOW() a time inside it, so the queries have rows.
func readmeStatements(t *testing.T, path, heading string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if heading != "" {
		i := strings.Index(text, "\n"+heading+"\n")
		if i < 0 {
			t.Fatalf("%s has no section %q", path, heading)
		}
		text = text[i+len(heading)+2:]
		level := heading[:strings.IndexByte(heading, ' ')+1]
		if j := strings.Index(text, "\n"+level); j >= 0 {
			text = text[:j]
		}
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```sql\n(.*?)```").FindAllStringSubmatch(text, -1) {
		var lines []string
		for _, l := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--") {
				continue
			}
			lines = append(lines, l)
		}
		for _, q := range regexp.MustCompile(`;\s*(\n|$)`).Split(strings.Join(lines, "\n"), -1) {
			if q = strings.TrimSpace(q); q == "" {
				continue
			}
			q = regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`).ReplaceAllString(q,
				"$1 BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795291200)")
			q = strings.ReplaceAll(q, "NOW()", "TIMESTAMP('2026-11-21 08:00:00')")
			out = append(out, q)
		}
	}
	return out
}

func TestReadmeStatementsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	for _, src := range []struct {
		path, heading string
		want          int
	}{
		{"README.md", "", 5},
		{"../../README.md", "### BI tools: the heapprof schema", 2},
	} {
		qs := readmeStatements(t, src.path, src.heading)
		if len(qs) != src.want {
			t.Fatalf("%s: %d statements, the test knows %d: %q", src.path, len(qs), src.want, qs)
		}
		for _, q := range qs {
			t.Run(q, func(t *testing.T) {
				// Rows as MariaDB's command line client prints them (the
				// Go driver prints MariaDB's DOUBLE 0.0 as 0), types as
				// the Go driver names them.
				got, err := engineAnswer(ctx, e, s, q)
				if err != nil || len(got.rows) == 0 {
					t.Fatalf("engine: %v, %d rows: an example should show rows", err, len(got.rows))
				}
				want, err := refAnswer(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("engine:\n%sMariaDB:\n%s", got, want)
				}
				_, gt, _, _ := engineTyped(ctx, e, s, q)
				_, wt, _, err := r.answer(ctx, q)
				if err != nil || !slices.Equal(gt, wt) {
					t.Errorf("types: engine %q, MariaDB %q (%v)", gt, wt, err)
				}
			})
		}
	}
}

// matchState is matchMariaDB for a statement both refuse: the same error
// code and SQLSTATE.
func matchState(t *testing.T, ctx context.Context, e *Engine, s *Session, r refSession, q string) {
	t.Helper()
	_, _, _, gerr := engineTyped(ctx, e, s, q)
	_, _, _, werr := r.answer(ctx, q)
	var ge *Error
	var we *gomysql.MyError
	if !errors.As(gerr, &ge) || !errors.As(werr, &we) {
		t.Fatalf("want both to refuse: engine %v, MariaDB %v", gerr, werr)
	}
	if ge.Code != we.Code || ge.State != we.State || ge.Message != we.Message {
		t.Errorf("engine %v, MariaDB %v", gerr, werr)
	}
}

func TestSweepMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	ref := newRefFields(t)
	tests := []struct {
		name, query string
		// defs: compare the column definitions as sent too.
		defs bool
	}{
		// DISTINCT ordered by a select item's position: go-mysql-server
		// failed with "unable to find field with index N" (orderdistinct.go).
		{"distinct order by position", "SELECT DISTINCT flat_bytes*2 FROM functions ORDER BY 1", true},
		{"distinct double order by position", "SELECT DISTINCT flat_pct/2 FROM functions ORDER BY 1 DESC", true},
		{"distinct alias order by position", "SELECT DISTINCT flat_bytes*2 AS x FROM functions ORDER BY 1", true},
		{"distinct top-n by position", "SELECT DISTINCT node_id, flat_bytes+1 FROM functions ORDER BY 2, 1 LIMIT 3", true},
		{"distinct text by position", "SELECT DISTINCT UPPER(short_name) FROM functions ORDER BY 1 LIMIT 3", false},
		{"distinct by position in subqueries", "SELECT (SELECT DISTINCT flat_bytes*2 FROM functions ORDER BY 1 DESC LIMIT 1), (SELECT COUNT(*) FROM (SELECT DISTINCT flat_bytes*2 FROM functions ORDER BY 1 LIMIT 2) t)", false},
		{"distinct dates by position", "SELECT DISTINCT DATE(taken_at), node_id % 2 FROM functions ORDER BY 1, 2", true},
		// COALESCE, CASE and GREATEST pass a quotient's every digit on
		// (division.go): 1.0000, not 0.9999; CASE of a quotient and an
		// integer shows the quotient's digits.
		{"coalesce keeps digits", "SELECT COALESCE(1/3)*3, COALESCE(1/3), COALESCE(NULL, 1/3)*3, IFNULL(1/3, 0)*3, COALESCE(1, 1/3)*3, ROUND(COALESCE(1000/1048576), 6), CONCAT(COALESCE(1/3))", true},
		{"case keeps digits", "SELECT CASE WHEN 1 THEN 1/3 END * 3, GREATEST(1/3, 0)*3, CASE 1 WHEN 1 THEN 1/3 ELSE 0 END * 3, CASE WHEN 0 THEN 1 ELSE 2/3 END*3, CASE WHEN 1 THEN 1/3 END", true},
		{"coalesce and case of columns", "SELECT COALESCE(flat_bytes/3, 0)*3, COALESCE(flat_bytes/3) = 0.3333, CASE WHEN flat_bytes > 0 THEN flat_bytes/3 ELSE 0 END * 3 FROM functions ORDER BY snapshot_id, name LIMIT 5", true},
		// A first select item NOT x is named NOT x (syntax.go's notNames).
		{"not names", "SELECT NOT node_id, node_id, NOT  node_id, NOT (node_id > 1), not node_id AND 1 FROM snapshots ORDER BY id LIMIT 1", true},
		{"not names in subquery", "SELECT * FROM (SELECT NOT node_id FROM snapshots) t LIMIT 1", true},
		// Column definitions: FORMAT is VARCHAR of MariaDB's length; IF,
		// CASE, IFNULL, COALESCE, ROUND and TRUNCATE of integer literals
		// INT; CASE of strings VARCHAR (resultmeta.go).
		{"format definitions", "SELECT FORMAT(total_bytes, 2), FORMAT(1.5, 0), FORMAT(node_id, 0), FORMAT(1, 2), FORMAT(123456.789, 3), FORMAT(1000/1048576, 6), FORMAT('123', 2), FORMAT(1.5, 3), FORMAT(99.5, 0), FORMAT(1234.5, 1) FROM snapshots ORDER BY id", true},
		{"format definitions 2", "SELECT FORMAT(flat_pct, 1), FORMAT(flat_bytes, node_id), FORMAT(flat_pct, 0), FORMAT(cum_bytes/1024, 2), FORMAT(1e3, 2), FORMAT(NULL, 2), FORMAT(1, NULL), FORMAT(1, 40), FORMAT(12345678901234567890, 2) FROM functions ORDER BY snapshot_id, name", true},
		{"integer choices", "SELECT IF(node_id>1, 1, 2), IF(node_id>1, 100, -5), IF(node_id > 1, 1, NULL), IF(1, 12345678901, 1), CASE WHEN node_id > 1 THEN 1 ELSE 0 END, CASE node_id WHEN 1 THEN 10 WHEN 2 THEN 200 END, IFNULL(NULL, 5), COALESCE(NULL, 7, 12), CASE WHEN node_id > 1 THEN 1 END, IF(node_id > 1, NULL, -7) FROM snapshots ORDER BY id", true},
		{"integer round", "SELECT TRUNCATE(5, 0), TRUNCATE(12345, -2), TRUNCATE(node_id, 0), TRUNCATE(node_id, -2), ROUND(5), ROUND(5, 0), ROUND(node_id, -1), ROUND(12345, -2) FROM snapshots ORDER BY id", true},
		{"string case", "SELECT CASE WHEN node_id > 1 THEN 'a' ELSE 'bc' END, CASE WHEN node_id > 1 THEN short_name ELSE 'x' END, CASE node_id WHEN 1 THEN snapshot_id END, IF(node_id>1, 'a', 'bcd'), CASE WHEN node_id > 1 THEN name END FROM functions ORDER BY snapshot_id, name", true},
		{"sums of choices", "SELECT SUM(CASE WHEN flat_bytes > 0 THEN 1 ELSE 0 END), SUM(IF(flat_bytes > 0, 1, 0)), COUNT(CASE WHEN flat_bytes > 0 THEN 1 END) FROM functions", true},
		// Searching names case-insensitively (README): text compares
		// binary, so a LIKE without a collation is case-sensitive.
		{"like binary", "SELECT COUNT(*) FROM functions WHERE name LIKE '%leakycache%'", true},
		{"like general_ci", "SELECT DISTINCT name FROM functions WHERE name LIKE '%leakycache%' COLLATE utf8mb4_general_ci ORDER BY name", false},
		{"like lower", "SELECT DISTINCT name FROM functions WHERE LOWER(name) LIKE '%leakycache%' ORDER BY name", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, tt.query, false, true)
			if !tt.defs {
				return
			}
			got, err := engineDefs(ctx, e, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := ref.fields(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if want := refDefs(fs); !slices.Equal(got, want) {
				t.Errorf("column definitions:\nengine  %v\nMariaDB %v", got, want)
			}
		})
	}
	// The case-insensitive forms find what the binary one does not.
	for _, q := range []string{
		"SELECT COUNT(*) FROM functions WHERE name LIKE '%leakycache%' COLLATE utf8mb4_general_ci",
		"SELECT COUNT(*) FROM functions WHERE LOWER(name) LIKE '%leakycache%'",
	} {
		if _, _, rows, err := engineTyped(ctx, e, s, q); err != nil || fmt.Sprint(rows) == "[[0]]" {
			t.Errorf("%s: %v %v, want rows", q, rows, err)
		}
	}
}

// Character set and collation errors carry MariaDB's code, SQLSTATE and
// text, on a utf8mb3 connection (where a utf8mb4 collation is invalid)
// and on utf8mb4.
func TestCollationErrorsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, tt := range []struct {
		query string
		fails bool
	}{
		{"SET NAMES utf8mb3", false},
		{"SELECT 'x' COLLATE utf8mb4_general_ci", true},
		{"SELECT 'x' COLLATE latin1_swedish_ci", true},
		{"SELECT 'x' COLLATE utf8mb3_general_ci", false},
		{"SET NAMES utf8mb4", false},
		{"SELECT 'x' COLLATE latin1_swedish_ci", true},
		{"SELECT 'x' COLLATE nope_ci", true},
		{"SELECT CONVERT('x' USING nope)", true},
		{"SET NAMES nope", true},
		{"SET collation_connection = nope_ci", true},
		{"SELECT 'x' COLLATE utf8mb4_general_ci = 'X'", false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if tt.fails {
				matchState(t, ctx, e, s, r, tt.query)
				return
			}
			matchMariaDB(t, ctx, e, s, r, tt.query, false, true)
		})
	}
}

// What go-mysql-server cannot do at all is ERROR 1235 naming it.
func TestUnsupportedFeatureIs1235(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	matchMariaDB(t, ctx, e, s, r, "SELECT ~node_id FROM heapprof.snapshots", true, false)
}
