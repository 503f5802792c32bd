package sqlview

// Text read as a TIME the way MariaDB reads it (sql-common/my_time.c,
// str_to_datetime_or_date_or_time and str_to_DDhhmmssff_internal,
// MariaDB 10.11), for HOUR(), MINUTE(), SECOND(), MICROSECOND() and
// CAST(... AS TIME) of text. go-mysql-server read such text as a
// DATETIME only: HOUR('10:05:03') was NULL (10 on MariaDB),
// HOUR('35:00:00') NULL (35).

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// timeText is text read as a TIME: hours beyond a day ('35:00:00', '1
// 11' is 35 hours), never above 838:59:59.999999.
type timeText struct {
	neg                         bool
	hour, minute, second, micro int64
	// read: a time was read (else NULL, warning "Incorrect time value").
	read bool
	// truncated: text around it was ignored, a date's part dropped or
	// the value cut to 838:59:59 (warning "Truncated incorrect time
	// value"), extraDigits: fraction digits past the sixth were (a note).
	truncated, extraDigits bool
	// datetime is the DATETIME the text was (its time is the above).
	datetime *dateText
}

// micros is the TIME in microseconds, negative for a negative one.
func (t *timeText) micros() int64 {
	us := ((t.hour*60+t.minute)*60+t.second)*1_000_000 + t.micro
	if t.neg {
		return -us
	}
	return us
}

// maxTimeHour is TIME's largest hour.
const maxTimeHour = 838

func readTimeText(s string) timeText {
	body, neg, garbage := textBody(s)
	if len(body) == 0 || !dateDigit(body[0]) {
		return timeText{}
	}
	if datetimeCandidate(body) {
		d, br := readDateBody(body, false)
		used := body[:br.end]
		dateOnly := bytes.IndexByte(used, 'T') >= 0 || bytes.IndexByte(used, ':') < 0
		switch {
		case d.read && (d.datetime || dateOnly):
			if neg {
				return timeText{}
			}
			t := timeText{read: true, truncated: d.truncated || garbage || !d.datetime, extraDigits: d.extraDigits}
			if d.datetime {
				t.hour, t.minute, t.second, t.micro = int64(d.hour), int64(d.minute), int64(d.second), int64(d.micro)
				t.datetime = &d
			}
			return t
		case br.outOfRange && (br.fields > 3 || dateOnly):
			return timeText{}
		}
	}
	t := readDDhhmmssff(body)
	if !t.read {
		return timeText{}
	}
	t.neg = neg
	t.truncated = t.truncated || garbage
	return t
}

// datetimeCandidate is MariaDB's is_datetime_body_candidate for a TIME
// that allows no delimited or numeric dates: 12 characters or more, a
// 'T', or a space after punctuation.
func datetimeCandidate(body []byte) bool {
	if len(body) >= 12 {
		return true
	}
	if len(body) < 6 {
		return false
	}
	punct := 0
	for _, c := range body {
		switch {
		case c == 'T':
			return true
		case c == ' ':
			return punct > 0
		case datePunct(c):
			punct++
		}
	}
	return false
}

// readDDhhmmssff reads [DD ]hh:mm:ss[.ffffff], hh:mm, or digits alone
// as [hh]mmss, as MariaDB's str_to_DDhhmmssff_internal does.
func readDDhhmmssff(b []byte) timeText {
	i := 0
	var value uint64
	for ; i < len(b) && dateDigit(b[i]); i++ {
		value = value*10 + uint64(b[i]-'0')
		if value >= 42949672955959 {
			return timeText{}
		}
	}
	endOfDays := i
	for i < len(b) && dateSpace(b[i]) {
		i++
	}
	var date [5]uint64
	state := 0
	foundDays, foundHours := false, false
	switch {
	case len(b)-i > 1 && i != endOfDays && dateDigit(b[i]):
		date[0], state, foundDays = value, 1, true
	case len(b)-i > 1 && b[i] == ':' && dateDigit(b[i+1]):
		if value >= 1<<32-1 {
			return timeText{}
		}
		date[1], state, foundHours = value, 2, true
		i++
	default:
		date[1], date[2], date[3], state = value/10000, value/100%100, value%100, 4
	}
	if state < 4 {
		for {
			value = 0
			for ; i < len(b) && dateDigit(b[i]); i++ {
				value = value*10 + uint64(b[i]-'0')
			}
			date[state] = value
			state++
			if state == 4 || len(b)-i < 2 || b[i] != ':' || !dateDigit(b[i+1]) {
				break
			}
			i++
		}
		if state != 4 && !foundHours && !foundDays {
			copy(date[4-(state-1):4], date[1:state])
			clear(date[:4-(state-1)])
		}
	}
	var t timeText
	if i < len(b) && b[i] == '.' {
		i++
		start := i
		for i < len(b) && i < start+6 && dateDigit(b[i]) {
			date[4] = date[4]*10 + uint64(b[i]-'0')
			i++
		}
		if i == start && i < len(b) {
			t.truncated = true
		}
		for n := i - start; n < 6; n++ {
			date[4] *= 10
		}
		for i < len(b) && dateDigit(b[i]) {
			i++
			t.extraDigits = true
		}
	}
	if len(b)-i > 1 && (b[i] == 'e' || b[i] == 'E') &&
		(dateDigit(b[i+1]) || (b[i+1] == '-' || b[i+1] == '+') && len(b)-i > 2 && dateDigit(b[i+2])) {
		return timeText{}
	}
	for _, v := range date {
		if v > 1<<32-1 {
			return timeText{}
		}
	}
	hour := date[0]*24 + date[1]
	if hour > 1<<32-1 || date[2] >= 60 || date[3] >= 60 {
		return timeText{}
	}
	t.read = true
	t.hour, t.minute, t.second, t.micro = int64(hour), int64(date[2]), int64(date[3]), int64(date[4])
	if hour > maxTimeHour {
		t.hour, t.minute, t.second, t.micro = maxTimeHour, 59, 59, 999999
		t.truncated = true
	}
	if i != len(b) {
		t.truncated = true
	}
	return t
}

// timeOfText is s read as a TIME, with MariaDB's warning 1292; nil when
// it is none.
func timeOfText(ctx *sql.Context, s string) *timeText {
	t := readTimeText(s)
	switch {
	case !t.read:
		ctx.Warn(erWarnDatetime, "Incorrect time value: '%s'", warnedText(s))
		return nil
	case t.truncated:
		ctx.Warn(erWarnDatetime, "Truncated incorrect time value: '%s'", warnedText(s))
	case t.extraDigits:
		note(ctx, erWarnDatetime, "Truncated incorrect time value: '%s'", warnedText(s))
	}
	return &t
}

// timeFields are HOUR, MINUTE, SECOND and MICROSECOND, each a field of a
// TIME.
var timeFields = map[string]func(t *timeText) int64{
	"hour":        func(t *timeText) int64 { return t.hour },
	"minute":      func(t *timeText) int64 { return t.minute },
	"second":      func(t *timeText) int64 { return t.second },
	"microsecond": func(t *timeText) int64 { return t.micro },
}

// timeField is HOUR(x), MINUTE(x), SECOND(x) or MICROSECOND(x) of a TIME
// or of text, as MariaDB answers them: a TIME's hours are not taken
// modulo 24 (go-mysql-server made the TIME a time of today:
// HOUR(TIMEDIFF(...)) of 33 hours was 9), text is read as a TIME.
type timeField struct {
	wrapped
	name string
}

var _ sql.FunctionExpression = (*timeField)(nil)

func (f *timeField) FunctionName() string { return f.name }
func (f *timeField) Description() string {
	return "MariaDB's " + strings.ToUpper(f.name) + " (heapprof/sqlview)"
}
func (f *timeField) String() string   { return strings.ToUpper(f.name) + "(" + f.child.String() + ")" }
func (f *timeField) IsNullable() bool { return true }
func (f *timeField) Type() sql.Type   { return types.Int32 }

func (f *timeField) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	t, err := timeArg(ctx, v)
	if err != nil || t == nil {
		return nil, err
	}
	return int32(timeFields[f.name](t)), nil
}

// timeArg reads v as a TIME (TIME_TIME_ONLY): text by readTimeText (with
// its warnings), a TIME as it is, a date's time of day, a number's digits
// as text; nil for NULL. The hours may pass 24.
func timeArg(ctx *sql.Context, v any) (*timeText, error) {
	v, err := sql.UnwrapAny(ctx, v)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case types.Timespan:
		us := x.AsMicroseconds()
		t := &timeText{read: true}
		if us < 0 {
			us, t.neg = -us, true
		}
		t.hour, t.minute, t.second, t.micro = us/3_600_000_000, us/60_000_000%60, us/1_000_000%60, us%1_000_000
		return t, nil
	case time.Time:
		return &timeText{hour: int64(x.Hour()), minute: int64(x.Minute()), second: int64(x.Second()), micro: int64(x.Nanosecond() / 1000), read: true}, nil
	case []byte:
		return timeOfText(ctx, string(x)), nil
	case string:
		return timeOfText(ctx, x), nil
	}
	s, err := toText(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("TIME of %T: %w", v, err)
	}
	return timeOfText(ctx, s), nil
}

func (f *timeField) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(f, c, func(c sql.Expression) sql.Expression {
		return &timeField{wrapped: wrapped{c}, name: f.name}
	})
}

// timeCast is CAST(x AS TIME(n)) as MariaDB computes it: text read as a
// TIME (readTimeText, with its warnings), and the fraction cut (not
// rounded) to n digits. go-mysql-server kept x's fraction:
// CAST(taken_at AS TIME) was 09:00:00.123456, 09:00:00 on MariaDB.
type timeCast struct {
	conv   *expression.Convert
	digits int
}

var _ sql.Expression = (*timeCast)(nil)

func (c *timeCast) Resolved() bool             { return c.conv.Resolved() }
func (c *timeCast) IsNullable() bool           { return true }
func (c *timeCast) Children() []sql.Expression { return c.conv.Children() }
func (c *timeCast) String() string             { return c.conv.String() }
func (c *timeCast) Type() sql.Type             { return c.conv.Type() }

func (c *timeCast) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	var ts types.Timespan
	if types.IsText(c.conv.Child.Type()) {
		v, err := c.conv.Child.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		t := timeOfText(ctx, fmt.Sprint(v))
		if t == nil {
			return nil, nil
		}
		ts = types.Timespan(t.micros()) // not clamped to 838:59:59: .999999 stays
	} else {
		v, err := c.conv.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		x, ok := v.(types.Timespan)
		if !ok {
			return v, nil
		}
		ts = x
	}
	unit := pow10(maxFractionDigits - c.digits)
	return types.Timespan(ts.AsMicroseconds() / unit * unit), nil
}

func (c *timeCast) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	conv, err := c.conv.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	cv, ok := conv.(*expression.Convert)
	if !ok {
		return nil, fmt.Errorf("CAST AS TIME rebuilt as %T", conv)
	}
	return &timeCast{conv: cv, digits: c.digits}, nil
}

// timeString is a TIME of us microseconds as MariaDB prints it:
// [-]hh:mm:ss and digits fraction digits (cut, as MariaDB's values are).
func timeString(us int64, digits int) string {
	sign := ""
	if us < 0 {
		sign, us = "-", -us
	}
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, us/3_600_000_000, us/60_000_000%60, us/1_000_000%60)
	if digits > 0 {
		s += fmt.Sprintf(".%06d", us%1_000_000)[:1+min(digits, maxFractionDigits)]
	}
	return s
}

// timeAsText is a TIME read as text (CONCAT(TIMEDIFF(...))), as MariaDB
// prints it; go-mysql-server failed ("incompatible conversion to SQL
// type").
type timeAsText struct {
	wrapped
	digits int // the TIME's fraction digits (timePrecision), derived once
}

var _ sql.Expression = (*timeAsText)(nil)

func newTimeAsText(e sql.Expression) *timeAsText {
	return &timeAsText{wrapped: wrapped{e}, digits: timePrecision(e)}
}

func (t *timeAsText) length() int {
	if t.digits > 0 {
		return 11 + t.digits
	}
	return 10
}

func (t *timeAsText) Type() sql.Type {
	return types.MustCreateStringWithDefaults(sqltypes.VarChar, int64(t.length()))
}

func (t *timeAsText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	ts, ok := v.(types.Timespan)
	if !ok {
		return nil, fmt.Errorf("TIME as text of %T", v)
	}
	return timeString(ts.AsMicroseconds(), t.digits), nil
}

func (t *timeAsText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(t, c, func(c sql.Expression) sql.Expression { return newTimeAsText(c) })
}

// timeDiff is TIMEDIFF(a, b) as MariaDB answers it: each argument read
// as a TIME would be (text by readTimeText: a datetime stays one, a date
// becomes 00:00:00 with warning 1292), NULL when the two are not of one
// kind (a DATETIME and a time, a DATE and a DATETIME), the difference cut
// to 838:59:59. go-mysql-server read text as a DATETIME and subtracted
// whatever it got: TIMEDIFF(taken_at, '2026-11-20') was 09:00:00, NULL on
// MariaDB.
type timeDiff struct {
	a, b   sql.Expression
	digits int // its fraction digits (timePrecision), derived once
}

func newTimeDiff(a, b sql.Expression) *timeDiff {
	d := &timeDiff{a: a, b: b}
	d.digits = timePrecision(d)
	return d
}

var _ sql.FunctionExpression = (*timeDiff)(nil)

func (d *timeDiff) FunctionName() string       { return "timediff" }
func (d *timeDiff) Description() string        { return "MariaDB's TIMEDIFF (heapprof/sqlview)" }
func (d *timeDiff) Resolved() bool             { return d.a.Resolved() && d.b.Resolved() }
func (d *timeDiff) IsNullable() bool           { return true }
func (d *timeDiff) Children() []sql.Expression { return []sql.Expression{d.a, d.b} }
func (d *timeDiff) Type() sql.Type             { return types.Time }
func (d *timeDiff) String() string             { return fmt.Sprintf("TIMEDIFF(%s, %s)", d.a, d.b) }

func (d *timeDiff) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(c), 2)
	}
	return newTimeDiff(c[0], c[1]), nil
}

// timeDiffable is whether TIMEDIFF's argument is of a type timeDiff reads:
// text, a date or a TIME (numbers are go-mysql-server's).
func timeDiffable(e sql.Expression) bool {
	t := e.Type()
	return types.IsText(t) || types.IsTime(t) || types.IsTimespan(t) || t == types.Null
}

// timeOperand is one argument of TIMEDIFF: its kind ("datetime", "date"
// or "time") and its value in microseconds (since 1970 for dates).
func timeOperand(ctx *sql.Context, e sql.Expression, row sql.Row) (kind string, us int64, ok bool, err error) {
	v, err := e.Eval(ctx, row)
	if err != nil || v == nil {
		return "", 0, false, err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil {
		return "", 0, false, err
	}
	if t := e.Type(); types.IsTime(t) {
		// A date or datetime, whatever go-mysql-server hands over (its
		// DATE() answers text).
		tv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		x, ok := tv.(time.Time)
		if err != nil || !ok {
			return "", 0, false, err
		}
		kind = "datetime"
		if t.Type() == types.Date.Type() {
			kind = "date"
		}
		return kind, x.UnixMicro(), true, nil
	}
	switch x := v.(type) {
	case types.Timespan:
		return "time", x.AsMicroseconds(), true, nil
	case []byte:
		v = string(x)
	}
	s, isText := v.(string)
	if !isText {
		return "", 0, false, fmt.Errorf("TIMEDIFF of %T", v)
	}
	t := timeOfText(ctx, s)
	if t == nil {
		return "", 0, false, nil
	}
	if d := t.datetime; d != nil {
		at := time.Date(d.year, time.Month(d.month), d.day, d.hour, d.minute, d.second, d.micro*1000, time.UTC)
		return "datetime", at.UnixMicro(), true, nil
	}
	return "time", t.micros(), true, nil
}

func (d *timeDiff) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ka, a, ok, err := timeOperand(ctx, d.a, row)
	if err != nil || !ok {
		return nil, err
	}
	kb, b, ok, err := timeOperand(ctx, d.b, row)
	if err != nil || !ok || ka != kb {
		return nil, err
	}
	unit := pow10(maxFractionDigits - d.digits)
	if ka == "time" {
		// Times cut to TIMEDIFF's digits first, as MariaDB's does: a text
		// past 838:59:59 was read as 838:59:59.999999.
		a, b = a/unit*unit, b/unit*unit
	}
	diff := a - b
	// The cut keeps the most fraction digits TIMEDIFF has (838:59:59.999999
	// for six), as MariaDB's check_time_range_internal.
	limit := int64(maxTimeMicros) + 1_000_000 - unit
	if diff > limit || diff < -limit {
		shown := 0 // MariaDB shows a fraction only when there is one
		if diff%1_000_000 != 0 {
			shown = maxFractionDigits
		}
		ctx.Warn(erWarnDatetime, "Truncated incorrect time value: '%s'", timeString(diff, shown))
		diff = max(min(diff, limit), -limit)
	}
	return types.Timespan(diff), nil // its own cut above, .999999 included
}
