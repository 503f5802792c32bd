package sqlview

import (
	"context"
	"testing"
)

// TestMaketimeMatchesMariaDB: MAKETIME answers MariaDB's TIME, column
// definition and warnings (it was ERROR 1305).
func TestMaketimeMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT MAKETIME(1, 2, 3.1234567), MAKETIME(1, 2, 60), MAKETIME(1, 2, -1), MAKETIME(1, 60, 0), MAKETIME(900, 0, 0), MAKETIME(-900, 0, 1.5), MAKETIME(10.6, 5.4, 3)",
		"SELECT MAKETIME('10', '5', '3.5'), MAKETIME(838, 59, 59.999999), MAKETIME(1, 2, 59.9999999), MAKETIME(NULL, 1, 1), MAKETIME(1, 2, 3e0), MAKETIME(1, 2, 3)",
		"SELECT id, MAKETIME(HOUR(taken_at), 0, 0), MAKETIME(HOUR(taken_at), MINUTE(taken_at), SECOND(taken_at)), TIME_FORMAT(MAKETIME(25, 30, 0), '%H:%i') FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
}
