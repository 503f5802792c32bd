package sqlview

import (
	"context"
	"testing"
)

// TestDuplicateItemsMatchMariaDB: the same aggregate twice in a select
// list, written with a table alias, answers as on MariaDB, names
// included. It was ERROR 1105.
func TestDuplicateItemsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT SUM(s.total_bytes), SUM(s.total_bytes) FROM snapshots s",
		"SELECT AVG(s.sample_period), AVG(s.sample_period), MAX(s.total_bytes), MAX(s.total_bytes) FROM snapshots s",
		"SELECT node_kind, SUM(s.total_bytes), SUM(s.total_bytes) FROM snapshots s GROUP BY node_kind",
		"SELECT SUM(s.total_bytes), SUM(s.total_bytes) FROM snapshots s UNION ALL SELECT 1, 2",
		"SELECT node_kind, SUM(s.total_bytes), SUM(s.total_bytes) FROM snapshots s GROUP BY node_kind WITH ROLLUP",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}
