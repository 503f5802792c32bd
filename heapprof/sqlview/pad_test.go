package sqlview

import (
	"context"
	"testing"
)

// TestPadAndInsertMatchMariaDB: LPAD, RPAD and INSERT count characters as
// MariaDB does. go-mysql-server counted bytes: LPAD('ünï', 5, '*') was
// 'ünï' ('**ünï' on MariaDB), and a pad or cut through a multibyte
// character was ERROR 1105; LPAD without a pad was ERROR 1582, INSERT
// ERROR 1305.
func TestPadAndInsertMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT LPAD('ünï', 5, '*'), RPAD('ünï', 5, '*'), LPAD('ünïcode', 3, '*'), RPAD('ünïcode', 4, 'x'), LPAD('ab', 6, 'üx'), RPAD('ab', 5, 'üx'), LPAD('ab', 0, 'x'), LPAD('ab', -1, 'x'), " +
			"LPAD(NULL, 3, 'x'), LPAD('ab', 3, ''), LPAD('ab', 2, ''), CHAR_LENGTH(LPAD('ü', 4, 'ä'))",
		"SELECT LPAD('ab', 5), RPAD('ab', 4), LPAD(name, 60, 'ü'), RPAD(name, 10, '-') FROM functions WHERE snapshot_id = 'heap_profile.10003.0'",
		"SELECT id, LPAD(node_id, 8, '0'), RPAD(node_kind, 12, '.'), LPAD(total_bytes / 3, 14, ' ') FROM snapshots ORDER BY id",
		"SELECT INSERT('ünïcode', 2, 2, 'X'), INSERT('abc', 0, 1, 'X'), INSERT('abc', 4, 1, 'X'), INSERT('abc', 3, 10, 'X'), INSERT('abc', 1, -1, 'X'), INSERT(NULL, 1, 1, 'X'), INSERT('ab', 1, 1, NULL), INSERT('ünï', 3, 1, 'ü')",
		"SELECT id, INSERT(id, 1, 4, 'HEAP'), INSERT(node_kind, 2, 0, '-') FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
	// Past max_allowed_packet both answer NULL with warning 1301 (whose
	// text names each server's own limit).
	q := "SELECT LPAD('a', 2000000000, 'b'), RPAD('a', 1073741824, 'ü')"
	t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
}
