package sqlview

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A DOUBLE on MariaDB carries a number of decimals (Item::decimals), and
// where it is fixed (below NOT_FIXED_DEC, 31) the value prints with that
// many digits: ROUND(x, 1) * 3 of 71.4 is 214.2, not the
// 214.20000000000002 the multiplication gives, and PI() is 3.141593. Its
// arithmetic passes them on (Item_func::count_real_length: the larger of
// the operands'; Item_func_div::fix_length_and_dec_double: 4 more), so
// does every function choosing among its arguments. Read in MariaDB's
// sql/item_func.cc (count_real_length, Item_func_div's
// fix_length_and_dec_double) and sql/item_sum.cc (Item_sum_sum's,
// Item_sum_avg's); checked against Debian 12's MariaDB 10.11 by
// TestFixedDoubleDecimalsMatchMariaDB.

// realDecimals is the decimals MariaDB gives e read as a DOUBLE over
// the rows of child (nil when unknown): notFixedDec31 unless fixed.
func realDecimals(e sql.Expression, child sql.Node) int {
	e = unalias(e)
	t := e.Type()
	switch {
	case t == types.Null, types.IsInteger(t):
		return 0
	case types.IsDecimal(t):
		if _, s, ok := decimalPS(e, child); ok {
			return s
		}
		if dt, ok := t.(sql.DecimalType); ok {
			return int(dt.Scale())
		}
		return notFixedDec31
	case !types.IsFloat(t):
		return notFixedDec31
	}
	switch x := e.(type) {
	case *expression.GetField:
		if src, c := resolveRef(x, child); src != nil && src != e {
			return realDecimals(src, c)
		}
	case *plan.Subquery:
		if src, c := selected(x.Query, 0); src != nil {
			return realDecimals(src, c)
		}
	case *decimalRound:
		if d, ok := roundDigits(x); ok {
			return d
		}
	case *storedDouble:
		return x.decimals
	case *checkedArith, *expression.Arithmetic, *floatMod:
		return maxRealDecimals(x.Children(), child)
	case *checkedDiv, *expression.Div:
		return min(maxRealDecimals(x.Children(), child)+divPrecisionIncrement, notFixedDec31)
	case *expression.UnaryMinus:
		return realDecimals(x.Child, child)
	case *expression.Case, *exactCase:
		return maxRealDecimals(caseValues(x), child)
	case sql.FunctionExpression:
		args := e.Children()
		switch strings.ToLower(x.FunctionName()) {
		case "pi":
			return 6 // Item_static_float_func("pi()", M_PI, 6, 8)
		case "abs", "min", "max", "sum", "nullif", "any_value":
			if len(args) > 0 {
				return realDecimals(args[0], child)
			}
		case "avg":
			if len(args) > 0 {
				return min(realDecimals(args[0], child)+divPrecisionIncrement, notFixedDec31)
			}
		case "if":
			if len(args) == 3 {
				return maxRealDecimals(args[1:], child)
			}
		case "ifnull", "coalesce", "greatest", "least":
			return maxRealDecimals(args, child)
		}
	}
	return notFixedDec31
}

// maxRealDecimals is the largest of es' decimals (count_real_length).
func maxRealDecimals(es []sql.Expression, child sql.Node) int {
	d := 0
	for _, e := range es {
		d = max(d, realDecimals(e, child))
		if d >= notFixedDec31 {
			return notFixedDec31
		}
	}
	return d
}

// realMeta is MariaDB's definition of a DOUBLE column computed by e
// when its decimals are fixed, or when e chooses among DOUBLEs; nil
// otherwise, or for an expression it does not size.
func realMeta(e sql.Expression, child sql.Node, tmp bool) *colMeta {
	e = unalias(e)
	if _, ok := e.(*expression.GetField); ok || !types.IsFloat(e.Type()) {
		return nil
	}
	if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "nullif") {
		// Item_func_nullif: its first argument's definition (NULLIF(x *
		// 2, 1) is 23 long, NULLIF(PI(), 1) 8 with 6 decimals).
		l, d := realLength(e.Children()[0], child, tmp)
		return &colMeta{typ: mysqlTypeDouble, length: l, decimals: uint8(d)}
	}
	d := realDecimals(e, child)
	if d >= notFixedDec31 {
		return choiceRealMeta(e, child, tmp)
	}
	length := floatLength(d)
	switch x := e.(type) {
	case *decimalRound:
		return nil // exprMeta's own
	case *checkedDiv, *expression.Div:
		// max_length = args[0]'s - its decimals + these, at most
		// float_length.
		l0, d0 := realLength(x.Children()[0], child, tmp)
		length = min(uint32(max(int(l0)-d0+d, 0)), length)
	case *expression.UnaryMinus:
		l, _ := realLength(x.Child, child, tmp)
		length = l + 1
	case *expression.Case, *exactCase:
		length = hybridLength(caseValues(x), d, child, tmp)
	case sql.FunctionExpression:
		args := e.Children()
		switch strings.ToLower(x.FunctionName()) {
		case "pi":
			length = 8
		case "avg":
			l, _ := realLength(args[0], child, tmp)
			length = min(l+divPrecisionIncrement, length)
		case "if":
			length = hybridLength(args[1:], d, child, tmp)
		case "ifnull", "coalesce":
			length = hybridLength(args, d, child, tmp)
		case "min", "max", "any_value":
			return nil // their argument's definition, exprMeta's own
		}
	}
	return &colMeta{typ: mysqlTypeDouble, length: length, decimals: uint8(d)}
}

// choiceRealMeta is the definition of a choice among DOUBLEs without
// fixed decimals: IF, IFNULL, COALESCE and CASE are as long as their
// longest value (count_real_length), GREATEST and LEAST
// float_length(NOT_FIXED_DEC) (IF(c, x * 2, 0) is 23 long, IF(c, x, 0)
// of a DOUBLE column 22, GREATEST(x, 1) 23).
func choiceRealMeta(e sql.Expression, child sql.Node, tmp bool) *colMeta {
	var vals []sql.Expression
	switch x := e.(type) {
	case *expression.Case, *exactCase:
		vals = caseValues(x)
	case sql.FunctionExpression:
		args := e.Children()
		switch strings.ToLower(x.FunctionName()) {
		case "greatest", "least":
			return &colMeta{typ: mysqlTypeDouble, length: floatLength(notFixedDec31), decimals: notFixedDec31}
		case "if":
			if len(args) == 3 {
				vals = args[1:]
			}
		case "ifnull", "coalesce":
			vals = args
		}
	}
	if len(vals) == 0 {
		return nil
	}
	var length uint32
	for _, v := range vals {
		l, _ := realLength(v, child, tmp)
		length = max(length, l)
	}
	return &colMeta{typ: mysqlTypeDouble, length: length, decimals: notFixedDec31}
}

// hybridLength is count_real_length's max_length over es with fixed
// decimals d: their longest integer part and d.
func hybridLength(es []sql.Expression, d int, child sql.Node, tmp bool) uint32 {
	whole := 0
	for _, e := range es {
		l, dec := realLength(e, child, tmp)
		if dec >= notFixedDec31 {
			dec = 0
		}
		whole = max(whole, int(l)-dec)
	}
	return uint32(whole + d)
}

// realLength is e's max_length and decimals as an operand.
func realLength(e sql.Expression, child sql.Node, tmp bool) (uint32, int) {
	e = unalias(e)
	if lit, ok := e.(*expression.Literal); ok && lit.Value() == nil {
		return 0, 0
	}
	if src, c := resolveRef(e, child); src != nil && src != e {
		e, child = src, c
	}
	if m := exprMeta(e, child, tmp); m != nil {
		return m.length, int(m.decimals)
	}
	d := realDecimals(e, child)
	if types.IsFloat(e.Type()) {
		if _, col := e.(*expression.GetField); col {
			return 22, d // a DOUBLE column: DBL_DIG + 7
		}
		return floatLength(d), d
	}
	if n, ok := numLength(e, child); ok {
		return uint32(n), d
	}
	return floatLength(d), d
}
