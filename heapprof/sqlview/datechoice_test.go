package sqlview

import (
	"context"
	"testing"
)

// TestDateChoicesMatchMariaDB: IF, IFNULL, COALESCE, CASE, GREATEST and
// LEAST among dates have MariaDB's type, values and column definitions.
// IFNULL(DATE(x), taken_at) was a DATE (2026-11-20; MariaDB 2026-11-20
// 00:00:00.000000), IF(c, DATE(x), NULL) a DATETIME, COALESCE(NULL,
// DATE(x)) text, LEAST(DATE(x), '2026-11-21') 0, and COALESCE(TIME(x),
// '10:00') ERROR 1105.
func TestDateChoicesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT id, COALESCE(NULL, DATE(taken_at)), IFNULL(DATE(taken_at), taken_at), IF(node_id > 10001, DATE(taken_at), NULL), CASE WHEN node_id > 10001 THEN DATE(taken_at) END, " +
			"CASE node_kind WHEN 'doris' THEN taken_at ELSE DATE(taken_at) END FROM snapshots ORDER BY id",
		"SELECT id, COALESCE(taken_at, '2026-01-01'), NULLIF(DATE(taken_at), '2026-11-20'), COALESCE(DATE(taken_at), CURDATE()) = DATE(taken_at), IFNULL(NULL, CURDATE()) = CURDATE(), " +
			"IF(node_id > 10001, CURDATE(), DATE(taken_at)) <= CURDATE() FROM snapshots ORDER BY id",
		"SELECT id, GREATEST(taken_at, DATE(taken_at)), LEAST(DATE(taken_at), '2026-11-21'), GREATEST(DATE(taken_at), '2026-11-20 12:00'), LEAST(taken_at, '2026-11-20 09:30:00.5'), " +
			"GREATEST('2026-11-21', taken_at, '2026-11-20'), LEAST(DATE(taken_at), 'x') FROM snapshots ORDER BY id",
		"SELECT id, COALESCE(TIME(taken_at), '10:00'), IFNULL(NULL, TIME(taken_at)), IF(node_id > 10001, taken_at, 'none') FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
}
