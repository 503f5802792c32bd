package sqlview

// MySQL semantics go-mysql-server v0.20.0 gets silently wrong, fixed through
// its extension points: the FunctionProvider (GREATEST, LEAST, ROUND,
// FROM_UNIXTIME, STR_TO_DATE in strtodate.go) and an analyzer rule
// (ruleDialect: checked BIGINT arithmetic, fractional date intervals, text
// and dates where numbers are wanted (numbers.go), dates and ENUMs read as
// text). TestDialectMatchesMariaDB and semantics_test.go compare each with
// MariaDB.

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// erWarnDatetime is MySQL's warning 1292 (incorrect datetime value).
const erWarnDatetime = 1292

// rat reads a value as an exact number (strings by their leading number,
// as MySQL does); false when it is none.
func rat(ctx *sql.Context, v any) (*big.Rat, bool) {
	s, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, false
	}
	str, _ := s.(string)
	str = strings.TrimSpace(str)
	end := 0
	for end < len(str) && strings.IndexByte("+-0123456789.eE", str[end]) >= 0 {
		end++
	}
	r, ok := new(big.Rat).SetString(str[:end])
	return r, ok
}

// fracDigits is how many fraction digits MariaDB gives a value of type t
// used as seconds: none for integers, a DECIMAL's scale, six otherwise.
func fracDigits(t sql.Type) int {
	switch {
	case types.IsInteger(t):
		return 0
	case types.IsDecimal(t):
		if dt, ok := t.(sql.DecimalType); ok {
			return min(int(dt.Scale()), 6)
		}
	}
	return 6
}

// micros is r in microseconds, truncated toward zero (MariaDB truncates
// fractions beyond six digits).
func micros(r *big.Rat) (int64, bool) {
	m := new(big.Rat).Mul(r, big.NewRat(1_000_000, 1))
	q := new(big.Int).Quo(m.Num(), m.Denom())
	if !q.IsInt64() {
		return 0, false
	}
	return q.Int64(), true
}

// --- GREATEST / LEAST -------------------------------------------------

// extremum is GREATEST or LEAST. With a DECIMAL argument go-mysql-server
// errors (or truncates to BIGINT); MariaDB compares exactly and answers
// DECIMAL when every argument is an integer or a decimal, DOUBLE when a
// float or a string joins them. Without decimals go-mysql-server's own
// function answers.
type extremum struct {
	greatest bool
	args     []sql.Expression
	base     sql.Expression
}

var _ sql.FunctionExpression = (*extremum)(nil)

func newExtremum(greatest bool) func(args ...sql.Expression) (sql.Expression, error) {
	return func(args ...sql.Expression) (sql.Expression, error) {
		var base sql.Expression
		var err error
		if greatest {
			base, err = function.NewGreatest(args...)
		} else {
			base, err = function.NewLeast(args...)
		}
		if err != nil {
			return nil, err
		}
		return &extremum{greatest: greatest, args: args, base: base}, nil
	}
}

func (x *extremum) name() string {
	if x.greatest {
		return "GREATEST"
	}
	return "LEAST"
}

func (x *extremum) Resolved() bool             { return x.base.Resolved() }
func (x *extremum) String() string             { return x.base.String() }
func (x *extremum) IsNullable() bool           { return x.base.IsNullable() }
func (x *extremum) Children() []sql.Expression { return x.args }
func (x *extremum) FunctionName() string       { return strings.ToLower(x.name()) }
func (x *extremum) Description() string        { return "MariaDB's " + x.name() + " (heapprof/sqlview)" }

func (x *extremum) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return newExtremum(x.greatest)(c...)
}

// kind is 'n' (not ours: go-mysql-server answers), 'd' (DECIMAL), 'f'
// (DOUBLE), 'D' (dates, with text) or 't' (a DECIMAL with a date or
// time: unsupported).
func (x *extremum) kind(ts []sql.Type) byte {
	dec, exact, temporal, text, number := false, true, false, false, false
	for _, t := range ts {
		switch {
		case t == types.Null:
			return 'n'
		case types.IsDecimal(t):
			dec, number = true, true
		case types.IsInteger(t):
			number = true
		case types.IsTime(t) || types.IsDateType(t) || types.IsDatetimeType(t) || types.IsTimestampType(t):
			temporal = true
		case types.IsText(t):
			text, exact = true, false
		default:
			exact, number = false, true
		}
	}
	switch {
	case text && number && !temporal:
		// Text among numbers: all compared as DOUBLE, text by its
		// leading number (go-mysql-server parses it whole).
		return 'f'
	case temporal && !number:
		// Dates among dates and text: compared as dates (datechoice.go).
		return 'D'
	case !dec:
		return 'n'
	case temporal:
		return 't'
	case exact:
		return 'd'
	}
	return 'f'
}

// argTypes asks each argument's type once: asking again, nested
// GREATEST(GREATEST(...)) took twice as long per level.
func (x *extremum) argTypes() []sql.Type {
	ts := make([]sql.Type, len(x.args))
	for i, a := range x.args {
		ts[i] = a.Type()
	}
	return ts
}

func (x *extremum) Type() sql.Type {
	ts := x.argTypes()
	switch x.kind(ts) {
	case 'd':
		var intDigits, scale uint8
		for _, t := range ts {
			if dt, ok := t.(sql.DecimalType); ok {
				intDigits = max(intDigits, dt.Precision()-dt.Scale())
				scale = max(scale, dt.Scale())
			} else {
				intDigits = max(intDigits, 19)
			}
		}
		return types.MustCreateDecimalType(min(intDigits+scale, 65), min(scale, 30))
	case 'f':
		return types.Float64
	case 'D':
		if t, ok := dateChoiceType(x.args, true); ok {
			return t
		}
	}
	return x.base.Type()
}

func (x *extremum) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	k := x.kind(x.argTypes())
	if k == 'n' {
		return x.base.Eval(ctx, row)
	}
	if k == 't' {
		return nil, errUnsupported(x.name() + "() of DECIMAL and date or time values together")
	}
	if k == 'D' {
		return dateExtremum(ctx, row, x.args, x.Type(), x.greatest)
	}
	var best *big.Rat
	var bestF float64
	var bestV any
	for i, a := range x.args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		if k == 'f' {
			fv := doubleValue(v)
			if i == 0 || (x.greatest && fv > bestF) || (!x.greatest && fv < bestF) {
				bestF = fv
			}
			continue
		}
		r, ok := rat(ctx, v)
		if !ok {
			return nil, fmt.Errorf("%s: not a number: %v", x.name(), v)
		}
		if c := r.Cmp(orRat(best, r)); i == 0 || (x.greatest && c > 0) || (!x.greatest && c < 0) {
			best, bestV = r, v
		}
	}
	if k == 'f' {
		return bestF, nil
	}
	if d, ok := bestV.(decimal.Decimal); ok {
		// Every digit, as MariaDB's val_decimal passes it on
		// (GREATEST(1/3, 0)*3 is 1.0000).
		return d, nil
	}
	d, _, err := x.Type().Convert(ctx, bestV)
	return d, err
}

func orRat(r, alt *big.Rat) *big.Rat {
	if r == nil {
		return alt
	}
	return r
}

// --- FROM_UNIXTIME ------------------------------------------------------

// fromUnixtime is FROM_UNIXTIME(ts [, format]) keeping ts's fraction:
// DATETIME with as many fraction digits as ts has (none for an integer,
// a DECIMAL's scale, six for DOUBLE and strings), as MariaDB answers;
// go-mysql-server rounds ts to whole seconds and always answers
// DATETIME(6).
type fromUnixtime struct{ args []sql.Expression }

var _ sql.FunctionExpression = (*fromUnixtime)(nil)

func newFromUnixtime(args ...sql.Expression) (sql.Expression, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, sql.ErrInvalidArgumentNumber.New("FROM_UNIXTIME", "1 or 2", len(args))
	}
	return &fromUnixtime{args: args}, nil
}

func (f *fromUnixtime) Resolved() bool             { return expression.ExpressionsResolved(f.args...) }
func (f *fromUnixtime) IsNullable() bool           { return true }
func (f *fromUnixtime) Children() []sql.Expression { return f.args }
func (f *fromUnixtime) FunctionName() string       { return "from_unixtime" }
func (f *fromUnixtime) Description() string        { return "MariaDB's FROM_UNIXTIME (heapprof/sqlview)" }
func (f *fromUnixtime) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return newFromUnixtime(c...)
}

func (f *fromUnixtime) String() string {
	parts := make([]string, len(f.args))
	for i, a := range f.args {
		parts[i] = a.String()
	}
	return "FROM_UNIXTIME(" + strings.Join(parts, ", ") + ")"
}

func (f *fromUnixtime) Type() sql.Type {
	if len(f.args) == 2 {
		return types.Text
	}
	return datetimeType(fracDigits(f.args[0].Type()))
}

func (f *fromUnixtime) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	r, ok := rat(ctx, v)
	if !ok || r.Sign() < 0 {
		return nil, nil
	}
	us, ok := micros(r)
	if !ok || us/1_000_000 > function.MaxUnixTimeSecs {
		return nil, nil
	}
	digits := fracDigits(f.args[0].Type())
	us -= us % pow10(6-digits)
	// The whole seconds through go-mysql-server (session time zone).
	secs, err := function.NewFromUnixtime(expression.NewLiteral(us/1_000_000, types.Int64))
	if err != nil {
		return nil, err
	}
	tv, err := secs.Eval(ctx, row)
	if err != nil || tv == nil {
		return nil, err
	}
	t, ok := tv.(time.Time)
	if !ok {
		return nil, fmt.Errorf("FROM_UNIXTIME: unexpected %T", tv)
	}
	t = t.Add(time.Duration(us%1_000_000) * time.Microsecond)
	if len(f.args) == 1 {
		return t, nil
	}
	format, err := f.args[1].Eval(ctx, row)
	if err != nil || format == nil {
		return nil, err
	}
	s, err := toText(ctx, format)
	if err != nil {
		return nil, fmt.Errorf("FROM_UNIXTIME format: %w", err)
	}
	if s != "" {
		if out, ok := formatDate(dateOfTime(t), s); ok {
			return out, nil
		}
	}
	return nil, nil
}

// --- the analyzer rule --------------------------------------------------

// dialectRule replaces, in the analyzed plan and its subqueries, + - * of
// signed integers by checkedArith and date arithmetic with an INTERVAL by
// dateOffset.
func dialectRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return dialectNode(n)
}

func dialectNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := nodeExprs(n, func(n sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		// Text and dates mixed with numbers first (numbers.go).
		e, mixed, err := numberContext(e)
		if err != nil {
			return nil, transform.SameTree, err
		}
		out, same, err := dialectExpr(e, rowsOf(n))
		if mixed {
			same = transform.NewTree
		}
		return out, same, err
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, sameCond, err := transform.NodeWithOpaque(n, conditionNode)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && sameCond, nil
}

// dialectExpr is dialectNode's rewrite of one expression over the rows
// of child.
func dialectExpr(e sql.Expression, child sql.Node) (sql.Expression, transform.TreeIdentity, error) {
	if out, ok, err := temporalArgsAsText(e, child); err != nil || ok {
		return out, transform.NewTree, err
	}
	switch e := e.(type) {
	case *plan.Subquery:
		q, same, err := dialectNode(e.Query)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		return e.WithQuery(q), transform.NewTree, nil
	case *expression.Arithmetic:
		liv, li := e.LeftChild.(*expression.Interval)
		riv, ri := e.RightChild.(*expression.Interval)
		switch {
		case ri && (e.Op == ast.PlusStr || e.Op == ast.MinusStr):
			return newDateOffset(e.LeftChild, riv, e.Op == ast.MinusStr), transform.NewTree, nil
		case li && e.Op == ast.PlusStr:
			return newDateOffset(e.RightChild, liv, false), transform.NewTree, nil
		case !li && !ri && (e.Op == ast.PlusStr || e.Op == ast.MinusStr || e.Op == ast.MultStr) &&
			signedInt(e.LeftChild.Type()) && signedInt(e.RightChild.Type()):
			return &checkedArith{Arithmetic: e}, transform.NewTree, nil
		}
	case *expression.Mod:
		if signedInt(e.LeftChild.Type()) && signedInt(e.RightChild.Type()) {
			return &intMod{Mod: e}, transform.NewTree, nil
		}
		if types.IsFloat(e.LeftChild.Type()) || types.IsFloat(e.RightChild.Type()) {
			// % of a DOUBLE is a DOUBLE (go-mysql-server: DECIMAL).
			return &floatMod{Mod: e}, transform.NewTree, nil
		}
		if l, r := e.LeftChild.Type(), e.RightChild.Type(); exactOperand(l) && exactOperand(r) && (types.IsDecimal(l) || types.IsDecimal(r)) {
			return &exactMod{Mod: e}, transform.NewTree, nil
		}
	case *expression.Convert:
		if c := newCastInt(e); c != nil {
			return c, transform.NewTree, nil
		}
	case *function.If, *function.IfNull, *function.Coalesce, *expression.Case:
		if x := exactChoice(e); x != nil {
			return x, transform.NewTree, nil
		}
		if x := newDateChoice(e); x != nil {
			return x, transform.NewTree, nil
		}
	case *function.DateAdd:
		return newDateOffset(e.Date, e.Interval, false), transform.NewTree, nil
	case *function.DateSub:
		return newDateOffset(e.Date, e.Interval, true), transform.NewTree, nil
	case *expression.EnumToString:
		return &enumText{EnumToString: e}, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// enumText is an ENUM as text (CAST(x AS CHAR), CASE over ENUMs).
// go-mysql-server's expects an ENUM's index and panics on the text that
// information_schema's ENUM columns hold (CAST(TABLE_TYPE AS CHAR)).
type enumText struct{ *expression.EnumToString }

func (e *enumText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(e.EnumToString, c, func(x *expression.EnumToString) sql.Expression { return &enumText{EnumToString: x} })
}

func (e *enumText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := e.Enum.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case uint16:
		if et, ok := e.Enum.Type().(types.EnumType); ok {
			s, _ := et.At(int(x))
			return s, nil
		}
	}
	s, _, err := types.LongText.Convert(ctx, v)
	return s, err
}

func signedInt(t sql.Type) bool { return types.IsInteger(t) && types.IsSigned(t) }

// checkedArith is + - * of signed integers or of DOUBLEs, answering
// MySQL's ERROR 1690 on overflow where go-mysql-server wraps integers
// around and carries a DOUBLE's infinity on (1e308 * 10 > 0 was 1).
type checkedArith struct{ *expression.Arithmetic }

func (c *checkedArith) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Arithmetic, children, func(a *expression.Arithmetic) sql.Expression { return &checkedArith{Arithmetic: a} })
}

func (c *checkedArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	if types.IsFloat(c.Type()) {
		v, err := c.Arithmetic.Eval(ctx, row)
		return finiteDouble(v, err, c.LeftChild, c.Op, c.RightChild)
	}
	var vals [2]int64
	for i, e := range []sql.Expression{c.LeftChild, c.RightChild} {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		n, _, err := types.Int64.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		vals[i] = n.(int64)
	}
	l, r := vals[0], vals[1]
	var out int64
	overflow := false
	switch c.Op {
	case ast.PlusStr:
		out = l + r
		overflow = (r > 0 && out < l) || (r < 0 && out > l)
	case ast.MinusStr:
		out = l - r
		overflow = (r < 0 && out < l) || (r > 0 && out > l)
	case ast.MultStr:
		out = l * r
		overflow = l != 0 && (out/l != r || (l == -1 && r == math.MinInt64) || (r == -1 && l == math.MinInt64))
	}
	if overflow {
		return nil, outOfRange("BIGINT", binaryText(c.LeftChild, c.Op, c.RightChild))
	}
	return out, nil
}

// checkedDiv is / of DOUBLEs answering ERROR 1690 where the quotient
// overflows (1e308 / 0.1); division by zero stays NULL, as on MariaDB.
type checkedDiv struct{ *expression.Div }

func (c *checkedDiv) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Div, children, func(d *expression.Div) sql.Expression { return &checkedDiv{Div: d} })
}

func (c *checkedDiv) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.Div.Eval(ctx, row)
	return finiteDouble(v, err, c.LeftChild, "/", c.RightChild)
}

// finiteDouble passes on the value v of "left op right" unless it is an
// infinity or NaN, which MariaDB has no DOUBLE for (check_float_overflow).
func finiteDouble(v any, err error, left sql.Expression, op string, right sql.Expression) (any, error) {
	if f, ok := v.(float64); ok && err == nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		return nil, outOfRange("DOUBLE", binaryText(left, op, right))
	}
	return v, err
}

// binaryText is "left op right" as MariaDB's messages print it
// (Item::print): 1e308 * 10, `functions`.`flat_bytes` * 2.
func binaryText(left sql.Expression, op string, right sql.Expression) string {
	return exprText(left) + " " + op + " " + exprText(right)
}

// exprText is e as MariaDB's messages print it, for the expressions they
// name; go-mysql-server's text for the rest.
func exprText(e sql.Expression) string {
	switch x := e.(type) {
	case *expression.Literal:
		if f, ok := x.Value().(float64); ok {
			return strings.Replace(strconv.FormatFloat(f, 'g', -1, 64), "e+", "e", 1)
		}
	case *expression.GetField:
		if x.Table() != "" {
			return "`" + x.Table() + "`.`" + x.Name() + "`"
		}
		return "`" + x.Name() + "`"
	case *expression.UnaryMinus:
		return "-" + exprText(x.Child)
	case *fnExpr:
		parts := make([]string, len(x.args))
		for i, a := range x.args {
			parts[i] = exprText(a)
		}
		return x.name + "(" + strings.Join(parts, ",") + ")"
	}
	return e.String()
}

// outOfRange is MariaDB's ERROR 1690 for a value of type typ that
// expression expr cannot hold.
func outOfRange(typ, expr string) error {
	return &Error{Code: mysql.ERDataOutOfRange, State: "22003",
		Message: fmt.Sprintf("%s value is out of range in '%s'", typ, expr)}
}

// dateOffset is DATE_ADD, DATE_SUB and x ± INTERVAL as MariaDB computes
// them: INTERVAL 1.5 SECOND is a second and a half (go-mysql-server rounds
// it to 2), and the result keeps the fraction digits of x and of the
// interval (go-mysql-server's x + INTERVAL answers DATETIME(0), dropping
// microseconds). It replaces go-mysql-server's node before analysis, so
// constant folding and filters see it; its children are x and the
// interval's amount (go-mysql-server's validator refuses an INTERVAL
// under any other node). A TIME x is left to go-mysql-server.
type dateOffset struct {
	date, amount sql.Expression
	unit         string
	sub          bool
}

var _ sql.Expression = (*dateOffset)(nil)

func newDateOffset(date sql.Expression, iv *expression.Interval, sub bool) *dateOffset {
	unit := iv.Unit
	// INTERVAL n SQL_TSI_DAY parses (any word is a unit to the parser),
	// but go-mysql-server knows only DAY; MySQL reads both.
	if plain, ok := strings.CutPrefix(unit, "SQL_TSI_"); ok && tsiUnits[plain] {
		unit = plain
	}
	return &dateOffset{date: date, amount: iv.Child, unit: unit, sub: sub}
}

func (d *dateOffset) interval() *expression.Interval { return expression.NewInterval(d.amount, d.unit) }

// base is go-mysql-server's own expression.
func (d *dateOffset) base() (sql.Expression, error) {
	if d.sub {
		return function.NewDateSub(d.date, d.interval())
	}
	return function.NewDateAdd(d.date, d.interval())
}

func (d *dateOffset) parts() (sql.Expression, *expression.Interval) { return d.date, d.interval() }

func (d *dateOffset) Resolved() bool             { return d.date.Resolved() && d.amount.Resolved() }
func (d *dateOffset) IsNullable() bool           { return true }
func (d *dateOffset) Children() []sql.Expression { return []sql.Expression{d.date, d.amount} }
func (d *dateOffset) String() string {
	op := "+"
	if d.sub {
		op = "-"
	}
	return fmt.Sprintf("(%s %s INTERVAL %s %s)", d.date, op, d.amount, d.unit)
}

func (d *dateOffset) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(c), 2)
	}
	return &dateOffset{date: c[0], amount: c[1], unit: d.unit, sub: d.sub}, nil
}

// intervalDigits is the fraction digits an interval brings: a SECOND
// count's own, six for units in microseconds, none otherwise.
func intervalDigits(iv *expression.Interval) int {
	switch {
	case iv.Unit == "SECOND":
		return fracDigits(iv.Child.Type())
	case strings.Contains(iv.Unit, "MICROSECOND"):
		return 6
	}
	return 0
}

// Type: DATETIME(p) for a DATETIME or TIMESTAMP x, p the larger of x's
// and the interval's fraction digits; DATE for a DATE x and a unit of days
// or more; text for a text x (MariaDB's VARCHAR).
func (d *dateOffset) Type() sql.Type {
	date, iv := d.parts()
	t := date.Type()
	switch {
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		p := 0
		if dt, ok := t.(sql.DatetimeType); ok {
			p = dt.Precision()
		}
		return datetimeType(max(p, intervalDigits(iv)))
	case t == types.Date:
		if timeUnit(iv.Unit) {
			return datetimeType(intervalDigits(iv))
		}
		return types.Date
	case types.IsText(t):
		return types.LongText
	}
	b, err := d.base()
	if err != nil {
		return types.DatetimeMaxPrecision
	}
	return b.Type()
}

// compoundUnits are the interval units of several fields: the first and
// last of them (0 years, 1 months, 2 days, 3 hours, 4 minutes, 5
// seconds, 6 microseconds), as MariaDB's get_interval_value reads them.
var compoundUnits = map[string][2]int{
	"YEAR_MONTH": {0, 1}, "DAY_HOUR": {2, 3}, "DAY_MINUTE": {2, 4}, "DAY_SECOND": {2, 5}, "DAY_MICROSECOND": {2, 6},
	"HOUR_MINUTE": {3, 4}, "HOUR_SECOND": {3, 5}, "HOUR_MICROSECOND": {3, 6}, "MINUTE_SECOND": {4, 5},
	"MINUTE_MICROSECOND": {4, 6}, "SECOND_MICROSECOND": {5, 6},
}

// compoundInterval reads s as MariaDB's get_interval_info reads an
// interval of the fields first to last: a leading '-' negates it,
// numbers are separated by anything else, too few fill the last fields
// ('1:30' DAY_SECOND is 1 minute 30 seconds), a microsecond field counts
// its digits as a fraction ('1.5' SECOND_MICROSECOND is 1.5 s). False
// (NULL) when more follows or a field has 19 digits.
func compoundInterval(fields [2]int, s string) (*expression.TimeDelta, bool) {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	skip := func() { s = strings.TrimLeftFunc(s, func(r rune) bool { return r < '0' || r > '9' }) }
	skip()
	count := fields[1] - fields[0] + 1
	values := make([]int64, count)
	digits := 0
	for i := range count {
		digits = len(s) - len(strings.TrimLeft(s, "0123456789"))
		if digits >= 19 {
			return nil, false
		}
		values[i], _ = strconv.ParseInt(s[:digits], 10, 64) // "" is 0
		s = s[digits:]
		skip()
		if s == "" && i != count-1 {
			// Fewer numbers than fields: they are the last ones.
			values = append(make([]int64, count-i-1), values[:i+1]...)
			break
		}
	}
	if fields[1] == 6 && digits > 0 {
		switch {
		case digits < 6:
			values[count-1] *= pow10(6 - digits)
		case digits > 6:
			values[count-1] /= pow10(digits - 6)
		}
	}
	if s != "" {
		return nil, false
	}
	var all [7]int64
	for i, v := range values {
		if neg {
			v = -v
		}
		all[fields[0]+i] = v
	}
	return &expression.TimeDelta{Years: all[0], Months: all[1], Days: all[2], Hours: all[3], Minutes: all[4], Seconds: all[5], Microseconds: all[6]}, true
}

// textInteger is s read as MariaDB reads text as an INTEGER (my_strtoll10:
// spaces, a sign, digits), with its warning 1292 when anything but
// spaces follows or there are no digits, its note 1292 when spaces do.
func textInteger(ctx *sql.Context, s string) int64 {
	rest := strings.TrimLeft(s, " \t\n\r\f\v")
	if rest != "" && (rest[0] == '+' || rest[0] == '-') {
		rest = rest[1:]
	}
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	switch after := rest[digits:]; {
	case digits == 0 || strings.TrimRight(after, " ") != "":
		ctx.Warn(erWarnDatetime, "Truncated incorrect INTEGER value: '%s'", s)
	case after != "":
		note(ctx, erWarnDatetime, "Truncated incorrect INTEGER value: '%s'", s)
	}
	return int64(leadingInt64Bits(s))
}

func timeUnit(unit string) bool {
	return strings.Contains(unit, "HOUR") || strings.Contains(unit, "MINUTE") || strings.Contains(unit, "SECOND")
}

func (d *dateOffset) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	date, iv := d.parts()
	if t := date.Type(); !types.IsDatetimeType(t) && !types.IsTimestampType(t) && t != types.Date && !types.IsText(t) {
		b, err := d.base()
		if err != nil {
			return nil, err
		}
		return b.Eval(ctx, row)
	}
	typ := d.Type()
	v, err := date.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	tv, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
	if err != nil || tv == nil {
		ctx.Warn(erWarnDatetime, "Incorrect datetime value: '%v'", v)
		return nil, nil
	}
	t := tv.(time.Time)
	var td *expression.TimeDelta
	if iv.Unit == "SECOND" {
		n, err := iv.Child.Eval(ctx, row)
		if err != nil || n == nil {
			return nil, err
		}
		r, ok := rat(ctx, n)
		if !ok {
			return nil, nil
		}
		us, ok := micros(r)
		if !ok {
			return nil, nil
		}
		td = &expression.TimeDelta{Microseconds: us}
	} else if fields, ok := compoundUnits[iv.Unit]; ok {
		v, err := iv.Child.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		if td, ok = compoundInterval(fields, fmt.Sprint(v)); !ok {
			return nil, nil
		}
	} else if types.IsText(iv.Child.Type()) {
		// Text counts other units as MariaDB reads text as an INTEGER:
		// its leading integer ('1.5' DAY is 1 day, go-mysql-server's 2;
		// 'x' is 0, go-mysql-server's ERROR 1366), warning 1292 when
		// more follows.
		v, err := iv.Child.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		n := textInteger(ctx, fmt.Sprint(v))
		if td, err = expression.NewInterval(expression.NewLiteral(n, types.Int64), iv.Unit).EvalDelta(ctx, row); err != nil || td == nil {
			return nil, err
		}
	} else if td, err = iv.EvalDelta(ctx, row); err != nil || td == nil {
		return nil, err
	}
	if d.sub {
		t = td.Sub(t)
	} else {
		t = td.Add(t)
	}
	if t.Year() < 1 || t.Year() > 9999 {
		ctx.Warn(erWarnDatetime, "Datetime function: datetime field overflow")
		return nil, nil
	}
	switch tt := typ.(type) {
	case sql.DatetimeType:
		if typ == types.Date {
			return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
		}
		return t.Truncate(time.Second / time.Duration(pow10(tt.Precision()))), nil
	}
	// Text in, text out: a date when x was a date and the unit days or
	// more, else a datetime with the fraction digits of x and the interval.
	s, _ := v.(string)
	s = strings.TrimSpace(s)
	if len(s) <= 10 && !timeUnit(iv.Unit) {
		return t.Format("2006-01-02"), nil
	}
	digits := intervalDigits(iv)
	if _, frac, ok := strings.Cut(s, "."); ok && strings.Contains(s, ":") {
		digits = max(digits, min(len(frac), 6))
	}
	const layout = "2006-01-02 15:04:05.000000"
	if digits == 0 {
		return t.Format(layout[:19]), nil
	}
	return t.Format(layout[:20+digits]), nil
}

// intMod is % of signed integers typed BIGINT, as MariaDB types it
// (go-mysql-server answers DECIMAL with the same digits).
type intMod struct{ *expression.Mod }

func (m *intMod) Type() sql.Type { return types.Int64 }

func (m *intMod) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrap(m.Mod, children, func(mod *expression.Mod) sql.Expression { return &intMod{Mod: mod} })
}

func (m *intMod) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := m.Mod.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	n, _, err := types.Int64.Convert(ctx, v)
	return n, err
}

// decimalRound is ROUND(x, d) and TRUNCATE(x, d) as MariaDB answers
// them: of a DECIMAL x with a constant d, DECIMAL with scale d
// (ROUND(x / 1048576, 2) prints 0.50; go-mysql-server keeps x's scale); of
// a DOUBLE or text (its leading number), DOUBLE rounded half to even.
// go-mysql-server has no TRUNCATE, and answers ROUND of text as INT.
type decimalRound struct {
	sql.Expression // go-mysql-server's ROUND over the same arguments
	trunc          bool
}

func newRound(args ...sql.Expression) (sql.Expression, error) {
	args = foldDigits(args)
	r, err := function.NewRound(args...)
	if err != nil {
		return nil, err
	}
	return &decimalRound{Expression: r}, nil
}

func newTruncate(args ...sql.Expression) (sql.Expression, error) {
	if len(args) != 2 {
		return nil, sql.ErrInvalidArgumentNumber.New("TRUNCATE", 2, len(args))
	}
	r, err := function.NewRound(foldDigits(args)...)
	if err != nil {
		return nil, err
	}
	return &decimalRound{Expression: r, trunc: true}, nil
}

// foldDigits gives ROUND and TRUNCATE a digit count computed from
// literals alone (ROUND(x, 6 - 3)) as the literal it is: MariaDB takes
// any constant digit count for the result's scale, the type rules here a
// literal.
func foldDigits(args []sql.Expression) []sql.Expression {
	if len(args) != 2 || !literalArith(args[1]) {
		return args
	}
	if _, lit := args[1].(*expression.Literal); lit && types.IsInteger(args[1].Type()) {
		return args // already what the type rules read
	}
	v, err := args[1].Eval(sql.NewEmptyContext(), nil)
	if err != nil {
		return args
	}
	var n int64
	switch x := v.(type) {
	case decimal.Decimal:
		n = x.Round(0).IntPart() // val_int of a DECIMAL: half away from zero
	case float64:
		n = int64(math.RoundToEven(x)) // of a DOUBLE: rint
	default:
		i, ok := types.CoalesceInt(v)
		if !ok {
			return args
		}
		n = int64(i)
	}
	return []sql.Expression{args[0], expression.NewLiteral(n, types.Int64)}
}

// literalArith: e is literals under + - * / DIV % and unary minus.
func literalArith(e sql.Expression) bool {
	switch e.(type) {
	case *expression.Literal, *expression.Arithmetic, *expression.UnaryMinus, *expression.Div,
		*expression.IntDiv, *expression.Mod:
	default:
		return false
	}
	for _, k := range e.Children() {
		if !literalArith(k) {
			return false
		}
	}
	return true
}

func (r *decimalRound) FunctionName() string {
	if r.trunc {
		return "truncate"
	}
	return "round"
}

func (r *decimalRound) Description() string {
	return "MariaDB's " + strings.ToUpper(r.FunctionName()) + " (heapprof/sqlview)"
}

func (r *decimalRound) String() string {
	kids := r.Children()
	parts := make([]string, len(kids))
	for i, k := range kids {
		parts[i] = k.String()
	}
	return strings.ToUpper(r.FunctionName()) + "(" + strings.Join(parts, ", ") + ")"
}

func (r *decimalRound) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if r.trunc {
		return newTruncate(c...)
	}
	return newRound(c...)
}

func (r *decimalRound) Type() sql.Type {
	kids := r.Children()
	t0 := kids[0].Type()
	// go-mysql-server's ROUND of x, knowing x's type: asking the wrapped
	// ROUND would ask x's type again, which doubled the work per level of
	// ROUND(ROUND(...)) (22 levels took 5 s to plan).
	gmsType := func() sql.Type {
		e, err := function.NewRound(append([]sql.Expression{expression.NewLiteral(nil, t0)}, kids[1:]...)...)
		if err != nil {
			return r.Expression.Type()
		}
		return e.Type()
	}
	switch {
	case types.IsText(t0) || types.IsFloat(t0):
		return types.Float64
	case r.trunc && types.IsInteger(t0):
		// Truncating never carries into a new digit: x's own type.
		return t0
	}
	dt, ok := t0.(sql.DecimalType)
	if !ok {
		return gmsType()
	}
	d := int64(0)
	if len(kids) == 2 {
		lit, ok := kids[1].(*expression.Literal)
		if !ok {
			return gmsType()
		}
		n, ok := types.CoalesceInt(lit.Value())
		if !ok {
			return gmsType()
		}
		d = int64(n)
	}
	// d digits, zeros included (ROUND(2.567, 5) is 2.56700).
	scale := int(max(0, min(d, types.DecimalTypeMaxScale)))
	p := int(dt.Precision()) - int(dt.Scale()) + scale
	if scale < int(dt.Scale()) && !r.trunc {
		p++ // rounding may carry into a new digit
	}
	return types.MustCreateDecimalType(uint8(max(min(p, 65), 1)), uint8(scale))
}

// Eval: ROUND of a DOUBLE rounds half to even, as MariaDB's
// my_double_round does with rint (ROUND(56.25e0, 1) is 56.2);
// go-mysql-server rounds half away from zero (56.3). Text is its leading
// number, as a DOUBLE. Other ROUNDs are go-mysql-server's; TRUNCATE cuts
// toward zero.
func (r *decimalRound) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := r.Children()
	t0 := kids[0].Type()
	if isTemporal(t0) || types.IsTime(t0) {
		return nil, errUnsupported(strings.ToUpper(r.FunctionName()) + "() of a date or time; write " +
			strings.ToUpper(r.FunctionName()) + "(x + 0, d) for its number YYYYMMDDhhmmss")
	}
	float := types.IsFloat(t0) || types.IsText(t0)
	if !float && !r.trunc {
		return r.Expression.Eval(ctx, row)
	}
	v, err := kids[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	var d int64
	if len(kids) == 2 {
		dv, err := kids[1].Eval(ctx, row)
		if err != nil || dv == nil {
			return nil, err
		}
		if d, err = toInt64(ctx, dv); err != nil {
			return nil, err
		}
	}
	switch {
	case float && r.trunc:
		return truncDouble(doubleValue(v), d), nil
	case float:
		return roundHalfEven(doubleValue(v), d), nil
	case types.IsInteger(t0):
		return truncInt(ctx, t0, v, d)
	}
	x, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	dec, ok := x.(decimal.Decimal)
	if !ok {
		return nil, fmt.Errorf("TRUNCATE: unexpected %T", x)
	}
	d = max(min(d, 65), -65)
	out := dec.Shift(int32(d)).Truncate(0).Shift(int32(-d))
	res, _, err := r.Type().Convert(ctx, out)
	return res, err
}

// truncInt is TRUNCATE of an integer: itself for d >= 0, else cut to a
// multiple of 10^-d toward zero.
func truncInt(ctx *sql.Context, t sql.Type, v any, d int64) (any, error) {
	if d >= 0 {
		return v, nil
	}
	if types.IsUnsigned(t) {
		n, _, err := types.Uint64.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		u := n.(uint64)
		if d < -19 {
			out, _, err := t.Convert(ctx, uint64(0))
			return out, err
		}
		p := uint64(math.Pow10(int(-d)))
		out, _, err := t.Convert(ctx, u-u%p)
		return out, err
	}
	n, err := toInt64(ctx, v)
	if err != nil {
		return nil, err
	}
	if d < -18 {
		out, _, err := t.Convert(ctx, int64(0))
		return out, err
	}
	p := int64(math.Pow10(int(-d)))
	out, _, err := t.Convert(ctx, n-n%p)
	return out, err
}

// truncDouble is MariaDB's my_double_round with truncate: toward zero
// at d fraction digits (negative d: integer digits).
func truncDouble(v float64, d int64) float64 { return scaleDouble(v, d, math.Trunc) }

// roundHalfEven is MariaDB's my_double_round (not truncating).
func roundHalfEven(v float64, d int64) float64 { return scaleDouble(v, d, math.RoundToEven) }

// scaleDouble applies to to v at d fraction digits (negative d: integer
// digits), as my_double_round does. A negative number that comes to zero
// is 0, not -0: MariaDB prints ROUND(-0.001e0, 2) as 0.00 everywhere,
// text included.
func scaleDouble(v float64, d int64, to func(float64) float64) float64 {
	p := math.Pow(10, math.Abs(float64(d)))
	var r float64
	switch {
	case d < 0 && math.IsInf(p, 0):
		return 0
	case d < 0:
		r = to(v/p) * p
	case math.IsInf(v*p, 0):
		return v
	default:
		r = to(v*p) / p
	}
	if r == 0 {
		return 0
	}
	return r
}

// --- dates as text --------------------------------------------------------

// textFunctions read their arguments as text.
var textFunctions = map[string]bool{
	"concat": true, "concat_ws": true, "length": true, "char_length": true, "character_length": true,
	"octet_length": true, "upper": true, "lower": true, "ucase": true, "lcase": true, "left": true,
	"right": true, "substring": true, "substr": true, "mid": true, "replace": true, "lpad": true,
	"rpad": true, "trim": true, "ltrim": true, "rtrim": true, "reverse": true, "substring_index": true,
	"locate": true, "instr": true, "repeat": true, "md5": true, "sha1": true, "sha": true, "sha2": true,
	"hex": true, "insert": true, "crc32": true,
}

// temporalArgsAsText gives string functions, LIKE and CAST(... AS CHAR)
// their date and time arguments as MariaDB prints them: DATETIME(p)
// with all p fraction digits (go-mysql-server drops trailing zeros:
// CONCAT(x, ”) of 08:00:00.500000 was 08:00:00.5).
func temporalArgsAsText(e sql.Expression, child sql.Node) (sql.Expression, bool, error) {
	choice := false // IF, IFNULL, COALESCE: only their dates and times
	switch x := e.(type) {
	case *expression.Like:
	case *expression.Convert:
		if !types.IsText(x.Type()) {
			return e, false, nil
		}
	case *function.Coalesce, *function.IfNull, *function.If:
		// A choice of text among dates and times: the dates as text
		// (COALESCE(TIME(x), '10:00') was ERROR 1105); a choice among
		// dates and NULL is a date (datechoice.go).
		if !types.IsText(x.Type()) || newDateChoice(e) != nil {
			return e, false, nil
		}
		choice = true
	case sql.FunctionExpression:
		if !textFunctions[strings.ToLower(x.FunctionName())] {
			return e, false, nil
		}
	default:
		return e, false, nil
	}
	kids := slices.Clone(e.Children())
	changed := false
	for i, k := range kids {
		if _, cond := e.(*function.If); cond && i == 0 {
			continue
		}
		t := k.Type()
		digits := notFixedDec31
		if types.IsFloat(t) && !choice && readsAsText(e, i) {
			digits = realDecimals(k, child)
		}
		switch {
		case isTemporal(t):
			kids[i], changed = &temporalText{wrapped{k}}, true
		case types.IsTimespan(t):
			kids[i], changed = newTimeAsText(k), true
		case choice || !readsAsText(e, i):
		case digits < notFixedDec31:
			kids[i], changed = newFixedDoubleText(k, digits), true
		case numeric(t) && !isConcat(e):
			kids[i], changed = &numberText{wrapped{k}}, true
		}
	}
	if !changed {
		return e, false, nil
	}
	out, err := e.WithChildren(kids...)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// textArgs are the arguments text functions read as text, by position
// (nil: every one); the others are lengths, counts and positions.
var textArgs = map[string][]int{
	"concat": nil, "concat_ws": nil,
	"upper": {0}, "lower": {0}, "ucase": {0}, "lcase": {0}, "length": {0}, "char_length": {0},
	"character_length": {0}, "octet_length": {0}, "reverse": {0}, "trim": {0}, "ltrim": {0}, "rtrim": {0},
	"md5": {0}, "sha1": {0}, "sha": {0}, "sha2": {0}, "left": {0}, "right": {0}, "substring": {0},
	"substr": {0}, "mid": {0}, "repeat": {0}, "lpad": {0, 2}, "rpad": {0, 2}, "replace": {0, 1, 2},
	"substring_index": {0, 1}, "locate": {0, 1}, "instr": {0, 1},
	"crc32": {0}, // Item_func_crc32 reads val_str: CRC32(1.5) is the CRC of '1.5'
}

// readsAsText: e reads its argument i as text (LIKE and CAST(x AS CHAR)
// every one).
func readsAsText(e sql.Expression, i int) bool {
	f, ok := e.(sql.FunctionExpression)
	if !ok {
		return true
	}
	pos, ok := textArgs[strings.ToLower(f.FunctionName())]
	return ok && (pos == nil || slices.Contains(pos, i))
}

// isConcat: go-mysql-server's CONCAT and CONCAT_WS print numbers as
// MariaDB does already.
func isConcat(e sql.Expression) bool {
	f, ok := e.(sql.FunctionExpression)
	return ok && (strings.EqualFold(f.FunctionName(), "concat") || strings.EqualFold(f.FunctionName(), "concat_ws"))
}

// numberText is a number read as text, as MariaDB prints it (val_str): a
// DECIMAL with its scale's digits, a DOUBLE in its shortest form.
// go-mysql-server's LEFT, RIGHT, SUBSTRING, LOCATE and INSTR failed on a
// number ("invalid type: int64"), REVERSE gave the number back (1000 for
// '0001') and UPPER typed it a number.
type numberText struct{ wrapped }

var _ sql.Expression = (*numberText)(nil)

func (t *numberText) Type() sql.Type { return types.LongText }

func (t *numberText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(t, c, func(c sql.Expression) sql.Expression { return &numberText{wrapped{c}} })
}

func (t *numberText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	switch x := v.(type) {
	case float64:
		return string(doubleText(x, 64)), nil
	case float32:
		return string(doubleText(float64(x), 32)), nil
	case decimal.Decimal:
		if dt, ok := t.child.Type().(sql.DecimalType); ok {
			return x.StringFixed(int32(dt.Scale())), nil
		}
	}
	s, _, err := types.LongText.Convert(ctx, v)
	return s, err
}

// temporalText is a date or time value as MariaDB prints it.
type temporalText struct{ wrapped }

// fixedDoubleText is a DOUBLE with fixed decimals (realdecimals.go: ROUND
// or TRUNCATE to a constant number of digits, PI(), arithmetic of them)
// read as text, with those digits as MariaDB prints it (String::set_real
// with the item's decimals): CONCAT(ROUND(x, 1), '%') of 30 is 30.0%;
// go-mysql-server printed 30%.
type fixedDoubleText struct {
	wrapped
	digits int
	length uint32 // MariaDB's max_length of the DOUBLE
}

var _ sql.Expression = (*fixedDoubleText)(nil)

// newFixedDoubleText reads e, with d fixed decimals, as text.
func newFixedDoubleText(e sql.Expression, d int) *fixedDoubleText {
	t := &fixedDoubleText{wrapped: wrapped{e}, digits: d, length: floatLength(d)}
	if m := exprMeta(unalias(e), nil, false); m != nil {
		t.length = m.length
	}
	return t
}

func (t *fixedDoubleText) Type() sql.Type {
	return types.MustCreateStringWithDefaults(sqltypes.VarChar, int64(t.length))
}

func (t *fixedDoubleText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(t, c, func(c sql.Expression) sql.Expression {
		return &fixedDoubleText{wrapped: wrapped{c}, digits: t.digits, length: t.length}
	})
}

func (t *fixedDoubleText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	return string(fixedDouble(doubleValue(v), t.digits)), nil
}

var _ sql.Expression = (*temporalText)(nil)

func (t *temporalText) Type() sql.Type {
	return types.MustCreateStringWithDefaults(sqltypes.VarChar, int64(datetimeLength(t.child.Type())))
}

func (t *temporalText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(t, c, func(c sql.Expression) sql.Expression { return &temporalText{wrapped{c}} })
}

func (t *temporalText) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := t.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	tv, ok := v.(time.Time)
	if !ok {
		s, _, err := types.LongText.Convert(ctx, v)
		return s, err
	}
	typ := t.child.Type()
	if typ.Type() == types.Date.Type() {
		return tv.Format("2006-01-02"), nil
	}
	const layout = "2006-01-02 15:04:05.000000"
	p := 0
	if dt, ok := typ.(sql.DatetimeType); ok {
		p = dt.Precision()
	}
	if p == 0 {
		return tv.Format(layout[:19]), nil
	}
	return tv.Format(layout[:20+p]), nil
}
