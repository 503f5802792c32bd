package sqlview

import (
	"context"
	"fmt"
	"slices"
	"testing"
)

// Column definition flags (NOT_NULL, PRI_KEY, MULTIPLE_KEY, BLOB,
// UNSIGNED, BINARY, NO_DEFAULT_VALUE, PART_KEY) as MariaDB sends them
// (flags.go): the schema's columns selected as they are, and common
// expressions outside MariaDB's temporary tables.
func TestColumnFlagsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	ref := newRefFields(t)
	const join = " FROM functions f JOIN snapshots s ON s.id = f.snapshot_id LIMIT 1"
	for _, tt := range []struct{ name, query string }{
		{"snapshots", "SELECT * FROM snapshots LIMIT 1"},
		{"functions", "SELECT * FROM functions LIMIT 1"},
		{"stacks", "SELECT * FROM stacks LIMIT 1"},
		{"diffs", "SELECT * FROM diffs LIMIT 1"},
		{"join columns", "SELECT s.id, f.snapshot_id, f.node_id, s.node_id, f.name, s.taken_at" + join},
		{"aliases", "SELECT id AS x, node_id AS y, taken_at t FROM snapshots ORDER BY taken_at LIMIT 1"},
		{"ordered join", "SELECT f.name, s.id FROM functions f JOIN snapshots s ON s.id = f.snapshot_id ORDER BY s.taken_at LIMIT 2"},
		{"distinct column", "SELECT DISTINCT node_kind FROM snapshots"},
		{"grouped column", "SELECT node_id, COUNT(*) FROM snapshots GROUP BY node_id"},
		{"derived table", "SELECT x.id, x.n FROM (SELECT id, node_id + 1 AS n FROM snapshots) x"},
		{"string functions", "SELECT UPPER(s.id), LOWER(f.name), CONCAT(s.id, '#'), CONCAT(f.name, f.node_id), SUBSTRING(s.id, 2), SUBSTRING(s.id, 2, 3), LEFT(f.name, 3), RIGHT(s.id, 2), " +
			"TRIM(s.id), REPLACE(s.id, 'a', 'b'), CONCAT('a', 'b'), UPPER('x'), CONCAT(f.node_id, ''), LPAD(s.id, 3, 'x'), REPEAT(s.id, 2), CONCAT_WS('-', s.id, f.name), " +
			"SUBSTRING_INDEX(s.id, '.', 1), REVERSE(s.id), LOWER(f.short_name), UPPER(s.node_kind), CAST(f.node_id AS CHAR), FORMAT(f.flat_bytes, 2), DATE_FORMAT(f.taken_at, '%Y')" + join},
		{"numbers of text", "SELECT LENGTH(f.name), CHAR_LENGTH(s.id), LOCATE('a', s.id)" + join},
		{"dates", "SELECT DATE(s.taken_at), UNIX_TIMESTAMP(f.taken_at), YEAR(f.taken_at), HOUR(f.taken_at), FROM_UNIXTIME(1700000000), f.taken_at + INTERVAL 1 DAY, NOW()" + join},
		{"date parts", "SELECT DATEDIFF(f.taken_at, '2026-01-01'), TO_DAYS(f.taken_at), DAYNAME(f.taken_at), MONTHNAME(f.taken_at), WEEKOFYEAR(f.taken_at), MICROSECOND(f.taken_at), " +
			"EXTRACT(YEAR FROM f.taken_at), EXTRACT(DAY_MICROSECOND FROM f.taken_at), CURDATE(), UTC_DATE()" + join},
		{"arithmetic", "SELECT flat_bytes + 1, flat_bytes * 2, flat_bytes / 2, flat_bytes - cum_bytes, flat_pct * 2, -flat_bytes, flat_bytes DIV 2, flat_bytes % 3, ABS(flat_bytes), " +
			"ROUND(flat_pct, 1), ROUND(flat_bytes), GREATEST(flat_bytes, cum_bytes), CAST(node_id AS UNSIGNED), 1 + 1, 1.5 * 2, 'a', 1, NULL FROM functions LIMIT 1"},
		{"conditions", "SELECT flat_bytes = 1, flat_bytes > 0 AND cum_bytes > 0, flat_bytes IS NULL, name LIKE 'a%', node_id IN (1, 2), NOT flat_bytes FROM functions LIMIT 1"},
		{"aggregates", "SELECT COUNT(*), SUM(flat_bytes), AVG(flat_bytes), MIN(flat_bytes), MAX(name), MIN(taken_at), COUNT(DISTINCT name), MAX(flat_pct), SUM(flat_pct), GROUP_CONCAT(name) FROM functions"},
		{"choices", "SELECT CASE WHEN flat_bytes > 0 THEN 'a' ELSE 'b' END, CASE WHEN flat_bytes > 0 THEN name ELSE 'b' END, CASE WHEN flat_bytes > 0 THEN 1 ELSE 2 END, " +
			"CASE flat_bytes WHEN 0 THEN 1 END, IF(flat_bytes > 0, 1, 0), IFNULL(name, 'x'), COALESCE(flat_bytes, 0), COALESCE(NULL, 1.5), NULLIF(flat_bytes, 0) FROM functions LIMIT 1"},
		{"collated", "SELECT 'x' COLLATE utf8mb4_general_ci, 'abc' COLLATE utf8mb4_bin, name COLLATE utf8mb4_general_ci, CONCAT('a', 'bc') COLLATE utf8mb4_bin FROM functions LIMIT 1"},
		{"subqueries", "SELECT (SELECT MAX(id) FROM snapshots), (SELECT COUNT(*) FROM functions) FROM DUAL"},
		{"numeric comparisons", "SELECT flat_pct IN (71.4, 1), flat_pct IN (71.4, NULL), flat_pct BETWEEN 0.5 AND 1, flat_pct > 0.5, ROUND(flat_pct, 1) * 3 = 214.2, " +
			"CAST(flat_pct AS DECIMAL(10,3)) IN (SELECT flat_pct FROM functions), NULLIF(CAST(flat_pct AS DECIMAL(10,3)), 1.5) FROM functions LIMIT 1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := e.Query(ctx, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range r.Columns {
				got = append(got, fmt.Sprintf("%s %#x", c.Name, c.Flags))
			}
			r.Close()
			fs, err := ref.fields(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, f := range fs {
				want = append(want, fmt.Sprintf("%s %#x", f.Name, f.Flag))
			}
			if !slices.Equal(got, want) {
				t.Errorf("flags:\nengine  %q\nMariaDB %q", got, want)
			}
		})
	}
}

// Mixes of collations MariaDB refuses (an EXPLICIT collation its
// operands cannot be converted to) are refused with its error, code,
// SQLSTATE and text (collations.go); the mixes it allows answer.
func TestIllegalCollationMixMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, tt := range []struct {
		query string
		// refused: both answer the same error (text too when the
		// message names no literal: MariaDB names the connection's
		// collation there, which go-mysql-server's session does not have).
		refused, sameText bool
	}{
		{"SELECT name FROM functions WHERE name = _latin1'x' COLLATE latin1_swedish_ci", true, true},
		{"SELECT name FROM functions WHERE name <> _latin1'x' COLLATE latin1_swedish_ci", true, true},
		{"SELECT name FROM functions WHERE name < _latin1'x' COLLATE latin1_bin", true, true},
		{"SELECT name FROM functions WHERE name LIKE _latin1'x' COLLATE latin1_swedish_ci", true, true},
		{"SELECT name FROM functions WHERE name IN (_latin1'x' COLLATE latin1_swedish_ci)", true, true},
		{"SELECT name FROM functions WHERE name IN (_latin1'x' COLLATE latin1_swedish_ci, 'y')", true, false},
		{"SELECT name FROM functions WHERE name IN ('y', _latin1'x' COLLATE latin1_swedish_ci, 'z')", true, true},
		{"SELECT name FROM functions WHERE name BETWEEN 'a' AND _latin1'x' COLLATE latin1_swedish_ci", true, false},
		{"SELECT CONCAT(name, _latin1'x' COLLATE latin1_swedish_ci) FROM functions", true, true},
		{"SELECT CONCAT(name, 'a', 1, _latin1'x' COLLATE latin1_swedish_ci) FROM functions", true, true},
		{"SELECT name = _latin1'é' COLLATE latin1_swedish_ci FROM functions", true, true},
		{"SELECT UPPER(name) = _latin1'x' COLLATE latin1_swedish_ci FROM functions", true, true},
		{"SELECT name LIKE CONCAT('%', _latin1'x' COLLATE latin1_swedish_ci) FROM functions", true, true},
		{"SELECT MAX(name) = _latin1'x' COLLATE latin1_swedish_ci FROM functions", true, true},
		{"SELECT (SELECT MAX(name) FROM functions) = _latin1'x' COLLATE latin1_swedish_ci", true, true},
		{"SELECT name FROM functions WHERE name IN (SELECT _latin1'x' COLLATE latin1_swedish_ci)", true, true},
		{"SELECT snapshot_id FROM functions WHERE snapshot_id = _latin1'x' COLLATE latin1_swedish_ci", true, true},
		{"SELECT 'x' COLLATE utf8mb4_general_ci = 'x' COLLATE utf8mb4_bin", true, true},
		// Allowed: an explicit collation of the column's character set,
		// a latin1 literal without COLLATE, numbers, explicit against
		// explicit of a superset.
		{"SELECT COUNT(*) FROM functions WHERE name = 'main' COLLATE utf8mb4_general_ci", false, false},
		{"SELECT COUNT(*) FROM functions WHERE name = _latin1'main'", false, false},
		{"SELECT COUNT(*) FROM functions WHERE name = CONVERT('main' USING latin1)", false, false},
		{"SELECT CONCAT(node_id, _latin1'x' COLLATE latin1_swedish_ci) FROM snapshots ORDER BY id", false, false},
		{"SELECT node_id = _latin1'x' COLLATE latin1_swedish_ci FROM snapshots ORDER BY id", false, false},
		{"SELECT COUNT(*) FROM functions WHERE name COLLATE utf8mb4_general_ci = _latin1'MAIN' COLLATE latin1_swedish_ci", false, false},
		{"SELECT _latin1'x' COLLATE latin1_swedish_ci = 'ü'", false, false},
		{"SELECT DATE_FORMAT(taken_at, '%Y') = _latin1'x' COLLATE latin1_swedish_ci FROM snapshots ORDER BY id", false, false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			switch {
			case tt.refused && tt.sameText:
				matchState(t, ctx, e, s, r, tt.query)
			case tt.refused:
				_, _, _, gerr := engineTyped(ctx, e, s, tt.query)
				_, _, _, werr := r.answer(ctx, tt.query)
				if errorCode(gerr) == 0 || errorCode(gerr) != errorCode(werr) {
					t.Errorf("engine %v, MariaDB %v", gerr, werr)
				}
			default:
				matchMariaDB(t, ctx, e, s, r, tt.query, false, true)
			}
		})
	}
}

// NULLIF compares the shown value of a quotient but answers every digit
// (division.go's exactNullIf); IF of a DECIMAL and an integer answers a
// DECIMAL (exactIf: IF(c, 1.5, 100) is 100.0); DECIMAL choices, x COLLATE
// c and DOUBLE arithmetic have MariaDB's column definitions
// (resultmeta.go).
func TestNullIfAndLengthsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	ref := newRefFields(t)
	for _, q := range []string{
		"SELECT NULLIF(1/3, 0)*3, NULLIF(1/3, 0), NULLIF(2/3, 0.6667), NULLIF(2/3, 0.666667), NULLIF(1/3, '0.3333'), NULLIF(1/3, '0.3333')*3",
		"SELECT NULLIF(flat_bytes/3, 0)*3, NULLIF(flat_bytes/3, '0')*3, NULLIF(flat_bytes/7, 449389.7143) FROM functions ORDER BY snapshot_id, name",
		"SELECT COALESCE(1/3, 0), COALESCE(1.5, 2.25), COALESCE(flat_bytes/3, 12345), CASE WHEN flat_bytes > 0 THEN 1.5 ELSE 2.25 END, CASE WHEN flat_bytes > 0 THEN flat_bytes/3 END, " +
			"IF(flat_bytes > 0, 1/3, 100), IFNULL(1/3, 7), COALESCE(NULL, 1.5), COALESCE(1/3, -100) FROM functions ORDER BY snapshot_id, name",
		"SELECT IF(flat_bytes > 0, 1.5, 100), IF(flat_bytes < 0, 100, 1.5), IF(flat_bytes > 0, NULL, 2.5), IF(flat_bytes > 0, flat_bytes/3, 7) * 3 FROM functions ORDER BY snapshot_id, name",
		"SELECT COALESCE(SUM(flat_bytes), 0), CASE WHEN COUNT(*) > 0 THEN AVG(flat_bytes) ELSE 0 END FROM functions",
		"SELECT 'x' COLLATE utf8mb4_general_ci, 'abc' COLLATE utf8mb4_bin, name COLLATE utf8mb4_general_ci, snapshot_id COLLATE utf8mb4_general_ci FROM functions ORDER BY snapshot_id, name",
		"SELECT flat_pct * 2, flat_pct / 2, -flat_pct, flat_pct + cum_pct, flat_bytes / 2e0 FROM functions WHERE flat_bytes < 1048576 ORDER BY snapshot_id, name",
		"SELECT MAX(flat_pct), MIN(cum_pct) FROM functions",
		"SELECT MAX(flat_pct), MIN(cum_pct) FROM functions GROUP BY node_id ORDER BY node_id",
		"SELECT DISTINCT flat_pct/2 FROM functions ORDER BY 1 DESC",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchDefs(t, ctx, e, s, ref, q)
		})
	}
}

// matchDefs fails t unless q's column definitions (type, length,
// decimals, charset) are MariaDB's.
func matchDefs(t *testing.T, ctx context.Context, e *Engine, s *Session, ref refFields, q string) {
	t.Helper()
	got, err := engineDefs(ctx, e, s, q)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ref.fields(q)
	if err != nil {
		t.Fatal(err)
	}
	want := refDefs(fs)
	if len(got) != len(want) {
		t.Fatalf("column definitions: engine %d columns, MariaDB %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("column %d (%s): engine %v, MariaDB %v", i+1, fs[i].Name, got[i], want[i])
		}
	}
}
