package sqlview

import (
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

// MariaDB compares two numbers as DOUBLEs when either is one, and when
// both carry fixed decimals (realdecimals.go) it counts values closer
// than half a unit of the last of them as equal
// (Arg_comparator::compare_real_fixed, precision 5 / 10^(d+1) for the
// larger decimals d, sql/item_cmpfunc.cc): ROUND(x, 1) * 3 = 214.2 holds
// for 71.4, whose product is 214.20000000000002, and ROUND(x, 1) * 3 >
// 214.2 does not. NULLIF compares so too, and so does IN of one value,
// which MariaDB's parser makes an =. IN of more values compares each
// exactly, as DOUBLEs or as DECIMALs (in_double, in_decimal), where
// go-mysql-server converts x to each value's type first, which rounds:
// flat_pct IN (71.4, 1) held for 71.42857142857143, 1.23 IN (1.2, 2) held.
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
	return nodeExprs(n, func(n sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if sq, ok := e.(*plan.Subquery); ok {
			q, same, err := realCompareNode(sq.Query)
			if err != nil || same == transform.SameTree {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		}
		// The rows an operand's column comes from (realDecimals follows
		// it to the expression computing it).
		child := n
		if kids := n.Children(); len(kids) == 1 {
			child = kids[0]
		}
		if r := realComparison(e, child); r != nil {
			return r, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// realComparison is e compared as MariaDB compares numbers, or nil when
// go-mysql-server's answer is MariaDB's.
func realComparison(e sql.Expression, child sql.Node) sql.Expression {
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual:
		c := x.(expression.Comparer)
		if p, ok := fixedPrecision(child, c.Left(), c.Right()); ok {
			return &fixedCompare{Comparer: c, precision: p}
		}
	case *function.NullIf:
		if p, ok := fixedPrecision(child, x.LeftChild, x.RightChild); ok {
			return &fixedNullIf{NullIf: x, precision: p}
		}
	case *exactNullIf:
		if p, ok := fixedPrecision(child, x.LeftChild, x.RightChild); ok {
			return &fixedNullIf{NullIf: x.NullIf, precision: p}
		}
	case *expression.InTuple:
		return newNumericIn(x, child)
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

// fixedPrecision is compare_real_fixed's tolerance for comparing es
// (false when MariaDB compares them otherwise): numbers compared as
// DOUBLEs, each with fixed decimals.
func fixedPrecision(child sql.Node, es ...sql.Expression) (float64, bool) {
	ts := make([]sql.Type, len(es))
	for i, e := range es {
		ts[i] = e.Type()
	}
	if asReal, _ := numericOperands(ts...); !asReal {
		return 0, false
	}
	d := maxRealDecimals(es, child)
	if d >= notFixedDec31 {
		return 0, false
	}
	return 5 / math.Pow10(d+1), true
}

// realOrder compares a and b as DOUBLEs (MariaDB's val_real), equal
// when closer than precision (0: exactly).
func realOrder(a, b any, precision float64) int {
	x, y := doubleValue(a), doubleValue(b)
	switch {
	case x == y || math.Abs(x-y) < precision:
		return 0
	case x < y:
		return -1
	}
	return 1
}

// fixedCompare is a comparison of numbers with fixed decimals as
// DOUBLEs: compare_real_fixed, compare_e_real_fixed for <=>.
type fixedCompare struct {
	expression.Comparer
	precision float64
}

func (c *fixedCompare) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(c.Comparer, kids, func(x expression.Comparer) sql.Expression {
		return &fixedCompare{Comparer: x, precision: c.precision}
	})
}

// Compare is the operands' order; both must be non-NULL.
func (c *fixedCompare) Compare(ctx *sql.Context, row sql.Row) (int, error) {
	l, r, err := c.operands(ctx, row)
	if err != nil {
		return 0, err
	}
	if l == nil || r == nil {
		return 0, expression.ErrNilOperand.New()
	}
	return realOrder(l, r, c.precision), nil
}

func (c *fixedCompare) operands(ctx *sql.Context, row sql.Row) (any, any, error) {
	l, err := c.Left().Eval(ctx, row)
	if err != nil {
		return nil, nil, err
	}
	r, err := c.Right().Eval(ctx, row)
	return l, r, err
}

func (c *fixedCompare) Eval(ctx *sql.Context, row sql.Row) (any, error) {
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
	o := realOrder(l, r, c.precision)
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

// fixedNullIf is NULLIF(a, b) of numbers with fixed decimals, compared as
// fixedCompare compares them.
type fixedNullIf struct {
	*function.NullIf
	precision float64
}

func (n *fixedNullIf) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return rewrap(n.NullIf, kids, func(x *function.NullIf) sql.Expression {
		return &fixedNullIf{NullIf: x, precision: n.precision}
	})
}

func (n *fixedNullIf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	a, err := n.LeftChild.Eval(ctx, row)
	if err != nil || a == nil {
		return nil, err
	}
	b, err := n.RightChild.Eval(ctx, row)
	if err != nil || b == nil {
		return a, err
	}
	if realOrder(a, b, n.precision) == 0 {
		return nil, nil
	}
	return a, nil
}

// numericIn is x IN (v, ...) of numbers not all integers, compared as
// MariaDB compares them: as DOUBLEs or as DECIMALs, every digit. Its
// children are x and the values, one column each (go-mysql-server's
// validation refuses a tuple under any expression but its own IN).
type numericIn struct {
	args   []sql.Expression // x, then the values
	asReal bool
	// precision is the tolerance of IN of one value, an =
	// (fixedPrecision); 0 otherwise.
	precision float64
}

var _ sql.Expression = (*numericIn)(nil)

// newNumericIn is in as numericIn, nil when it is not one or
// go-mysql-server's answer is MariaDB's (integers only).
func newNumericIn(in *expression.InTuple, child sql.Node) sql.Expression {
	tup, ok := in.Right().(expression.Tuple)
	if !ok || len(tup) == 0 {
		return nil
	}
	args := append([]sql.Expression{in.Left()}, tup...)
	ts := make([]sql.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	asReal, asDecimal := numericOperands(ts...)
	if !asReal && !asDecimal {
		return nil
	}
	n := &numericIn{args: args, asReal: asReal}
	if len(tup) == 1 {
		n.precision, _ = fixedPrecision(child, args...)
	}
	return n
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
	return &numericIn{args: kids, asReal: n.asReal, precision: n.precision}, nil
}

func (n *numericIn) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	l, err := n.args[0].Eval(ctx, row)
	if err != nil || l == nil {
		return nil, err
	}
	sawNull := false
	for _, e := range n.args[1:] {
		v, err := e.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if v == nil {
			sawNull = true
			continue
		}
		same, err := n.equal(ctx, l, v)
		if err != nil {
			return nil, err
		}
		if same {
			return true, nil
		}
	}
	if sawNull {
		return nil, nil
	}
	return false, nil
}

func (n *numericIn) equal(ctx *sql.Context, a, b any) (bool, error) {
	if n.asReal {
		return realOrder(a, b, n.precision) == 0, nil
	}
	x, err := asDecimal(ctx, a)
	if err != nil {
		return false, err
	}
	y, err := asDecimal(ctx, b)
	if err != nil {
		return false, err
	}
	return x.Equal(y), nil
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
