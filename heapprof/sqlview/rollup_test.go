package sqlview

import (
	"context"
	"testing"
)

// TestRollupMatchesMariaDB: GROUP BY ... WITH ROLLUP answers MariaDB's
// rows in MariaDB's order (each group's total after its rows, the grand
// total last), names and types; ORDER BY with it is MariaDB's ERROR 1221.
// It was ERROR 1235.
func TestRollupMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT node_kind, SUM(total_bytes) FROM snapshots GROUP BY node_kind WITH ROLLUP",
		"SELECT node_kind, node_id, SUM(total_bytes), COUNT(*) FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP",
		// Positions, aliases, expressions of the group columns.
		"SELECT node_kind, node_id, SUM(total_bytes) FROM snapshots GROUP BY 1, 2 WITH ROLLUP LIMIT 4",
		"SELECT node_kind k, SUM(total_bytes) FROM snapshots GROUP BY k WITH ROLLUP",
		"SELECT CONCAT(node_kind, 'x'), node_id + 1, SUM(total_bytes) s FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP HAVING s > 100",
		"SELECT YEAR(taken_at), MONTH(taken_at), DAY(taken_at), SUM(total_bytes) FROM snapshots GROUP BY YEAR(taken_at), MONTH(taken_at), DAY(taken_at) WITH ROLLUP",
		"SELECT DATE(taken_at) d, SUM(total_bytes), AVG(total_bytes), COUNT(DISTINCT node_id) FROM snapshots GROUP BY d WITH ROLLUP",
		// HAVING sees the added rows' NULLs; LIMIT counts them.
		"SELECT node_kind, node_id, COUNT(*) FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP HAVING node_kind = 'starrocks'",
		"SELECT node_kind, node_id, COUNT(*) c FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP HAVING c > 1 LIMIT 1, 2",
		// No rows, no total.
		"SELECT node_kind, COUNT(*), SUM(total_bytes) FROM snapshots WHERE id = 'none' GROUP BY node_kind WITH ROLLUP",
		// Joins, derived tables, a rollup in a derived table or a UNION.
		"SELECT s.node_kind, COUNT(*), SUM(f.flat_bytes) FROM functions f JOIN snapshots s ON s.id = f.snapshot_id GROUP BY s.node_kind WITH ROLLUP",
		"SELECT k, SUM(total_bytes) FROM (SELECT node_kind k, total_bytes FROM snapshots) t GROUP BY k WITH ROLLUP",
		"SELECT * FROM (SELECT node_kind, SUM(total_bytes) s FROM snapshots GROUP BY node_kind WITH ROLLUP) t WHERE s > 10",
		"SELECT node_kind, COUNT(*) FROM snapshots GROUP BY node_kind WITH ROLLUP UNION ALL SELECT 'x', 1",
		"SELECT node_kind, MAX(taken_at), MIN(id) FROM snapshots GROUP BY node_kind WITH ROLLUP",
		"SELECT DISTINCT node_kind, COUNT(*) > 1 FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP",
		// MariaDB refuses ORDER BY with it.
		"SELECT node_kind, node_id, SUM(total_bytes) FROM snapshots GROUP BY node_kind, node_id WITH ROLLUP ORDER BY 1",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}
