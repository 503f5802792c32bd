package sqlview

// Weeks, day numbers and DATE_FORMAT as MariaDB 10.11 computes them
// (sql/sql_time.cc calc_week, get_date_from_daynr; sql/item_timefunc.cc
// make_date_time). go-mysql-server's WEEK and YEARWEEK were wrong in
// modes 2, 3, 6 and 7 around the new year (WEEK('2024-12-30', 3), ISO's
// week and Metabase's week-of-year-iso, was 53, 1 on MariaDB;
// WEEK('2026-01-01', 2) 0, 52), so were WEEKOFYEAR and EXTRACT(WEEK FROM
// x); FROM_DAYS(TO_DAYS('2024-12-30')) was 2024-12-31; DATE_FORMAT's %y
// of 2000-2009 had one digit ('8' for 2008) and %X, %x of years before
// 1000 fewer than four.

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
)

// calc_week's behaviour bits.
const (
	weekMondayFirst  = 1 // else Sunday starts the week
	weekYear         = 2 // weeks 1-53 of the week's own year, else 0-53
	weekFirstWeekday = 4 // week 1 holds the year's first first weekday, else 4 days
)

// weekMode is MariaDB's week_mode: WEEK()'s mode as calc_week bits.
func weekMode(mode int64) int {
	m := int(mode & 7)
	if m&weekMondayFirst == 0 {
		m ^= weekFirstWeekday
	}
	return m
}

// calendarWeekday is MariaDB's calc_weekday: 0 is Monday, or Sunday when
// sundayFirst.
func calendarWeekday(daynr int64, sundayFirst bool) int {
	first := int64(0)
	if sundayFirst {
		first = 1
	}
	return int((daynr + 5 + first) % 7)
}

// daysInYear is MariaDB's calc_days_in_year (year 0 has 365).
func daysInYear(year int) int64 {
	if year&3 == 0 && (year%100 != 0 || year%400 == 0 && year != 0) {
		return 366
	}
	return 365
}

// calcWeek is MariaDB's calc_week: d's week under behaviour, and the year
// the week belongs to.
func calcWeek(d dateText, behaviour int) (week, year int) {
	daynr := d.daynr()
	firstDaynr := dateText{year: d.year, month: 1, day: 1}.daynr()
	mondayFirst := behaviour&weekMondayFirst != 0
	ofYear := behaviour&weekYear != 0
	firstWeekday := behaviour&weekFirstWeekday != 0

	weekday := calendarWeekday(firstDaynr, !mondayFirst)
	year = d.year
	if d.month == 1 && d.day <= 7-weekday {
		if !ofYear && (firstWeekday && weekday != 0 || !firstWeekday && weekday >= 4) {
			return 0, year
		}
		ofYear = true
		year--
		days := daysInYear(year)
		firstDaynr -= days
		weekday = int((int64(weekday) + 53*7 - days) % 7)
	}
	var days int64
	if firstWeekday && weekday != 0 || !firstWeekday && weekday >= 4 {
		days = daynr - (firstDaynr + int64(7-weekday))
	} else {
		days = daynr - (firstDaynr - int64(weekday))
	}
	if ofYear && days >= 52*7 {
		weekday = int((int64(weekday) + daysInYear(year)) % 7)
		if !firstWeekday && weekday < 4 || firstWeekday && weekday == 0 {
			return 1, year + 1
		}
	}
	return int(days/7 + 1), year
}

// weekOf is WEEK(x[, mode]), YEARWEEK(x[, mode]), WEEKOFYEAR(x) or
// EXTRACT(WEEK FROM x) as MariaDB's Item_func_week, Item_func_yearweek
// and Item_extract answer them: x read as a Datetime (TIME_NO_ZEROS), the
// mode's integer (NULL is 0), calc_week.
type weekOf struct {
	answersFor
	name string // "week", "yearweek", "weekofyear" or "extract"
}

var _ sql.FunctionExpression = (*weekOf)(nil)

// newWeekOf is e as a weekOf, or nil when e is none of those.
func newWeekOf(e sql.Expression) *weekOf {
	switch f := e.(type) {
	case *function.Week:
		return &weekOf{answersFor{e}, "week"}
	case *function.YearWeek:
		return &weekOf{answersFor{e}, "yearweek"}
	case *function.WeekOfYear:
		return &weekOf{answersFor{e}, "weekofyear"}
	case *function.Extract:
		if unit, ok := constString(f.LeftChild); ok && strings.EqualFold(unit, "WEEK") {
			return &weekOf{answersFor{e}, "extract"}
		}
	}
	return nil
}

func (w *weekOf) FunctionName() string { return w.name }
func (w *weekOf) Description() string {
	return "MariaDB's " + strings.ToUpper(w.name) + " (heapprof/sqlview)"
}

func (w *weekOf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	fn, err := w.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &weekOf{answersFor{fn}, w.name}, nil
}

func (w *weekOf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := w.fn.Children()
	date, mode := kids[0], int64(0)
	switch w.name {
	case "weekofyear":
		mode = 3
	case "extract":
		date = kids[1] // default_week_format, 0
	}
	v, err := date.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	d, ok, err := datetimeArg(ctx, v)
	if err != nil || !ok {
		return nil, err
	}
	if (w.name == "week" || w.name == "yearweek") && len(kids) > 1 {
		m, err := kids[1].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if m != nil {
			if mode, err = toInt64(ctx, m); err != nil {
				return nil, fmt.Errorf("%s mode: %w", strings.ToUpper(w.name), err)
			}
		}
	}
	if w.name == "yearweek" {
		week, year := calcWeek(d, weekMode(mode)|weekYear)
		return int32(year*100 + week), nil
	}
	week, _ := calcWeek(d, weekMode(mode))
	return int32(week), nil
}

// maxDayNumber is MariaDB's MAX_DAY_NUMBER, 9999-12-31's day number.
const maxDayNumber = 3652424

// dateOfDaynr is MariaDB's get_date_from_daynr: the date of day number n;
// false below 366 and past 9999-12-31 (FROM_DAYS answers 0000-00-00).
func dateOfDaynr(n int64) (year, month, day int, ok bool) {
	if n < 366 || n > maxDayNumber {
		return 0, 0, 0, false
	}
	y := int(n * 100 / 36525)
	temp := ((y-1)/100 + 1) * 3 / 4
	dayOfYear := int(n-int64(y)*365) - (y-1)/4 + temp
	for {
		days := int(daysInYear(y))
		if dayOfYear <= days {
			break
		}
		dayOfYear -= days
		y++
	}
	for m := 1; m <= 12; m++ {
		if dim := daysIn(y, m); dayOfYear > dim {
			dayOfYear -= dim
		} else {
			return y, m, dayOfYear, true
		}
	}
	return 0, 0, 0, false
}

// fromDays is FROM_DAYS(n) as MariaDB's Item_func_from_days answers it.
type fromDays struct{ answersFor }

var _ sql.FunctionExpression = (*fromDays)(nil)

func (f *fromDays) FunctionName() string { return "from_days" }
func (f *fromDays) Description() string  { return "MariaDB's FROM_DAYS (heapprof/sqlview)" }

func (f *fromDays) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	fn, err := f.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &fromDays{answersFor{fn}}, nil
}

func (f *fromDays) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.fn.Children()[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	n, err := toInt64(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("FROM_DAYS: %w", err)
	}
	year, month, day, ok := dateOfDaynr(n)
	if !ok {
		return zeroDate, nil
	}
	return time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC), nil
}

// dateFormat is DATE_FORMAT(x, format) or TIME_FORMAT(x, format) as
// MariaDB's Item_func_date_format answers them: DATE_FORMAT reads x as a
// date that may have zero parts (TIME_CONV_NONE), TIME_FORMAT as a TIME
// (hours beyond a day, a sign; go-mysql-server's took the hours modulo
// 24 and had no %k or %l); the format as make_date_time writes it (the
// en_US names), NULL for an empty format, a name of a zero month or day,
// or a date's part of a TIME.
type dateFormat struct {
	answersFor // go-mysql-server's DateFormat or TimeFormat
	isTime     bool
}

var _ sql.FunctionExpression = (*dateFormat)(nil)

func (f *dateFormat) FunctionName() string {
	if f.isTime {
		return "time_format"
	}
	return "date_format"
}

func (f *dateFormat) Description() string {
	return "MariaDB's " + strings.ToUpper(f.FunctionName()) + " (heapprof/sqlview)"
}

func (f *dateFormat) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, f.fn)
}

func (f *dateFormat) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	fn, err := f.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &dateFormat{answersFor{fn}, f.isTime}, nil
}

func (f *dateFormat) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := f.fn.Children()
	v, err := kids[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var (
		d   dateText
		neg bool
		ok  bool
	)
	if f.isTime {
		var t *timeText
		t, err = timeArg(ctx, v)
		if t != nil {
			d, neg, ok = dateText{hour: int(t.hour), minute: int(t.minute), second: int(t.second), micro: int(t.micro)}, t.neg, true
		}
	} else {
		d, ok, err = readDatetimeArg(ctx, v, true)
	}
	if err != nil || !ok {
		return nil, err
	}
	fv, err := kids[1].Eval(ctx, row)
	if err != nil || fv == nil {
		return nil, err
	}
	s, err := toText(ctx, fv)
	if err != nil {
		return nil, fmt.Errorf("%s format: %w", strings.ToUpper(f.FunctionName()), err)
	}
	if s == "" {
		return nil, nil
	}
	out, ok := makeDateTime(d, neg, f.isTime, s)
	if !ok {
		return nil, nil
	}
	return out, nil
}

// formatDate is makeDateTime of a date.
func formatDate(d dateText, format string) (string, bool) {
	return makeDateTime(d, false, false, format)
}

// makeDateTime is MariaDB's make_date_time (the en_US names of
// strtodate.go) of a date, or of a TIME (isTime; neg for a negative one):
// false where it fails, a zero month's name or a date's part of a TIME.
func makeDateTime(d dateText, neg, isTime bool, format string) (string, bool) {
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	twelve := (d.hour%24+11)%12 + 1
	noDate := d.month == 0 && d.year == 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		if isTime && strings.IndexByte("MbWaDYymcdejUuVvXxw", format[i]) >= 0 {
			return "", false
		}
		switch format[i] {
		case 'M', 'b':
			if d.month == 0 {
				return "", false
			}
			name := monthNames[d.month-1]
			if format[i] == 'b' {
				name = name[:3]
			}
			b.WriteString(name)
		case 'W', 'a':
			if noDate {
				return "", false
			}
			name := dayNames[calendarWeekday(d.daynr(), false)]
			if format[i] == 'a' {
				name = name[:3]
			}
			b.WriteString(name)
		case 'D':
			suffix := "th"
			if d.day < 10 || d.day > 19 {
				switch d.day % 10 {
				case 1:
					suffix = "st"
				case 2:
					suffix = "nd"
				case 3:
					suffix = "rd"
				}
			}
			fmt.Fprintf(&b, "%d%s", d.day, suffix)
		case 'Y':
			fmt.Fprintf(&b, "%04d", d.year)
		case 'y':
			fmt.Fprintf(&b, "%02d", d.year%100)
		case 'm':
			fmt.Fprintf(&b, "%02d", d.month)
		case 'c':
			fmt.Fprintf(&b, "%d", d.month)
		case 'd':
			fmt.Fprintf(&b, "%02d", d.day)
		case 'e':
			fmt.Fprintf(&b, "%d", d.day)
		case 'f':
			fmt.Fprintf(&b, "%06d", d.micro)
		case 'H':
			fmt.Fprintf(&b, "%02d", d.hour)
		case 'h', 'I':
			fmt.Fprintf(&b, "%02d", twelve)
		case 'i':
			fmt.Fprintf(&b, "%02d", d.minute)
		case 'j':
			if d.month == 0 || d.year == 0 {
				return "", false
			}
			fmt.Fprintf(&b, "%03d", d.daynr()-dateText{year: d.year, month: 1, day: 1}.daynr()+1)
		case 'k':
			fmt.Fprintf(&b, "%d", d.hour)
		case 'l':
			fmt.Fprintf(&b, "%d", twelve)
		case 'p':
			b.WriteString(ampm(d.hour))
		case 'r':
			fmt.Fprintf(&b, "%02d:%02d:%02d %s", twelve, d.minute, d.second, ampm(d.hour))
		case 'S', 's':
			fmt.Fprintf(&b, "%02d", d.second)
		case 'T':
			fmt.Fprintf(&b, "%02d:%02d:%02d", d.hour, d.minute, d.second)
		case 'U', 'u':
			behaviour := weekMondayFirst
			if format[i] == 'U' {
				behaviour = weekFirstWeekday
			}
			week, _ := calcWeek(d, behaviour)
			fmt.Fprintf(&b, "%02d", week)
		case 'V', 'v', 'X', 'x':
			behaviour := weekYear | weekMondayFirst
			if format[i] == 'V' || format[i] == 'X' {
				behaviour = weekYear | weekFirstWeekday
			}
			week, year := calcWeek(d, behaviour)
			if format[i] == 'V' || format[i] == 'v' {
				fmt.Fprintf(&b, "%02d", week)
			} else {
				fmt.Fprintf(&b, "%04d", year)
			}
		case 'w':
			if noDate {
				return "", false
			}
			fmt.Fprintf(&b, "%d", calendarWeekday(d.daynr(), true))
		default:
			b.WriteByte(format[i])
		}
	}
	return b.String(), true
}

func ampm(hour int) string {
	if hour%24 < 12 {
		return "AM"
	}
	return "PM"
}

// periodAdd is PERIOD_ADD(period, months) as MariaDB's
// Item_func_period_add answers it (0 for period 0), in its unsigned
// arithmetic.
func periodAdd(ctx *sql.Context, vals []any) (any, error) {
	period, err := toInt64(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	months, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	if uint64(period) == 0 {
		return int64(0), nil
	}
	return int64(monthToPeriod(uint64(uint32(int32(periodToMonth(uint64(period))) + int32(months))))), nil
}

// periodDiff is PERIOD_DIFF(p1, p2): the months between them.
func periodDiff(ctx *sql.Context, vals []any) (any, error) {
	p1, err := toInt64(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	p2, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	return int64(periodToMonth(uint64(p1))) - int64(periodToMonth(uint64(p2))), nil
}

// periodToMonth is MariaDB's convert_period_to_month: YYMM or YYYYMM as
// months since year 0 (two-digit years 00-69 are 20xx); 0 for 0 or past
// 999912.
func periodToMonth(period uint64) uint64 {
	if period == 0 || period > 999912 {
		return 0
	}
	year := period / 100
	switch {
	case year < 70:
		year += 2000
	case year < 100:
		year += 1900
	}
	return year*12 + period%100 - 1
}

// monthToPeriod is MariaDB's convert_month_to_period, YYYYMM.
func monthToPeriod(month uint64) uint64 {
	if month == 0 {
		return 0
	}
	year := month / 12
	if year < 100 {
		if year < 70 {
			year += 2000
		} else {
			year += 1900
		}
	}
	return year*100 + month%12 + 1
}
