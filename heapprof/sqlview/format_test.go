package sqlview

import (
	"context"
	"testing"
)

// FORMAT's locale answers as on MariaDB whatever its type: go-mysql-server
// took it for a string and panicked on FORMAT(x, 2, 1), which lost the
// client's connection until 2026-11-25.
func TestFormatLocaleMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT FORMAT(1.5, 2, 1)",
		"SELECT FORMAT(flat_bytes, 2, 1) AS f FROM heapprof.functions ORDER BY flat_bytes, f",
		"SELECT FORMAT(1.5, 2, 'xx')",
		"SELECT FORMAT(1234.5, 2, 'de_DE')",
		"SELECT FORMAT(1234.5, 2, NULL)",
		"SELECT FORMAT(1234.5, 2, CONCAT('de_', 'DE'))",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, false) })
	}
}
