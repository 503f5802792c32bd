package sqlview

import (
	"context"
	"testing"
)

// TestWindowsOverGroupsMatchMariaDB: window functions over a grouped
// SELECT (Metabase's cumulative sum and count, a share of the total, a
// top-N rank) answer MariaDB's rows, names and types. go-mysql-server
// failed on each: ERROR 1140 with a broken message, or 1105.
func TestWindowsOverGroupsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		// Metabase's cumulative sum and count.
		"SELECT DATE(taken_at) AS d, SUM(total_bytes) AS s, SUM(SUM(total_bytes)) OVER (ORDER BY DATE(taken_at) ROWS UNBOUNDED PRECEDING) AS cum FROM snapshots GROUP BY DATE(taken_at) ORDER BY d",
		"SELECT node_kind, COUNT(*), SUM(COUNT(*)) OVER (ORDER BY node_kind ROWS UNBOUNDED PRECEDING) FROM snapshots GROUP BY node_kind ORDER BY node_kind",
		// A share of the total; a top-N rank; a rank within a partition.
		"SELECT node_kind, SUM(total_bytes) / SUM(SUM(total_bytes)) OVER () AS share FROM snapshots GROUP BY node_kind ORDER BY 1",
		"SELECT node_id, SUM(total_bytes) AS s, RANK() OVER (ORDER BY SUM(total_bytes) DESC) FROM snapshots GROUP BY node_id ORDER BY node_id",
		"SELECT node_kind, node_id, ROW_NUMBER() OVER (PARTITION BY node_kind ORDER BY SUM(total_bytes) DESC, node_id) AS n, DENSE_RANK() OVER (ORDER BY node_kind) FROM snapshots GROUP BY node_kind, node_id ORDER BY node_kind, n",
		// HAVING on an alias, ORDER BY the alias, LIMIT.
		"SELECT node_id, SUM(total_bytes) AS s, RANK() OVER (ORDER BY SUM(total_bytes)) AS r FROM snapshots GROUP BY node_id HAVING s > 1 ORDER BY s DESC LIMIT 2",
		// A window in ORDER BY only; ORDER BY a group column not selected.
		"SELECT node_id, SUM(total_bytes) FROM snapshots GROUP BY node_id ORDER BY ROW_NUMBER() OVER (ORDER BY SUM(total_bytes))",
		"SELECT SUM(total_bytes), COUNT(*) OVER () FROM snapshots GROUP BY node_kind ORDER BY node_kind",
		// An aggregate without GROUP BY; DISTINCT; a join; LAG of a sum.
		"SELECT SUM(total_bytes), COUNT(*) OVER () FROM snapshots",
		"SELECT DISTINCT node_kind, COUNT(*) OVER () FROM snapshots GROUP BY node_kind, node_id ORDER BY 1",
		"SELECT s.node_kind, SUM(f.flat_bytes), RANK() OVER (ORDER BY SUM(f.flat_bytes) DESC) FROM functions f JOIN snapshots s ON s.id = f.snapshot_id GROUP BY s.node_kind ORDER BY 1",
		"SELECT DATE(taken_at) AS d, SUM(total_bytes) - LAG(SUM(total_bytes)) OVER (ORDER BY DATE(taken_at)) AS growth FROM snapshots GROUP BY d ORDER BY d",
		// LAG of a sum, grouped here or in a derived table (it was a
		// DOUBLE, printed 4.8234497e+07).
		"SELECT DATE(taken_at) AS d, LAG(SUM(total_bytes)) OVER (ORDER BY DATE(taken_at)) AS prev FROM snapshots GROUP BY d ORDER BY d",
		"SELECT d, LAG(s) OVER (ORDER BY d), FIRST_VALUE(s) OVER (ORDER BY d) FROM (SELECT DATE(taken_at) d, SUM(total_bytes) s FROM snapshots GROUP BY d) t ORDER BY d",
		// GROUP BY positions: the derived table's columns are in another
		// order than the select list.
		"SELECT COUNT(*) OVER (), node_id, node_kind FROM snapshots GROUP BY 3, 2 ORDER BY 2",
		"SELECT RANK() OVER (ORDER BY SUM(total_bytes) DESC) r, node_kind FROM snapshots GROUP BY 2 ORDER BY 2",
		// In a derived table: the top two nodes.
		"SELECT * FROM (SELECT node_id, SUM(total_bytes) AS s, RANK() OVER (ORDER BY SUM(total_bytes) DESC) AS r FROM snapshots GROUP BY node_id) t WHERE r <= 2 ORDER BY r",
		// Ranks and PERCENT_RANK as MariaDB types them: BIGINT, DOUBLE(17,10).
		"SELECT id, ROW_NUMBER() OVER (ORDER BY id), RANK() OVER (ORDER BY node_id), NTILE(3) OVER (ORDER BY taken_at), PERCENT_RANK() OVER (ORDER BY total_bytes) FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}

// TestCumeDistMatchesMariaDB: CUME_DIST() answers MariaDB's values as a
// DOUBLE(17,10), over rows and over groups. It was ERROR 1305.
func TestCumeDistMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT node_kind, CUME_DIST() OVER (ORDER BY node_kind) FROM snapshots ORDER BY 1",
		"SELECT id, node_id, CUME_DIST() OVER (PARTITION BY node_id ORDER BY total_bytes DESC) AS cd FROM snapshots ORDER BY id",
		"SELECT node_kind, SUM(total_bytes), CUME_DIST() OVER (ORDER BY SUM(total_bytes)) FROM snapshots GROUP BY node_kind ORDER BY 1",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
}
