package sqlview

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// dateTexts are text a user may compare with a date: MariaDB's forms
// (digits alone, any punctuation, two-digit years, 'T', fractions of any
// length), and text around or instead of a date.
func dateTexts() []string {
	texts := []string{
		"2026-11-20 09", "2026-11-20 09:30", "2026/11/20 09:30:00", "2026.11.20", "26-11-20", "69-1-1", "70-1-1",
		"20261120", "261120", "2611201", "20261120093000", "20261120T093000", "20261120093000.25", "2026-11-20T09",
		"2026-11-20T09:00:00.123456", "2026-11-20 9:5:3", "2026-1-5", "2026^11^20", "2026-11-20 09-30-00",
		"2026-11-20    9.30.00", "2026-11-20 09:00:00.1234567", "2026-11-20 09:00:00.123456789", "2026-11-20 09:00:00.",
		"2026-11-20 08:00:00.123456", "2026-11-20 08:00:00.1234565", "2026-11-21 02:00:00.123456",
		"2026-11-20abc", "2026-11-20Tabc", "2026-11-20 09:00:00Z", "2026-11-20 09:00:00+01:00", "2026-11-20 09:30:00 PM",
		" 2026-11-20", "2026-11-20 ", "\t2026-11-20\n", "+2026-11-20", "-2026-11-20", "+ 2026-11-20",
		"2026-11-20 25:00:00", "2026-11-20 09:60", "2026-13-01", "2026-02-30", "2026-11-31", "2024-02-29", "2026-02-29",
		"0000-02-29", "2026-11-00", "2026-00-00", "0000-00-00", "0000-00-00 00:00:00", "0-0-0",
		"10:00:00", "30:00:00", "2026", "202611", "1120", "2026-11", "main", "", " ", "2026-11-20 09:30:00.5.6",
		"2026-11-20 1:2:3.4", "2026-11-20 1", "99999-11-20", "026-11-20", "2026-11-20x09:00", "2026–11–20",
		"2026-11-20 09:00:00.12ab", "2026-11-20 09:00:00.ab",
		strings.Repeat("x", 128), strings.Repeat("x", 129), "é" + strings.Repeat("x", 130),
	}
	// Every separator between every field.
	for _, sep := range []string{"-", "/", ".", ":", "_", "@"} {
		texts = append(texts, fmt.Sprintf("2026%s11%s20 08%s00%s00", sep, sep, sep, sep))
	}
	return texts
}

// TestDateTextReadAsMariaDBReadsIt: readDateText gives the date MariaDB
// gives each text, every field and digit: CAST(text AS DATETIME(6)) on
// MariaDB with ALLOW_INVALID_DATES, which keeps a day past its month's
// end as comparisons do (and NULL for text that is no date).
func TestDateTextReadAsMariaDBReadsIt(t *testing.T) {
	ctx := context.Background()
	r := refConn(t)
	if err := r.exec("SET sql_mode = 'ALLOW_INVALID_DATES'"); err != nil {
		t.Fatal(err)
	}
	for _, s := range dateTexts() {
		_, _, rows, err := r.answer(ctx, "SELECT CAST("+sqlString(s)+" AS DATETIME(6))")
		if err != nil {
			t.Fatalf("%q: MariaDB: %v", s, err)
		}
		want := rows[0][0]
		d := readDateText(s)
		got := "NULL"
		if d.read {
			got = fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", d.year, d.month, d.day, d.hour, d.minute, d.second, d.micro)
		}
		if got != want {
			t.Errorf("%q: read as %s, MariaDB %s", s, got, want)
		}
	}
}

// sqlString is s as a SQL string literal.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`, "\n", `\n`, "\t", `\t`).Replace(s) + "'"
}

// TestDatesComparedWithTextMatchMariaDB: a date compared with text (=,
// <, >, <=>, BETWEEN, IN, in WHERE and as a select item) answers the rows
// MariaDB answers, with its warnings. It was ERROR 1105 "Incorrect
// datetime value" for every text go-mysql-server's layouts do not read
// ('2026-11-20 09', '2026/11/20', '26-11-20', 'main'), and the seventh
// fraction digit rounded.
func TestDatesComparedWithTextMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, text := range dateTexts() {
		lit := sqlString(text)
		for _, q := range []string{
			"SELECT COUNT(*) FROM snapshots WHERE taken_at > " + lit,
			"SELECT id FROM snapshots WHERE taken_at <= " + lit + " ORDER BY id",
			"SELECT id, taken_at = " + lit + ", " + lit + " <=> taken_at, taken_at < " + lit + " FROM snapshots ORDER BY id",
			"SELECT COUNT(*) FROM snapshots WHERE taken_at BETWEEN " + lit + " AND '2030-01-01'",
			"SELECT COUNT(*) FROM snapshots WHERE DATE(taken_at) = " + lit,
			"SELECT id FROM snapshots WHERE taken_at IN (" + lit + ", '2026-11-20 08:00:00.123456', NULL) ORDER BY id",
		} {
			t.Run(q, func(t *testing.T) {
				matchWithWarnings(t, ctx, e, s, r, q)
			})
		}
	}
	// Text that is not a constant is read row by row, each warning raised
	// in its row.
	for _, q := range []string{
		"SELECT id, taken_at > CONCAT('2026-11-2', node_id - 10001, ' 09') FROM snapshots ORDER BY id",
		"SELECT id, taken_at < CONCAT('x', node_id) FROM snapshots ORDER BY id",
		// In derived tables, CTEs and under aliases that HAVING reads.
		"SELECT COUNT(*) FROM (SELECT id FROM snapshots WHERE taken_at > '2026/11/20 09') x",
		"WITH t AS (SELECT taken_at FROM snapshots WHERE taken_at < '2026-11-20 10') SELECT COUNT(*) FROM t",
		"SELECT taken_at > '2026/11/20 09' AS late, COUNT(*) FROM snapshots GROUP BY late HAVING late = 1",
		"SELECT DATE(CONCAT('2026/11/', node_id - 9980)) AS d, COUNT(*) c FROM snapshots GROUP BY d HAVING c > 0 ORDER BY d",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
		})
	}
}

// matchWithWarnings is matchMariaDB of q (types too), then of SHOW
// WARNINGS, from an empty warning list on MariaDB.
func matchWithWarnings(t *testing.T, ctx context.Context, e *Engine, s *Session, r refSession, q string) {
	t.Helper()
	clearWarnings(t, r)
	matchMariaDB(t, ctx, e, s, r, q, false, true)
	matchMariaDB(t, ctx, e, s, r, "SHOW WARNINGS", false, false)
}

// clearWarnings empties MariaDB's warnings with a statement that reads a
// table: MariaDB keeps an earlier statement's warnings through some
// statements that raise none (SELECT CAST(...) without FROM), where the
// engine starts each statement with none (README).
func clearWarnings(t *testing.T, r refSession) {
	t.Helper()
	if err := r.exec("SELECT id FROM snapshots LIMIT 0"); err != nil {
		t.Fatal(err)
	}
}

// TestDatesOfTextMatchMariaDB: a date made of text (CAST, DATE(),
// TIMESTAMP(), + INTERVAL, YEAR() and the other functions of a date)
// answers MariaDB's value, column and warnings: text MariaDB reads as a
// date was NULL or ERROR 1105 here, a seventh fraction digit rounded and
// CAST(x AS DATETIME) of text rounded its fraction where MariaDB cuts
// it, WEEK(NULL) was ERROR 1105. A date with a zero month or day, which
// MariaDB keeps and go-mysql-server cannot hold, is ERROR 1235 saying so.
func TestDatesOfTextMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, text := range dateTexts() {
		lit := sqlString(text)
		d := readDateText(text)
		zeroParts := d.read && !d.badDay && (d.month == 0 || d.day == 0)
		convertTZ := ", CONVERT_TZ(" + lit + ", '+00:00', '+01:00')"
		for _, q := range []struct {
			query string
			types bool
		}{
			{"SELECT CAST(" + lit + " AS DATETIME(6)), CAST(" + lit + " AS DATE), CAST(" + lit + " AS DATETIME), CONVERT(" + lit + ", DATETIME(2))" + convertTZ, true},
			{"SELECT DATE(" + lit + "), TIMESTAMP(" + lit + "), " + lit + " + INTERVAL 1 DAY, DATE_ADD(" + lit + ", INTERVAL 1 HOUR), " + lit + " - INTERVAL 1 SECOND", true},
			{"SELECT YEAR(" + lit + "), MONTH(" + lit + "), DAY(" + lit + "), DAYOFWEEK(" + lit + "), DAYOFYEAR(" + lit + "), WEEK(" + lit + "), QUARTER(" + lit + "), WEEKDAY(" + lit + "), " +
				"YEARWEEK(" + lit + "), LAST_DAY(" + lit + "), DATE_FORMAT(" + lit + ", '%Y-%m-%d %H:%i:%s.%f'), UNIX_TIMESTAMP(" + lit + "), TIMESTAMPDIFF(SECOND, " + lit + ", '2027-01-01')", true},
			// Their columns are go-mysql-server's (BIGINT, TEXT) here, see the README.
			{"SELECT DATEDIFF(" + lit + ", '2026-01-01'), TO_DAYS(" + lit + "), DAYNAME(" + lit + "), MONTHNAME(" + lit + "), WEEKOFYEAR(" + lit + "), DAYOFMONTH(" + lit + ")", false},
			{"SELECT id, YEAR(" + lit + "), DATE(" + lit + ") FROM snapshots WHERE node_id = 10001 ORDER BY id", true},
		} {
			t.Run(q.query, func(t *testing.T) {
				clearWarnings(t, r)
				matchMariaDB(t, ctx, e, s, r, q.query, zeroParts, q.types)
				if !zeroParts {
					matchMariaDB(t, ctx, e, s, r, "SHOW WARNINGS", false, false)
				}
			})
		}
	}
	t.Run("NULL dates", func(t *testing.T) {
		matchMariaDB(t, ctx, e, s, r, "SELECT WEEK(NULL), YEARWEEK(NULL), WEEK(NULL, 3), YEAR(NULL), DATE(CAST(NULL AS CHAR)), DAYNAME(NULL)", false, false)
		matchMariaDB(t, ctx, e, s, r, "SHOW WARNINGS", false, false)
	})
}

// TestCurrentDateMatchesMariaDB: CURDATE() and CURRENT_DATE are a DATE in
// the session's time zone, as NOW() is (go-mysql-server's were text of
// the server's own date, wrong a part of each day east or west of it);
// UTC_DATE() is the UTC date (it was ERROR 1305).
func TestCurrentDateMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, zone := range []string{"+13:00", "-12:00", "+00:00"} {
		for _, q := range []string{
			"SET time_zone = '" + zone + "'",
			"SELECT CURDATE() = DATE(NOW()), CURRENT_DATE = DATE(NOW()), CURRENT_DATE() = DATE(NOW()), UTC_DATE() = DATE(UTC_TIMESTAMP()), CURDATE() + INTERVAL 1 DAY > NOW()",
		} {
			t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
		}
	}
}

// timeTexts are text a user may give HOUR(), MINUTE(), SECOND() and
// MICROSECOND(): times of MariaDB's forms (hours past a day, days,
// digits alone), dates and datetimes, and text that is none.
func timeTexts() []string {
	return []string{
		"10:05:03", "35:00:00", "35:00:00x", "900:00:00", "838:59:59.9999999", "10:61:00", "-01:30:00", "- 01:30:00",
		"2026-11-20 10:00", "2026-11-20 10:05:03.25", "2026-11-20", "2026-11-20T10", "11:22:33T", "1 11", "1 2:3:4.5",
		"10:05", "10", "10.5", "123456", "1234567", "12:34:56:78", "  10:00 ", "10:00:00e5", "10:00:00.1234567",
		"x", "", "10:00:00.", "10:00:00.ab", "2026/11/20 10:05:03", "26-11-20 10:05", "20261120100503", "4294967296:59:59",
	}
}

// TestTimeTextReadAsMariaDBReadsIt: readTimeText gives the time MariaDB
// gives each text (CAST(text AS TIME(6)), NULL for none).
func TestTimeTextReadAsMariaDBReadsIt(t *testing.T) {
	ctx := context.Background()
	r := refConn(t)
	for _, s := range timeTexts() {
		_, _, rows, err := r.answer(ctx, "SELECT CAST("+sqlString(s)+" AS TIME(6))")
		if err != nil {
			t.Fatalf("%q: MariaDB: %v", s, err)
		}
		want := rows[0][0]
		tt := readTimeText(s)
		got := "NULL"
		if tt.read {
			sign := ""
			if tt.neg && tt.hour|tt.minute|tt.second|tt.micro != 0 {
				sign = "-"
			}
			got = fmt.Sprintf("%s%02d:%02d:%02d.%06d", sign, tt.hour, tt.minute, tt.second, tt.micro)
		}
		if got != want {
			t.Errorf("%q: read as %s, MariaDB %s", s, got, want)
		}
	}
}

// TestTimeFieldsMatchMariaDB: HOUR(), MINUTE(), SECOND(), MICROSECOND()
// and CAST(... AS TIME) of text read it as a TIME, and of a TIME do not
// take the hours modulo 24, as on MariaDB (HOUR('10:05:03') was NULL,
// HOUR(TIMEDIFF(...)) of 33 hours 9, CAST(taken_at AS TIME) kept the
// fraction), with MariaDB's warnings.
func TestTimeFieldsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, text := range timeTexts() {
		lit := sqlString(text)
		q := "SELECT HOUR(" + lit + "), MINUTE(" + lit + "), SECOND(" + lit + "), MICROSECOND(" + lit + "), CAST(" + lit + " AS TIME)"
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
		})
	}
	for _, q := range []string{
		"SELECT id, HOUR(TIMEDIFF(taken_at, '2026-11-19 00:00:00')), MINUTE(TIMEDIFF('10:00:00', taken_at)), SECOND(SEC_TO_TIME(3725)), " +
			"MICROSECOND(TIMEDIFF(taken_at, '2026-11-19 00:00:00')), HOUR(CONCAT(node_id - 9990, ':30')) FROM snapshots ORDER BY id",
		// CAST(x AS TIME(n)) cuts x's fraction to n digits.
		"SELECT id, CAST(taken_at AS TIME), TIME_TO_SEC(CAST(taken_at AS TIME(3))), CAST(CONCAT(node_id - 9990, ':30:15.75') AS TIME) FROM snapshots ORDER BY id",
		// A TIME is defined and printed with its own fraction digits
		// (they were 6 or none), also as text (CONCAT was ERROR 1105),
		// and TIME_TO_SEC keeps them.
		"SELECT id, TIMEDIFF(taken_at, '2026-11-20 00:00:00'), TIMEDIFF('10:00:00', '09:00:00.5'), TIME(taken_at), SEC_TO_TIME(3600), SEC_TO_TIME(3600.25), " +
			"CAST(taken_at AS TIME(2)), TIME('10:00:00.5'), TIMEDIFF('09:00:00', '10:30:00'), SEC_TO_TIME(3600 * 900), CONCAT(SEC_TO_TIME(3600)), " +
			"CONCAT(TIMEDIFF('10:00:00', '09:00:00.5'), '#'), TIME_TO_SEC(TIMEDIFF(taken_at, '2026-11-20 00:00:00')), TIME_TO_SEC(SEC_TO_TIME(3600.25)) FROM snapshots ORDER BY id",
		"SELECT MAX(TIMEDIFF(taken_at, '2026-11-19 00:00:00')), MIN(SEC_TO_TIME(node_id)), TIME_TO_SEC(TIMEDIFF(MAX(taken_at), MIN(taken_at))) FROM snapshots",
		// TIMEDIFF of two of one kind, NULL of two kinds, cut to 838:59:59.
		"SELECT TIMEDIFF('2026-11-21', '2026-11-20'), TIMEDIFF(DATE('2026-11-21'), '2026-11-20 00:00:00'), TIMEDIFF(DATE('2026-11-21'), '2026-11-20'), " +
			"TIMEDIFF(DATE('2026-11-21'), DATE('2026-11-20')), TIMEDIFF('10:00', '2026-11-20 01:00:00'), TIMEDIFF('2026-11-20 10:00:00', '09:00'), " +
			"TIMEDIFF(TIMESTAMP('2026-11-20 10:00'), '2026-11-20 09:00'), TIMEDIFF(CAST('10:00' AS TIME), '09:00'), TIMEDIFF('main', '09:00'), TIMEDIFF(NULL, '09:00'), " +
			"TIMEDIFF('2027-11-20 00:00:00', '2026-01-01 00:00:00.5'), CAST('900:00:00' AS TIME(6)), TIMEDIFF('-900:00:00', '00:00:01')",
		"SELECT id, TIMEDIFF(taken_at, '2026-11-20'), TIMEDIFF(taken_at, '2026-11-20 00:00:00'), TIMEDIFF(taken_at, '10:00'), TIMEDIFF('2027-11-20 00:00:00', taken_at) FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) {
			matchWithWarnings(t, ctx, e, s, r, q)
		})
	}
}
