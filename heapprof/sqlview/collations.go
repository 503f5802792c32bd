package sqlview

// Illegal mixes of collations, refused as MariaDB refuses them
// (DTCollation::aggregate in sql/item.cc). go-mysql-server resolves every
// mix to some collation and never fails, so `name = _latin1'x' COLLATE
// latin1_swedish_ci` answered rows where MariaDB answers ERROR 1267: the
// utf8mb4 column (IMPLICIT) cannot be converted to the EXPLICIT latin1
// collation, nor latin1 to utf8mb4 against an explicit choice.
//
// collationRule checks the operands of comparisons, LIKE, IN, BETWEEN and
// CONCAT / CONCAT_WS before planning rewrites them (an index lookup drops
// its filter). It only refuses a mix MariaDB refuses and in which an
// EXPLICIT collation takes part: two IMPLICIT collations of one character
// set (MariaDB's DERIVATION_NONE) are not refused, because the engine's
// information_schema columns do not carry MariaDB's collations and a
// refusal there would be an error MariaDB does not give.

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// ruleCollations is collationRule's id, apart from guard.go's ids.
const ruleCollations analyzer.RuleId = 100112

// MariaDB's derivations (enum Derivation), strongest first.
const (
	derivExplicit = iota
	derivNone
	derivImplicit
	derivSysconst
	derivCoercible
	derivNumeric
	derivIgnorable
)

var derivNames = [...]string{"EXPLICIT", "NONE", "IMPLICIT", "SYSCONST", "COERCIBLE", "NUMERIC", "IGNORABLE"}

// dtColl is an operand's collation as MariaDB aggregates it: its
// collation, derivation, and whether its text is ASCII only (repertoire).
type dtColl struct {
	coll  sql.CollationID
	deriv int
	ascii bool
}

// explicitLiterals are the collations written as `_cs'text' COLLATE c`
// in a statement: go-mysql-server's planner folds the COLLATE into the
// literal's type, so the plan alone cannot tell it from `_cs'text'`.
type explicitLiterals map[sql.CollationID]bool

// noteExplicitLiterals records, before planning (which drops the COLLATE
// of an introducer from the statement), the collations of introduced
// literals with COLLATE. A collation that a literal without COLLATE may
// also have (the charset's default one after a plain introducer, the
// connection's) is left out: those literals are told apart by nothing.
func noteExplicitLiterals(ctx *sql.Context, stmt ast.Statement) {
	m, ok := ctx.Value(metaKey{}).(*stmtMeta)
	if !ok {
		return
	}
	explicit, plain := explicitLiterals{}, explicitLiterals{ctx.GetCollation(): true}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		u, ok := node.(*ast.UnaryExpr)
		if !ok || !strings.HasPrefix(strings.TrimSpace(u.Operator), "_") {
			return true, nil
		}
		cs, err := sql.ParseCharacterSet(strings.TrimSpace(u.Operator)[1:])
		if err != nil {
			return true, nil
		}
		if c, ok := u.Expr.(*ast.CollateExpr); ok {
			if id, err := sql.ParseCollation("", c.Collation, false); err == nil {
				explicit[id] = true
			}
		} else {
			plain[cs.DefaultCollation()] = true
		}
		return true, nil
	}, stmt)
	for id := range plain {
		delete(explicit, id)
	}
	if len(explicit) > 0 {
		m.explicit = explicit
	}
}

// collationRule refuses illegal mixes of collations in n and its
// subqueries (see the file's comment).
func collationRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	var explicit explicitLiterals
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
		explicit = m.explicit
	}
	return n, transform.SameTree, checkCollations(ctx, n, explicit)
}

func checkCollations(ctx *sql.Context, n sql.Node, explicit explicitLiterals) error {
	var err error
	negated := map[sql.Expression]bool{}
	transform.InspectExpressions(n, func(e sql.Expression) bool {
		if err != nil {
			return false
		}
		if sq, ok := e.(*plan.Subquery); ok {
			err = checkCollations(ctx, sq.Query, explicit)
			return false
		}
		var op string
		var args []sql.Expression
		textOnly := true // comparisons compare as text only when every operand is text
		switch x := e.(type) {
		case *expression.Not:
			if eq, ok := x.Child.(*expression.Equals); ok {
				negated[eq] = true
				op, args = "<>", []sql.Expression{eq.Left(), eq.Right()}
			}
		case *expression.Equals:
			if !negated[x] {
				op, args = "=", []sql.Expression{x.Left(), x.Right()}
			}
		case *expression.NullSafeEquals:
			op, args = "<=>", []sql.Expression{x.Left(), x.Right()}
		case *expression.LessThan:
			op, args = "<", []sql.Expression{x.Left(), x.Right()}
		case *expression.LessThanOrEqual:
			op, args = "<=", []sql.Expression{x.Left(), x.Right()}
		case *expression.GreaterThan:
			op, args = ">", []sql.Expression{x.Left(), x.Right()}
		case *expression.GreaterThanOrEqual:
			op, args = ">=", []sql.Expression{x.Left(), x.Right()}
		case *expression.Like:
			op, args = "like", []sql.Expression{x.LeftChild, x.RightChild}
		case *expression.Between:
			op, args = "between", []sql.Expression{x.Val, x.Lower, x.Upper}
		case *expression.InTuple:
			args = []sql.Expression{x.Left()}
			if t, ok := x.Right().(expression.Tuple); ok {
				args = append(args, t...)
			} else {
				args = append(args, x.Right())
			}
			// MariaDB makes IN of one value an =.
			op = "in"
			if len(args) == 2 {
				op = "="
			}
		case *plan.InSubquery:
			op, args = "=", []sql.Expression{x.LeftChild, x.RightChild}
		case *function.Concat:
			op, args, textOnly = "concat", x.Children(), false
		case *function.ConcatWithSeparator:
			op, args, textOnly = "concat_ws", x.Children(), false
		}
		if op == "" {
			return true
		}
		err = aggregateOperands(ctx, explicit, op, args, textOnly)
		return err == nil
	})
	return err
}

// aggregateOperands aggregates the collations of args as MariaDB's
// agg_arg_charsets does and answers its error for an illegal mix with an
// EXPLICIT collation in it: 1267 for two operands, 1270 for three, 1271
// for more. textOnly: the operation compares as text only when every
// operand is text (comparisons); CONCAT reads numbers as ASCII text.
func aggregateOperands(ctx *sql.Context, explicit explicitLiterals, op string, args []sql.Expression, textOnly bool) error {
	dts := make([]dtColl, 0, len(args))
	hasExplicit := false
	for _, a := range args {
		d, ok := operandCollation(ctx, explicit, a)
		if !ok {
			return nil
		}
		if textOnly && d.deriv == derivNumeric {
			return nil
		}
		hasExplicit = hasExplicit || d.deriv == derivExplicit
		dts = append(dts, d)
	}
	if !hasExplicit || len(dts) < 2 {
		return nil
	}
	acc := dts[0]
	for _, d := range dts[1:] {
		var ok bool
		if acc, ok = aggregateColl(acc, d); !ok {
			return illegalMix(op, dts)
		}
	}
	return nil
}

func illegalMix(op string, dts []dtColl) error {
	name := func(d dtColl) string { return mariaCollationName(d.coll) + "," + derivNames[d.deriv] }
	switch len(dts) {
	case 2:
		return &Error{Code: 1267, State: "HY000", Message: fmt.Sprintf("Illegal mix of collations (%s) and (%s) for operation '%s'", name(dts[0]), name(dts[1]), op)}
	case 3:
		return &Error{Code: 1270, State: "HY000", Message: fmt.Sprintf("Illegal mix of collations (%s), (%s), (%s) for operation '%s'", name(dts[0]), name(dts[1]), name(dts[2]), op)}
	}
	return &Error{Code: 1271, State: "HY000", Message: fmt.Sprintf("Illegal mix of collations for operation '%s'", op)}
}

// mariaCollationName is a collation's name as MariaDB knows it:
// go-mysql-server's default utf8mb4_0900_bin is MariaDB's utf8mb4_bin.
func mariaCollationName(c sql.CollationID) string {
	if c == sql.Collation_utf8mb4_0900_bin {
		return "utf8mb4_bin"
	}
	return c.Name()
}

// operandCollation is e's collation and derivation (ok false when the
// engine cannot tell them, and nothing is refused).
func operandCollation(ctx *sql.Context, explicit explicitLiterals, e sql.Expression) (dtColl, bool) {
	for {
		a, ok := e.(*expression.Alias)
		if !ok {
			break
		}
		e = a.Child
	}
	t := e.Type()
	if t == types.Null {
		return dtColl{coll: sql.Collation_binary, deriv: derivIgnorable, ascii: true}, true
	}
	tc, isText := t.(sql.TypeWithCollation)
	if !types.IsText(t) || !isText {
		if types.IsBinaryType(t) {
			return dtColl{coll: sql.Collation_binary, deriv: derivImplicit}, true
		}
		// Numbers and dates: ASCII text of MariaDB's numeric derivation.
		return dtColl{coll: sql.Collation_latin1_swedish_ci, deriv: derivNumeric, ascii: true}, true
	}
	coll := tc.Collation()
	switch x := e.(type) {
	case *expression.CollatedExpression:
		inner, ok := operandCollation(ctx, explicit, x.Child())
		return dtColl{coll: coll, deriv: derivExplicit, ascii: ok && inner.ascii}, true
	case *expression.Literal:
		v, _ := x.Value().(string)
		d := dtColl{coll: coll, deriv: derivCoercible, ascii: isASCII(v)}
		if explicit[coll] {
			d.deriv = derivExplicit
		}
		return d, true
	case *plan.Subquery:
		// The select item's own (MAX(name) IMPLICIT, a literal with
		// COLLATE EXPLICIT).
		if p, _ := produced(x.Query, 0); p != nil && types.IsText(p.Type()) {
			return operandCollation(ctx, explicit, p)
		}
		return dtColl{coll: coll, deriv: derivImplicit}, true
	case *expression.GetField, *expression.Convert, *expression.ConvertUsing:
		// Columns, CAST, CONVERT: IMPLICIT.
		return dtColl{coll: coll, deriv: derivImplicit}, true
	}
	// A function of text: its text arguments' aggregate (UPPER(name) is
	// name's collation, IMPLICIT); without any, the result's own
	// collation, COERCIBLE and ASCII (DATE_FORMAT, FORMAT).
	var acc *dtColl
	for _, k := range e.Children() {
		if !types.IsText(k.Type()) {
			continue
		}
		d, ok := operandCollation(ctx, explicit, k)
		if !ok {
			return dtColl{}, false
		}
		if acc == nil {
			acc = &d
			continue
		}
		r, ok := aggregateColl(*acc, d)
		if !ok {
			return dtColl{}, false
		}
		acc = &r
	}
	if acc == nil {
		return dtColl{coll: coll, deriv: derivCoercible, ascii: true}, true
	}
	return *acc, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// unicodeCharset: the character sets MariaDB marks MY_CS_UNICODE;
// supplement: those that hold characters beyond the BMP.
func unicodeCharset(cs sql.CharacterSetID) (unicode, supplement bool) {
	switch cs {
	case sql.CharacterSet_utf8mb4, sql.CharacterSet_utf16, sql.CharacterSet_utf32, sql.CharacterSet_utf16le:
		return true, true
	case sql.CharacterSet_utf8mb3, sql.CharacterSet_ucs2:
		return true, false
	}
	return false, false
}

// leftIsSuperset is MariaDB's left_is_superset: right converts to left's
// character set without loss, and left's derivation allows it.
func leftIsSuperset(l, r dtColl) bool {
	lcs, rcs := l.coll.CharacterSet(), r.coll.CharacterSet()
	lu, lsup := unicodeCharset(lcs)
	ru, rsup := unicodeCharset(rcs)
	if lu && (l.deriv < r.deriv || (l.deriv == r.deriv &&
		(!ru || (lsup && !rsup && lcs.MaxLength() > rcs.MaxLength())))) {
		return true
	}
	// ASCII text converts to any ASCII-based character set.
	return r.ascii && (l.deriv < r.deriv || (l.deriv == r.deriv && !l.ascii))
}

// aggregateColl is DTCollation::aggregate with MariaDB's comparison and
// string-result flags (superset and coercible conversions allowed); ok
// is false for an illegal mix.
func aggregateColl(a, b dtColl) (dtColl, bool) {
	ascii := a.ascii && b.ascii
	with := func(d dtColl) dtColl { d.ascii = ascii; return d }
	if a.coll.CharacterSet() != b.coll.CharacterSet() {
		switch {
		case a.coll == sql.Collation_binary:
			if a.deriv <= b.deriv {
				return with(a), true
			}
			return with(b), true
		case b.coll == sql.Collation_binary:
			if b.deriv <= a.deriv {
				return with(b), true
			}
			return with(a), true
		case leftIsSuperset(a, b):
			return with(a), true
		case leftIsSuperset(b, a):
			return with(b), true
		case a.deriv < derivSysconst && b.deriv == derivCoercible:
			return with(a), true
		case b.deriv < derivSysconst && a.deriv == derivCoercible:
			return with(b), true
		}
		return dtColl{}, false
	}
	switch {
	case a.deriv < b.deriv:
		return with(a), true
	case b.deriv < a.deriv:
		return with(b), true
	case a.coll == b.coll:
		return with(a), true
	case a.deriv == derivExplicit:
		return dtColl{}, false
	}
	// Same character set and derivation, different collations: MariaDB's
	// DERIVATION_NONE (the _bin one where one is _bin), not refused here.
	if strings.HasSuffix(b.coll.Name(), "_bin") {
		return dtColl{coll: b.coll, deriv: derivNone, ascii: ascii}, true
	}
	return dtColl{coll: a.coll, deriv: derivNone, ascii: ascii}, true
}
