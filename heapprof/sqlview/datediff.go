package sqlview

// TIMESTAMPDIFF, DATEDIFF and TO_DAYS as MariaDB 10.11 computes them
// (sql/item_timefunc.cc: Item_func_timestamp_diff::val_int,
// Item_func_to_days; DATEDIFF is TO_DAYS(a) - TO_DAYS(b), item_create.cc).
// go-mysql-server v0.20.0 counted months as 30 days and years as 365
// (TIMESTAMPDIFF(MONTH, '2026-11-20', '2027-03-01') was 2, 3 on MariaDB;
// Metabase's month, quarter and year differences are these), measured
// every unit with a Go duration, which overflows past 292 years
// (DATEDIFF('9999-12-31', '0001-01-01') was 106752), refused a zero month
// or day (MariaDB: NULL with warning 1292) and numbers (DATEDIFF(20261120,
// x) was ERROR 1105). Days here are MariaDB's calc_daynr, which has no
// 29 February in year 0 as Go's calendar does.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// dayCount is TIMESTAMPDIFF(unit, a, b), DATEDIFF(a, b) or TO_DAYS(a).
type dayCount struct {
	// fn is the go-mysql-server function it answers for: its String()
	// names the column of a select item without an alias, and its Type()
	// is the column's.
	fn   sql.Expression
	name string // "timestampdiff", "datediff" or "to_days"
	unit string // TIMESTAMPDIFF's unit, lower case
	args []sql.Expression
}

var _ sql.FunctionExpression = (*dayCount)(nil)

// newDayCount is e as a dayCount, or nil when e is none of the three.
func newDayCount(e sql.Expression) *dayCount {
	switch f := e.(type) {
	case *function.TimestampDiff:
		kids := f.Children()
		unit, ok := kids[0].(*expression.Literal)
		if !ok {
			return nil
		}
		u, ok := unit.Value().(string)
		if !ok {
			return nil
		}
		return &dayCount{fn: e, name: "timestampdiff", unit: strings.TrimPrefix(strings.ToLower(u), "sql_tsi_"), args: kids[1:]}
	case *function.DateDiff:
		return &dayCount{fn: e, name: "datediff", args: f.Children()}
	case *function.ToDays:
		return &dayCount{fn: e, name: "to_days", args: f.Children()}
	}
	return nil
}

func (c *dayCount) FunctionName() string { return c.name }
func (c *dayCount) Description() string {
	return "MariaDB's " + strings.ToUpper(c.name) + " (heapprof/sqlview)"
}
func (c *dayCount) Type() sql.Type             { return c.fn.Type() }
func (c *dayCount) String() string             { return c.fn.String() }
func (c *dayCount) IsNullable() bool           { return true }
func (c *dayCount) Children() []sql.Expression { return c.args }

func (c *dayCount) Resolved() bool {
	for _, a := range c.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (c *dayCount) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != len(c.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(c, len(kids), len(c.args))
	}
	fnKids := kids
	if c.name == "timestampdiff" {
		fnKids = append([]sql.Expression{c.fn.Children()[0]}, kids...)
	}
	fn, err := c.fn.WithChildren(fnKids...)
	if err != nil {
		return nil, err
	}
	return newDayCount(fn), nil
}

func (c *dayCount) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	dates := make([]dateText, len(c.args))
	for i, a := range c.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		d, ok, err := datetimeArg(ctx, v)
		if err != nil || !ok {
			return nil, err
		}
		dates[i] = d
	}
	switch c.name {
	case "to_days":
		return dates[0].daynr(), nil
	case "datediff":
		return dates[0].daynr() - dates[1].daynr(), nil
	}
	return timestampDiff(c.unit, dates[0], dates[1])
}

// daynr is MariaDB's calc_daynr: days since 0000-00-00 of a proleptic
// calendar whose year 0 has no 29 February.
func (d dateText) daynr() int64 {
	y, m := d.year, d.month
	if y == 0 && m == 0 {
		return 0
	}
	days := 365*y + 31*(m-1) + d.day
	if m <= 2 {
		y--
	} else {
		days -= (m*4 + 23) / 10
	}
	return int64(days + y/4 - (y/100+1)*3/4)
}

// secondOfDay is d's time of day in seconds.
func (d dateText) secondOfDay() int64 {
	return int64(d.hour)*3600 + int64(d.minute)*60 + int64(d.second)
}

// timestampDiff is b - a in unit, as Item_func_timestamp_diff::val_int
// counts it: whole units, toward zero.
func timestampDiff(unit string, a, b dateText) (int64, error) {
	us := ((b.daynr()-a.daynr())*86400+b.secondOfDay()-a.secondOfDay())*1_000_000 + int64(b.micro-a.micro)
	sign := int64(1)
	if us < 0 {
		us, sign = -us, -1
		a, b = b, a
	}
	seconds := us / 1_000_000
	switch unit {
	case "microsecond":
		return sign * us, nil
	case "second":
		return sign * seconds, nil
	case "minute":
		return sign * (seconds / 60), nil
	case "hour":
		return sign * (seconds / 3600), nil
	case "day":
		return sign * (seconds / 86400), nil
	case "week":
		return sign * (seconds / 86400 / 7), nil
	case "month", "quarter", "year":
		months := calendarMonths(a, b)
		switch unit {
		case "quarter":
			months /= 3
		case "year":
			months /= 12
		}
		return sign * months, nil
	}
	return 0, fmt.Errorf("TIMESTAMPDIFF: unit %s", strings.ToUpper(unit))
}

// calendarMonths is how many whole months lie from a to b (a <= b): a
// month is whole when b's day and time of day reach a's.
func calendarMonths(a, b dateText) int64 {
	months := int64(b.year-a.year)*12 + int64(b.month-a.month)
	if b.day < a.day || b.day == a.day && (b.secondOfDay() < a.secondOfDay() || b.secondOfDay() == a.secondOfDay() && b.micro < a.micro) {
		months--
	}
	return months
}

// datetimeArg reads v as MariaDB's Datetime(thd, arg, TIME_NO_ZEROS)
// does: text by readDateText, a number as YYYYMMDD[hhmmss[.ffffff]]
// (number_to_datetime_or_date), a TIME on the current date. ok is false
// for NULL: no date, or a zero month or day, with MariaDB's warning 1292.
func datetimeArg(ctx *sql.Context, v any) (dateText, bool, error) {
	return readDatetimeArg(ctx, v, false)
}

// readDatetimeArg is datetimeArg; with zeros a date with a zero month or
// day (0000-00-00 too) is read as it is, as TIME_CONV_NONE reads it.
func readDatetimeArg(ctx *sql.Context, v any, zeros bool) (dateText, bool, error) {
	v, err := sql.UnwrapAny(ctx, v)
	if err != nil {
		return dateText{}, false, err
	}
	switch x := v.(type) {
	case time.Time:
		if x.Equal(zeroDate) {
			if zeros {
				return dateText{read: true, datetime: true}, true, nil
			}
			ctx.Warn(erWarnDatetime, "Incorrect datetime value: '0000-00-00'")
			return dateText{}, false, nil
		}
		return dateOfTime(x), true, nil
	case types.Timespan:
		today, err := currentDate(ctx, nil)
		if err != nil {
			return dateText{}, false, err
		}
		at := today.(time.Time).Add(time.Duration(x.AsMicroseconds()) * time.Microsecond)
		return readDatetimeArg(ctx, at, zeros)
	case []byte:
		v = string(x)
	}
	if s, ok := v.(string); ok {
		d := readDateText(s)
		if !d.read || d.badDay || !zeros && (d.month == 0 || d.day == 0) {
			ctx.Warn(erWarnDatetime, "Incorrect datetime value: '%s'", warnedText(s))
			return dateText{}, false, nil
		}
		warnCompared(ctx, s, d)
		return d, true, nil
	}
	return numberDatetime(ctx, v)
}

// dateOfTime is t's fields as a datetime read from text would have them.
func dateOfTime(t time.Time) dateText {
	return dateText{year: t.Year(), month: int(t.Month()), day: t.Day(), hour: t.Hour(), minute: t.Minute(), second: t.Second(),
		micro: t.Nanosecond() / 1000, read: true, datetime: true}
}

// numberDatetime reads the number v as a date (MariaDB's Sec6 of it, then
// number_to_datetime_or_date): the integer part is YYYYMMDD or
// YYYYMMDDhhmmss (or with a two-digit year), the fraction its
// microseconds, cut to six digits.
func numberDatetime(ctx *sql.Context, v any) (dateText, bool, error) {
	var (
		whole int64
		micro int
		neg   bool
		text  string
	)
	switch x := v.(type) {
	case decimal.Decimal:
		text = x.String()
		neg = x.Sign() < 0
		x = x.Abs()
		w := x.Truncate(0)
		if !w.LessThan(decimal.NewFromInt(math.MaxInt64)) {
			return badNumberDate(ctx, text)
		}
		whole, micro = w.IntPart(), int(x.Sub(w).Shift(6).IntPart())
	case float64:
		text = strconv.FormatFloat(x, 'g', -1, 64)
		neg = x < 0
		x = math.Abs(x)
		if x >= math.MaxInt64 {
			return badNumberDate(ctx, text)
		}
		whole, micro = int64(x), int((x-math.Floor(x))*1e9)/1000
	case float32:
		return numberDatetime(ctx, float64(x))
	case bool:
		n := int64(0)
		if x {
			n = 1
		}
		return numberDatetime(ctx, n)
	default:
		n, _, err := types.Int64.Convert(ctx, v)
		if err != nil {
			return dateText{}, false, fmt.Errorf("date of %T: %w", v, err)
		}
		whole = n.(int64)
		if u, ok := v.(uint64); ok && u > math.MaxInt64 {
			return badNumberDate(ctx, strconv.FormatUint(u, 10))
		}
		text, neg = strconv.FormatInt(whole, 10), whole < 0
	}
	if neg {
		return badNumberDate(ctx, text)
	}
	d, ok := numberToDatetime(whole, micro)
	if !ok {
		return badNumberDate(ctx, text)
	}
	if !d.datetime && micro != 0 {
		note(ctx, erWarnDatetime, "Truncated incorrect date value: '%s'", text)
		d.micro = 0
	}
	return d, true, nil
}

func badNumberDate(ctx *sql.Context, text string) (dateText, bool, error) {
	ctx.Warn(erWarnDatetime, "Incorrect datetime value: '%s'", text)
	return dateText{}, false, nil
}

// numberToDatetime is MariaDB's number_to_datetime_or_date (sql-common/
// my_time.c) for nr >= 0 with TIME_NO_ZEROS: false for no date, a zero
// month or day, or a field out of range.
func numberToDatetime(nr int64, micro int) (dateText, bool) {
	const yyPartYear = 70 // two-digit years below it are 20xx
	datetime := false
	switch {
	case nr == 0:
		return dateText{}, false
	case nr >= 10000101000000:
		datetime = true
	case nr < 101:
		return dateText{}, false
	case nr <= (yyPartYear-1)*10000+1231:
		nr = (nr + 20000000) * 1000000
	case nr < yyPartYear*10000+101:
		return dateText{}, false
	case nr <= 991231:
		nr = (nr + 19000000) * 1000000
	case nr < 10000101:
		return dateText{}, false
	case nr <= 99991231:
		nr *= 1000000
	case nr < 101000000:
		return dateText{}, false
	case nr <= (yyPartYear-1)*10000000000+1231235959:
		datetime, nr = true, nr+20000000000000
	case nr < yyPartYear*10000000000+101000000:
		return dateText{}, false
	case nr <= 991231235959:
		datetime, nr = true, nr+19000000000000
	default:
		datetime = true
	}
	date, clock := nr/1000000, nr%1000000
	d := dateText{year: int(date / 10000), month: int(date / 100 % 100), day: int(date % 100),
		hour: int(clock / 10000), minute: int(clock / 100 % 100), second: int(clock % 100),
		micro: micro, read: true, datetime: datetime}
	if d.year > 9999 || d.month < 1 || d.month > 12 || d.day < 1 || d.day > daysIn(d.year, d.month) ||
		d.hour > 23 || d.minute > 59 || d.second > 59 {
		return dateText{}, false
	}
	return d, true
}
