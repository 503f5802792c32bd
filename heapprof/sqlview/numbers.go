package sqlview

// Text and dates where MariaDB wants a number. MariaDB compares a string
// with a number as DOUBLE, reading the string's leading number
// ('10.0.0.1:8040' > 0 is true: 10 > 0), and a DATE/DATETIME with a number
// as the number YYYYMMDDhhmmss.ffffff; it does the same for a string in
// arithmetic ('1e3x' + 0 is 1000) and for a string used as a condition
// (WHERE '1x' is true). go-mysql-server parses such strings whole, so
// '10.0.0.1:8040' > 0 is false there and HAVING MIN(node_addr) > 0 drops
// every group. The dialect rule (dialect.go) puts asNumber around the text
// or temporal operand of comparisons, BETWEEN, IN, arithmetic and
// conditions that mix it with numbers; a constant string becomes a DOUBLE
// literal instead, so an indexed column stays bare for index lookups.

import (
	"fmt"
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// asNumber is its child read as a number, as MariaDB does: DOUBLE for
// text (its leading number) and decimals, the exact DECIMAL
// YYYYMMDDhhmmss.ffffff for dates and times.
type asNumber struct{ wrapped }

var _ sql.Expression = (*asNumber)(nil)

func (a *asNumber) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(a, c, func(c sql.Expression) sql.Expression { return &asNumber{wrapped{c}} })
}

func (a *asNumber) exact() bool { return isTemporal(a.child.Type()) }

func (a *asNumber) Type() sql.Type {
	if a.exact() {
		_, p, s := argKind(a.child.Type())
		return types.MustCreateDecimalType(uint8(p), uint8(s))
	}
	return types.Float64
}

func (a *asNumber) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := a.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if a.exact() {
		return exactValue(ctx, a.child.Type(), v)
	}
	return doubleValue(v), nil
}

func isTemporal(t sql.Type) bool {
	return t.Type() == types.Date.Type() || types.IsDatetimeType(t) || types.IsTimestampType(t)
}

// numeric is a number type (booleans included).
func numeric(t sql.Type) bool { return types.IsNumber(t) }

// toNumber is e as MariaDB reads it as a number: a constant string is
// its leading number as a DOUBLE literal, other text and dates asNumber,
// DECIMAL (when compared with text, as DOUBLE) asNumber too; numbers as
// they are.
func toNumber(e sql.Expression) sql.Expression {
	t := e.Type()
	switch {
	case types.IsText(t):
		if lit, ok := e.(*expression.Literal); ok {
			if s, ok := lit.Value().(string); ok {
				// Named as written: an unaliased column keeps its name.
				return expression.NewNamedLiteral(lit.String(), leadingDouble(s), types.Float64)
			}
		}
		return &asNumber{wrapped{e}}
	case isTemporal(t), types.IsDecimal(t):
		return &asNumber{wrapped{e}}
	}
	return e
}

// mixKind says how MariaDB compares values of these types: 't' when text
// meets numbers (all as DOUBLE), 'd' when dates meet numbers (dates as
// numbers), 0 when go-mysql-server's comparison is MariaDB's.
func mixKind(ts ...sql.Type) byte {
	var text, temporal, number bool
	for _, t := range ts {
		switch {
		case types.IsText(t):
			text = true
		case isTemporal(t):
			temporal = true
		case numeric(t):
			number = true
		}
	}
	switch {
	case !number:
		return 0
	case text:
		return 't'
	case temporal:
		return 'd'
	}
	return 0
}

// numbered applies toNumber to each of es as mixKind k wants: with text,
// text and decimals become DOUBLE; with dates, dates become numbers.
func numbered(k byte, es []sql.Expression) []sql.Expression {
	out := make([]sql.Expression, len(es))
	for i, e := range es {
		t := e.Type()
		switch {
		case k == 't' && (types.IsText(t) || types.IsDecimal(t)):
			out[i] = toNumber(e)
		case k == 'd' && isTemporal(t):
			out[i] = toNumber(e)
		default:
			out[i] = e
		}
	}
	return out
}

// numberContext rewrites e when it mixes text or dates with numbers;
// false when e is not such an expression.
func numberContext(e sql.Expression) (sql.Expression, bool, error) {
	switch x := e.(type) {
	case *expression.Equals, *expression.NullSafeEquals, *expression.GreaterThan,
		*expression.GreaterThanOrEqual, *expression.LessThan, *expression.LessThanOrEqual:
		c := x.(expression.Comparer)
		k := mixKind(c.Left().Type(), c.Right().Type())
		if k == 0 {
			return e, false, nil
		}
		n, err := e.WithChildren(numbered(k, []sql.Expression{c.Left(), c.Right()})...)
		return n, err == nil, err
	case *expression.Between:
		k := mixKind(x.Val.Type(), x.Lower.Type(), x.Upper.Type())
		if k == 0 {
			return e, false, nil
		}
		n, err := e.WithChildren(numbered(k, []sql.Expression{x.Val, x.Lower, x.Upper})...)
		return n, err == nil, err
	case *expression.InTuple:
		tup, ok := x.Right().(expression.Tuple)
		if !ok {
			return e, false, nil
		}
		ts := []sql.Type{x.Left().Type()}
		for _, el := range tup {
			ts = append(ts, el.Type())
		}
		k := mixKind(ts...)
		if k == 0 {
			return e, false, nil
		}
		all := numbered(k, append([]sql.Expression{x.Left()}, tup...))
		return expression.NewInTuple(all[0], expression.NewTuple(all[1:]...)), true, nil
	case *expression.Arithmetic, *expression.Div, *expression.IntDiv, *expression.Mod, *expression.UnaryMinus, *function.AbsVal:
		// Text in arithmetic is its leading number (DOUBLE); date
		// arithmetic (x + INTERVAL n unit) is the dialect rule's.
		kids := slices.Clone(e.Children())
		for _, k := range kids {
			if _, ok := k.(*expression.Interval); ok {
				return e, false, nil
			}
		}
		changed := false
		for i, k := range kids {
			if types.IsText(k.Type()) {
				kids[i], changed = toNumber(k), true
			}
		}
		if !changed {
			return e, false, nil
		}
		n, err := e.WithChildren(kids...)
		if mod, ok := n.(*expression.Mod); ok && err == nil {
			return &floatMod{Mod: mod}, true, nil
		}
		return n, err == nil, err
	case *expression.Case:
		if x.Expr != nil {
			// CASE x WHEN v compares x with each v, all as DOUBLE when text
			// meets numbers (as IN does); the THEN values stay as they are.
			ts := []sql.Type{x.Expr.Type()}
			for _, b := range x.Branches {
				ts = append(ts, b.Cond.Type())
			}
			k := mixKind(ts...)
			if k == 0 {
				return e, false, nil
			}
			c := &expression.Case{Expr: numbered(k, []sql.Expression{x.Expr})[0], Else: x.Else}
			for _, b := range x.Branches {
				c.Branches = append(c.Branches, expression.CaseBranch{Cond: numbered(k, []sql.Expression{b.Cond})[0], Value: b.Value})
			}
			return c, true, nil
		}
		return boolOperands(e)
	case *function.NullIf:
		k := mixKind(x.LeftChild.Type(), x.RightChild.Type())
		if k == 0 {
			return e, false, nil
		}
		return newNumNullIf(x, k), true, nil
	case *expression.And, *expression.Or, *expression.Xor, *expression.Not, *function.If, *expression.IsTrue:
		return boolOperands(e)
	}
	return e, false, nil
}

// boolOperands rewrites the text operands of e that are read as
// conditions (isCondition).
func boolOperands(e sql.Expression) (sql.Expression, bool, error) {
	kids := slices.Clone(e.Children())
	changed := false
	for i, k := range kids {
		if !isCondition(e, i) {
			continue
		}
		if c, ok := condition(k); ok {
			kids[i], changed = c, true
		}
	}
	if !changed {
		return e, false, nil
	}
	n, err := e.WithChildren(kids...)
	return n, err == nil, err
}

// numNullIf is NULLIF(a, b) of text and a number: equal compared as
// DOUBLE (text by its leading number), as MariaDB compares them; the
// answer is still a itself.
type numNullIf struct {
	*function.NullIf
	kind byte
	eq   sql.Expression // a = b as numbers
}

func newNumNullIf(x *function.NullIf, kind byte) *numNullIf {
	ab := numbered(kind, []sql.Expression{x.LeftChild, x.RightChild})
	return &numNullIf{NullIf: x, kind: kind, eq: expression.NewEquals(ab[0], ab[1])}
}

func (n *numNullIf) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(n.NullIf, c, func(x *function.NullIf) sql.Expression { return newNumNullIf(x, n.kind) })
}

func (n *numNullIf) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	eq, err := n.eq.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if b, ok := eq.(bool); ok && b {
		return nil, nil
	}
	return n.LeftChild.Eval(ctx, row)
}

// isCondition tells whether the i-th child of a boolean operator, IF or
// CASE is read as a condition.
func isCondition(e sql.Expression, i int) bool {
	switch x := e.(type) {
	case *function.If:
		return i == 0
	case *expression.Case:
		// Children: [x,] (when, then)..., [else].
		if x.Expr != nil {
			return false
		}
		return i < 2*len(x.Branches) && i%2 == 0
	}
	return true
}

// condition is a text condition as MariaDB evaluates it: its leading
// number, true unless 0.
func condition(e sql.Expression) (sql.Expression, bool) {
	if !types.IsText(e.Type()) {
		return e, false
	}
	return toNumber(e), true
}

// conditionNode rewrites the text condition of a WHERE, HAVING or JOIN.
func conditionNode(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.Filter:
		if c, ok := condition(x.Expression); ok {
			return plan.NewFilter(c, x.Child), transform.NewTree, nil
		}
	case *plan.Having:
		if c, ok := condition(x.Cond); ok {
			return plan.NewHaving(c, x.Child), transform.NewTree, nil
		}
	case *plan.JoinNode:
		if x.Filter != nil && !x.Op.IsDegenerate() {
			if c, ok := condition(x.Filter); ok {
				n, err := x.WithExpressions(c)
				if err != nil {
					return nil, transform.SameTree, fmt.Errorf("sqlview: join condition: %w", err)
				}
				return n, transform.NewTree, nil
			}
		}
	}
	return n, transform.SameTree, nil
}

// floatMod is % of text as MariaDB types it, DOUBLE (go-mysql-server
// answers DECIMAL once the text is a number).
type floatMod struct{ *expression.Mod }

func (m *floatMod) Type() sql.Type { return types.Float64 }

func (m *floatMod) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	return rewrap(m.Mod, children, func(mod *expression.Mod) sql.Expression { return &floatMod{Mod: mod} })
}

func (m *floatMod) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := m.Mod.Eval(ctx, row)
	if err != nil || v == nil {
		return v, err
	}
	return doubleValue(v), nil
}
