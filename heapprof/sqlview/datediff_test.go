package sqlview

import (
	"context"
	"testing"
)

// TestDayCountsMatchMariaDB: TIMESTAMPDIFF, DATEDIFF and TO_DAYS answer
// MariaDB's numbers and warnings. go-mysql-server counted a month as 30
// days and a year as 365 (Metabase's TIMESTAMPDIFF(MONTH, ...) of
// 2026-11-20 and 2027-03-01 was 2, 3 on MariaDB), overflowed a Go
// duration past 292 years (DATEDIFF('9999-12-31', '0001-01-01') was
// 106752), refused a zero month or day and numbers, and had a 29
// February in year 0.
func TestDayCountsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	dates := []string{
		"'2026-01-31'", "'2026-02-28 10:00'", "'2026-03-31 23:59:59.999999'", "'2024-02-29'", "'2025-02-28'",
		"'2026-11-20 08:00:00.123456'", "'2027-11-20 08:00:00.123455'", "'0000-03-01'", "'0001-01-01'", "'9999-12-31 23:59:59.999999'",
		"'1969-12-31 23:59:59'", "'2026-11-20'",
	}
	for _, a := range dates {
		for _, b := range dates {
			q := "SELECT TIMESTAMPDIFF(MICROSECOND, " + a + ", " + b + "), TIMESTAMPDIFF(SECOND, " + a + ", " + b + "), TIMESTAMPDIFF(MINUTE, " + a + ", " + b + "), " +
				"TIMESTAMPDIFF(HOUR, " + a + ", " + b + "), TIMESTAMPDIFF(DAY, " + a + ", " + b + "), TIMESTAMPDIFF(WEEK, " + a + ", " + b + "), " +
				"TIMESTAMPDIFF(MONTH, " + a + ", " + b + "), TIMESTAMPDIFF(QUARTER, " + a + ", " + b + "), TIMESTAMPDIFF(YEAR, " + a + ", " + b + "), " +
				"DATEDIFF(" + a + ", " + b + "), TO_DAYS(" + a + ")"
			t.Run(q, func(t *testing.T) { matchWithWarnings(t, ctx, e, s, r, q) })
		}
	}
	for _, q := range []string{
		// Metabase's datetime-diff (src/metabase/driver/mysql.clj).
		"SELECT id, TIMESTAMPDIFF(year, DATE(taken_at), DATE('2029-03-01')), TIMESTAMPDIFF(quarter, DATE(taken_at), DATE('2027-03-01')), TIMESTAMPDIFF(month, DATE(taken_at), DATE('2027-03-01')), " +
			"TIMESTAMPDIFF(week, DATE(taken_at), DATE('2027-03-01')), DATEDIFF('2027-03-01', taken_at), TIMESTAMPDIFF(hour, taken_at, '2026-11-22 00:00:00'), TIMESTAMPDIFF(minute, taken_at, '2026-11-22'), " +
			"TIMESTAMPDIFF(second, taken_at, '2026-11-22') FROM snapshots ORDER BY id",
		"SELECT id, TIMESTAMPDIFF(MONTH, taken_at, '2027-11-20 08:00:00.123456'), TIMESTAMPDIFF(MONTH, taken_at, '2027-11-20 08:00:00.123455'), TO_DAYS(taken_at), TO_DAYS(DATE(taken_at)) FROM snapshots ORDER BY id",
		"SELECT a.id, b.id, TIMESTAMPDIFF(MICROSECOND, a.taken_at, b.taken_at), DATEDIFF(a.taken_at, b.taken_at) FROM snapshots a JOIN snapshots b ORDER BY a.id, b.id",
		// NULL with warning 1292: no date, a zero month or day.
		"SELECT TIMESTAMPDIFF(DAY, '0000-00-00', '2026-01-01'), TIMESTAMPDIFF(DAY, '2026-01-00', '2026-01-03'), TIMESTAMPDIFF(DAY, 'x', '2026-01-03'), DATEDIFF('2026-02-30', '2026-01-01'), TO_DAYS('2026-00-01'), TO_DAYS(''), DATEDIFF(NULL, '2026-01-01')",
		"SELECT TIMESTAMPDIFF(DAY, '2026-01-01 10:00:00.1234567', '2026-01-03 x'), DATEDIFF('2026/01/05 23', '26-01-03')",
		// Numbers read as dates.
		"SELECT TIMESTAMPDIFF(HOUR, 20261120, '2026-11-21'), TIMESTAMPDIFF(MINUTE, 20261120100000.5, '2026-11-21'), TIMESTAMPDIFF(DAY, 261120, 20261201), DATEDIFF(20261120, '2026-01-01'), TO_DAYS(991231), TO_DAYS(700101), TO_DAYS(123)",
		"SELECT TO_DAYS(20261120.5), TO_DAYS(0), TO_DAYS(-20261120), TO_DAYS(20261100), TO_DAYS(2026112010.5), TO_DAYS(20261120103000.999999e0), TIMESTAMPDIFF(MICROSECOND, 20261120103000.9999999, 20261120103001), TO_DAYS(TRUE)",
		// A TIME is a time on the current date.
		"SELECT TO_DAYS(CAST('10:00' AS TIME)) = TO_DAYS(CURDATE()), TO_DAYS(CAST('-10:00' AS TIME)) = TO_DAYS(CURDATE()) - 1, DATEDIFF(CAST('30:00' AS TIME), CURDATE())",
		// ODBC's SQL_TSI_ units.
		"SELECT TIMESTAMPDIFF(SQL_TSI_MONTH, '2026-11-20', '2027-03-01'), TIMESTAMPADD(SQL_TSI_DAY, 1, '2026-01-31') AS next_day, EXTRACT(SQL_TSI_YEAR FROM '2026-01-01')",
		"SELECT id, taken_at + INTERVAL 1 SQL_TSI_WEEK, DATE_SUB(taken_at, INTERVAL 2 SQL_TSI_QUARTER), TIMESTAMPDIFF(SQL_TSI_HOUR, taken_at, '2026-11-22') FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) { matchWithWarnings(t, ctx, e, s, r, q) })
	}
	// A column's value that is no date: MariaDB's warnings add "for column
	// ... at row n", the engine's do not (README); the values match.
	q := "SELECT id, TO_DAYS(node_id), DATEDIFF(total_bytes, 20260101), TIMESTAMPDIFF(DAY, id, taken_at) FROM snapshots ORDER BY id"
	t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
}
