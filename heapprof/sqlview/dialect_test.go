package sqlview

import (
	"context"
	"testing"
)

// The dialect fixes of dialect.go and strtodate.go, each statement run on
// the engine and on MariaDB: same rows, column types and error codes, or
// (unsupported) MariaDB answers and the engine refuses with ERROR 1235
// naming what it lacks.
func TestDialectMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	tests := []struct {
		name, query string
		unsupported bool
		// typeNote, when set, says why the column types differ (and
		// they are not compared); the rows are.
		typeNote string
	}{
		// 1. STR_TO_DATE: Metabase's week bucket and the other specifiers.
		{"metabase week", "SELECT id, str_to_date(concat(yearweek(taken_at), ' Sunday'), '%X%V %W') AS w FROM heapprof.snapshots ORDER BY id", false, ""},
		{"metabase week grouped", "SELECT str_to_date(concat(yearweek(taken_at), ' Sunday'), '%X%V %W') AS w, COUNT(*) FROM heapprof.snapshots GROUP BY w ORDER BY w", false, ""},
		{"iso week", "SELECT str_to_date('202401 Monday', '%x%v %W'), str_to_date('202653 Thursday', '%x%v %W'), str_to_date('2024 01 0', '%Y %U %w'), str_to_date('2024 00 Sat', '%Y %u %a')", false, ""},
		{"names and days", "SELECT str_to_date('Mon 1 Jan 2024', '%a %e %b %Y'), str_to_date('March 3rd, 24', '%M %D, %y'), str_to_date('2024-366', '%Y-%j')", false, ""},
		{"times", "SELECT str_to_date('2024-01-02 3:04 pm', '%Y-%m-%d %h:%i %p'), str_to_date('2024-01-02 10:11:12.5', '%Y-%m-%d %H:%i:%s.%f'), str_to_date('12:00:01 AM 2024/1/2', '%r %Y/%c/%e'), str_to_date('10:11:12', '%T')", false, ""},
		{"no match", "SELECT str_to_date('x2024', '%Y'), str_to_date('2024 54 Sunday', '%X%V %W'), str_to_date('2024 10 Sunday', '%Y%V %W'), str_to_date('13:00 pm', '%h:%i %p')", false, ""},
		{"zero day", "SELECT str_to_date('2024', '%Y-%m-%d')", true, ""},
		{"invalid day", "SELECT str_to_date('2024-02-30', '%Y-%m-%d')", true, ""},
		// 2. GREATEST / LEAST with decimals.
		{"greatest decimals", "SELECT GREATEST(1, 2.50), LEAST(1.5, 2), GREATEST(0.1, 0.25, 0.125), LEAST(-1.5, -1.25)", false, ""},
		{"greatest columns", "SELECT id, GREATEST(total_bytes, 1048576.25), LEAST(node_id, 10001.5), GREATEST(total_bytes / 3, 1) FROM heapprof.snapshots ORDER BY id", false, ""},
		{"greatest mixed", "SELECT GREATEST(1.5, 2e0), LEAST(2.5, '1'), GREATEST(flat_pct, 1.5) FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.0' ORDER BY name", false, ""},
		{"greatest null", "SELECT GREATEST(1.5, NULL) IS NULL, LEAST(NULL, 2.5) IS NULL", false, "booleans: go-mysql-server's TINYINT, MariaDB's INT"},
		// 3. Fractional seconds.
		{"from_unixtime fraction", "SELECT FROM_UNIXTIME(1.5), FROM_UNIXTIME(1700000000), FROM_UNIXTIME(1.123456789), FROM_UNIXTIME(1700000000.25, '%Y %f')", false, "FROM_UNIXTIME(ts, format) is TEXT, MariaDB's VARCHAR"},
		{"from_unixtime columns", "SELECT FROM_UNIXTIME(UNIX_TIMESTAMP(taken_at)), FROM_UNIXTIME(UNIX_TIMESTAMP(taken_at) DIV 3600 * 3600) FROM heapprof.snapshots ORDER BY id", false, ""},
		{"interval fractions", "SELECT DATE_ADD(taken_at, INTERVAL 1.5 SECOND), taken_at + INTERVAL 1 MICROSECOND, DATE_SUB(taken_at, INTERVAL 250 MICROSECOND), taken_at - INTERVAL 1.25 SECOND, INTERVAL 2 HOUR + taken_at FROM heapprof.snapshots ORDER BY id", false, ""},
		{"interval on dates", "SELECT DATE_ADD(DATE(taken_at), INTERVAL 1.5 SECOND), DATE_ADD(DATE(taken_at), INTERVAL 1 DAY), DATE(taken_at) - INTERVAL 1 MICROSECOND FROM heapprof.snapshots ORDER BY id", false, ""},
		{"interval on strings", "SELECT DATE_ADD('2024-01-01', INTERVAL 1 MICROSECOND) AS a, DATE_ADD('2024-01-01 00:00:00', INTERVAL 1.5 SECOND) AS b, DATE_ADD('2024-01-01', INTERVAL 1.5 DAY) AS c", false, ""},
		{"where interval", "SELECT id FROM heapprof.snapshots WHERE taken_at > '2026-11-20 08:00:00.123455' + INTERVAL 1 MICROSECOND ORDER BY id", false, ""},
		// 4. BIGINT overflow: ERROR 1690.
		{"plus overflow", "SELECT 9223372036854775807 + 1", false, ""},
		{"minus overflow", "SELECT -9223372036854775807 - 2", false, ""},
		{"times overflow", "SELECT 4611686018427387904 * 2", false, ""},
		{"column overflow", "SELECT total_bytes * 9223372036854775807 FROM heapprof.snapshots", false, ""},
		{"column plus overflow", "SELECT id FROM heapprof.snapshots WHERE node_id + 9223372036854775800 > 0", false, ""},
		{"no overflow", "SELECT 9223372036854775807 + 0, -9223372036854775807 - 1, total_bytes * 2 - node_id, total_objects % 7 FROM heapprof.snapshots ORDER BY id", false, ""},
		{"round decimal", "SELECT ROUND(total_bytes / 1048576, 2), ROUND(total_bytes / 1048576) FROM heapprof.snapshots ORDER BY id", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, tt.query, tt.unsupported, tt.typeNote == "")
		})
	}
}

// TestDateArithmeticOfTextMatchesMariaDB: a string ± INTERVAL is
// MariaDB's CHAR as wide as a DATETIME with the string's and the
// interval's fraction digits (it was LONGTEXT), a constant made of
// literals read as the literal it makes.
func TestDateArithmeticOfTextMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	ref := newRefFields(t)
	for _, q := range []string{
		"SELECT '2026-11-20' + INTERVAL 1 DAY, '2026-11-20' + INTERVAL 1 SECOND, '2026-11-20' + INTERVAL 1 MICROSECOND, '2026-11-20 08:00:00.123' - INTERVAL 1 HOUR, " +
			"DATE_ADD('2026-11-20', INTERVAL 1 DAY), DATE_SUB('2026-11-20 08:00:00.12', INTERVAL 1 DAY), ADDDATE('2026-11-20', 1), '2026-11-20' + INTERVAL 1.5 SECOND, INTERVAL 1 DAY + '2026-11-20'",
		"SELECT CONCAT('2026-11-20', '') + INTERVAL 1 DAY, CONCAT('2026-11-20', ' 10:00:00.25') + INTERVAL 1 DAY, UPPER('2026-11-20 10:00:00.5') - INTERVAL 1 DAY, 'abc' + INTERVAL 1 DAY",
		"SELECT snapshot_id + INTERVAL 1 DAY, name - INTERVAL 1 HOUR FROM functions ORDER BY snapshot_id, name LIMIT 2",
		"SELECT TIMESTAMP(CONCAT('2026-01-01', ' 10:00:00')), TIMESTAMP(CONCAT('2026-01-01', ' 10:00:00.5'))",
		// Text of a function: its own decimals (DATE_FORMAT's none).
		"SELECT DATE_ADD(DATE_FORMAT(taken_at, '%Y-%m-01'), INTERVAL 1 MONTH), DATE_ADD(CONCAT('2026-11-', node_id - 9980), INTERVAL 1 DAY), " +
			"CONVERT_TZ(CONCAT('2026-11-', node_id - 9980), '+00:00', '+01:00') FROM snapshots ORDER BY id LIMIT 2",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchDefs(t, ctx, e, s, ref, q)
		})
	}
	// A count of days, weeks or months written as text is its leading
	// integer, as MariaDB reads text as an INTEGER ('1.5' DAY was 2 days,
	// 'x' DAY ERROR 1366), with its warnings.
	for _, q := range []string{
		"SELECT '2026-11-20' + INTERVAL '1.5' DAY, '2026-11-20' + INTERVAL 'x' DAY, DATE_SUB('2026-11-20', INTERVAL ' -2abc' DAY), " +
			"'2026-11-20 00:00:00' + INTERVAL '1.5' SECOND, '2026-11-20' + INTERVAL ' 7 ' WEEK, '2026-11-20' + INTERVAL '3' MONTH, '2026-11-20' + INTERVAL '' HOUR",
		"SELECT id, taken_at + INTERVAL CONCAT(node_id - 10000, '.9') DAY FROM snapshots ORDER BY id",
		// Units of two fields (ERROR 1064 before): MariaDB's reading of
		// the text, the columns named as written.
		"SELECT taken_at + INTERVAL '1:30' HOUR_MINUTE, DATE_SUB(taken_at, INTERVAL '1 2:3:4' DAY_SECOND), '2026-11-20' + INTERVAL '2-3' YEAR_MONTH, " +
			"'2026-11-20' + INTERVAL '1:2:3.5' HOUR_MICROSECOND, taken_at - INTERVAL '-1:30' hour_minute, taken_at + INTERVAL '1:30' DAY_SECOND, " +
			"taken_at + INTERVAL 1.5 HOUR_MINUTE, taken_at + INTERVAL '1.1234567' SECOND_MICROSECOND, taken_at + INTERVAL '1:2:3' HOUR_MINUTE, " +
			"EXTRACT(HOUR_MINUTE FROM taken_at) FROM snapshots ORDER BY id LIMIT 2",
		"SELECT COUNT(*) FROM snapshots WHERE taken_at > '2026-11-21 03:00' - INTERVAL '1 1:30' DAY_MINUTE",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchMariaDB(t, ctx, e, s, r, "SHOW WARNINGS", false, false)
		})
	}
}
