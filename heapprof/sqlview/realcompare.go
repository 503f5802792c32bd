package sqlview

import (
	"fmt"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// MariaDB compares two numbers as DOUBLEs when either is one, as
// DECIMALs when either is one and neither a DOUBLE, every digit of both
// (Arg_comparator, sql/item_cmpfunc.cc). go-mysql-server converts both
// to the DECIMAL operand's type and compares in it, which rounds the
// other to that type's scale: CAST(x AS DECIMAL(10,3)) = 0.0001 held for
// 0, and = x for every x. Where both DOUBLEs carry fixed decimals
// (realdecimals.go) MariaDB counts values closer than half a unit of the
// last of them as equal (compare_real_fixed, precision 5 / 10^(d+1) for
// the larger decimals d): ROUND(x, 1) * 3 = 214.2 holds for 71.4, whose
// product is 214.20000000000002, and ROUND(x, 1) * 3 > 214.2 does not.
// NULLIF compares so too, and so does IN of one value, which MariaDB's
// parser makes an =; BETWEEN, CASE x WHEN and IN of more values compare
// exactly (Item_func_between, cmp_items). IN compares x with each value
// in the pair's own order, where go-mysql-server converted x to each
// value's type first: flat_pct IN (71.4, 1) held for 71.42857142857143.
// Checked against Debian 12's MariaDB 10.11 by
// TestRealComparisonsMatchMariaDB.

// ruleRealCompare is realCompareRule's id, apart from guard.go's ids.
const ruleRealCompare analyzer.RuleId = 100114

// realCompareRule runs after the division rule, once every operand has
// the type and the wrappers realDecimals reads.
func realCompareRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return realCompareNode(n)
}

func realCompareNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return planExprs(n, func(n sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if r := realComparison(e, rowsOf(n)); r != nil {
			return r, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// rowsOf is the node whose rows n's expressions read (realDecimals
// follows a column to the expression computing it there): n's child, or
// n itself when it joins several.
func rowsOf(n sql.Node) sql.Node {
	if kids := n.Children(); len(kids) == 1 {
		return kids[0]
	}
	return n
}

// realComparison is e compared as MariaDB compares numbers, or nil when
// go-mysql-server's answer is MariaDB's.
func realComparison(e sql.Expression, child sql.Node) sql.Expression {
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		if o, ok := comparing(child, c.Left(), c.Right()); ok {
			return newNumericCompare(c, o)
		}
	case *function.NullIf:
		if o, ok := comparing(child, x.LeftChild, x.RightChild); ok {
			return newNumericNullIf(x, o)
		}
	case *exactNullIf:
		if o, ok := comparing(child, x.LeftChild, x.RightChild); ok {
			return newNumericNullIf(x.NullIf, o)
		}
	case *expression.InTuple:
		return newNumericIn(x, child)
	case *expression.Case:
		if c := simpleCaseCompared(x, child); c != nil {
			return c
		}
	case *exactCase:
		if c := simpleCaseCompared(x.Case, child); c != nil {
			return &exactCase{Case: c}
		}
	case *plan.InSubquery:
		sq, ok := x.RightChild.(*plan.Subquery)
		if !ok {
			break
		}
		if o, ok := comparing(child, x.LeftChild, sq); ok {
			o.precision = 0
			return &numericInSubquery{left: x.LeftChild, query: sq, numericOrder: o}
		}
	case *expression.Between:
		if o, ok := comparing(child, x.Val, x.Lower, x.Upper); ok {
			o.precision = 0 // Item_func_between compares exactly
			return &numericBetween{Between: x, numericOrder: o}
		}
	}
	return nil
}

// numericOperands: every one of ts is a number or NULL, and asReal says
// MariaDB compares them as DOUBLEs (one is a DOUBLE), asDecimal as
// DECIMALs (one is a DECIMAL, none a DOUBLE).
func numericOperands(ts ...sql.Type) (asReal, asDecimal bool) {
	for _, t := range ts {
		switch {
		case t == types.Null, types.IsInteger(t):
		case types.IsFloat(t):
			asReal = true
		case types.IsDecimal(t):
			asDecimal = true
		default:
			return false, false
		}
	}
	return asReal, asDecimal && !asReal
}

// numericOrder is how MariaDB orders two numbers: as DOUBLEs, equal when
// closer than precision (0: exactly), or as DECIMALs.
type numericOrder struct {
	asReal    bool
	precision float64
}

// comparing is the order MariaDB compares es in; false when
// go-mysql-server's is the same: they are not all numbers, or they are
// integers and DOUBLEs without fixed decimals (compared as DOUBLEs there
// too, and an indexed column stays a point lookup: node_id = '10002').
func comparing(child sql.Node, es ...sql.Expression) (numericOrder, bool) {
	ts := make([]sql.Type, len(es))
	decimals := false
	for i, e := range es {
		ts[i] = e.Type()
		decimals = decimals || types.IsDecimal(ts[i])
	}
	asReal, asDecimal := numericOperands(ts...)
	if !asReal {
		return numericOrder{}, asDecimal
	}
	o := numericOrder{asReal: true}
	if d := maxRealDecimals(es, child); d < notFixedDec31 {
		o.precision = 5 / math.Pow10(d+1) // compare_real_fixed
	}
	return o, decimals || o.precision > 0
}

// order compares a and b, both non-NULL.
func (o numericOrder) order(ctx *sql.Context, a, b any) (int, error) {
	if !o.asReal {
		x, err := asDecimal(ctx, a)
		if err != nil {
			return 0, err
		}
		y, err := asDecimal(ctx, b)
		if err != nil {
			return 0, err
		}
		return x.Cmp(y), nil
	}
	x, y := doubleValue(a), doubleValue(b)
	switch {
	case x == y || math.Abs(x-y) < o.precision:
		return 0, nil
	case x < y:
		return -1, nil
	}
	return 1, nil
}

// operand is an operand of a numeric comparison; a literal's value is
// converted to the order's kind once, not for every row.
type operand struct {
	sql.Expression
	value any // the literal's value, converted; nil for other expressions
}

func (o numericOrder) operand(e sql.Expression) operand {
	lit, ok := e.(*expression.Literal)
	if !ok || lit.Value() == nil {
		return operand{Expression: e}
	}
	if o.asReal {
		return operand{Expression: e, value: doubleValue(lit.Value())}
	}
	if d, err := asDecimal(sql.NewEmptyContext(), lit.Value()); err == nil {
		return operand{Expression: e, value: d}
	}
	return operand{Expression: e}
}

func (p operand) eval(ctx *sql.Context, row sql.Row) (any, error) {
	if p.value != nil {
		return p.value, nil
	}
	return p.Eval(ctx, row)
}

// numericCompare is a comparison of numbers in MariaDB's order.
type numericCompare struct {
	expression.Comparer
	numericOrder
	l, r operand
}

func newNumericCompare(c expression.Comparer, o numericOrder) *numericCompare {
	return &numericCompare{Comparer: c, numericOrder: o, l: o.operand(c.Left()), r: o.operand(c.Right())}
}

func (c *numericCompare) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Comparer, kids, func(x expression.Comparer) sql.Expression {
		return newNumericCompare(x, c.numericOrder)
	})
}

// Compare is the operands' order; both must be non-NULL.
func (c *numericCompare) Compare(ctx *sql.Context, row sql.Row) (int, error) {
	l, r, err := c.operands(ctx, row)
	if err != nil {
		return 0, err
	}
	if l == nil || r == nil {
		return 0, expression.ErrNilOperand.New()
	}
	return c.order(ctx, l, r)
}

func (c *numericCompare) operands(ctx *sql.Context, row sql.Row) (any, any, error) {
	l, err := c.l.eval(ctx, row)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.r.eval(ctx, row)
	return l, r, err
}

func (c *numericCompare) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, r, err := c.operands(ctx, row)
	if err != nil {
		return nil, err
	}
	_, nullSafe := c.Comparer.(*expression.NullSafeEquals)
	if l == nil || r == nil {
		if nullSafe {
			return l == nil && r == nil, nil
		}
		return nil, nil
	}
	o, err := c.order(ctx, l, r)
	if err != nil {
		return nil, err
	}
	switch c.Comparer.(type) {
	case *expression.LessThan:
		return o < 0, nil
	case *expression.LessThanOrEqual:
		return o <= 0, nil
	case *expression.GreaterThan:
		return o > 0, nil
	case *expression.GreaterThanOrEqual:
		return o >= 0, nil
	}
	return o == 0, nil
}

// numericNullIf is NULLIF(a, b) of numbers compared in MariaDB's order;
// as DECIMALs each is compared as shown (roundShown), as = reads it.
type numericNullIf struct {
	*function.NullIf
	numericOrder
	a, b sql.Expression // the operands as compared
}

func newNumericNullIf(x *function.NullIf, o numericOrder) *numericNullIf {
	n := &numericNullIf{NullIf: x, numericOrder: o, a: x.LeftChild, b: x.RightChild}
	if !o.asReal {
		if mayCarryDigits(n.a) {
			n.a = &shownDecimal{wrapped{n.a}}
		}
		if mayCarryDigits(n.b) {
			n.b = &shownDecimal{wrapped{n.b}}
		}
	}
	return n
}

func (n *numericNullIf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(n.NullIf, kids, func(x *function.NullIf) sql.Expression {
		return newNumericNullIf(x, n.numericOrder)
	})
}

func (n *numericNullIf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	a, err := n.a.Eval(ctx, row)
	if err != nil || a == nil {
		return nil, err
	}
	b, err := n.b.Eval(ctx, row)
	if err != nil || b == nil {
		return n.LeftChild.Eval(ctx, row)
	}
	o, err := n.order(ctx, a, b)
	if err != nil || o == 0 {
		return nil, err
	}
	if n.a == n.LeftChild {
		return a, nil
	}
	return n.LeftChild.Eval(ctx, row)
}

// simpleCaseCompared is CASE x WHEN v THEN ... as the searched CASE WHEN
// x = v THEN ... (go-mysql-server's own reading of it) with each = in
// MariaDB's order of the pair, exact (Item_func_case_simple's cmp_items
// have no tolerance); nil when no pair needs it.
func simpleCaseCompared(c *expression.Case, child sql.Node) *expression.Case {
	if c.Expr == nil {
		return nil
	}
	out := &expression.Case{Else: c.Else}
	changed := false
	for _, b := range c.Branches {
		var cond sql.Expression = expression.NewEquals(c.Expr, b.Cond)
		if o, ok := comparing(child, c.Expr, b.Cond); ok {
			o.precision = 0
			cond, changed = newNumericCompare(cond.(expression.Comparer), o), true
		}
		out.Branches = append(out.Branches, expression.CaseBranch{Cond: cond, Value: b.Value})
	}
	if !changed {
		return nil
	}
	return out
}

// numericInSubquery is x IN (SELECT y ...) of numbers in MariaDB's
// order: go-mysql-server's rounded x to y's scale, or joined on its own
// comparison.
type numericInSubquery struct {
	left  sql.Expression
	query *plan.Subquery
	numericOrder
}

var _ sql.Expression = (*numericInSubquery)(nil)

func (n *numericInSubquery) Resolved() bool   { return n.left.Resolved() && n.query.Resolved() }
func (n *numericInSubquery) IsNullable() bool { return true }
func (n *numericInSubquery) Type() sql.Type   { return types.Boolean }
func (n *numericInSubquery) String() string   { return plan.NewInSubquery(n.left, n.query).String() }
func (n *numericInSubquery) Children() []sql.Expression {
	return []sql.Expression{n.left, n.query}
}

func (n *numericInSubquery) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(kids), 2)
	}
	q, ok := kids[1].(*plan.Subquery)
	if !ok {
		return nil, fmt.Errorf("sqlview: IN wants a subquery, not %T", kids[1])
	}
	return &numericInSubquery{left: kids[0], query: q, numericOrder: n.numericOrder}, nil
}

func (n *numericInSubquery) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := n.left.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	vals, err := n.query.EvalMultiple(ctx, row)
	if err != nil {
		return nil, err
	}
	if len(vals) == 0 {
		return false, nil // NULL IN (no rows) is 0 too
	}
	if l == nil {
		return nil, nil
	}
	return inAnswer(ctx, l, len(vals), func(i int) (any, numericOrder, error) {
		if v := vals[i]; v != nil && !n.asReal {
			return shown(v, n.query.Type()), n.numericOrder, nil // as x = v reads it
		}
		return vals[i], n.numericOrder, nil
	})
}

// inAnswer is x IN (values) in three-valued logic: true at the first
// value equal to x (value(i) gives the i-th and the order to compare it
// in), else NULL when a value was NULL, else false. x is not NULL.
func inAnswer(ctx *sql.Context, x any, n int, value func(i int) (any, numericOrder, error)) (any, error) {
	sawNull := false
	for i := range n {
		v, o, err := value(i)
		if err != nil {
			return nil, err
		}
		if v == nil {
			sawNull = true
			continue
		}
		c, err := o.order(ctx, x, v)
		if err != nil {
			return nil, err
		}
		if c == 0 {
			return true, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return false, nil
}

// numericBetween is x BETWEEN a AND b of numbers in MariaDB's order:
// x >= a AND x <= b.
type numericBetween struct {
	*expression.Between
	numericOrder
}

func (n *numericBetween) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(n.Between, kids, func(x *expression.Between) sql.Expression {
		return &numericBetween{Between: x, numericOrder: n.numericOrder}
	})
}

func (n *numericBetween) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := n.Val.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	// Each bound: 1 within it, 0 beyond, -1 unknown (NULL).
	within := func(bound sql.Expression, want func(int) bool) (int, error) {
		b, err := bound.Eval(ctx, row)
		if err != nil || b == nil {
			return -1, err
		}
		o, err := n.order(ctx, v, b)
		if err != nil || !want(o) {
			return 0, err
		}
		return 1, nil
	}
	lo, err := within(n.Lower, func(o int) bool { return o >= 0 })
	if err != nil {
		return nil, err
	}
	hi, err := within(n.Upper, func(o int) bool { return o <= 0 })
	switch {
	case err != nil:
		return nil, err
	case lo == 0 || hi == 0:
		return false, nil
	case lo < 0 || hi < 0:
		return nil, nil
	}
	return true, nil
}

// numericIn is x IN (v, ...) of numbers not all integers, compared as
// MariaDB compares them: x with each value in the pair's own order, as
// DOUBLEs or as DECIMALs, every digit (Item_func_in's cmp_items). Its
// children are x and the values, one column each (go-mysql-server's
// validation refuses a tuple under any expression but its own IN).
type numericIn struct {
	args []sql.Expression // x, then the values
	// orders[i] compares x with args[i+1]; IN of one value is an =
	// (compare_real_fixed's tolerance included).
	orders []numericOrder
	values []operand // args[1:]
}

func newIn(args []sql.Expression, orders []numericOrder) *numericIn {
	n := &numericIn{args: args, orders: orders, values: make([]operand, len(orders))}
	for i, o := range orders {
		n.values[i] = o.operand(args[i+1])
	}
	return n
}

var _ sql.Expression = (*numericIn)(nil)

// newNumericIn is in as numericIn, nil when it is not one or
// go-mysql-server's answer is MariaDB's.
func newNumericIn(in *expression.InTuple, child sql.Node) sql.Expression {
	tup, ok := in.Right().(expression.Tuple)
	if !ok || len(tup) == 0 {
		return nil
	}
	args := append([]sql.Expression{in.Left()}, tup...)
	o, ok := comparing(child, args...)
	if !ok {
		return nil
	}
	if len(tup) == 1 {
		return newIn(args, []numericOrder{o})
	}
	orders := make([]numericOrder, len(tup))
	for i, v := range tup {
		orders[i].asReal, _ = numericOperands(in.Left().Type(), v.Type())
	}
	return newIn(args, orders)
}

func (n *numericIn) Resolved() bool             { return expression.ExpressionsResolved(n.args...) }
func (n *numericIn) IsNullable() bool           { return true }
func (n *numericIn) Type() sql.Type             { return types.Boolean }
func (n *numericIn) Children() []sql.Expression { return n.args }

func (n *numericIn) String() string {
	return expression.NewInTuple(n.args[0], expression.NewTuple(n.args[1:]...)).String()
}

func (n *numericIn) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != len(n.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(kids), len(n.args))
	}
	return newIn(kids, n.orders), nil
}

func (n *numericIn) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := n.args[0].Eval(ctx, row)
	if err != nil || l == nil {
		return nil, err
	}
	return inAnswer(ctx, l, len(n.values), func(i int) (any, numericOrder, error) {
		v, err := n.values[i].eval(ctx, row)
		return v, n.orders[i], err
	})
}

// asDecimal is an integer's or a DECIMAL's value, every digit.
func asDecimal(ctx *sql.Context, v any) (decimal.Decimal, error) {
	if d, ok := v.(decimal.Decimal); ok {
		return d, nil
	}
	d, _, err := types.InternalDecimalType.Convert(ctx, v)
	if err != nil {
		return decimal.Decimal{}, err
	}
	return d.(decimal.Decimal), nil
}
