package sqlview

import (
	"context"
	"testing"
)

// TestSubqueryAggregatesMatchMariaDB: a subquery's aggregate written
// like the outer query's (the share of the total) is the subquery's own.
// It was ERROR 1242.
func TestSubqueryAggregatesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT node_kind, SUM(total_bytes) * 100 / (SELECT SUM(total_bytes) FROM snapshots) AS pct FROM snapshots GROUP BY node_kind",
		"SELECT node_kind, SUM(snapshots.total_bytes) * 100 / (SELECT SUM(snapshots.total_bytes) FROM heapprof.snapshots) AS pct FROM snapshots GROUP BY node_kind",
		"SELECT node_kind, COUNT(*) / (SELECT COUNT(*) FROM snapshots) FROM snapshots GROUP BY node_kind",
		"SELECT name, SUM(flat_bytes) FROM functions GROUP BY name HAVING SUM(flat_bytes) > (SELECT SUM(flat_bytes) / 10 FROM functions) ORDER BY 1",
		// Correlated: the inner table's own name, the outer one's by alias.
		"SELECT node_kind, SUM(total_bytes) / (SELECT SUM(total_bytes) FROM snapshots s2 WHERE s2.node_kind = snapshots.node_kind) FROM snapshots GROUP BY node_kind",
		"SELECT node_id, total_bytes FROM snapshots WHERE total_bytes > (SELECT AVG(total_bytes) FROM snapshots) ORDER BY 1, 2",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}
