package sqlview

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/shopspring/decimal"
)

// MySQL functions go-mysql-server v0.20.0 lacks or answers differently,
// served through its FunctionProvider extension point (the provider's
// functions come before the built-in ones): per engine, no global
// registry is touched.

// Function implements sql.FunctionProvider.
func (p *provider) Function(ctx *sql.Context, name string) (sql.Function, bool) {
	switch strings.ToLower(name) {
	case setUserVarFunc:
		return sql.FunctionN{Name: setUserVarFunc, Fn: func(args ...sql.Expression) (sql.Expression, error) {
			return newSetUserVar(ctx, args...)
		}}, true
	case unionAsFunc:
		return sql.FunctionN{Name: unionAsFunc, Fn: newUnionAs}, true
	case cumeDistFunc:
		return sql.Function2{Name: cumeDistFunc, Fn: newCumeDist}, true
	case "makedate":
		return sql.Function2{Name: "makedate", Fn: func(y, d sql.Expression) sql.Expression {
			return &fnExpr{name: "MAKEDATE", args: []sql.Expression{y, d}, typ: types.Date, eval: makedate}
		}}, true
	case "period_add", "period_diff":
		eval := map[string]func(*sql.Context, []any) (any, error){"period_add": periodAdd, "period_diff": periodDiff}[strings.ToLower(name)]
		return sql.Function2{Name: strings.ToLower(name), Fn: func(a, b sql.Expression) sql.Expression {
			return &fnExpr{name: strings.ToUpper(name), args: []sql.Expression{a, b}, typ: types.Int64, eval: eval}
		}}, true
	case "maketime":
		return sql.Function3{Name: "maketime", Fn: func(h, m, sec sql.Expression) sql.Expression {
			digits := maketimeDigits(sec)
			return &fnExpr{name: "MAKETIME", args: []sql.Expression{h, m, sec}, typ: types.Time, eval: func(ctx *sql.Context, vals []any) (any, error) {
				return maketime(ctx, vals, digits)
			}}
		}}, true
	case "sec_to_time":
		return sql.Function1{Name: "sec_to_time", Fn: func(x sql.Expression) sql.Expression {
			return &fnExpr{name: "SEC_TO_TIME", args: []sql.Expression{x}, typ: types.Time, eval: secToTime}
		}}, true
	case "str_to_date":
		return sql.Function2{Name: "str_to_date", Fn: func(d, f sql.Expression) sql.Expression {
			return &strToDate{date: d, format: f}
		}}, true
	case "insert":
		return sql.Function4{Name: "insert", Fn: func(a, b, c, d sql.Expression) sql.Expression {
			return &fnExpr{name: "INSERT", args: []sql.Expression{a, b, c, d}, typ: types.LongText, eval: insertChars}
		}}, true
	case "lpad", "rpad":
		return sql.FunctionN{Name: strings.ToLower(name), Fn: newPad(strings.EqualFold(name, "lpad"))}, true
	case "greatest":
		return sql.FunctionN{Name: "greatest", Fn: newExtremum(true)}, true
	case "least":
		return sql.FunctionN{Name: "least", Fn: newExtremum(false)}, true
	case "round":
		return sql.FunctionN{Name: "round", Fn: newRound}, true
	case "truncate":
		return sql.FunctionN{Name: "truncate", Fn: newTruncate}, true
	case "format":
		return sql.FunctionN{Name: "format", Fn: newFormat}, true
	case "floor":
		return sql.Function1{Name: "floor", Fn: newIntVal(false)}, true
	case "ceil", "ceiling":
		return sql.Function1{Name: "ceil", Fn: newIntVal(true)}, true
	case "std", "stddev", "stddev_pop":
		return sql.Function1{Name: "stddev_pop", Fn: func(x sql.Expression) sql.Expression { return aggregation.NewStdDevPop(&asDouble{wrapped{x}}) }}, true
	case "stddev_samp":
		return sql.Function1{Name: "stddev_samp", Fn: func(x sql.Expression) sql.Expression { return aggregation.NewStdDevSamp(&asDouble{wrapped{x}}) }}, true
	case "variance", "var_pop":
		return sql.Function1{Name: "var_pop", Fn: func(x sql.Expression) sql.Expression { return aggregation.NewVarPop(&asDouble{wrapped{x}}) }}, true
	case "var_samp":
		return sql.Function1{Name: "var_samp", Fn: func(x sql.Expression) sql.Expression { return aggregation.NewVarSamp(&asDouble{wrapped{x}}) }}, true
	case "bit_or", "bit_and", "bit_xor":
		// MariaDB's Item_sum_bit reads its argument's val_int, as CAST(x AS
		// SIGNED) does: BIT_OR(FLOOR(x)) of a DOUBLE x set bit 63 here.
		bit := map[string]func(sql.Expression) sql.Expression{
			"bit_or":  func(x sql.Expression) sql.Expression { return aggregation.NewBitOr(x) },
			"bit_and": func(x sql.Expression) sql.Expression { return aggregation.NewBitAnd(x) },
			"bit_xor": func(x sql.Expression) sql.Expression { return aggregation.NewBitXor(x) },
		}[strings.ToLower(name)]
		return sql.Function1{Name: strings.ToLower(name), Fn: func(x sql.Expression) sql.Expression {
			return bit(&castInt{wrapped: wrapped{x}})
		}}, true
	case "timestamp":
		// Two arguments (a date and a time to add) stay go-mysql-server's.
		return sql.FunctionN{Name: "timestamp", Fn: func(args ...sql.Expression) (sql.Expression, error) {
			if len(args) != 1 {
				return function.NewDatetime(args...)
			}
			return &timestampOf{wrapped{args[0]}}, nil
		}}, true
	case "time_to_sec":
		return sql.Function1{Name: "time_to_sec", Fn: func(x sql.Expression) sql.Expression { return newTimeToSec(x) }}, true
	case "sign":
		return sql.Function1{Name: "sign", Fn: func(x sql.Expression) sql.Expression {
			return &fnExpr{name: "SIGN", args: []sql.Expression{x}, typ: types.Int32, eval: sign}
		}}, true
	case "pow", "power":
		// MariaDB names both pow in its messages.
		return sql.Function2{Name: "pow", Fn: func(x, y sql.Expression) sql.Expression {
			return realFunc("pow", math.Pow, x, y)
		}}, true
	case "exp":
		return sql.Function1{Name: "exp", Fn: func(x sql.Expression) sql.Expression { return realFunc("exp", math.Exp, x) }}, true
	case "cot":
		return sql.Function1{Name: "cot", Fn: func(x sql.Expression) sql.Expression {
			return realFunc("cot", func(v float64) float64 { return 1 / math.Tan(v) }, x)
		}}, true
	case "degrees":
		// Item_func_units: value * mul + add, mul = 180 / M_PI in double
		// arithmetic (RADIANS(1.7e308) is finite there; (value * M_PI) /
		// 180 overflowed).
		return sql.Function1{Name: "degrees", Fn: func(x sql.Expression) sql.Expression {
			pi := math.Pi
			return realFunc("degrees", func(v float64) float64 { return v*(180/pi) + 0 }, x)
		}}, true
	case "radians":
		return sql.Function1{Name: "radians", Fn: func(x sql.Expression) sql.Expression {
			pi := math.Pi
			return realFunc("radians", func(v float64) float64 { return v*(pi/180) + 0 }, x)
		}}, true
	case "hex":
		return sql.Function1{Name: "hex", Fn: newHex}, true
	case "oct":
		// MariaDB's OCT(n) is CONV(n, 10, 8); go-mysql-server has no OCT.
		return sql.Function1{Name: "oct", Fn: func(x sql.Expression) sql.Expression {
			return function.NewConv(x, expression.NewLiteral(int8(10), types.Int8), expression.NewLiteral(int8(8), types.Int8))
		}}, true
	case "sum":
		return sql.Function1{Name: "sum", Fn: newSum}, true
	case "avg":
		return sql.Function1{Name: "avg", Fn: newAvg}, true
	case "from_unixtime":
		return sql.FunctionN{Name: "from_unixtime", Fn: newFromUnixtime}, true
	case "utc_timestamp":
		return sql.FunctionN{Name: "utc_timestamp", Fn: newUTCTimestamp}, true
	case "curdate", "current_date":
		// A DATE in the session's time zone, as NOW() is; go-mysql-server's
		// was text (BI tools saw a string column) of the server's date.
		fn := strings.ToUpper(name)
		return sql.Function0{Name: strings.ToLower(name), Fn: func() sql.Expression {
			return &fnExpr{name: fn, typ: types.Date, eval: currentDate}
		}}, true
	case "utc_date":
		return sql.Function0{Name: "utc_date", Fn: func() sql.Expression {
			return &fnExpr{name: "UTC_DATE", typ: types.Date, eval: func(ctx *sql.Context, _ []any) (any, error) {
				return dateOf(ctx.QueryTime().UTC()), nil
			}}
		}}, true
	case "current_user":
		// The authenticated account, as mysql.user names it: heapproxy's
		// users have no host part ('ops'@'%'); USER() keeps the client's.
		return sql.Function0{Name: "current_user", Fn: func() sql.Expression {
			return &fnExpr{name: "CURRENT_USER", typ: types.LongText, eval: func(ctx *sql.Context, _ []any) (any, error) {
				return ctx.Session.Client().User + "@%", nil
			}}
		}}, true
	}
	return nil, false
}

var _ sql.FunctionProvider = (*provider)(nil)

// fnExpr is a function of its arguments' values; a NULL argument answers
// NULL.
type fnExpr struct {
	name string
	args []sql.Expression
	typ  sql.Type
	eval func(ctx *sql.Context, vals []any) (any, error)
}

var _ sql.Expression = (*fnExpr)(nil)

func (f *fnExpr) Resolved() bool {
	for _, a := range f.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}

func (f *fnExpr) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return f.name + "(" + strings.Join(parts, ", ") + ")"
}

func (f *fnExpr) Type() sql.Type             { return f.typ }
func (f *fnExpr) IsNullable() bool           { return true }
func (f *fnExpr) Children() []sql.Expression { return f.args }
func (f *fnExpr) FunctionName() string       { return strings.ToLower(f.name) }
func (f *fnExpr) Description() string        { return "MySQL's " + f.name + " (heapprof/sqlview)" }
func (f *fnExpr) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != len(f.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(f, len(c), len(f.args))
	}
	n := *f
	n.args = c
	return &n, nil
}

func (f *fnExpr) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	vals := make([]any, len(f.args))
	for i, a := range f.args {
		v, err := a.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return nil, nil
		}
		vals[i] = v
	}
	return f.eval(ctx, vals)
}

// realFunc is a DOUBLE function of DOUBLE arguments as MariaDB's
// Item_real_func computes it: an infinite or NaN result is ERROR 1690
// (check_float_overflow; go-mysql-server's POW and EXP answered NULL,
// POW(-8, 0.5) too, and COT(0) 1105). of is func(float64) float64 or
// func(float64, float64) float64, for as many arguments.
func realFunc[F func(float64) float64 | func(float64, float64) float64](name string, of F, args ...sql.Expression) *fnExpr {
	f := &fnExpr{name: name, args: args, typ: types.Float64}
	f.eval = func(_ *sql.Context, vals []any) (any, error) {
		var r float64
		switch of := any(of).(type) {
		case func(float64) float64:
			r = of(doubleValue(vals[0]))
		case func(float64, float64) float64:
			r = of(doubleValue(vals[0]), doubleValue(vals[1]))
		}
		if math.IsInf(r, 0) || math.IsNaN(r) {
			return nil, outOfRange("DOUBLE", exprText(f))
		}
		return r, nil
	}
	return f
}

// newHex is HEX(x). Of a number it is MariaDB's (Item_func_hex::
// val_str_ascii): an integer's 64 bits, a DOUBLE or DECIMAL rounded half
// away from zero first (HEX(1.5) is 2, HEX(-1.5) FFFFFFFFFFFFFFFE),
// all ones beyond the 64 bits, in 16 characters at most; go-mysql-server
// printed HEX(-0e0) as 0000000000000000. Text and dates stay
// go-mysql-server's hex of their bytes.
func newHex(x sql.Expression) sql.Expression {
	if !numeric(x.Type()) {
		return function.NewHex(x)
	}
	return &fnExpr{name: "HEX", args: []sql.Expression{x}, typ: types.MustCreateStringWithDefaults(sqltypes.VarChar, 16),
		eval: func(_ *sql.Context, vals []any) (any, error) {
			return strings.ToUpper(strconv.FormatUint(hexBits(vals[0]), 16)), nil
		}}
}

// hexBits is the 64 bits HEX prints for the number v.
func hexBits(v any) uint64 {
	switch x := v.(type) {
	case float64, float32, decimal.Decimal, string:
		f := doubleValue(x)
		switch {
		case f <= math.MinInt64 || f >= math.MaxUint64:
			return math.MaxUint64
		case f > 0:
			f += 0.5
		default:
			f -= 0.5
		}
		if f < math.MaxInt64 {
			return uint64(int64(f)) // C's conversion: toward zero, two's complement
		}
		return uint64(f)
	case uint64:
		return x
	}
	n, _ := types.CoalesceInt(v)
	return uint64(int64(n))
}

// toInt64 converts an argument as MySQL does for an integer parameter
// (rounding decimals, reading leading digits of strings).
func toInt64(ctx *sql.Context, v any) (int64, error) {
	n, _, err := types.Int64.Convert(ctx, v)
	if err != nil {
		return 0, fmt.Errorf("sqlview: integer argument %v: %w", v, err)
	}
	return n.(int64), nil
}

// makedate is MAKEDATE(year, dayofyear): NULL for a day below 1; years
// 0-69 are 2000-2069, 70-99 are 1970-1999.
func makedate(ctx *sql.Context, vals []any) (any, error) {
	y, err := toInt64(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	d, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	switch {
	case y < 0 || d < 1:
		return nil, nil
	case y < 70:
		y += 2000
	case y < 100:
		y += 1900
	}
	t := time.Date(int(y), 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(d-1))
	if t.Year() > 9999 {
		return nil, nil
	}
	return t, nil
}

// maxTimeMicros is TIME's bound, 838:59:59.
const maxTimeMicros = (838*3600 + 59*60 + 59) * 1_000_000

// secToTime is SEC_TO_TIME(seconds), clipped to TIME's range as MySQL does.
func secToTime(ctx *sql.Context, vals []any) (any, error) {
	f, _, err := types.Float64.Convert(ctx, vals[0])
	if err != nil {
		return nil, fmt.Errorf("sqlview: SEC_TO_TIME argument %v: %w", vals[0], err)
	}
	us := int64(f.(float64) * 1e6)
	if us > maxTimeMicros || us < -maxTimeMicros {
		ctx.Warn(erWarnDatetime, "Truncated incorrect seconds value: '%v'", vals[0])
		us = max(min(us, maxTimeMicros), -maxTimeMicros)
	}
	return types.Time.MicrosecondsToTimespan(us), nil
}

// newUTCTimestamp is UTC_TIMESTAMP([fsp]): the statement's time (as NOW()
// uses) in UTC, with fsp fraction digits (none by default: go-mysql-server
// answers microseconds, so NOW() and UTC_TIMESTAMP() differ by a fraction).
func newUTCTimestamp(args ...sql.Expression) (sql.Expression, error) {
	if len(args) > 1 {
		return nil, sql.ErrInvalidArgumentNumber.New("UTC_TIMESTAMP", "0 or 1", len(args))
	}
	fsp := 0
	if len(args) == 1 {
		v, err := args[0].Eval(nil, nil)
		if err != nil {
			return nil, fmt.Errorf("sqlview: UTC_TIMESTAMP precision: %w", err)
		}
		n, ok := v.(int8)
		if i, isInt := types.CoalesceInt(v); isInt {
			n, ok = int8(i), true
		}
		if !ok || n < 0 || n > 6 {
			return nil, sql.ErrInvalidArgument.New("UTC_TIMESTAMP")
		}
		fsp = int(n)
	}
	typ, err := types.CreateDatetimeType(sqltypes.Datetime, fsp)
	if err != nil {
		return nil, fmt.Errorf("sqlview: UTC_TIMESTAMP type: %w", err)
	}
	return &fnExpr{name: "UTC_TIMESTAMP", typ: typ, eval: func(ctx *sql.Context, _ []any) (any, error) {
		return ctx.QueryTime().UTC().Truncate(time.Second / time.Duration(pow10(fsp))), nil
	}}, nil
}

// currentDate is CURDATE(): the date of NOW() (the statement's time in
// the session's time zone).
func currentDate(ctx *sql.Context, _ []any) (any, error) {
	now, err := function.NewNow()
	if err != nil {
		return nil, fmt.Errorf("sqlview: CURDATE: %w", err)
	}
	v, err := now.Eval(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlview: CURDATE: %w", err)
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, fmt.Errorf("sqlview: CURDATE: NOW() is %T", v)
	}
	return dateOf(t), nil
}

// dateOf is t's date, at midnight.
func dateOf(t time.Time) time.Time {
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// sign is MariaDB's SIGN (Item_func_sign::val_int): the sign of the
// argument read as a DOUBLE (text by its leading number). go-mysql-server's
// converted it to an integer first, so SIGN(0.3) was 0.
func sign(_ *sql.Context, vals []any) (any, error) {
	switch x := doubleValue(vals[0]); {
	case x < 0:
		return int32(-1), nil
	case x > 0:
		return int32(1), nil
	}
	return int32(0), nil
}

// timestampOf is TIMESTAMP(x), a DATETIME as MariaDB types and computes it
// (CAST(x AS DATETIME) with x's fraction digits): of a date or time, its
// precision (a DATE's 0); of a constant string, the fraction digits it
// writes; of an integer, 0; of other text or numbers, 6. Text that is no
// date is NULL with warning 1292. go-mysql-server typed TIMESTAMP(x) as x
// (TEXT for a string), so TIMESTAMP('...') + 0 was a DOUBLE rounded to
// 20260101000060, and failed on text that is no date.
type timestampOf struct{ wrapped }

var _ sql.FunctionExpression = (*timestampOf)(nil)

func (f *timestampOf) FunctionName() string { return "timestamp" }
func (f *timestampOf) Description() string  { return "MariaDB's TIMESTAMP(x) (heapprof/sqlview)" }
func (f *timestampOf) String() string       { return "TIMESTAMP(" + f.child.String() + ")" }
func (f *timestampOf) IsNullable() bool     { return true }

func (f *timestampOf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return withChild(f, kids, func(k sql.Expression) sql.Expression { return &timestampOf{wrapped{k}} })
}

func (f *timestampOf) Type() sql.Type {
	return types.MustCreateDatetimeType(sqltypes.Datetime, f.precision())
}

// precision is the result's fraction digits.
func (f *timestampOf) precision() int {
	t := f.child.Type()
	switch {
	case t.Type() == types.Date.Type() || types.IsInteger(t):
		return 0
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		if dt, ok := t.(sql.DatetimeType); ok {
			return dt.Precision()
		}
	case types.IsText(t):
		return textFractionDigits(f.child, datetimeTextDigits)
	}
	return maxFractionDigits
}

// castTimeSuffix ends go-mysql-server's text of CAST(x AS TIME(n)).
var castTimeSuffix = regexp.MustCompile(`, time(?:\((\d)\))?\)$`)

// timePrecision is the fraction digits of a TIME, which go-mysql-server's
// type does not keep: CAST(x AS TIME(n))'s n (read from the CAST's text,
// which alone says it); TIMEDIFF's, TIME()'s and SEC_TO_TIME's as MariaDB
// derives them from their arguments (the larger of TIMEDIFF's two); 0 for
// other TIMEs.
func timePrecision(e sql.Expression) int {
	if tc, ok := unalias(e).(*timeCast); ok {
		return tc.digits
	}
	if vals, ok := choiceValues(unalias(e)); ok {
		// A choice among TIMEs has the most digits of its values
		// (IFNULL(NULL, TIME(x)) printed 08:00:00 of 08:00:00.123456).
		d := 0
		for _, v := range vals {
			if types.IsTimespan(v.Type()) {
				d = max(d, timePrecision(v))
			}
		}
		return d
	}
	if f, ok := unalias(e).(sql.FunctionExpression); ok {
		switch strings.ToLower(f.FunctionName()) {
		case "maketime":
			return maketimeDigits(unalias(e).Children()[2])
		case "timediff", "time", "sec_to_time":
			d := 0
			for _, a := range unalias(e).Children() {
				d = max(d, temporalDigits(a))
			}
			return d
		}
	}
	c, ok := unalias(e).(*expression.Convert)
	if !ok {
		return 0
	}
	m := castTimeSuffix.FindStringSubmatch(c.String())
	if m == nil || m[1] == "" {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return min(n, maxFractionDigits)
}

// textFractionDigits are the fraction digits MariaDB gives the date or
// time read from text e: a constant's own when it reads as one
// (fraction), else 6; other text's decimals (CAST(x AS CHAR) and
// DATE_FORMAT 0, string functions 6).
func textFractionDigits(e sql.Expression, fraction func(string) (int, bool)) int {
	if d, ok := e.(*dateValue); ok {
		e = d.child // the text as written
	}
	s, ok := constText(e)
	if !ok {
		return min(int(stringDecimals(e)), maxFractionDigits)
	}
	n, ok := fraction(s)
	if !ok {
		return maxFractionDigits
	}
	return min(n, maxFractionDigits)
}

// datetimeTextDigits are the fraction digits of text read as a date
// (readDateText), false when it is none.
func datetimeTextDigits(s string) (int, bool) {
	d := readDateText(s)
	return d.fracDigits, d.read && !d.badDay
}

// timeTextDigits are the fraction digits of text read as a time.
func timeTextDigits(s string) (int, bool) {
	if !isTimeText(s) {
		return 0, false
	}
	if _, frac, ok := strings.Cut(strings.TrimSpace(s), "."); ok {
		return len(frac), true
	}
	return 0, true
}

func isDatetimeText(s string) bool {
	_, _, err := types.DatetimeMaxPrecision.Convert(sql.NewEmptyContext(), s)
	return err == nil
}

func isTimeText(s string) bool {
	_, err := types.Time.ConvertToTimespan(s)
	return err == nil || isDatetimeText(s)
}

// maxFractionDigits is the most fraction digits a DATETIME has.
const maxFractionDigits = 6

func (f *timestampOf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if types.IsInteger(f.child.Type()) {
		v = fmt.Sprint(v) // YYYYMMDD or YYYYMMDDhhmmss
	}
	tv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
	if err != nil || tv == nil {
		ctx.Warn(erWarnDatetime, "Incorrect datetime value: '%v'", v)
		return nil, nil
	}
	return tv, nil
}

// timeToSec is TIME_TO_SEC(x) as MariaDB answers it: the seconds of a
// TIME, or of a DATETIME's time of day (a DATE's 0), with x's fraction
// digits (a DECIMAL when it has some, else a BIGINT), negative for a
// negative TIME; text is read as a TIME, else as a DATETIME, else NULL
// with warning 1292. go-mysql-server answered an UNSIGNED BIGINT without
// the fraction (TIME_TO_SEC(taken_at) lost the microseconds) and failed on
// '10:00:00.5'; heapprof's own ERROR 1235 for SUM of a TIME suggests it.
type timeToSec struct {
	wrapped
	fraction int // x's fraction digits, derived once from x, not per row
}

var _ sql.FunctionExpression = (*timeToSec)(nil)

func newTimeToSec(x sql.Expression) *timeToSec {
	f := &timeToSec{wrapped: wrapped{x}}
	f.fraction = temporalDigits(x)
	return f
}

func (f *timeToSec) FunctionName() string { return "time_to_sec" }
func (f *timeToSec) Description() string  { return "MariaDB's TIME_TO_SEC (heapprof/sqlview)" }
func (f *timeToSec) String() string       { return "TIME_TO_SEC(" + f.child.String() + ")" }
func (f *timeToSec) IsNullable() bool     { return true }

func (f *timeToSec) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return withChild(f, kids, func(k sql.Expression) sql.Expression { return newTimeToSec(k) })
}

// temporalDigits are the fraction digits of the date or time x gives
// (MariaDB's temporal_precision): its type's, a constant string's own, 6
// for other text, 0 for numbers without a fraction.
func temporalDigits(x sql.Expression) int {
	t := x.Type()
	switch {
	case t.Type() == types.Date.Type() || types.IsInteger(t) || t == types.Null:
		return 0
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		if dt, ok := t.(sql.DatetimeType); ok {
			return dt.Precision()
		}
	case types.IsTimespan(t):
		return timePrecision(x)
	case types.IsDecimal(t):
		return min(int(t.(sql.DecimalType).Scale()), maxFractionDigits)
	case types.IsText(t):
		return textFractionDigits(x, timeTextDigits)
	}
	return maxFractionDigits
}

func (f *timeToSec) Type() sql.Type {
	if d := f.fraction; d > 0 {
		return types.MustCreateDecimalType(uint8(16+d), uint8(d))
	}
	return types.Int64
}

func (f *timeToSec) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var micros int64
	switch x := v.(type) {
	case time.Time:
		if f.child.Type().Type() != types.Date.Type() {
			micros = microsOfDay(x)
		}
	default:
		ts, err := types.Time.ConvertToTimespan(v)
		if err == nil {
			micros = ts.AsMicroseconds()
			break
		}
		tv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		t, ok := tv.(time.Time)
		if err != nil || !ok {
			ctx.Warn(erWarnDatetime, "Incorrect time value: '%v'", v)
			return nil, nil
		}
		micros = microsOfDay(t)
	}
	d := f.fraction
	secs := decimal.New(micros, -6).Truncate(int32(d))
	if d == 0 {
		return secs.IntPart(), nil
	}
	return secs, nil
}

// microsOfDay is t's time of day in microseconds.
func microsOfDay(t time.Time) int64 {
	return int64(t.Hour())*3_600_000_000 + int64(t.Minute())*60_000_000 + int64(t.Second())*1_000_000 + int64(t.Nanosecond()/1000)
}
