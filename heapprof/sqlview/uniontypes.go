package sqlview

// The column types of a UNION, as MariaDB gives them.
//
// go-mysql-server v0.20.0 types a UNION's column from its first two
// SELECTs' types at bind time (planbuilder.mergeSetOpSchemas): a number
// and a NULL, or a date and a NULL, become LONGTEXT; a DECIMAL and
// another DECIMAL DECIMAL(65,30), printed with 30 fraction digits. A SUM
// is a DOUBLE at bind time, so the totals row DBAs add to a grouped
// query, SELECT k, SUM(x) ... GROUP BY k UNION ALL SELECT 'total',
// SUM(x), printed 6.0817408e+07 where MariaDB prints 60817408.
//
// MariaDB joins the SELECTs' types column by column
// (st_select_lex_unit::join_union_type_handlers and
// join_union_type_attributes, sql/sql_union.cc, 10.11.18): the data type
// by Type_handler_hybrid_field_type::aggregate_for_result (a NULL takes no
// part; integers join to the widest, or to DECIMAL when their signs
// differ; integers and DECIMALs to DECIMAL; any DOUBLE to DOUBLE; dates
// and times to DATETIME unless all are the same; anything with text, or
// a date with a number, to VARCHAR), then the attributes as for CASE and
// COALESCE (Type_handler_*::Item_hybrid_func_fix_attributes and
// Type_std_attributes::aggregate_attributes_*, sql/sql_type.cc, .h): the
// most integer digits and the most fraction digits, the longest text.
// joinUnionColumns does the same over the columns each SELECT answers
// alone; lineUpChain then converts each SELECT's column to the joined
// type where go-mysql-server would not have it, and the result's column
// definitions are the joined ones.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// unionItem is one SELECT's column of a UNION: as the engine answers it
// for that SELECT alone, and, for an integer literal, its digits
// (MariaDB's Item_int counts no sign for a non-negative literal).
type unionItem struct {
	col       Column
	litDigits int      // -1: not an integer literal
	exec      sql.Type // go-mysql-server's type once analyzed (SUM's DECIMAL)
}

// MySQL protocol type codes the join tells apart, beyond resultmeta's.
const (
	mysqlTypeDecimal   = 0
	mysqlTypeTiny      = 1
	mysqlTypeShort     = 2
	mysqlTypeFloat     = 4
	mysqlTypeNull      = 6
	mysqlTypeTimestamp = 7
	mysqlTypeInt24     = 9
	mysqlTypeDate      = 10
	mysqlTypeDatetime  = 12
	mysqlTypeYear      = 13
	mysqlTypeNewDate   = 14
	mysqlTypeVarchar   = 15
	mysqlTypeBit       = 16
	mysqlTypeEnum      = 247
	mysqlTypeSet       = 248
	mysqlTypeTinyBlob  = 249
)

// Kinds of column types, as MariaDB's result aggregation tells them apart.
type typeKind int

const (
	kindNull typeKind = iota
	kindInt
	kindDecimal
	kindReal
	kindString
	kindTemporal
)

func kindOf(c Column) typeKind {
	switch c.Type {
	case mysqlTypeNull:
		return kindNull
	case mysqlTypeTiny, mysqlTypeShort, mysqlTypeInt24, mysqlTypeLong, mysqlTypeLongLong, mysqlTypeYear, mysqlTypeBit:
		return kindInt
	case mysqlTypeDecimal, mysqlTypeNewDecimal:
		return kindDecimal
	case mysqlTypeFloat, mysqlTypeDouble:
		return kindReal
	case mysqlTypeDate, mysqlTypeNewDate, mysqlTypeDatetime, mysqlTypeTimestamp, mysqlTypeTime:
		return kindTemporal
	}
	return kindString
}

// intRank orders the integer types from narrowest to widest.
func intRank(t byte) int {
	switch t {
	case mysqlTypeTiny:
		return 1
	case mysqlTypeShort, mysqlTypeYear:
		return 2
	case mysqlTypeInt24:
		return 3
	case mysqlTypeLong:
		return 4
	}
	return 5
}

// joinTypes is aggregate_for_result of two columns' types (a NULL takes
// no part).
func joinTypes(a, b Column) byte {
	ka, kb := kindOf(a), kindOf(b)
	switch {
	case ka == kindNull:
		return b.Type
	case kb == kindNull:
		return a.Type
	case a.Type == b.Type:
		return a.Type
	case ka == kindString || kb == kindString:
		if isBlob(a.Type) || isBlob(b.Type) {
			return mysqlTypeBlob
		}
		return mysqlTypeVarString
	case ka == kindTemporal && kb == kindTemporal:
		return mysqlTypeDatetime
	case ka == kindTemporal || kb == kindTemporal:
		return mysqlTypeVarString // a date and a number: text
	case ka == kindInt && kb == kindInt:
		if intRank(a.Type) >= intRank(b.Type) {
			return a.Type
		}
		return b.Type
	case ka == kindReal || kb == kindReal:
		if a.Type == mysqlTypeFloat && b.Type == mysqlTypeFloat {
			return mysqlTypeFloat
		}
		return mysqlTypeDouble
	}
	return mysqlTypeNewDecimal // integers and DECIMALs
}

func isBlob(t byte) bool {
	return t >= mysqlTypeTinyBlob && t <= mysqlTypeBlob
}

// intDigits is decimal_int_part of an integer or DECIMAL column: its
// precision without the fraction digits.
func (it unionItem) intDigits() int {
	c := it.col
	switch kindOf(c) {
	case kindInt:
		if it.litDigits >= 0 {
			return it.litDigits
		}
		return int(c.Length) - signChars(c)
	case kindDecimal:
		n := int(c.Length) - signChars(c) - int(c.Decimals)
		if c.Decimals > 0 {
			n-- // the point
		}
		return max(n, 0)
	}
	return 0
}

func signChars(c Column) int {
	if c.Flags&flagUnsigned != 0 || c.Length == 0 {
		return 0
	}
	return 1
}

// columnChars is a column's length in characters.
func columnChars(c Column) uint32 {
	if kindOf(c) == kindString && c.Charset != uint16(sql.Collation_binary) {
		if c.Charset == collationUTF8MB3 {
			return c.Length / 3
		}
		return c.Length / resultCharsetMaxLen
	}
	return c.Length
}

// joinUnionColumns is the column MariaDB's UNION answers for items, one
// per SELECT, leftmost first; tmp says MariaDB writes the rows to a
// temporary table (UNION DISTINCT, ORDER BY), whose text columns have no
// decimals and number columns no BINARY flag.
func joinUnionColumns(items []unionItem, tmp bool) Column {
	out := Column{Name: items[0].col.Name, Flags: flagNotNull}
	typ := items[0].col.Type
	for i, it := range items {
		if it.col.Flags&flagNotNull == 0 {
			out.Flags &^= flagNotNull
		}
		if i > 0 {
			typ = joinTypes(Column{Type: typ}, it.col)
		}
	}
	out.Type = typ
	switch kindOf(out) {
	case kindNull:
		// A column of NULLs only: a CHAR(0) of binary strings.
		out.Type, out.Charset, out.Flags = mysqlTypeString, uint16(sql.Collation_binary), out.Flags|flagBinary
		return out
	case kindInt:
		unsigned := items[0].col.Flags&flagUnsigned != 0
		mixed := false
		for _, it := range items {
			// A NULL is signed here: Type_handler_general_purpose_int's
			// own note says it should not count.
			mixed = mixed || (it.col.Flags&flagUnsigned != 0) != unsigned
		}
		if mixed && out.Type != mysqlTypeYear && out.Type != mysqlTypeBit {
			out.Type = mysqlTypeNewDecimal
			joinDecimal(&out, items)
			return out
		}
		digits := 0
		unsigned = false
		for _, it := range items {
			digits = max(digits, it.intDigits())
			unsigned = unsigned || it.col.Flags&flagUnsigned != 0
		}
		out.Length = uint32(digits)
		if unsigned {
			out.Flags |= flagUnsigned
		} else {
			out.Length++
		}
		out.Charset, out.Flags = uint16(sql.Collation_binary), out.Flags|flagBinary
	case kindDecimal:
		joinDecimal(&out, items)
	case kindReal:
		// aggregate_numeric_attributes_real: fixed decimals only when no
		// SELECT's are floating.
		var decimals uint8
		var whole, longest uint32
		floating := false
		for _, it := range items {
			c := it.col
			if !floating {
				if c.Decimals >= notFixedDec31 {
					floating = true
				} else {
					decimals = max(decimals, c.Decimals)
					whole = max(whole, c.Length-min(c.Length, uint32(c.Decimals)))
				}
			}
			longest = max(longest, c.Length)
		}
		out.Decimals, out.Length = notFixedDec31, longest
		if !floating {
			out.Decimals, out.Length = decimals, whole+uint32(decimals)
		}
		out.Length = min(out.Length, 255)
		out.Charset, out.Flags = uint16(sql.Collation_binary), out.Flags|flagBinary
	case kindTemporal:
		var decimals uint8
		for _, it := range items {
			if kindOf(it.col) == kindTemporal || kindOf(it.col) == kindDecimal {
				decimals = max(decimals, it.col.Decimals)
			}
		}
		decimals = min(decimals, 6)
		switch out.Type {
		case mysqlTypeDate, mysqlTypeNewDate:
			out.Type, out.Length, decimals = mysqlTypeDate, 10, 0
		case mysqlTypeTime:
			out.Length = 10
		default:
			out.Length = 19
		}
		if decimals > 0 {
			out.Length += uint32(decimals) + 1
		}
		out.Decimals = decimals
		out.Charset, out.Flags = uint16(sql.Collation_binary), out.Flags|flagBinary
	case kindString:
		var chars uint32
		binary, binFlag := false, false
		for _, it := range items {
			chars = max(chars, columnChars(it.col))
			if kindOf(it.col) == kindString {
				binary = binary || it.col.Charset == uint16(sql.Collation_binary)
				binFlag = binFlag || it.col.Flags&flagBinary != 0
			}
		}
		out.Charset, out.Length = collationUTF8MB4, chars*resultCharsetMaxLen
		if binary {
			out.Charset, out.Length = uint16(sql.Collation_binary), chars
		}
		if binFlag || binary {
			out.Flags |= flagBinary
		}
		out.Decimals = notFixedDec
		if tmp {
			out.Decimals = 0
		}
		if out.Type == mysqlTypeBlob {
			var longest uint32
			for _, it := range items {
				longest = max(longest, it.col.Length)
			}
			out.Length, out.Decimals = longest, 0
			out.Flags |= flagBlob
		}
	}
	if tmp && (kindOf(out) == kindInt || kindOf(out) == kindDecimal || kindOf(out) == kindReal) {
		out.Flags &^= flagBinary
	}
	return out
}

// joinDecimal is aggregate_attributes_decimal: the most integer and
// fraction digits, unsigned when every SELECT's column is.
func joinDecimal(out *Column, items []unionItem) {
	digits, decimals, unsigned := 0, 0, true
	for _, it := range items {
		digits = max(digits, it.intDigits())
		if k := kindOf(it.col); k == kindDecimal || k == kindInt {
			decimals = max(decimals, int(it.col.Decimals))
		}
		unsigned = unsigned && it.col.Flags&flagUnsigned != 0
	}
	decimals = min(decimals, maxDecimalScale)
	precision := min(digits+decimals, maxDecimalPrecision)
	out.Length = uint32(precision)
	if decimals > 0 {
		out.Length++
	}
	if unsigned {
		out.Flags |= flagUnsigned
	} else {
		out.Length++
	}
	out.Decimals = uint8(decimals)
	out.Charset, out.Flags = uint16(sql.Collation_binary), out.Flags|flagBinary
}

// unionAsFunc converts a UNION's column to its joined type:
// __heapprof_union_as(x, kind, precision, scale or collation), written by
// castUnionColumns only. CAST cannot: go-mysql-server's CAST(x AS
// DECIMAL(p,0)) is a DECIMAL(65,30), and its types differ from a
// literal's of the same precision, so the UNION would convert again.
const unionAsFunc = "__heapprof_union_as"

// unionValue is x converted to the joined column c (text in collation
// coll, the SELECTs' own: a rollup sorts by it); nil for a column of
// NULLs.
func unionValue(x ast.Expr, c Column, coll sql.CollationID) ast.Expr {
	v, ok := unionConvOf(c, coll)
	if !ok {
		return nil
	}
	num := func(n int) ast.Expr { return ast.NewIntVal([]byte(strconv.Itoa(n))) }
	return &ast.FuncExpr{Name: ast.NewColIdent(unionAsFunc), Exprs: ast.SelectExprs{
		&ast.AliasedExpr{Expr: x}, &ast.AliasedExpr{Expr: ast.NewStrVal([]byte(v.kind))},
		&ast.AliasedExpr{Expr: num(v.p)}, &ast.AliasedExpr{Expr: num(v.s)}}}
}

// unionConv is a conversion unionAsFunc makes: its kind, precision (an
// integer's type code, text's characters) and scale (text's collation).
type unionConv struct {
	kind string
	p, s int
}

// unionConvOf is the conversion to the joined column c; false for a
// column of NULLs.
func unionConvOf(c Column, coll sql.CollationID) (unionConv, bool) {
	switch kindOf(c) {
	case kindInt:
		if c.Flags&flagUnsigned != 0 {
			return unionConv{"unsigned", int(c.Type), 0}, true
		}
		return unionConv{"signed", int(c.Type), 0}, true
	case kindDecimal:
		p := int(c.Length) - signChars(c)
		if c.Decimals > 0 {
			p--
		}
		return unionConv{"decimal", max(p, 1), min(int(c.Decimals), maxDecimalScale)}, true
	case kindReal:
		return unionConv{kind: "double"}, true
	case kindTemporal:
		switch c.Type {
		case mysqlTypeDate:
			return unionConv{kind: "date"}, true
		case mysqlTypeTime:
			return unionConv{"time", 0, int(c.Decimals)}, true
		}
		return unionConv{"datetime", 0, int(c.Decimals)}, true
	case kindString:
		if c.Charset == uint16(sql.Collation_binary) {
			return unionConv{"binary", int(columnChars(c)), int(coll)}, true
		}
		return unionConv{"char", int(columnChars(c)), int(coll)}, true
	}
	return unionConv{}, false
}

// typ is go-mysql-server's type of the conversion's values.
func (v unionConv) typ() (sql.Type, error) {
	switch v.kind {
	case "signed", "unsigned":
		// The joined type's width: a derived table of the UNION is an INT
		// where MariaDB's is.
		return intTypeOf(byte(v.p), v.kind == "unsigned"), nil
	case "decimal":
		return types.CreateDecimalType(uint8(v.p), uint8(v.s))
	case "double":
		return types.Float64, nil
	case "date":
		return types.Date, nil
	case "time":
		return types.Time, nil
	case "datetime":
		return types.MustCreateDatetimeType(sqltypes.Datetime, v.s), nil
	case "char":
		// A VARCHAR of the joined length, as a derived table of the UNION
		// has it; longer text (the join counts no more than the SELECTs
		// say) is kept whole.
		coll := sql.CollationID(v.s)
		if coll == sql.Collation_Unspecified {
			coll = sql.Collation_Default
		}
		if v.p > 0 && v.p <= maxVarcharOctets/resultCharsetMaxLen {
			return types.MustCreateString(sqltypes.VarChar, int64(v.p), coll), nil
		}
		return types.CreateLongText(coll), nil
	case "binary":
		return types.LongBlob, nil
	}
	return nil, fmt.Errorf("%s: unknown kind %q", unionAsFunc, v.kind)
}

// unionAs is unionAsFunc's node. The planner asks a UNION's nodes for
// their children and text many times over: both are kept.
type unionAs struct {
	args []sql.Expression // the one argument
	kind string
	typ  sql.Type
	text string
}

var _ sql.Expression = (*unionAs)(nil)

func newUnionAs(args ...sql.Expression) (sql.Expression, error) {
	if len(args) != 4 {
		return nil, sql.ErrInvalidArgumentNumber.New(unionAsFunc, 4, len(args))
	}
	var lits [3]any
	for i, a := range args[1:] {
		l, ok := a.(*expression.Literal)
		if !ok {
			return nil, fmt.Errorf("%s: argument %d is not a literal", unionAsFunc, i+2)
		}
		lits[i] = l.Value()
	}
	kind, _ := lits[0].(string)
	p, _ := types.CoalesceInt(lits[1])
	s, _ := types.CoalesceInt(lits[2])
	t, err := unionConv{kind, int(p), int(s)}.typ()
	if err != nil {
		return nil, err
	}
	u := &unionAs{args: args[:1:1], kind: kind, typ: t, text: args[0].String()}
	return u, nil
}

func (u *unionAs) Resolved() bool             { return u.args[0].Resolved() }
func (u *unionAs) String() string             { return u.text }
func (u *unionAs) Type() sql.Type             { return u.typ }
func (u *unionAs) IsNullable() bool           { return true }
func (u *unionAs) Children() []sql.Expression { return u.args }
func (u *unionAs) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(u, len(c), 1)
	}
	n := *u
	n.args, n.text = c[:1:1], c[0].String()
	return &n, nil
}

func (u *unionAs) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := u.args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	switch u.kind {
	case "char", "binary":
		// The text MariaDB's UNION stores: the value as the SELECT alone
		// would print it.
		t, ok := valueText(ctx, u.args[0].Type(), v)
		if !ok {
			return v, nil
		}
		if u.kind == "binary" {
			return []byte(t), nil
		}
		return t, nil
	case "double":
		if d, ok := v.(decimal.Decimal); ok {
			f, _ := d.Float64()
			return f, nil
		}
	}
	out, _, err := u.typ.Convert(ctx, v)
	return out, err
}

// unionCollations are the collations of a chain's text columns: the
// first SELECT's whose column is text (utf8mb4_bin for the heapprof
// tables), else the default.
func unionCollations(items [][]unionItem, width int) []sql.CollationID {
	out := make([]sql.CollationID, width)
	for c := range out {
		for _, its := range items {
			if its == nil {
				continue
			}
			if st, ok := its[c].exec.(sql.StringType); ok && types.IsText(its[c].exec) {
				out[c] = st.Collation()
				break
			}
		}
	}
	return out
}

// intTypeOf is go-mysql-server's integer type of a protocol type code.
func intTypeOf(code byte, unsigned bool) sql.Type {
	switch code {
	case mysqlTypeTiny:
		return map[bool]sql.Type{false: types.Int8, true: types.Uint8}[unsigned]
	case mysqlTypeShort, mysqlTypeYear:
		return map[bool]sql.Type{false: types.Int16, true: types.Uint16}[unsigned]
	case mysqlTypeInt24:
		return map[bool]sql.Type{false: types.Int24, true: types.Uint24}[unsigned]
	case mysqlTypeLong:
		return map[bool]sql.Type{false: types.Int32, true: types.Uint32}[unsigned]
	}
	return map[bool]sql.Type{false: types.Int64, true: types.Uint64}[unsigned]
}

// valueText is v, of type t, as the engine prints it in a result; false
// for text, which stays as it is.
func valueText(ctx *sql.Context, t sql.Type, v any) (string, bool) {
	if b, ok := datetimeText(t, v); ok {
		return string(b), true
	}
	switch x := v.(type) {
	case decimal.Decimal:
		if dt, ok := t.(sql.DecimalType); ok {
			return x.StringFixed(int32(dt.Scale())), true
		}
		return x.String(), true
	case float64:
		return string(doubleText(x, 64)), true
	case float32:
		return string(doubleText(float64(x), 32)), true
	case types.Timespan:
		return x.String(), true
	case time.Time:
		if t.Type() == sqltypes.Date {
			return x.Format("2006-01-02"), true
		}
		return x.Format("2006-01-02 15:04:05"), true
	case string, []byte:
		return "", false
	}
	sv, err := t.SQL(ctx, nil, v)
	if err != nil || sv.IsNull() {
		return fmt.Sprint(v), true
	}
	return sv.ToString(), true
}

// branchColumns is what one SELECT of a UNION answers alone: its result
// columns as the engine sends them, and its schema as bound (the types
// go-mysql-server's UNION compares). ok is false for a SELECT that cannot
// be planned alone (a ? marker, a column of an outer query).
func (e *Engine) branchColumns(sctx *sql.Context, s ast.SelectStatement, with *ast.With) (items []unionItem, bound sql.Schema, ok bool) {
	m, _ := sctx.Value(metaKey{}).(*stmtMeta)
	// A rollup's grouping goes through MariaDB's temporary table.
	rollupTop := m != nil && m.rollupTop != nil && plainOrGrouped(s) == m.rollupTop
	if s, ok = typedAlone(s); !ok {
		return nil, nil, false
	}
	if sel := plainOrGrouped(s); sel != nil && sel.With == nil && with != nil {
		// Planned under the statement's WITH, whose tables it may read.
		c := *sel
		c.With = with
		s = &c
	}
	b := planbuilder.New(sctx, e.gms.Analyzer.Catalog, e.gms.EventScheduler, e.gms.Parser)
	node, _, err := b.BindOnly(s, ast.String(s), nil)
	if err != nil || node == nil {
		return nil, nil, false
	}
	bound = node.Schema()
	// The columns as Prepare derives them, into a statement meta of the
	// SELECT's own.
	own := &stmtMeta{keys: e.keys, tempTable: rollupTop}
	if m != nil {
		own.explicit, own.groupOrdered = m.explicit, m.groupOrdered
	}
	bctx := sctx.WithContext(context.WithValue(sctx.Context, metaKey{}, own))
	noteFirstTable(bctx, s)
	n, err := e.preparedNode(bctx, node)
	if err != nil {
		return nil, nil, false
	}
	cols := columns(bctx, n.Schema())
	if len(cols) != len(bound) {
		return nil, nil, false
	}
	sel := plainOrGrouped(s)
	items = make([]unionItem, len(cols))
	for i, c := range cols {
		items[i] = unionItem{col: c, litDigits: -1, exec: n.Schema()[i].Type}
		if sel == nil || i >= len(sel.SelectExprs) {
			continue
		}
		if ae, ok := sel.SelectExprs[i].(*ast.AliasedExpr); ok {
			if v, ok := ae.Expr.(*ast.SQLVal); ok && v.Type == ast.IntVal {
				items[i].litDigits = len(strings.TrimLeft(string(v.Val), "+-"))
			}
		}
	}
	return items, bound, true
}

// typedAlone is s to plan for its column types: s, or a copy of it
// whose ? markers, all outside its select list, are 1 (a WHERE node_id >
// ? of a prepared statement); false when a marker is in the select list,
// whose type only its value says.
func typedAlone(s ast.SelectStatement) (ast.SelectStatement, bool) {
	markers := func(n ast.SQLNode) (found []*ast.SQLVal) {
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if v, ok := node.(*ast.SQLVal); ok && v.Type == ast.ValArg {
				found = append(found, v)
			}
			return true, nil
		}, n)
		return found
	}
	if len(markers(s)) == 0 {
		return s, true
	}
	st, err := ast.Parse(ast.String(s))
	if err != nil {
		return nil, false
	}
	c, ok := st.(ast.SelectStatement)
	if !ok {
		return nil, false
	}
	sel := plainOrGrouped(c)
	if sel == nil || len(markers(sel.SelectExprs)) > 0 {
		return nil, false
	}
	for _, v := range markers(c) {
		v.Type, v.Val = ast.IntVal, []byte("1")
	}
	return c, true
}

// plainOrGrouped is the SELECT s is (through parentheses), nil for a
// chain.
func plainOrGrouped(s ast.SelectStatement) *ast.Select {
	if p, ok := s.(*ast.ParenSelect); ok {
		s = p.Select
	}
	sel, _ := s.(*ast.Select)
	return sel
}

// castUnionColumns converts sel's columns marked in need to the joined
// types: in place, with references to a converted item by its alias or
// position (ORDER BY, GROUP BY, HAVING) written as the item's
// expression, so that the SELECT groups, filters and sorts the values it
// did; text in colls's collations. sel is castable; rest says it is not
// the chain's first SELECT, whose names the UNION's columns take.
func castUnionColumns(sel *ast.Select, bound sql.Schema, joined []Column, colls []sql.CollationID, need []bool, rest bool) {
	for c, expr := range sel.SelectExprs {
		if !need[c] {
			continue
		}
		ae := expr.(*ast.AliasedExpr)
		converted := unionValue(ae.Expr, joined[c], colls[c])
		if converted == nil {
			continue
		}
		item := ae.Expr
		if len(sel.OrderBy) > 0 || len(sel.GroupBy) > 0 || sel.Having != nil {
			if c, ok := copyExpr(ae.Expr); ok {
				item = c // a reference's own copy
			}
		}
		byAlias := func(x ast.Expr) bool {
			n, ok := x.(*ast.ColName)
			return ok && !ae.As.IsEmpty() && n.Qualifier.IsEmpty() && n.Name.Equal(ae.As)
		}
		// A whole ORDER BY or GROUP BY item that is a number is a
		// position; in HAVING it is a number.
		refersTo := func(x ast.Expr) bool {
			v, ok := x.(*ast.SQLVal)
			return byAlias(x) || ok && v.Type == ast.IntVal && string(v.Val) == strconv.Itoa(c+1)
		}
		if writtenConstant(ae.Expr) {
			// Ordering by a constant, converted or not, is no order; and
			// ORDER BY 4 would be a position.
			refersTo = func(ast.Expr) bool { return false }
		}
		for _, o := range sel.OrderBy {
			if refersTo(o.Expr) {
				o.Expr = item
			}
		}
		for i, g := range sel.GroupBy {
			if refersTo(g) {
				sel.GroupBy[i] = item
			}
		}
		if sel.Having != nil {
			sel.Having.Expr = replaceWhere(sel.Having.Expr, byAlias, item)
		}
		name := ae.As
		if name.IsEmpty() && bound != nil && !rest {
			name = ast.NewColIdent(bound[c].Name)
		}
		if name.IsEmpty() {
			// A SELECT after the first (and a recursive CTE's recursive
			// one): the first names the columns. Not the item's text: an
			// alias SUM(x) beside another SUM(x) is go-mysql-server's
			// ERROR 1105.
			name = ast.NewColIdent(fmt.Sprintf("%s_c%d", unionAsFunc, c+1))
		}
		sel.SelectExprs[c] = &ast.AliasedExpr{Expr: converted, As: name,
			InputExpression: ae.InputExpression}
	}
}

// replaceWhere replaces in e (outside subqueries) every expression match
// says is one by with.
func replaceWhere(e ast.Expr, match func(ast.Expr) bool, with ast.Expr) ast.Expr {
	if match(e) {
		return with
	}
	var found []ast.Expr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if _, sub := node.(*ast.Subquery); sub {
			return false, nil
		}
		if x, ok := node.(ast.Expr); ok && match(x) {
			found = append(found, x)
			return false, nil
		}
		return true, nil
	}, e)
	for _, f := range found {
		e = ast.ReplaceExpr(e, f, with)
	}
	return e
}

// copyExpr is a copy of e that shares no node with it (read back from
// its text).
func copyExpr(e ast.Expr) (ast.Expr, bool) {
	st, err := ast.Parse("SELECT " + ast.String(e))
	if err != nil {
		return nil, false
	}
	sel, ok := st.(*ast.Select)
	if !ok || len(sel.SelectExprs) != 1 {
		return nil, false
	}
	ae, ok := sel.SelectExprs[0].(*ast.AliasedExpr)
	if !ok {
		return nil, false
	}
	return ae.Expr, true
}

// unionNeedsCast says which columns lineUpChain converts: those whose
// bound types differ between SELECTs (go-mysql-server would convert them
// its way), those whose joined type some SELECT does not print as, and,
// in a UNION that is not the statement (a derived table's), those a
// reader would see typed otherwise.
func unionNeedsCast(bound []sql.Schema, items [][]unionItem, joined []Column, top bool) (need []bool, any bool) {
	need = make([]bool, len(joined))
	for c := range joined {
		for i := range bound {
			if bound[i] == nil {
				continue // a recursive CTE's recursive SELECT
			}
			// go-mysql-server converts types that differ as bound, and
			// refuses types that differ once analyzed (SUM of a DECIMAL
			// column beside the column: ERROR 1105).
			if i > 0 && (!types.TypesEqual(bound[i][c].Type, bound[0][c].Type) ||
				!types.TypesEqual(items[i][c].exec, items[0][c].exec)) {
				need[c] = true
			}
			col := items[i][c].col
			if kindOf(col) == kindNull {
				continue
			}
			if col.Type != joined[c].Type && !(kindOf(col) == kindString && kindOf(joined[c]) == kindString) ||
				col.Decimals != joined[c].Decimals && kindOf(joined[c]) != kindString && kindOf(joined[c]) != kindReal ||
				(col.Flags&flagUnsigned) != (joined[c].Flags&flagUnsigned) {
				need[c] = true
			}
		}
		// Text a derived table of the UNION has as VARCHAR, not as
		// go-mysql-server's LONGTEXT (CONCAT); integers as wide as
		// MariaDB's (a comparison is an INT, not a TINYINT). The
		// statement's own UNION sends the joined columns whatever the
		// types it runs with.
		if !top && joined[c].Type == mysqlTypeVarString && joined[c].Charset != uint16(sql.Collation_binary) &&
			bound[0][c].Type.Type() != sqltypes.VarChar ||
			kindOf(joined[c]) == kindInt && !types.TypesEqual(bound[0][c].Type, intTypeOf(joined[c].Type, joined[c].Flags&flagUnsigned != 0)) {
			need[c] = true
		}
		any = any || need[c]
	}
	return need, any
}
