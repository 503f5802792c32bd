package sqlview

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestUnionTypesMatchMariaDB: a UNION's columns have the types MariaDB
// joins its SELECTs' to, and print as MariaDB prints them. A totals row
// under a grouped query printed its SUM as 6.0817408e+07, a DECIMAL with
// 30 fraction digits, a date or a number beside a NULL as LONGTEXT.
func TestUnionTypesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		// A totals row: SUM, COUNT, AVG, MAX beside a name or a NULL.
		"SELECT node_kind, SUM(total_bytes) FROM snapshots GROUP BY node_kind UNION ALL SELECT 'total', SUM(total_bytes) FROM snapshots",
		"SELECT node_kind, COUNT(*), AVG(total_bytes), MAX(taken_at) FROM snapshots GROUP BY node_kind UNION ALL SELECT NULL, COUNT(*), AVG(total_bytes), MAX(taken_at) FROM snapshots",
		"SELECT 'total' AS k, SUM(total_bytes) AS s FROM snapshots UNION ALL SELECT node_kind, SUM(total_bytes) FROM snapshots GROUP BY node_kind",
		"SELECT DATE(taken_at), SUM(total_bytes) FROM snapshots GROUP BY 1 UNION ALL SELECT NULL, SUM(total_bytes) FROM snapshots",
		"SELECT node_kind, SUM(total_bytes) s FROM snapshots GROUP BY node_kind UNION SELECT 'total', SUM(total_bytes) FROM snapshots ORDER BY s DESC",
		// Numbers: the most digits on either side of the point.
		"SELECT 1.5 UNION ALL SELECT NULL",
		"SELECT 1 UNION ALL SELECT 22.125",
		"SELECT 1 AS n UNION SELECT 300 UNION SELECT 5000000000 UNION SELECT -2 ORDER BY n",
		"SELECT AVG(total_bytes) FROM snapshots UNION ALL SELECT 1",
		"SELECT node_id FROM snapshots UNION SELECT 10001.5 ORDER BY 1",
		"SELECT id, node_id FROM snapshots WHERE node_id = 10003 UNION ALL SELECT 'sum', SUM(node_id) FROM snapshots",
		// Dates: DATETIME when they differ, text beside text or a number.
		"SELECT taken_at FROM snapshots WHERE node_id = 10003 UNION ALL SELECT NULL",
		"SELECT DATE(taken_at) d FROM snapshots UNION SELECT taken_at FROM snapshots ORDER BY d",
		"SELECT MIN(taken_at) FROM snapshots UNION ALL SELECT DATE('2026-01-01')",
		"SELECT DATE(taken_at) FROM snapshots WHERE node_id = 10003 UNION ALL SELECT 'x'",
		// Text: the longest side; a number printed as the SELECT prints it.
		"SELECT node_id FROM snapshots UNION SELECT 'x' ORDER BY 1",
		"SELECT CAST(node_id AS CHAR) FROM snapshots WHERE node_id = 10003 UNION ALL SELECT MAX(flat_pct) * 1e20 FROM functions",
		"SELECT 1 UNION SELECT 2 UNION SELECT 3.5 UNION SELECT NULL UNION SELECT 'x'",
		// A SELECT's own ORDER BY, LIMIT, HAVING by alias see its values.
		"SELECT node_kind, COUNT(*) c FROM snapshots GROUP BY node_kind HAVING c > 1 UNION ALL SELECT NULL, 0.5 ORDER BY 1",
		"(SELECT node_id, total_bytes AS b FROM snapshots ORDER BY b DESC LIMIT 2) UNION ALL (SELECT NULL, 1.5)",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
	// In a derived table, the values and the outer query's types.
	q := "SELECT * FROM (SELECT node_kind k, SUM(total_bytes) s FROM snapshots GROUP BY node_kind UNION ALL SELECT 'total', SUM(total_bytes) FROM snapshots) t ORDER BY s"
	t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
}

// TestGroupByOrderMatchesMariaDB: a GROUP BY without ORDER BY answers its
// groups in order, as MariaDB does.
func TestGroupByOrderMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT node_kind, COUNT(*) FROM snapshots GROUP BY node_kind",
		"SELECT node_id, COUNT(*) FROM snapshots GROUP BY 1",
		"SELECT DATE(taken_at) d, SUM(total_bytes) FROM snapshots GROUP BY d",
		"SELECT node_kind, node_id, COUNT(*) FROM snapshots GROUP BY node_kind, node_id",
		"SELECT UPPER(node_kind), COUNT(*) FROM snapshots GROUP BY UPPER(node_kind)",
		"SELECT s.node_id, COUNT(*) FROM functions f JOIN snapshots s ON s.id = f.snapshot_id GROUP BY s.node_id",
		"SELECT node_kind, COUNT(*) FROM snapshots GROUP BY node_kind LIMIT 2",
		"SELECT node_kind, COUNT(*) FROM snapshots GROUP BY node_kind HAVING COUNT(*) > 1",
		// An alias that is another column's name: MariaDB groups by the
		// column; GROUP BY NULL is one group.
		"SELECT node_kind AS node_id, COUNT(*) FROM snapshots GROUP BY node_id",
		"SELECT COUNT(*) FROM snapshots GROUP BY NULL",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}

// TestUnionsAndRollupsPrepared: a prepared UNION or rollup with a ?
// marker outside its select list answers what MariaDB answers the
// statement with the value written in (Prepare counts a marker a rollup
// copies into each level once; each SELECT is typed with the marker as a
// number).
func TestUnionsAndRollupsPrepared(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT node_kind, COUNT(*), SUM(total_bytes) FROM snapshots WHERE node_id > ? GROUP BY node_kind WITH ROLLUP",
		"SELECT node_kind, SUM(total_bytes), AVG(total_bytes) FROM snapshots WHERE node_id > ? GROUP BY node_kind UNION ALL SELECT 'total', SUM(total_bytes), AVG(total_bytes) FROM snapshots",
	} {
		t.Run(q, func(t *testing.T) {
			p, err := e.Prepare(ctx, s, q)
			if err != nil {
				t.Fatal(err)
			}
			defer e.ClosePrepared(s, p)
			if p.Params != 1 {
				t.Fatalf("Prepare counts %d markers, want 1", p.Params)
			}
			res, err := e.Execute(ctx, s, p, []any{int64(10001)})
			if err != nil {
				t.Fatal(err)
			}
			gc, gt, gr, err := resultTyped(res)
			if err != nil {
				t.Fatal(err)
			}
			wc, wt, wr, err := r.answer(ctx, strings.Replace(q, "?", "10001", 1))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gc, wc) || !slices.Equal(gt, wt) || !slices.EqualFunc(gr, wr, slices.Equal) {
				t.Errorf("engine:\n%q %q\n%q\nMariaDB:\n%q %q\n%q", gc, gt, gr, wc, wt, wr)
			}
		})
	}
}

// TestWithUnionsMatchMariaDB: UNIONs over a WITH's tables, and a
// recursive CTE's columns, typed as MariaDB types them (its anchor's). A
// totals row over a CTE was ERROR 1105; a recursive series of dates was
// DATETIME(6).
func TestWithUnionsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"WITH t AS (SELECT node_kind, SUM(total_bytes) s FROM snapshots GROUP BY node_kind) SELECT * FROM t UNION ALL SELECT 'total', SUM(s) FROM t",
		// A date series to fill the days without snapshots.
		"WITH RECURSIVE d AS (SELECT DATE('2026-11-19') x UNION ALL SELECT x + INTERVAL 1 DAY FROM d WHERE x < '2026-11-22') SELECT d.x, COUNT(s.id) FROM d LEFT JOIN snapshots s ON DATE(s.taken_at) = d.x GROUP BY d.x",
		"WITH RECURSIVE d (x) AS (SELECT DATE('2026-11-19') UNION ALL SELECT d.x + INTERVAL 1 DAY FROM d WHERE d.x < '2026-11-22') SELECT d.x, COUNT(s.id) FROM d LEFT JOIN snapshots s ON DATE(s.taken_at) = d.x GROUP BY d.x",
		"WITH RECURSIVE d AS (SELECT CAST('2026-11-19 00:00:00' AS DATETIME) t UNION ALL SELECT t + INTERVAL 12 HOUR FROM d WHERE t < '2026-11-21') SELECT t FROM d",
		"WITH RECURSIVE n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 5) SELECT i, i * 1.5 FROM n",
		"WITH RECURSIVE n AS (SELECT 1 AS i, CAST('a' AS CHAR(10)) s UNION ALL SELECT i + 1, CONCAT(s, 'b') FROM n WHERE i < 3) SELECT * FROM n",
		// A derived table's groups in order.
		"SELECT * FROM (SELECT node_kind, COUNT(*) c FROM snapshots GROUP BY node_kind) t",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}
