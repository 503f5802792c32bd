package sqlview

// Decimal division as MariaDB computes it (Item_func_div, decimal_div in
// strings/decimal.c). The quotient of exact numbers is a DECIMAL shown
// with div_precision_increment (4) more fraction digits than the
// dividend's, but it is computed, and read by every numeric consumer
// (ROUND, TRUNCATE, + - *, CAST, SUM, AVG, FORMAT, another division),
// with the dividend's and divisor's fraction digits rounded up to whole
// 9-digit words plus the increment, again in whole words, truncated:
// 1000/1048576 shows 0.0010 but is 0.000953674, so
// ROUND(1000/1048576, 6) is 0.000954. Only where MariaDB reads the value
// as text (CONCAT, LIKE, string functions: val_str) or compares it
// (=, <, IN, BETWEEN, CASE x WHEN: Arg_comparator rounds each DECIMAL
// operand to its own scale) is it rounded to the shown digits first.
// go-mysql-server rounds the quotient to the shown digits at once unless
// another arithmetic operator reads it.
//
// divisionRule, after aggTypesRule has typed the columns reading SUM and
// AVG, replaces decimal / by exactDiv, decimal + - * by exactArith
// (go-mysql-server's Arithmetic rounds its result to the shown digits)
// and DIV by exactIntDiv, and gives comparisons, text readers and
// MariaDB's temporary tables (GROUP BY keys, DISTINCT, materialized
// derived tables) the shown value through shownDecimal.

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// ruleDivision is divisionRule's id, apart from guard.go's ids.
const ruleDivision analyzer.RuleId = 100110

// divisionRule rewrites n, its subqueries included (division.go's doc).
func divisionRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return divisionNode(n)
}

func divisionNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	n, same, err := nodeExprs(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		id := transform.SameTree
		if sq, ok := e.(*plan.Subquery); ok {
			q, sameQ, err := divisionNode(sq.Query)
			if err != nil || sameQ == transform.SameTree {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		}
		if x := exactDivision(e); x != nil {
			e, id = x, transform.NewTree
		}
		r, err := roundShown(e)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if r != nil {
			return r, transform.NewTree, nil
		}
		return e, id, nil
	})
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, sameShown, err := transform.NodeWithOpaque(n, shownNode)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, same && sameShown, nil
}

const (
	decimalWordDigits = 9 // DIG_PER_DEC1
	decimalWords      = 9 // DECIMAL_BUFF_LENGTH: a my_decimal's words
	erDivisionByZero  = 1365
)

// ceilWord is n digits rounded up to whole 9-digit words.
func ceilWord(n int) int { return (n + decimalWordDigits - 1) / decimalWordDigits * decimalWordDigits }

// fracDigitsOf is the fraction digits a decimal value carries, at least
// its type's scale (a DECIMAL(10,2) value 1.5 has two, as in MariaDB).
func fracDigitsOf(d decimal.Decimal, t sql.Type) int {
	f := 0
	if e := d.Exponent(); e < 0 {
		f = int(-e)
	}
	if dt, ok := t.(sql.DecimalType); ok {
		f = max(f, int(dt.Scale()))
	}
	return f
}

// mariaDiv is a/b as MariaDB's decimal_div computes it: fa and fb are
// the fraction digits of a and b, incr the digits division adds. The
// quotient has the words of fa and fb plus incr's (less what rounding fa
// and fb up to words already added), truncated toward zero, and carries
// that many fraction digits (its exponent), which a further division
// reads. ok is false for b = 0.
func mariaDiv(a, b decimal.Decimal, fa, fb, incr int) (decimal.Decimal, bool) {
	if b.IsZero() {
		return decimal.Decimal{}, false
	}
	f1, f2 := ceilWord(fa), ceilWord(fb)
	incr = max(0, incr-(f1-fa)-(f2-fb))
	frac := ceilWord(f1 + f2 + incr)
	q := truncQuo(a, b, frac)
	// A my_decimal has 9 words: the integer words come first.
	if ip := len(new(big.Int).Abs(q.Coefficient()).String()) - frac; ip > 0 {
		if words := ceilWord(ip)/decimalWordDigits + frac/decimalWordDigits; words > decimalWords {
			frac = max(0, frac-(words-decimalWords)*decimalWordDigits)
			q = truncQuo(a, b, frac)
		}
	}
	return q, true
}

// truncQuo is a/b truncated toward zero at frac fraction digits, with
// exactly frac of them.
func truncQuo(a, b decimal.Decimal, frac int) decimal.Decimal {
	// a/b = ca/cb * 10^(ea-eb); scaled by 10^frac.
	num := new(big.Int).Set(a.Coefficient())
	den := new(big.Int).Set(b.Coefficient())
	shift := int(a.Exponent()) - int(b.Exponent()) + frac
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(shift))), nil)
	if shift >= 0 {
		num.Mul(num, p)
	} else {
		den.Mul(den, p)
	}
	return decimal.NewFromBigInt(num.Quo(num, den), -int32(frac))
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// exactOperand says whether t is read as an exact number by MariaDB's
// arithmetic (integers, DECIMAL, dates as YYYYMMDDhhmmss.ffffff).
func exactOperand(t sql.Type) bool {
	if types.IsDeferredType(t) || t == types.Null {
		return false
	}
	k, _, _ := argKind(t)
	return k == numExact
}

// exactDiv is x / y of exact numbers: MariaDB's DECIMAL, scale x's + 4,
// precision x's + y's scale + 4; NULL with warning 1365 for y = 0.
type exactDiv struct{ *expression.Div }

var _ sql.Expression = (*exactDiv)(nil)

func (d *exactDiv) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(c), 2)
	}
	return &exactDiv{Div: expression.NewDiv(c[0], c[1])}, nil
}

// Type has the scale MariaDB shows; the precision is go-mysql-server's
// (the widest: the columns reading it were typed before this rule ran,
// and resultmeta.go derives MariaDB's).
func (d *exactDiv) Type() sql.Type {
	_, _, s1 := argKind(d.LeftChild.Type())
	s := min(s1+divPrecisionIncrement, maxDecimalScale)
	return types.MustCreateDecimalType(maxDecimalPrecision, uint8(s))
}

func (d *exactDiv) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ops, null, err := exactOperands(ctx, row, d.LeftChild, d.RightChild)
	if null || err != nil {
		return nil, err
	}
	fr := [2]int{fracDigitsOf(ops[0], d.LeftChild.Type()), fracDigitsOf(ops[1], d.RightChild.Type())}
	q, ok := mariaDiv(ops[0], ops[1], fr[0], fr[1], divPrecisionIncrement)
	if !ok {
		ctx.Warn(erDivisionByZero, "Division by 0")
		return nil, nil
	}
	return q, nil
}

// exactArith is + - * of a DECIMAL operand and another exact number,
// without go-mysql-server's rounding to the shown scale: a sum keeps the
// larger number of fraction digits, a product their sum, as MariaDB's
// decimal_add and decimal_mul do.
type exactArith struct{ *expression.Arithmetic }

func (a *exactArith) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(a.Arithmetic, c, func(x *expression.Arithmetic) sql.Expression { return &exactArith{Arithmetic: x} })
}

func (a *exactArith) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ops, null, err := exactOperands(ctx, row, a.LeftChild, a.RightChild)
	if null || err != nil {
		return nil, err
	}
	switch a.Op {
	case sqlparser.PlusStr:
		return ops[0].Add(ops[1]), nil
	case sqlparser.MinusStr:
		return ops[0].Sub(ops[1]), nil
	case sqlparser.MultStr:
		return ops[0].Mul(ops[1]), nil
	}
	return nil, fmt.Errorf("sqlview: unexpected operator %s", a.Op)
}

// exactMod is x % y (MOD) of exact numbers, one of them a DECIMAL, as
// MariaDB's decimal_mod computes it: the remainder of every digit the
// operands carry, with x's sign, shown with the larger of their scales;
// NULL with warning 1365 for y = 0. go-mysql-server gave it a scale of its
// own: MOD(x / 3, 7) printed 2 where MariaDB prints 2.3333.
type exactMod struct{ *expression.Mod }

var _ sql.Expression = (*exactMod)(nil)

func (m *exactMod) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(m, len(c), 2)
	}
	return &exactMod{Mod: expression.NewMod(c[0], c[1])}, nil
}

// Type has the scale MariaDB shows and, as exactDiv's, go-mysql-server's
// widest precision (resultmeta.go derives MariaDB's).
func (m *exactMod) Type() sql.Type {
	_, _, s1 := argKind(m.LeftChild.Type())
	_, _, s2 := argKind(m.RightChild.Type())
	return types.MustCreateDecimalType(maxDecimalPrecision, uint8(min(max(s1, s2), maxDecimalScale)))
}

func (m *exactMod) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ops, null, err := exactOperands(ctx, row, m.LeftChild, m.RightChild)
	if null || err != nil {
		return nil, err
	}
	if ops[1].IsZero() {
		ctx.Warn(erDivisionByZero, "Division by 0")
		return nil, nil
	}
	// QuoRem's remainder has the dividend's sign, as decimal_mod's.
	_, r := ops[0].QuoRem(ops[1], 0)
	return r, nil
}

// shownDecimal is a DECIMAL value rounded half away from zero to its
// type's scale: what MariaDB prints, and what it compares.
type shownDecimal struct{ wrapped }

var _ sql.Expression = (*shownDecimal)(nil)

func (s *shownDecimal) Type() sql.Type { return s.child.Type() }

func (s *shownDecimal) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(s, c, func(c sql.Expression) sql.Expression { return &shownDecimal{wrapped{c}} })
}

func (s *shownDecimal) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := s.child.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	return shown(v, s.child.Type()), nil
}

// shown is a DECIMAL value of type t rounded to t's scale.
func shown(v any, t sql.Type) any {
	d, ok := v.(decimal.Decimal)
	dt, okt := t.(sql.DecimalType)
	if !ok || !okt || d.Exponent() >= -int32(dt.Scale()) {
		return v
	}
	return d.Round(int32(dt.Scale()))
}

// exactDivision is the division rule's rewrite of / and of + - * (nil
// when e stays): exactDiv for exact operands, exactArith where a DECIMAL
// operand may carry more digits than it shows, checkedDiv and
// checkedArith for DOUBLEs (ERROR 1690 on overflow). DOUBLEs are told
// apart here, not in the dialect rule: SUM and AVG are typed only now.
func exactDivision(e sql.Expression) sql.Expression {
	if x := exactChoice(e); x != nil {
		// A choice whose DECIMAL type shows only now that SUM and AVG
		// are typed (CASE WHEN c THEN AVG(x) ELSE 0 END).
		return x
	}
	switch x := e.(type) {
	case *expression.Div:
		if exactOperand(x.LeftChild.Type()) && exactOperand(x.RightChild.Type()) {
			return &exactDiv{Div: x}
		}
		if types.IsFloat(x.Type()) {
			return &checkedDiv{Div: x}
		}
	case *expression.IntDiv:
		l, r := x.LeftChild.Type(), x.RightChild.Type()
		if exactOperand(l) && exactOperand(r) && (types.IsDecimal(l) || types.IsDecimal(r)) {
			return &exactIntDiv{IntDiv: x}
		}
	case *expression.Arithmetic:
		switch x.Op {
		case sqlparser.PlusStr, sqlparser.MinusStr, sqlparser.MultStr:
		default:
			return nil
		}
		l, r := x.LeftChild.Type(), x.RightChild.Type()
		if types.IsDecimal(x.Type()) && exactOperand(l) && exactOperand(r) && (types.IsDecimal(l) || types.IsDecimal(r)) {
			return &exactArith{Arithmetic: x}
		}
		if types.IsFloat(x.Type()) {
			return &checkedArith{Arithmetic: x}
		}
	case *function.NullIf:
		if mayCarryDigits(x.LeftChild) {
			return &exactNullIf{NullIf: x}
		}
	}
	return nil
}

// exactChoice is the rewrite of IF, IFNULL, COALESCE and CASE with a
// DECIMAL result (nil when e stays). The dialect rule makes it, so that
// aggregates over a choice are typed by MariaDB's type of it
// (SUM(IF(c, bytes, 0.5)) has 1 decimal), and the division rule again,
// for choices among SUM and AVG, typed in between.
func exactChoice(e sql.Expression) sql.Expression {
	switch x := e.(type) {
	case *expression.Case:
		if types.IsDecimal(x.Type()) {
			if _, ok := caseDecimalType(x); ok {
				return &exactCase{Case: x}
			}
		}
	case *function.If:
		if decimalChoice(x.Children()[1:]) {
			return &exactIf{If: x}
		}
	case *function.IfNull:
		if decimalChoice(x.Children()) {
			return &exactIfNull{IfNull: x}
		}
		if !types.IsText(x.Type()) && slices.ContainsFunc(x.Children(), func(k sql.Expression) bool { return types.IsText(k.Type()) }) {
			// IFNULL(x, 'none') of a number x is text on MariaDB, as
			// COALESCE is; go-mysql-server typed it as x.
			if c, err := function.NewCoalesce(x.Children()...); err == nil {
				return c
			}
		}
	case *function.Coalesce:
		if decimalChoice(x.Children()) {
			return &exactCoalesce{Coalesce: x}
		}
	}
	return nil
}

// decimalChoice: one of vals is a DECIMAL and MariaDB types a choice among
// them (IFNULL, COALESCE) DECIMAL.
func decimalChoice(vals []sql.Expression) bool {
	if !slices.ContainsFunc(vals, func(v sql.Expression) bool { return types.IsDecimal(v.Type()) }) {
		return false
	}
	_, ok := choiceDecimalType(vals)
	return ok
}

// exactIf is IF with a DECIMAL result: MariaDB's type (the most integer
// and fraction digits of both values), the chosen value with every digit
// and an integer one as that DECIMAL (IF(c, 1.5, 100) is 100.0; go-mysql-
// server typed it by its first value and answered 100).
type exactIf struct{ *function.If }

func (f *exactIf) Type() sql.Type {
	if t, ok := choiceDecimalType(f.Children()[1:]); ok {
		return t
	}
	return f.If.Type()
}

func (f *exactIf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(f.If, kids, func(x *function.If) sql.Expression { return &exactIf{If: x} })
}

func (f *exactIf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := f.If.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	if d, ok := v.(decimal.Decimal); ok {
		return d, nil
	}
	out, _, err := f.Type().Convert(ctx, v)
	return out, err
}

// exactIfNull is IFNULL with a DECIMAL result: MariaDB types it as
// COALESCE (the most integer and fraction digits of both), so
// IFNULL(bytes, 0.5) of 0 is 0.0; go-mysql-server typed it by its first
// argument and answered 0.
type exactIfNull struct{ *function.IfNull }

func (f *exactIfNull) Type() sql.Type {
	if t, ok := choiceDecimalType(f.Children()); ok {
		return t
	}
	return f.IfNull.Type()
}

func (f *exactIfNull) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(f.IfNull, kids, func(x *function.IfNull) sql.Expression { return &exactIfNull{IfNull: x} })
}

func (f *exactIfNull) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	return firstExact(ctx, row, f.Children(), f.Type())
}

// firstExact is the first of args that is not NULL, with every digit a
// DECIMAL carries and any other number as typ.
func firstExact(ctx *sql.Context, row sql.Row, args []sql.Expression, typ sql.Type) (any, error) {
	for _, arg := range args {
		v, err := arg.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		if d, ok := v.(decimal.Decimal); ok {
			return d, nil
		}
		out, _, err := typ.Convert(ctx, v)
		return out, err
	}
	return nil, nil
}

// exactCoalesce is COALESCE with a DECIMAL result passing its argument's
// every digit on, as MariaDB's Item_func_coalesce::decimal_op does, typed
// as MariaDB types it: go-mysql-server converts the value to its own type,
// so COALESCE(1/3)*3 was 0.9999 (MariaDB 1.0000), and types COALESCE(x,
// 0.5) of a BIGINT x DECIMAL(2,1), which x did not fit.
type exactCoalesce struct{ *function.Coalesce }

func (c *exactCoalesce) Type() sql.Type {
	if t, ok := choiceDecimalType(c.Children()); ok {
		return t
	}
	return c.Coalesce.Type()
}

func (c *exactCoalesce) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Coalesce, kids, func(x *function.Coalesce) sql.Expression { return &exactCoalesce{Coalesce: x} })
}

// exactNullIf is NULLIF(a, b) of a DECIMAL a that may carry more digits
// than it shows: a and b compare as shown (MariaDB's Arg_comparator
// rounds each DECIMAL to its scale: NULLIF(2/3, 0.6667) is NULL), but
// the answer is a with every digit (Item_func_nullif::decimal_op), so
// NULLIF(1/3, 0)*3 is 1.0000, not 0.9999.
type exactNullIf struct{ *function.NullIf }

func (n *exactNullIf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(n.NullIf, kids, func(x *function.NullIf) sql.Expression { return &exactNullIf{NullIf: x} })
}

func (n *exactNullIf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	shown := func(e sql.Expression) sql.Expression {
		if mayCarryDigits(e) {
			return &shownDecimal{wrapped{e}}
		}
		return e
	}
	eq, err := expression.NewEquals(shown(n.LeftChild), shown(n.RightChild)).Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if b, ok := eq.(bool); ok && b {
		return nil, nil
	}
	return n.LeftChild.Eval(ctx, row)
}

// exactCase is CASE with DECIMAL results passing the chosen one's every
// digit on (MariaDB's Item_func_case::decimal_op); go-mysql-server's
// converts it to the CASE's type: CASE WHEN 1 THEN 1/3 END * 3 was 0.9999.
type exactCase struct{ *expression.Case }

// caseDecimalType is MariaDB's type of a CASE whose results are
// integers and DECIMALs: the most integer digits and the most fraction
// digits of any result (go-mysql-server's is DECIMAL(65,10) as soon as
// they differ, so CASE WHEN x THEN 1/3 ELSE 0 END showed ten digits).
// ok is false when another type is among them.
func caseDecimalType(c *expression.Case) (sql.DecimalType, bool) {
	vals := make([]sql.Expression, 0, len(c.Branches)+1)
	for _, b := range c.Branches {
		vals = append(vals, b.Value)
	}
	if c.Else != nil {
		vals = append(vals, c.Else)
	}
	return choiceDecimalType(vals)
}

// choiceDecimalType is the DECIMAL type of a choice among vals (CASE,
// IF): ok is false unless they are integers, DECIMALs and NULLs.
func choiceDecimalType(vals []sql.Expression) (sql.DecimalType, bool) {
	var intDigits, scale uint8
	for _, v := range vals {
		switch t := v.Type(); {
		case t == types.Null:
		case types.IsDecimal(t):
			dt := t.(sql.DecimalType)
			intDigits = max(intDigits, dt.Precision()-dt.Scale())
			scale = max(scale, dt.Scale())
		case types.IsInteger(t):
			n, ok := numLength(v, nil)
			if !ok {
				n = intLength(t)
			}
			if n > 0 && !types.IsUnsigned(t) && intLength(t) == n {
				n-- // a type's display length counts the sign
			}
			intDigits = max(intDigits, uint8(min(n, 65)))
		default:
			return nil, false
		}
	}
	scale = min(scale, 30)
	return types.MustCreateDecimalType(min(intDigits+scale, 65), scale), true
}

func (c *exactCase) Type() sql.Type {
	if t, ok := caseDecimalType(c.Case); ok {
		return t
	}
	return c.Case.Type()
}

func (c *exactCase) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Case, kids, func(x *expression.Case) sql.Expression { return &exactCase{Case: x} })
}

func (c *exactCase) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	var chosen sql.Expression
	for _, b := range c.Branches {
		cond := b.Cond
		if c.Expr != nil {
			cond = expression.NewEquals(c.Expr, b.Cond)
		}
		res, err := sql.EvaluateCondition(ctx, cond, row)
		if err != nil {
			return nil, err
		}
		if sql.IsTrue(res) {
			chosen = b.Value
			break
		}
	}
	if chosen == nil {
		chosen = c.Else
	}
	if chosen == nil {
		return nil, nil
	}
	v, err := chosen.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if d, ok := v.(decimal.Decimal); ok {
		return d, nil
	}
	// As go-mysql-server: the value itself where it does not convert.
	if out, _, err := c.Case.Type().Convert(ctx, v); err == nil {
		return out, nil
	}
	return v, nil
}

func (c *exactCoalesce) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	return firstExact(ctx, row, c.Children(), c.Type())
}

// roundShown gives e's DECIMAL children their shown value where e reads
// them as MariaDB's val_str or Arg_comparator do (text functions,
// =, <, <=>, IN); numeric readers keep every digit, and so do BETWEEN
// and CASE x WHEN, which compare unrounded. nil when nothing changes.
func roundShown(e sql.Expression) (sql.Expression, error) {
	from := 0 // the first child that is read as shown
	switch x := e.(type) {
	case *function.If, *function.IfNull, *function.Coalesce:
		if !types.IsText(e.Type()) {
			return nil, nil // a number: the chosen value's every digit passes on
		}
		// A choice answering text prints the DECIMAL it chose as shown
		// (COALESCE(x / 3, 'none') of 1/3 is 0.3333); IF's condition
		// reads every digit (IF(1/100000, 'y', 'n') is y).
		if _, ok := x.(*function.If); ok {
			from = 1
		}
	case *expression.InTuple:
		return inShown(x)
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		if comparesAsReal(e.Children()...) {
			return nil, nil // Arg_comparator's compare_real reads val_real: every digit
		}
	case *plan.InSubquery:
		// x as shown, the subquery's values as they come (a subquery is
		// no value to wrap).
		if comparesAsReal(x.LeftChild, x.RightChild) || !mayCarryDigits(x.LeftChild) {
			return nil, nil
		}
		return x.WithChildren(&shownDecimal{wrapped{x.LeftChild}}, x.RightChild)
	default:
		if readsExact(e) {
			return nil, nil
		}
	}
	kids := e.Children()
	var out []sql.Expression
	for i := from; i < len(kids); i++ {
		if !mayCarryDigits(kids[i]) {
			continue
		}
		if out == nil {
			out = slices.Clone(kids)
		}
		out[i] = &shownDecimal{wrapped{kids[i]}}
	}
	if out == nil {
		return nil, nil
	}
	return e.WithChildren(out...)
}

// inShown: x IN (v) is x = v, which rounds; with more values MariaDB
// compares every digit.
func inShown(in *expression.InTuple) (sql.Expression, error) {
	tup, ok := in.Right().(expression.Tuple)
	if !ok || len(tup) == 0 {
		return nil, nil
	}
	if len(tup) > 1 {
		// go-mysql-server's IN converts the values to x's type, which
		// rounds them: x = v OR x = w ..., the same three-valued answer.
		carry := mayCarryDigits(in.Left())
		for _, v := range tup {
			carry = carry || mayCarryDigits(v)
		}
		if !carry {
			return nil, nil
		}
		var or sql.Expression
		for _, v := range tup {
			eq := expression.NewEquals(in.Left(), v)
			if or == nil {
				or = eq
			} else {
				or = expression.NewOr(or, eq)
			}
		}
		return or, nil
	}
	l, v := in.Left(), tup[0]
	if !mayCarryDigits(l) && !mayCarryDigits(v) || comparesAsReal(l, v) {
		return nil, nil
	}
	if mayCarryDigits(l) {
		l = &shownDecimal{wrapped{l}}
	}
	if mayCarryDigits(v) {
		v = &shownDecimal{wrapped{v}}
	}
	return expression.NewInTuple(l, expression.NewTuple(v)), nil
}

// comparesAsReal: MariaDB compares es as DOUBLEs (one of them is one),
// reading a DECIMAL's every digit.
func comparesAsReal(es ...sql.Expression) bool {
	for _, e := range es {
		if types.IsFloat(e.Type()) {
			return true
		}
	}
	return false
}

// mayCarryDigits: a DECIMAL expression whose values may have more
// fraction digits than its type shows (literals and rounded values do
// not).
func mayCarryDigits(e sql.Expression) bool {
	if !types.IsDecimal(e.Type()) {
		return false
	}
	switch e.(type) {
	case *expression.Literal, *shownDecimal, *decimalRound, expression.Tuple:
		// A tuple of one is typed as its element: IN rounds the
		// elements themselves.
		return false
	}
	return true
}

// readsExact: e reads its DECIMAL arguments' every digit (MariaDB's
// val_decimal, val_real, val_int, val_bool), or passes them on to its
// own reader (IF, COALESCE, aliases).
func readsExact(e sql.Expression) bool {
	switch x := e.(type) {
	case *exactDiv, *exactArith, *expression.Arithmetic, *checkedArith, *expression.Div, *checkedDiv, *expression.IntDiv,
		*expression.Mod, *intMod, *floatMod, *exactMod, *expression.UnaryMinus, *expression.Alias, *asNumber,
		*decimalRound, *extremum, *exactAgg, *shownDecimal, *castInt, *asDouble,
		*expression.And, *expression.Or, *expression.Xor, *expression.Not, *expression.IsTrue, *expression.IsNull,
		*expression.Between, *expression.Case, *exactCase, expression.Tuple, *exactNullIf, *exactIf,
		// Text and a number compare as DOUBLE, from every digit (val_real).
		*numNullIf:
		return true
	case *expression.Convert:
		t := x.Type()
		return types.IsNumber(t)
	case *function.If:
		return true
	case sql.FunctionExpression:
		return exactReaders[strings.ToLower(x.FunctionName())]
	}
	return false
}

// exactReaders are the functions that read a DECIMAL argument as a
// number (or pass it on).
var exactReaders = map[string]bool{
	"abs": true, "sign": true, "sqrt": true, "power": true, "pow": true, "exp": true, "ln": true, "log": true,
	"log2": true, "log10": true, "sin": true, "cos": true, "tan": true, "asin": true, "acos": true, "atan": true,
	"atan2": true, "cot": true, "degrees": true, "radians": true, "floor": true, "ceil": true, "ceiling": true,
	"format": true, "if": true, "ifnull": true, "coalesce": true, "min": true, "max": true,
}

// exactIntDiv is x DIV y with a DECIMAL operand: the exact quotient
// truncated toward zero (go-mysql-server rounds it to two digits first:
// 0.999 DIV 1 was 1), ERROR 1690 beyond BIGINT.
type exactIntDiv struct{ *expression.IntDiv }

func (d *exactIntDiv) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(d, len(c), 2)
	}
	return &exactIntDiv{IntDiv: expression.NewIntDiv(c[0], c[1])}, nil
}

func (d *exactIntDiv) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	ops, null, err := exactOperands(ctx, row, d.LeftChild, d.RightChild)
	if null || err != nil {
		return nil, err
	}
	if ops[1].IsZero() {
		ctx.Warn(erDivisionByZero, "Division by 0")
		return nil, nil
	}
	q := truncQuo(ops[0], ops[1], 0).Coefficient()
	if !q.IsInt64() {
		return nil, outOfRange("BIGINT", fmt.Sprintf("%s DIV %s", d.LeftChild, d.RightChild))
	}
	return q.Int64(), nil
}

// shownNode rounds DECIMAL values where MariaDB stores them in a
// temporary table at their shown digits: GROUP BY keys, DISTINCT rows,
// and the columns of a derived table it materializes (one with GROUP BY,
// DISTINCT, LIMIT, a window or no table; others are merged into the
// outer query and keep every digit).
func shownNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.GroupBy:
		keys, changed := shownExprs(x.GroupByExprs, true, x.Child)
		if changed {
			return plan.NewGroupBy(x.SelectedExprs, keys, x.Child), transform.NewTree, nil
		}
	case *plan.Distinct:
		if c, ok := shownProject(x.Child); ok {
			return plan.NewDistinct(c), transform.NewTree, nil
		}
	case *plan.SubqueryAlias:
		if materialized(x.Child) {
			if c, ok := shownProject(x.Child); ok {
				out, err := x.WithChildren(c)
				return out, transform.NewTree, err
			}
		}
	}
	return n, transform.SameTree, nil
}

// shownExprs wraps the expressions of es, over the rows of child, that
// may carry digits (the child of an alias, keeping its name); a select
// item's DOUBLE with fixed decimals is stored as MariaDB's temporary
// table stores it.
func shownExprs(es []sql.Expression, keys bool, child sql.Node) ([]sql.Expression, bool) {
	var out []sql.Expression
	for i, e := range es {
		var w sql.Expression
		switch a := e.(type) {
		case *expression.Alias:
			var stored sql.Expression
			if mayCarryDigits(a.Child) {
				stored = &shownDecimal{wrapped{a.Child}}
			} else if d := realDecimals(a.Child, child); types.IsFloat(a.Child.Type()) && d < notFixedDec31 {
				stored = &storedDouble{wrapped: wrapped{a.Child}, decimals: d}
			}
			if stored != nil {
				c, err := a.WithChildren(stored)
				if err == nil {
					w = c.(*expression.Alias).WithId(a.Id()).(sql.Expression)
				}
			}
		default:
			// A key is not referred to by its column id, as a projected
			// expression is.
			if _, ok := e.(*expression.GetField); !ok && keys && mayCarryDigits(e) {
				w = &shownDecimal{wrapped{e}}
			}
		}
		if w == nil {
			continue
		}
		if out == nil {
			out = append([]sql.Expression(nil), es...)
		}
		out[i] = w
	}
	return out, out != nil
}

// storedDouble is a DOUBLE with fixed decimals as MariaDB's temporary
// table stores it (Field_double::store, truncate_double): its fraction
// rounded to them, half to even. A materialized derived table's
// ROUND(x, 1) * 3 of 71.4 is 214.2, not 214.20000000000002, read as a
// DOUBLE (v * 1e0) or as text.
type storedDouble struct {
	wrapped
	decimals int
}

var _ sql.Expression = (*storedDouble)(nil)

func (s *storedDouble) Type() sql.Type { return s.child.Type() }

func (s *storedDouble) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(s, c, func(c sql.Expression) sql.Expression {
		return &storedDouble{wrapped: wrapped{c}, decimals: s.decimals}
	})
}

func (s *storedDouble) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := s.child.Eval(ctx, row)
	f, ok := v.(float64)
	if err != nil || !ok || math.IsInf(f, 0) || math.IsNaN(f) {
		return v, err
	}
	scale := math.Pow10(s.decimals)
	whole := math.Floor(f)
	return whole + math.RoundToEven((f-whole)*scale)/scale, nil
}

// shownProject is n with its projection's values rounded, looking
// through the nodes above it.
func shownProject(n sql.Node) (sql.Node, bool) {
	switch x := n.(type) {
	case *plan.Project:
		ps, ok := shownExprs(x.Projections, false, x.Child)
		if !ok {
			return n, false
		}
		return plan.NewProject(ps, x.Child), true
	case *plan.GroupBy:
		ps, ok := shownExprs(x.SelectedExprs, false, x.Child)
		if !ok {
			return n, false
		}
		return plan.NewGroupBy(ps, x.GroupByExprs, x.Child), true
	case *plan.Sort, *plan.Limit, *plan.Offset, *plan.Distinct, *plan.Having, *plan.TopN:
		c, ok := shownProject(x.Children()[0])
		if !ok {
			return n, false
		}
		out, err := n.WithChildren(c)
		return out, err == nil
	}
	return n, false
}

// materialized tells whether MariaDB materializes a derived table whose
// query is n rather than merging it.
func materialized(n sql.Node) bool {
	for {
		switch x := n.(type) {
		case *plan.Project:
			n = x.Child
		case *plan.Sort:
			n = x.Child
		case *plan.Filter:
			n = x.Child
		case *plan.GroupBy, *plan.Window, *plan.Distinct, *plan.Limit, *plan.Offset, *plan.TopN, *plan.Having, *plan.SetOp:
			return true
		case *plan.ResolvedTable:
			return plan.IsDualTable(x.Table)
		default:
			return false
		}
	}
}

// exactOperands evaluates the two operands of an exact arithmetic
// operator as decimals; null when either is NULL.
func exactOperands(ctx *sql.Context, row sql.Row, left, right sql.Expression) (ops [2]decimal.Decimal, null bool, err error) {
	for i, e := range [2]sql.Expression{left, right} {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return ops, v == nil, err
		}
		if ops[i], err = exactValue(ctx, e.Type(), v); err != nil {
			return ops, false, err
		}
	}
	return ops, false, nil
}
