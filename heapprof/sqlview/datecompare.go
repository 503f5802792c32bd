package sqlview

// A date compared with text compares as MariaDB compares them: the text
// read by readDateText, both as packed DATETIMEs (a DATE at midnight), so
// a day past the month's end or a zero month or day keeps its place
// between real dates, and text that is no date is the zero date, with
// MariaDB's warning 1292. dateCompareRule runs on the analyzed plan, as
// padSpaceRule does: it gives the operands of =, <=>, <, <=, >, >=, <>
// and BETWEEN (and IN, which dateInRule made =s) one dateCmpType when
// one is a DATE, DATETIME or TIMESTAMP and the others are text or dates;
// each operand then answers its packed value (dateOperand). Text made of
// literals is read once, while planning (datePacked), so its warning
// comes once per statement as on MariaDB; other text is read row by row.
// CASE x WHEN of a date and text is left to go-mysql-server.

import (
	"cmp"
	"context"
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// ruleDateCompare is dateCompareRule's id.
const ruleDateCompare analyzer.RuleId = 100115

// dateCmpType is the type all operands of one date comparison share, so
// go-mysql-server calls its Compare on their packed values.
type dateCmpType struct{ sql.DatetimeType }

func (t *dateCmpType) Promote() sql.Type { return t }

func (t *dateCmpType) Equals(other sql.Type) bool { return other == sql.Type(t) }

func (t *dateCmpType) Convert(_ context.Context, v any) (any, sql.ConvertInRange, error) {
	if _, ok := v.(int64); !ok && v != nil {
		return nil, sql.OutOfRange, fmt.Errorf("date comparison of %T", v)
	}
	return v, sql.InRange, nil
}

func (t *dateCmpType) Compare(_ context.Context, a, b any) (int, error) {
	if hasNulls, res := types.CompareNulls(a, b); hasNulls {
		return res, nil
	}
	x, ok1 := a.(int64)
	y, ok2 := b.(int64)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("date comparison of %T and %T", a, b)
	}
	return cmp.Compare(x, y), nil
}

// dateOperand is one operand of a date comparison: its packed value.
type dateOperand struct {
	wrapped
	typ *dateCmpType
}

var _ sql.Expression = (*dateOperand)(nil)

func (d *dateOperand) Type() sql.Type { return d.typ }

func (d *dateOperand) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := d.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return packedOperand(ctx, v)
}

func (d *dateOperand) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(d, c, func(c sql.Expression) sql.Expression { return &dateOperand{wrapped: wrapped{c}, typ: d.typ} })
}

// packedOperand is v packed: a date's fields, or text read as a date
// (comparedDate, warning as MariaDB does).
func packedOperand(ctx *sql.Context, v any) (any, error) {
	d, err := comparedDate(ctx, v)
	if err != nil {
		return nil, err
	}
	return d.packed(), nil
}

// datePacked is text made of literals, read as a date while planning.
type datePacked struct {
	text   sql.Expression // what the statement wrote, for String
	packed int64
	typ    *dateCmpType
}

var _ sql.Expression = (*datePacked)(nil)

func (d *datePacked) Resolved() bool                          { return true }
func (d *datePacked) IsNullable() bool                        { return false }
func (d *datePacked) Children() []sql.Expression              { return nil }
func (d *datePacked) String() string                          { return d.text.String() }
func (d *datePacked) Type() sql.Type                          { return d.typ }
func (d *datePacked) Eval(*sql.Context, sql.Row) (any, error) { return d.packed, nil }
func (d *datePacked) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(c), 0)
	}
	return d, nil
}

func dateCompareRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return dateCompareNode(ctx, n)
}

func dateCompareNode(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return planExprs(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		return dateCompareOp(ctx, e)
	})
}

// dateCompareOp rebuilds e with date operands when it compares a date
// with text.
func dateCompareOp(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Between:
		ops := e.Children()
		if !datesWithText(ops) {
			return e, transform.SameTree, nil
		}
		out, err := e.WithChildren(dateOperands(ctx, ops)...)
		if err != nil {
			return nil, transform.SameTree, fmt.Errorf("date comparison %T: %w", e, err)
		}
		return out, transform.NewTree, nil
	}
	return e, transform.SameTree, nil
}

// ruleDateIn is dateInRule's id.
const ruleDateIn analyzer.RuleId = 100116

// dateInRule makes x IN (list) of a date and text x = v1 OR x = v2 ...
// before go-mysql-server hashes the list (applyHashIn reads each text as
// its own layouts do, ERROR 1105 for '2026-11-20 09'). Three-valued OR is
// IN's answer; dateCompareRule then compares each pair as MariaDB does.
func dateInRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return dateInNode(n)
}

func dateInNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return planExprs(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if x, ok := e.(*expression.InTuple); ok {
			list, ok := x.Right().(expression.Tuple)
			if !ok || !datesWithText(append([]sql.Expression{x.Left()}, list...)) {
				return e, transform.SameTree, nil
			}
			var or sql.Expression
			for _, v := range list {
				var eq sql.Expression = expression.NewEquals(x.Left(), v)
				if or != nil {
					eq = expression.NewOr(or, eq)
				}
				or = eq
			}
			return or, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// datesWithText is whether ops are dates and text (or NULL), at least one
// of each. A TIME or a number beside a date is left to go-mysql-server.
func datesWithText(ops []sql.Expression) bool {
	var date, text bool
	for _, o := range ops {
		t := o.Type()
		switch {
		case types.IsTime(t):
			date = true
		case types.IsText(t):
			text = true
		case t == types.Null:
		default:
			return false
		}
	}
	return date && text
}

// dateOperands wraps ops in one dateCmpType; text made of literals is
// read now.
func dateOperands(ctx *sql.Context, ops []sql.Expression) []sql.Expression {
	typ := &dateCmpType{DatetimeType: types.DatetimeMaxPrecision}
	out := make([]sql.Expression, len(ops))
	for i, o := range ops {
		out[i] = &dateOperand{wrapped: wrapped{o}, typ: typ}
		if !types.IsText(o.Type()) {
			continue
		}
		if s, ok := constText(o); ok {
			d := readDateText(s)
			warnCompared(ctx, s, d)
			var p int64
			if d.read {
				p = d.packed()
			}
			out[i] = &datePacked{text: o, packed: p, typ: typ}
		}
	}
	return out
}
