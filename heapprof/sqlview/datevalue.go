package sqlview

// A date made of text (CAST(x AS DATE), DATE(x), YEAR(x), x + INTERVAL
// ...) reads the text as MariaDB does too (datetext.go): dateValueRule
// gives the date arguments of those functions that are text a dateValue,
// which hands the function the date in the one form go-mysql-server's
// layouts read exactly ('2026-11-20' or '2026-11-20 09:00:00[.ffffff]'),
// or NULL with MariaDB's warning 1292 for text that is no date. The
// argument keeps its text type, so the function's own type is what it
// was (but for UNIX_TIMESTAMP, which go-mysql-server types by its
// argument's text). The same rule makes HOUR, MINUTE, SECOND and
// MICROSECOND of text or a TIME a timeField (timetext.go), TIMESTAMPDIFF,
// DATEDIFF and TO_DAYS a dayCount (datediff.go), CONVERT_TZ a convertTZ
// (timezone.go), and guards the functions that fail on a NULL date
// (nullDate).

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// ruleDateValue is dateValueRule's id.
const ruleDateValue analyzer.RuleId = 100117

// dateArgs are the arguments of each function that MariaDB reads as a
// date, by function name.
var dateArgs = map[string][]int{
	"date": {0}, "timestamp": {0}, "year": {0}, "month": {0}, "day": {0}, "dayofmonth": {0}, "dayofweek": {0},
	"dayofyear": {0}, "weekday": {0}, "quarter": {0},
	"last_day": {0}, "dayname": {0}, "monthname": {0},
}

// dateValue is text as a date's canonical text, with at most digits
// fraction digits: CAST(x AS DATETIME(n)) cuts them as MariaDB does,
// where go-mysql-server rounds.
type dateValue struct {
	wrapped
	digits int
}

var _ sql.Expression = (*dateValue)(nil)

func (d *dateValue) Type() sql.Type { return d.child.Type() }

func (d *dateValue) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, d.child)
}

func (d *dateValue) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := d.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if v, err = sql.UnwrapAny(ctx, v); err != nil {
		return nil, err
	}
	if b, ok := v.([]byte); ok {
		v = string(b)
	}
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	return dateValueOf(ctx, s, d.digits)
}

func (d *dateValue) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(d, c, func(c sql.Expression) sql.Expression { return &dateValue{wrapped: wrapped{c}, digits: d.digits} })
}

// dateValueOf is s read as a date value: its canonical text, or NULL
// with warning 1292. A date with a zero month or day (0000-00-00 too),
// which MariaDB keeps as it is, has no go-mysql-server value (its zero
// date is 0000-01-01 to its functions: MONTH('0000-00-00') was 1, 0 on
// MariaDB): ERROR 1235 says so rather than answering another date.
func dateValueOf(ctx *sql.Context, s string, digits int) (any, error) {
	d := readDateText(s)
	if !d.read || d.badDay {
		ctx.Warn(erWarnDatetime, "Incorrect datetime value: '%s'", warnedText(s))
		return nil, nil
	}
	if d.month == 0 || d.day == 0 {
		return nil, errUnsupported(fmt.Sprintf("dates with a zero month or day ('%s' is %04d-%02d-%02d on MariaDB); write a whole date", warnedText(s), d.year, d.month, d.day))
	}
	warnCompared(ctx, s, d)
	if !d.datetime {
		return fmt.Sprintf("%04d-%02d-%02d", d.year, d.month, d.day), nil
	}
	out := fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", d.year, d.month, d.day, d.hour, d.minute, d.second)
	if n := min(d.fracDigits, digits); n > 0 {
		out += fmt.Sprintf(".%06d", d.micro)[:1+n]
	}
	return out, nil
}

// dateValueRule is the rule; CONVERT_TZ finds its zones in zones.
func dateValueRule(zones *zoneDB) analyzer.RuleFunc {
	return func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
		return planExprs(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			return dateValueOp(e, zones)
		})
	}
}

// dateValueOp wraps the text date arguments of e.
func dateValueOp(e sql.Expression, zones *zoneDB) (sql.Expression, transform.TreeIdentity, error) {
	var args []int
	digits := maxFractionDigits
	switch x := e.(type) {
	case *expression.Convert:
		if dt, ok := x.Type().(sql.DatetimeType); ok && types.IsTime(dt) {
			args, digits = []int{0}, dt.Precision()
		}
		if types.IsTimespan(x.Type()) {
			return &timeCast{conv: x, digits: timePrecision(x)}, transform.NewTree, nil
		}
	case *dateOffset:
		args = []int{0}
	case *function.ConvertTz:
		return newConvertTZ(x, zones), transform.NewTree, nil
	case *function.FromDays:
		return &fromDays{answersFor{x}}, transform.NewTree, nil
	case *function.DateFormat:
		return &dateFormat{answersFor{x}, false}, transform.NewTree, nil
	case *function.TimeFormat:
		return &dateFormat{answersFor{x}, true}, transform.NewTree, nil
	case *function.UnixTimestamp:
		if kids := x.Children(); len(kids) == 1 {
			var n sql.Expression = &unixTimestamp{answersFor{x}, zones}
			// go-mysql-server types UNIX_TIMESTAMP by its argument's
			// value, BIGINT when it is NULL; MariaDB's is DECIMAL with 6
			// digits for text that is no date.
			if text, ok := constText(kids[0]); ok {
				if d := readDateText(text); !d.read || d.badDay {
					n = &typedAs{Expression: n, typ: types.MustCreateDecimalType(19, maxFractionDigits)}
				}
			}
			return n, transform.NewTree, nil
		}
	case sql.FunctionExpression:
		name := strings.ToLower(x.FunctionName())
		if kids := e.Children(); timeFields[name] != nil && len(kids) == 1 && (types.IsText(kids[0].Type()) || types.IsTimespan(kids[0].Type())) {
			return &timeField{wrapped: wrapped{kids[0]}, name: name}, transform.NewTree, nil
		}
		if kids := e.Children(); name == "timediff" && len(kids) == 2 && timeDiffable(kids[0]) && timeDiffable(kids[1]) {
			if _, done := e.(*timeDiff); !done {
				return newTimeDiff(kids[0], kids[1]), transform.NewTree, nil
			}
		}
		if c := newDayCount(e); c != nil {
			return c, transform.NewTree, nil
		}
		if w := newWeekOf(e); w != nil {
			return w, transform.NewTree, nil
		}
		args = dateArgs[name]
	}
	kids := e.Children()
	var out []sql.Expression
	for _, i := range args {
		if i >= len(kids) || !types.IsText(kids[i].Type()) {
			continue
		}
		if _, done := kids[i].(*dateValue); done {
			continue
		}
		if out == nil {
			out = slices.Clone(kids)
		}
		out[i] = &dateValue{wrapped: wrapped{kids[i]}, digits: digits}
	}
	if f, ok := e.(sql.FunctionExpression); ok && nullDateFails[strings.ToLower(f.FunctionName())] {
		if out == nil {
			out = kids
		}
		n, err := e.WithChildren(out...)
		if err != nil {
			return nil, transform.SameTree, fmt.Errorf("date arguments of %T: %w", e, err)
		}
		return &nullDate{fn: n}, transform.NewTree, nil
	}
	if out == nil {
		return e, transform.SameTree, nil
	}
	n, err := e.WithChildren(out...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("date arguments of %T: %w", e, err)
	}
	return n, transform.NewTree, nil
}

// nullDateFails are go-mysql-server's functions that fail on a NULL date
// (WEEK: ERROR 1105 "Invalid argument to WEEK: invalid year"; DAYNAME:
// warning 1292 "Incorrect datetime value: '<nil>'") where MariaDB
// answers NULL.
var nullDateFails = map[string]bool{"dayname": true}

// nullDate is fn (a sql.FunctionExpression), NULL when its date is: the
// date is evaluated once and handed to fn as a literal.
type nullDate struct{ fn sql.Expression }

var _ sql.FunctionExpression = (*nullDate)(nil)

// FunctionName is fn's: the column definitions (resultmeta.go) go by it.
func (n *nullDate) FunctionName() string { return n.fn.(sql.FunctionExpression).FunctionName() }
func (n *nullDate) Description() string  { return n.fn.(sql.FunctionExpression).Description() }

func (n *nullDate) Resolved() bool             { return n.fn.Resolved() }
func (n *nullDate) IsNullable() bool           { return true }
func (n *nullDate) Children() []sql.Expression { return n.fn.Children() }
func (n *nullDate) String() string             { return n.fn.String() }
func (n *nullDate) Type() sql.Type             { return n.fn.Type() }

func (n *nullDate) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := n.fn.Children()
	v, err := kids[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	kids = slices.Clone(kids)
	kids[0] = expression.NewLiteral(v, kids[0].Type())
	fn, err := n.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return fn.Eval(ctx, row)
}

func (n *nullDate) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	fn, err := n.fn.WithChildren(c...)
	if err != nil {
		return nil, err
	}
	return &nullDate{fn: fn}, nil
}
