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
	"math"
	"slices"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
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

// Type is a date's number as MariaDB types it: BIGINT without a
// fraction (DATE, DATETIME(0)), DECIMAL with one.
func (a *asNumber) Type() sql.Type {
	if a.exact() {
		_, p, s := argKind(a.child.Type())
		if s == 0 {
			return types.Int64
		}
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
		d, err := exactValue(ctx, a.child.Type(), v)
		if err != nil || a.Type() != types.Int64 {
			return d, err
		}
		return d.IntPart(), nil
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

// decimalWithString is a and b compared as MariaDB compares a DECIMAL
// that is not a constant with a constant string: as DECIMALs, the
// string by its leading number (Arg_comparator::set_cmp_func_real, "in
// order not to lose precision"); false for other operands.
func decimalWithString(a, b sql.Expression) (sql.Expression, sql.Expression, bool) {
	asDecimal := func(num, str sql.Expression) (sql.Expression, bool) {
		if _, lit := num.(*expression.Literal); lit || !types.IsDecimal(num.Type()) {
			return nil, false
		}
		lit, ok := str.(*expression.Literal)
		if !ok {
			return nil, false
		}
		text, ok := lit.Value().(string)
		if !ok {
			return nil, false
		}
		d := leadingDecimal(text)
		scale := max(-d.Exponent(), 0)
		digits := int32(len(d.Coefficient().String())) + max(d.Exponent(), 0)
		if digits > maxDecimalPrecision || scale > maxDecimalScale {
			return nil, false // beyond a DECIMAL: compared as DOUBLEs
		}
		t := types.MustCreateDecimalType(uint8(max(digits, scale+1)), uint8(scale))
		// Named as written: an unaliased column keeps its name.
		return expression.NewNamedLiteral(lit.String(), d, t), true
	}
	if s, ok := asDecimal(a, b); ok {
		return a, s, true
	}
	if s, ok := asDecimal(b, a); ok {
		return s, b, true
	}
	return nil, nil, false
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
		if l, r, ok := decimalWithString(c.Left(), c.Right()); ok {
			n, err := e.WithChildren(l, r)
			return n, err == nil, err
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
		if !numeric(x.Left().Type()) && len(tup) > 1 {
			// Values of mixed types are compared with x one by one, each
			// pair in its own type (Item_func_in's cmp_items): text x with
			// a text value as text, with a number as DOUBLE. All as DOUBLE
			// made name IN ('main', 2) true of every name.
			var or sql.Expression
			for _, v := range tup {
				var eq sql.Expression = expression.NewEquals(x.Left(), v)
				n, ok, err := numberContext(eq)
				if err != nil {
					return e, false, err
				}
				if ok {
					eq = n
				}
				if or == nil {
					or = eq
				} else {
					or = expression.NewOr(or, eq)
				}
			}
			return or, true, nil
		}
		all := numbered(k, append([]sql.Expression{x.Left()}, tup...))
		return expression.NewInTuple(all[0], expression.NewTuple(all[1:]...)), true, nil
	case *expression.Arithmetic, *expression.Div, *expression.IntDiv, *expression.Mod, *expression.UnaryMinus, *function.AbsVal:
		// Text in arithmetic is its leading number (DOUBLE), a date its
		// number YYYYMMDDhhmmss.ffffff (go-mysql-server dropped the
		// fraction: taken_at + 0 lost its microseconds); date arithmetic
		// (x + INTERVAL n unit) is the dialect rule's.
		kids := slices.Clone(e.Children())
		for _, k := range kids {
			if _, ok := k.(*expression.Interval); ok {
				return e, false, nil
			}
		}
		changed, text := false, false
		for i, k := range kids {
			if t := k.Type(); types.IsText(t) || isTemporal(t) {
				kids[i], changed = toNumber(k), true
				text = text || types.IsText(t)
			}
		}
		if !changed {
			return e, false, nil
		}
		n, err := e.WithChildren(kids...)
		if mod, ok := n.(*expression.Mod); ok && err == nil && text {
			return &floatMod{Mod: mod}, true, nil
		}
		return n, err == nil, err // a date's % is the dialect rule's, as numbers
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

// castInt is its argument as MariaDB's val_int reads it, for CAST(x AS
// SIGNED | UNSIGNED) (Item_func_signed, Item_func_unsigned) and the bit
// aggregates (Item_sum_bit): an integer as it is, a DOUBLE
// rounded half to even (rint: 28.5 is 28), a DECIMAL with every digit
// rounded half away from zero, both held to the type's range, and a
// negative one 0 for UNSIGNED; text by its leading integer (my_strtoll10:
// no fraction, '2.9' is 2) as 64 bits, a negative overflow the smallest
// BIGINT and a positive one all ones; a date or time as the number
// YYYYMMDDhhmmss without its fraction. go-mysql-server rounded DOUBLEs
// half away from zero, read a negative number as 2^63 for UNSIGNED,
// rounded text and answered a DATETIME's Unix time.
type castInt struct {
	wrapped
	unsigned bool
}

var _ sql.Expression = (*castInt)(nil)

// newCastInt is CAST c with its argument read as castInt does, nil when
// c is another CAST or its argument is an integer.
func newCastInt(c *expression.Convert) sql.Expression {
	unsigned := c.Type() == types.Uint64
	if !unsigned && c.Type() != types.Int64 {
		return nil
	}
	if t := c.Child.Type(); !types.IsFloat(t) && !types.IsDecimal(t) && !types.IsText(t) && !isTemporal(t) {
		return nil
	}
	n, err := c.WithChildren(&castInt{wrapped: wrapped{c.Child}, unsigned: unsigned})
	if err != nil {
		return nil
	}
	return n
}

func (c *castInt) Type() sql.Type {
	if c.unsigned {
		return types.Uint64
	}
	return types.Int64
}

func (c *castInt) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return withChild(c, kids, func(k sql.Expression) sql.Expression { return &castInt{wrapped: wrapped{k}, unsigned: c.unsigned} })
}

// 2^63 and 2^64, the limits of a 64-bit integer, as DOUBLEs.
const twoTo63, twoTo64 float64 = 1 << 63, 1 << 64

func (c *castInt) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := c.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if tv, ok := v.(time.Time); ok {
		// A date or time, also from a text-typed function answering one
		// (TIMESTAMP('...'), a DATETIME on MariaDB).
		return c.held(temporalNumber(types.DatetimeMaxPrecision, tv).Truncate(0)), nil
	}
	switch t := c.child.Type(); {
	case types.IsInteger(t):
		out, _, err := c.Type().Convert(ctx, v)
		return out, err
	case types.IsText(t):
		s, err := types.ConvertToString(ctx, v, types.LongText, nil)
		if err != nil {
			return nil, err
		}
		bits := leadingInt64Bits(s)
		if c.unsigned {
			return bits, nil
		}
		return int64(bits), nil
	case types.IsFloat(t):
		f := math.RoundToEven(doubleValue(v))
		switch {
		case c.unsigned && f <= 0:
			return uint64(0), nil
		case c.unsigned && f >= twoTo64:
			return uint64(math.MaxUint64), nil
		case c.unsigned:
			return uint64(f), nil
		case f >= twoTo63:
			return int64(math.MaxInt64), nil
		case f <= -twoTo63:
			return int64(math.MinInt64), nil
		}
		return int64(f), nil
	}
	d, err := exactValue(ctx, c.child.Type(), v)
	if err != nil {
		return nil, err
	}
	if isTemporal(c.child.Type()) {
		return c.held(d.Truncate(0)), nil // YYYYMMDDhhmmss, the fraction dropped
	}
	return c.held(d.Round(0)), nil // half away from zero
}

// held is the integer d in c's type's range: a negative one 0 for
// UNSIGNED, one beyond the range the range's end.
func (c *castInt) held(d decimal.Decimal) any {
	b := d.BigInt()
	switch {
	case c.unsigned && b.Sign() <= 0:
		return uint64(0)
	case c.unsigned && !b.IsUint64():
		return uint64(math.MaxUint64)
	case c.unsigned:
		return b.Uint64()
	case b.IsInt64():
		return b.Int64()
	case b.Sign() > 0:
		return int64(math.MaxInt64)
	}
	return int64(math.MinInt64)
}

// leadingInt64Bits is the integer text s starts with as MariaDB's
// my_strtoll10 reads it: spaces, a sign, digits; a negative value below
// the smallest BIGINT is that BIGINT, a positive one beyond 2^64 - 1 is
// 2^64 - 1, as 64 bits.
func leadingInt64Bits(s string) uint64 {
	s = strings.TrimLeft(s, " \t\n\r\f\v")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n uint64
	overflow := false
	for _, r := range []byte(s) {
		if r < '0' || r > '9' {
			break
		}
		d := uint64(r - '0')
		if n > (math.MaxUint64-d)/10 {
			overflow = true
			break
		}
		n = n*10 + d
	}
	if neg {
		if overflow || n > 1<<63 {
			return 1 << 63 // math.MinInt64's bits
		}
		return -n
	}
	if overflow {
		return math.MaxUint64
	}
	return n
}

// intVal is FLOOR or CEIL(ING) as MariaDB types and computes them
// (Item_func_int_val): of an integer, that integer; of a DECIMAL, the
// exact floor or ceiling typed INT when its digits fit in 9, BIGINT in 18,
// else DECIMAL(digits, 0), the digits being x's integer ones and one more
// for a fraction that may carry (fix_length_and_dec_int_or_decimal); of a
// DOUBLE or text, a DOUBLE; of a DATETIME, the DATETIME to the second; of
// a DATE, its number YYYYMMDD. go-mysql-server typed every one INT and
// held the value there (FLOOR(5000000000.5) was 2147483647) and answered
// a DATETIME's Unix time. A TIME is refused (ERROR 1235).
type intVal struct {
	wrapped
	ceil bool
	typ  sql.Type // derived once from x's type, not per row
}

var _ sql.FunctionExpression = (*intVal)(nil)

func newIntVal(ceil bool) func(sql.Expression) sql.Expression {
	return func(x sql.Expression) sql.Expression { return newIntValOf(x, ceil) }
}

func newIntValOf(x sql.Expression, ceil bool) *intVal {
	f := &intVal{wrapped: wrapped{x}, ceil: ceil}
	f.typ = f.resultType()
	return f
}

func (f *intVal) FunctionName() string {
	if f.ceil {
		return "ceil"
	}
	return "floor"
}

func (f *intVal) Description() string {
	return "MariaDB's " + strings.ToUpper(f.FunctionName()) + " (heapprof/sqlview)"
}

func (f *intVal) String() string {
	return strings.ToUpper(f.FunctionName()) + "(" + f.child.String() + ")"
}

func (f *intVal) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	return withChild(f, kids, func(k sql.Expression) sql.Expression { return newIntValOf(k, f.ceil) })
}

// digits is the integer digits of the result for a DECIMAL argument, from
// the argument's precision and scale as MariaDB derives them.
func (f *intVal) digits() int {
	p, s, ok := decimalPS(f.child, nil)
	if !ok {
		dt := f.child.Type().(sql.DecimalType)
		p, s = int(dt.Precision()), int(dt.Scale())
	}
	n := p - s
	if s > 0 {
		n++ // floor(-9.9) is -10, ceil(9.9) is 10
	}
	return max(n, 1)
}

func (f *intVal) Type() sql.Type { return f.typ }

func (f *intVal) resultType() sql.Type {
	t := f.child.Type()
	switch {
	case types.IsInteger(t):
		if intLength(t) < intLength(types.Int32) {
			return types.Int32 // MariaDB's smallest integer result
		}
		return t
	case types.IsDecimal(t):
		switch n := f.digits(); {
		case n > 18:
			return types.MustCreateDecimalType(uint8(min(n, maxDecimalPrecision)), 0)
		case n > 9:
			return types.Int64
		}
		return types.Int32
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		return types.Datetime
	case t.Type() == types.Date.Type():
		return types.Uint32
	}
	return types.Float64 // DOUBLE, text, NULL
}

func (f *intVal) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	t := f.child.Type()
	if types.IsTimespan(t) {
		return nil, errUnsupported(strings.ToUpper(f.FunctionName()) + "() of a TIME; write SEC_TO_TIME(" +
			strings.ToUpper(f.FunctionName()) + "(TIME_TO_SEC(x)))")
	}
	v, err := f.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if t.Type() == types.Date.Type() {
		d, err := exactValue(ctx, t, v) // YYYYMMDD
		if err != nil {
			return nil, err
		}
		return uint32(d.IntPart()), nil
	}
	if isTemporal(t) {
		c, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		tv, ok := c.(time.Time)
		if !ok {
			return nil, fmt.Errorf("sqlview: %s of %T", f.FunctionName(), c)
		}
		out := tv.Truncate(time.Second)
		if f.ceil && out.Before(tv) {
			out = out.Add(time.Second)
		}
		return out, nil
	}
	switch {
	case types.IsInteger(t):
		out, _, err := f.typ.Convert(ctx, v)
		return out, err
	case types.IsDecimal(t):
		d, err := exactValue(ctx, t, v)
		if err != nil {
			return nil, err
		}
		if f.ceil {
			d = d.Ceil()
		} else {
			d = d.Floor()
		}
		switch f.typ {
		case types.Int32:
			return int32(d.IntPart()), nil
		case types.Int64:
			return d.IntPart(), nil
		}
		return d, nil
	}
	x := doubleValue(v)
	if f.ceil {
		x = math.Ceil(x)
	} else {
		x = math.Floor(x)
	}
	if x == 0 {
		return float64(0), nil // MariaDB prints CEIL(-0.5e0) as 0
	}
	return x, nil
}

// asDouble is its child read as MariaDB's val_real reads it, for the
// variance aggregates (STDDEV, VARIANCE and their kin), which MariaDB
// computes in DOUBLE whatever the argument (Item_sum_variance):
// go-mysql-server's are typed as their argument, so STDDEV of a BIGINT
// column was a BIGINT column carrying 3864727.289069151.
type asDouble struct{ wrapped }

var _ sql.Expression = (*asDouble)(nil)

func (a *asDouble) Type() sql.Type { return types.Float64 }

func (a *asDouble) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(a, c, func(c sql.Expression) sql.Expression { return &asDouble{wrapped{c}} })
}

func (a *asDouble) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := a.child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	return doubleValue(v), nil
}

// varianceMeta is MariaDB's definition of a variance aggregate over arg
// (Item_sum_variance::fix_length_and_dec): over an exact number, twice
// its precision and 4 more digits, 4 more decimals than it has; over a
// DOUBLE or text, a DOUBLE without fixed decimals.
func varianceMeta(arg sql.Expression, child sql.Node) *colMeta {
	if k, _, _ := argKind(arg.Type()); k == numExact {
		if p, s, ok := decimalPS(arg, child); ok {
			dec := min(s+divPrecisionIncrement, maxDecimalScale)
			return &colMeta{typ: mysqlTypeDouble, length: uint32(2*p + divPrecisionIncrement + 2), decimals: uint8(dec)}
		}
	}
	return &colMeta{typ: mysqlTypeDouble, length: floatLength(notFixedDec31), decimals: notFixedDec31}
}
