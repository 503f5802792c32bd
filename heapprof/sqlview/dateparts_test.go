package sqlview

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestWeeksAndDateFormatsMatchMariaDB: WEEK and YEARWEEK in every mode,
// WEEKOFYEAR, EXTRACT(WEEK), DATE_FORMAT's every date specifier,
// FROM_DAYS and TO_DAYS answer MariaDB's values for every day of
// 1995-2050. go-mysql-server's weeks were wrong around the new year in
// modes 2, 3, 6 and 7 (ISO's WEEK(x, 3) of 2024-12-30 was 53, not 1),
// its FROM_DAYS was a day late in some years, and its %y of 2000-2009 one
// digit.
func TestWeeksAndDateFormatsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	var digits []string
	for i := range 10 {
		digits = append(digits, fmt.Sprintf("SELECT %d AS v", i))
	}
	ten := "(" + strings.Join(digits, " UNION ALL ") + ")"
	for _, first := range []int{729000, 739000} { // 1995-12-08 and 2023-04-22, 10,000 days each
		days := fmt.Sprintf("(SELECT FROM_DAYS(%d + a.v + 10 * b.v + 100 * c.v + 1000 * d.v) AS d FROM %s a, %s b, %s c, %s d) AS days", first, ten, ten, ten, ten)
		var weeks, yearweeks []string
		for mode := range 8 {
			weeks = append(weeks, fmt.Sprintf("WEEK(d, %d)", mode))
			yearweeks = append(yearweeks, fmt.Sprintf("YEARWEEK(d, %d)", mode))
		}
		for _, q := range []string{
			"SELECT d, WEEK(d), " + strings.Join(weeks, ", ") + " FROM " + days + " ORDER BY d",
			"SELECT d, YEARWEEK(d), " + strings.Join(yearweeks, ", ") + ", WEEKOFYEAR(d), EXTRACT(WEEK FROM d) FROM " + days + " ORDER BY d",
			"SELECT d, DATE_FORMAT(d, '%a %b %c %D %d %e %j %M %m %U %u %V %v %W %w %X %x %Y %y'), TO_DAYS(d) FROM " + days + " ORDER BY d",
		} {
			t.Run(fmt.Sprintf("from day %d: %.60s", first, q), func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
		}
	}
	for _, q := range []string{
		// Zero parts are dates to DATE_FORMAT (TIME_CONV_NONE); their
		// names are NULL; an empty format is NULL.
		"SELECT DATE_FORMAT('0000-00-00', '%Y %m %d %H'), DATE_FORMAT('2026-00-10', '%M'), DATE_FORMAT('0000-00-00', '%W'), DATE_FORMAT('2026-11-20', ''), DATE_FORMAT('2026-11-20', NULL), DATE_FORMAT('2026-11-20', 'ä%Yü %q %')",
		"SELECT DATE_FORMAT('2026-02-30', '%Y'), DATE_FORMAT('x', '%Y'), DATE_FORMAT(20081229, '%y %x %v'), DATE_FORMAT('2008-12-29 13:05:09.5', '%H %h %I %i %k %l %p %r %S %s %T %f')",
		"SELECT id, DATE_FORMAT(taken_at, '%Y-%m-%d %H:%i:%s.%f'), CONCAT(DATE_FORMAT(taken_at, '%Y-%m'), '-01'), FROM_UNIXTIME(UNIX_TIMESTAMP(taken_at) - 567648000, '%y %X %V') FROM snapshots ORDER BY id",
		"SELECT FROM_DAYS(0), FROM_DAYS(365), FROM_DAYS(366), FROM_DAYS(3652424), FROM_DAYS(3652425), FROM_DAYS(-1), FROM_DAYS('730000'), FROM_DAYS(730000.7), FROM_DAYS(NULL)",
		"SELECT WEEK('2026-11-20', NULL), WEEK('2026-11-20', 8), WEEK('2026-11-20', -1), WEEK(NULL), YEARWEEK(NULL, 3), WEEK('2026-11-00'), YEARWEEK('x'), WEEKOFYEAR('2026-02-30')",
		// Metabase's ISO week of year and week of year (mode 6, plus 1).
		"SELECT id, WEEK(taken_at, 3), WEEK(taken_at, 6) + 1, YEARWEEK(taken_at, 3) FROM snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) { matchWithWarnings(t, ctx, e, s, r, q) })
	}
}
