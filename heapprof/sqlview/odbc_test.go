package sqlview

import (
	"context"
	"testing"
)

// TestODBCEscapesMatchMariaDB: ODBC's escape sequences answer as on
// MariaDB, whose parser reads them (they were ERROR 1064): typed date,
// time and datetime literals when the text is a whole value (else the
// string), {fn ...} with ODBC's SQL_TSI_ units, {oj ...}; each column is
// named and typed as MariaDB names and types it.
func TestODBCEscapesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT {d '2026-01-01'}, {ts '2026-01-01 10:00:00.5'}, {t '10:00:00'}, {fn UCASE('a')}, {fn NOW()} > 0, {d 'x'}, {foo 1}, {ts '2026-01-01'}",
		"SELECT {d '2026-01-01 10:00'} a, {t '2026-01-01 10:00:00'} b, {ts '2026-01-01 10:00'} c, {d '2026/01/01'} d, {d ' 2026-01-01'} e, {t '10:00'} f, {t '25:00:00'} g, " +
			"{ts '2026-01-01T10:00:00'} h, {d '26-01-01'} i, {d '2026-01-01x'} j, {d '2026-1-1'} k, {d '2026-02-30'} l, {t '10:00:00.25'} m",
		"SELECT COUNT(*) FROM snapshots WHERE taken_at > {ts '2026-11-20 09:00:00'} AND taken_at < {d '2026-11-22'}",
		"SELECT {fn TIMESTAMPDIFF(SQL_TSI_HOUR, {ts '2026-11-20 09:00:00'}, {ts '2026-11-21 09:00:00'})}, {fn TIMESTAMPADD(SQL_TSI_DAY, 1, {d '2026-01-31'})}",
		"SELECT a.id, b.node_kind FROM {oj snapshots a LEFT OUTER JOIN snapshots b ON a.id = b.id} ORDER BY a.id LIMIT 2",
		"SELECT {fn CONCAT(node_kind, '-')}, {fn LCASE(id)}, {fn LENGTH(id)}, {fn YEAR(taken_at)} FROM snapshots ORDER BY id LIMIT 2",
		"SELECT '{d x}', '{fn y}'",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
	// A seventh fraction digit: MariaDB's note names the value DATETIME,
	// the engine's datetime (README); the values match.
	q := "SELECT {ts '2026-01-01 10:00:00.1234567'}"
	t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
}
