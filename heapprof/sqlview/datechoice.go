package sqlview

// A choice among dates (IF, IFNULL, COALESCE, CASE; GREATEST, LEAST) has
// MariaDB's type (Type_handler_hybrid_field_type::aggregate_for_result and
// aggregate_for_min_max, sql/sql_type.cc): DATE when every value is a
// DATE, else a DATETIME with the most fraction digits; NULL takes no
// part. go-mysql-server typed such a choice by its first value or as
// text: IFNULL(DATE(x), taken_at) was a DATE (2026-11-20, MariaDB
// 2026-11-20 00:00:00.000000), IF(c, DATE(x), NULL) a DATETIME,
// COALESCE(NULL, DATE(x)) text. GREATEST and LEAST of a date and text
// compare them as dates, the text read as MariaDB reads it (datetext.go),
// and answer the type's value: LEAST(DATE(x), '2026-11-21') was 0.

import (
	"fmt"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// dateChoice is a choice among dates, its values in the choice's type.
type dateChoice struct {
	wrapped
	typ sql.Type
}

var _ sql.Expression = (*dateChoice)(nil)

// newDateChoice is e with MariaDB's type when e chooses among dates
// (nil when e stays as it is).
func newDateChoice(e sql.Expression) sql.Expression {
	vals, ok := choiceValues(e)
	if !ok {
		return nil
	}
	typ, ok := dateChoiceType(vals, false)
	if !ok || typ.Equals(e.Type()) {
		return nil
	}
	return &dateChoice{wrapped: wrapped{e}, typ: typ}
}

// choiceValues are the values IF, IFNULL, COALESCE or CASE chooses
// among; false for other expressions.
func choiceValues(e sql.Expression) ([]sql.Expression, bool) {
	switch x := e.(type) {
	case *function.If:
		return x.Children()[1:], true
	case *function.IfNull, *function.Coalesce:
		return x.Children(), true
	case *expression.Case:
		var vals []sql.Expression
		for _, b := range x.Branches {
			vals = append(vals, b.Value)
		}
		if x.Else != nil {
			vals = append(vals, x.Else)
		}
		return vals, true
	}
	return nil, false
}

// dateChoiceType is the type of a choice among vals when they are dates
// (and NULL; with text too when text is true, as GREATEST and LEAST take
// it): DATE when all are, else DATETIME with the most fraction digits.
func dateChoiceType(vals []sql.Expression, text bool) (sql.Type, bool) {
	dates, datetime, digits := 0, false, 0
	for _, v := range vals {
		t := v.Type()
		switch {
		case t == types.Null:
		case types.IsTime(t):
			dates++
			if t.Type() != types.Date.Type() {
				datetime = true
				if dt, ok := t.(sql.DatetimeType); ok {
					digits = max(digits, dt.Precision())
				}
			}
		case text && types.IsText(t):
		default:
			return nil, false
		}
	}
	if dates == 0 {
		return nil, false
	}
	if !datetime {
		return types.Date, true
	}
	return datetimeType(digits), true
}

func (c *dateChoice) Type() sql.Type { return c.typ }

func (c *dateChoice) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	out, _, err := c.typ.Convert(ctx, v)
	if err != nil {
		return nil, fmt.Errorf("%s as %s: %w", c.child, c.typ, err)
	}
	return out, nil
}

func (c *dateChoice) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return withChild(c, kids, func(k sql.Expression) sql.Expression { return &dateChoice{wrapped: wrapped{k}, typ: c.typ} })
}

// dateExtremum is GREATEST (or LEAST) of args as dates of type typ: each
// argument made a value of typ (text read as MariaDB reads a date), NULL
// when one is NULL or no date.
func dateExtremum(ctx *sql.Context, row sql.Row, args []sql.Expression, typ sql.Type, greatest bool) (any, error) {
	dateOnly := typ.Type() == types.Date.Type()
	var best dateText
	for i, a := range args {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		d, err := comparedDate(ctx, v)
		if err != nil {
			return nil, err
		}
		if dateOnly {
			d.hour, d.minute, d.second, d.micro = 0, 0, 0, 0
		}
		if i == 0 || greatest && d.packed() > best.packed() || !greatest && d.packed() < best.packed() {
			best = d
		}
	}
	if best.packed() == 0 {
		return zeroDate, nil
	}
	if best.month == 0 || best.day == 0 {
		return nil, errUnsupported("dates with a zero month or day as GREATEST's or LEAST's answer; write a whole date")
	}
	t := time.Date(best.year, time.Month(best.month), best.day, best.hour, best.minute, best.second, best.micro*1000, time.UTC)
	out, _, err := typ.Convert(ctx, t)
	return out, err
}

// comparedDate is v read as a date is compared with one (a comparison's
// operand, GREATEST's and LEAST's arguments): text that is no date is the
// zero date, with MariaDB's warning.
func comparedDate(ctx *sql.Context, v any) (dateText, error) {
	v, err := sql.UnwrapAny(ctx, v)
	if err != nil {
		return dateText{}, err
	}
	switch x := v.(type) {
	case []byte:
		v = string(x)
	case time.Time:
		if x.Equal(zeroDate) {
			return dateText{read: true}, nil
		}
	}
	if s, ok := v.(string); ok {
		d := readDateText(s)
		warnCompared(ctx, s, d)
		if !d.read {
			return dateText{read: true}, nil
		}
		return d, nil
	}
	d, ok, err := datetimeArg(ctx, v)
	if err != nil || !ok {
		return dateText{read: true}, err
	}
	return d, nil
}
