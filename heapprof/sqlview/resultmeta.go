package sqlview

// Result column metadata as MariaDB sends it. go-mysql-server types most
// string functions LONGTEXT (CONCAT(id, '#') is TEXT on the wire where
// MariaDB says VARCHAR(256)), comparisons TINYINT (MariaDB: INT(1)) and
// integer literals by their Go type. The values are right; drivers map
// the column types to their own (JDBC's VARCHAR vs LONGVARCHAR, pandas
// dtypes, BI tools' field widths). So the analyzed plan's top-level
// expressions are read once more, after validation, and each result
// column gets the type code, length and decimals MariaDB derives for the
// same expression (its Item::fix_length_and_dec and temporary-table
// rules); Result.Columns use them. Nothing is evaluated differently.

import (
	"context"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// ruleResultMeta is resultMetaRule's id, apart from guard.go's ids.
const ruleResultMeta analyzer.RuleId = 100101

// MySQL protocol type codes (MYSQL_TYPE_*) MariaDB uses for expressions.
const (
	mysqlTypeLong       = 3
	mysqlTypeDouble     = 5
	mysqlTypeNewDecimal = 246
	mysqlTypeLongLong   = 8
	mysqlTypeMediumBlob = 250
	mysqlTypeLongBlob   = 251
	mysqlTypeBlob       = 252
	mysqlTypeVarString  = 253
	mysqlTypeString     = 254
	mysqlTypeTime       = 11
)

// MariaDB's limits for string results: MAX_BLOB_WIDTH octets, a VARCHAR's
// largest length, the longest text a temporary table keeps as VARCHAR
// (CONVERT_IF_BIGGER_TO_BLOB characters), and NOT_FIXED_DEC (the decimals
// of a string function's result).
const (
	maxBlobWidth         = 16777216
	maxVarcharOctets     = 65535
	convertToBlobChars   = 512
	notFixedDec          = 39
	notFixedDec31        = 31 // a DOUBLE's decimals when not fixed
	resultCharsetMaxLen  = 4  // utf8mb4, what results are sent in
	maxWireColumnLength  = 1<<32 - 1
	longTextChars        = types.LongTextBlobMax / resultCharsetMaxLen
	int32DecimalDigitsLE = 10 // an integer literal this long is INT, longer BIGINT
)

// colMeta is one column's definition as MariaDB would send it.
type colMeta struct {
	typ      byte
	length   uint32
	decimals uint8
}

// stmtMeta holds what resultMetaRule derived for a statement's result
// (nil elements: the column keeps go-mysql-server's own type).
type stmtMeta struct {
	cols []*colMeta
	// setSQLMode is the mode a SET sql_mode assigns, the session's once
	// the SET succeeds (sqlmode.go); nil for other statements.
	setSQLMode *sqlMode
	// firstTable is the name (or alias) of the first table in the
	// statement's FROM, which MariaDB's join order tends to read first.
	firstTable string
	// explicit are the collations of the statement's `_cs'x' COLLATE c`
	// literals (collations.go).
	explicit explicitLiterals
	// flags are the result columns' flags (flags.go), keys the heapprof
	// tables' key flags they are derived with.
	flags []colFlags
	keys  keyFlags
	parseNotes
	// rolledUp are the SELECTs of a rollup's added rows (rollup.go);
	// rollupTop the grouped SELECT of the rollup that is the statement,
	// whose first rollupWidth columns are the statement's.
	rolledUp    map[*ast.Select]bool
	rollupTop   *ast.Select
	rollupWidth int
	// tempTable: the result goes through a temporary table whatever the
	// plan (a rollup's grouping).
	tempTable bool
}

// parseNotes is what parsing a statement notes for its result that its
// plan does not show; a prepared statement keeps them for each execution.
type parseNotes struct {
	// union are the columns of a statement that is a UNION chain, as
	// MariaDB joins its SELECTs' (uniontypes.go).
	union []Column
	// groupOrdered: groupOrder sorted a GROUP BY by its groups.
	groupOrdered bool
	// names are result columns' names where the plan has aliases of the
	// engine's own (dupnames.go), by position.
	names map[int]string
}

type metaKey struct{}

// resultMetaRule derives the top-level result's metadata into the
// statement's stmtMeta; subqueries (a non-empty scope) are skipped.
func resultMetaRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !scope.IsEmpty() {
		return n, transform.SameTree, nil
	}
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
		m.cols = deriveMeta(ctx, n)
		m.flags = deriveFlags(ctx, n, m.keys, usesTempTable(ctx, n, m.firstTable), m.explicit)
	}
	return n, transform.SameTree, nil
}

// deriveMeta is the metadata of n's result columns that MariaDB derives
// differently from go-mysql-server's types.
func deriveMeta(ctx *sql.Context, n sql.Node) []*colMeta {
	schema := n.Schema()
	out := make([]*colMeta, len(schema))
	first := ""
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
		first = m.firstTable
	}
	tmp := usesTempTable(ctx, n, first)
	for i, c := range schema {
		e, child := produced(n, i)
		if e == nil || !types.TypesEqual(e.Type(), c.Type) {
			continue
		}
		if _, ok := unalias(e).(*aggregation.GroupConcat); ok {
			out[i] = groupConcatMeta(ctx)
			continue
		}
		out[i] = exprMeta(e, child, tmp)
	}
	return out
}

// groupConcatMeta is MariaDB's definition of GROUP_CONCAT
// (Item_func_group_concat): group_concat_max_len characters, a VARCHAR
// up to 512 of them, beyond that a BLOB whose length is counted in the
// result charset's bytes twice, as MariaDB counts an item's blob (1M
// characters: 16777216).
func groupConcatMeta(ctx *sql.Context) *colMeta {
	chars := int64(1 << 20)
	if v, err := ctx.GetSessionVariable(ctx, "group_concat_max_len"); err == nil {
		if n, ok := v.(uint64); ok {
			chars = int64(min(n, 1<<24))
		}
	}
	if chars <= convertToBlobChars {
		return &colMeta{typ: mysqlTypeVarString, length: uint32(chars * resultCharsetMaxLen)}
	}
	return &colMeta{typ: mysqlTypeBlob, length: uint32(min(chars*resultCharsetMaxLen*resultCharsetMaxLen, maxWireColumnLength))}
}

// passThrough are nodes whose rows are their child's.
func passThrough(n sql.Node) (sql.Node, bool) {
	switch n.(type) {
	case *plan.Filter, *plan.Having, *plan.Sort, *plan.TopN, *plan.Limit, *plan.Offset,
		*plan.Distinct, *plan.OrderedDistinct, *plan.SubqueryAlias, *meteredNode:
		return n.Children()[0], true
	}
	return nil, false
}

// produced is the expression that computes column i of n's result and
// the node whose rows it reads; nil when the column is a table's own.
func produced(n sql.Node, i int) (sql.Expression, sql.Node) {
	e, child := selected(n, i)
	if e == nil {
		return nil, nil
	}
	return resolveRef(e, child)
}

// inSubqueryOf is the subquery of x IN (SELECT ...), nil for other e.
func inSubqueryOf(e sql.Expression) *plan.Subquery {
	switch x := e.(type) {
	case *plan.InSubquery:
		q, _ := x.RightChild.(*plan.Subquery)
		return q
	case *numericInSubquery:
		return x.query
	}
	return nil
}

// readsRows: n reads a table or combines queries (UNION).
func readsRows(n sql.Node) bool {
	found := false
	transform.Inspect(n, func(x sql.Node) bool {
		switch x := x.(type) {
		case *plan.ResolvedTable:
			found = !plan.IsDualTable(x.Table)
		case *plan.TableAlias, *plan.IndexedTableAccess, *plan.SetOp:
			found = true
		}
		return !found
	})
	return found
}

// selected is n's i-th select item as written (a table's column too)
// and the node whose rows it reads.
func selected(n sql.Node, i int) (sql.Expression, sql.Node) {
	for {
		child, ok := passThrough(n)
		if !ok {
			break
		}
		n = child
	}
	var exprs []sql.Expression
	var child sql.Node
	switch n := n.(type) {
	case *plan.Project:
		exprs, child = n.Projections, n.Child
	case *plan.GroupBy:
		exprs, child = n.SelectedExprs, n.Child
	case *plan.Window:
		exprs, child = n.SelectExprs, n.Child
	default:
		return nil, nil
	}
	if i >= len(exprs) {
		return nil, nil
	}
	return exprs[i], child
}

// resolveRef follows a reference to a column computed below (by its
// column id) to the expression computing it.
func resolveRef(e sql.Expression, child sql.Node) (sql.Expression, sql.Node) {
	e = unalias(e)
	gf, ok := e.(*expression.GetField)
	if !ok {
		return e, child
	}
	if p, c := findColumn(child, gf.Id()); p != nil {
		return p, c
	}
	return nil, nil
}

// unalias is the expression an alias names; an assignment @v := x is
// typed by x (MariaDB's Item_func_set_user_var takes its argument's).
func unalias(e sql.Expression) sql.Expression {
	for {
		switch x := e.(type) {
		case *expression.Alias:
			e = x.Child
		case *setUserVar:
			e = x.value
		default:
			return e
		}
	}
}

// findColumn finds the expression computing column id below n.
func findColumn(n sql.Node, id sql.ColumnId) (sql.Expression, sql.Node) {
	if id == 0 || n == nil {
		return nil, nil
	}
	var exprs []sql.Expression
	var child sql.Node
	switch n := n.(type) {
	case *plan.Project:
		exprs, child = n.Projections, n.Child
	case *plan.GroupBy:
		exprs, child = n.SelectedExprs, n.Child
	case *plan.Window:
		exprs, child = n.SelectExprs, n.Child
	case *plan.SubqueryAlias:
		// The alias numbers its columns anew, in order.
		pos, i := -1, 0
		n.Columns().ForEach(func(c sql.ColumnId) {
			if c == id {
				pos = i
			}
			i++
		})
		if pos < 0 {
			return nil, nil
		}
		return produced(n.Child, pos)
	case *plan.ResolvedTable, *plan.TableAlias:
		return nil, nil
	default:
		for _, c := range n.Children() {
			if e, cn := findColumn(c, id); e != nil {
				return e, cn
			}
		}
		return nil, nil
	}
	for _, e := range exprs {
		x, ok := e.(sql.IdExpression)
		if !ok || x.Id() != id {
			continue
		}
		if gf, ok := e.(*expression.GetField); ok {
			return findColumn(child, gf.Id())
		}
		return unalias(e), child
	}
	return findColumn(child, id)
}

// exprMeta is MariaDB's definition of a column computed by e over the
// rows of child; nil keeps go-mysql-server's. tmp says MariaDB's plan
// materializes the result in a temporary table, which stores strings of
// more than 512 characters as BLOB/TEXT columns.
func exprMeta(e sql.Expression, child sql.Node, tmp bool) *colMeta {
	if v, ok := e.(*setUserVar); ok {
		e = unalias(v)
	}
	if rankFunction(e) {
		// Item_sum_row_number and its kin: BIGINT(21) (go-mysql-server's
		// NTILE is a DOUBLE).
		return &colMeta{typ: mysqlTypeLongLong, length: 21}
	}
	switch x := unalias(e).(type) {
	case *window.PercentRank:
		// Item_sum_percent_rank: DOUBLE(17,10), printed with 10 decimals.
		return &colMeta{typ: mysqlTypeDouble, length: 17, decimals: 10}
	case *fnExpr:
		if strings.EqualFold(x.name, cumeDistFunc) {
			return &colMeta{typ: mysqlTypeDouble, length: 17, decimals: 10} // Item_sum_cume_dist
		}
	}
	if s, ok := unalias(e).(*storedDouble); ok {
		e = s.child // defined as what it stores
	}
	if sq, ok := unalias(e).(*plan.Subquery); ok {
		// Item_singlerow_subselect takes its select item's definition
		// ((SELECT COUNT(*) ...) is 21 long, as COUNT(*) is); a table's
		// string column is read through an item, as by MIN and MAX.
		item, c := selected(sq.Query, 0)
		if item == nil {
			return nil
		}
		if m := columnItem(item, c, tmp); m != nil {
			return m
		}
		if src, c := resolveRef(item, c); src != nil {
			return exprMeta(src, c, tmp)
		}
		return nil
	}
	if d, ok := unalias(e).(*dateOffset); ok && types.IsText(d.date.Type()) {
		// Item_date_add_interval of a string: CHAR as wide as a DATETIME
		// with the string's and the interval's fraction digits ('2026-11-20'
		// + INTERVAL 1 DAY is CHAR(19), of a column CHAR(26)).
		date, iv := d.parts()
		dec := max(textFractionDigits(date, datetimeTextDigits), intervalDigits(iv))
		width := 19
		if dec > 0 {
			width += dec + 1
		}
		return &colMeta{typ: mysqlTypeString, length: uint32(width * resultCharsetMaxLen), decimals: uint8(dec)}
	}
	if q := inSubqueryOf(unalias(e)); q != nil && readsRows(q.Query) {
		// x IN (SELECT ... FROM t) as a select item is 21 long on
		// MariaDB; of a FROM-less subquery, 1 as any condition.
		return &colMeta{typ: mysqlTypeLong, length: 21}
	}
	if arg, ok := minMaxOfExpr(e); ok {
		// Item_sum_min_max takes its argument's definition
		// (MAX(ROUND(x, 1)) has 1 decimal).
		if m := exprMeta(arg, child, tmp); m != nil {
			if m.typ == mysqlTypeDouble && m.decimals < notFixedDec31 {
				// Of a DOUBLE with fixed decimals, float_length of them
				// (MAX(-ROUND(x, 1)) is 18, -ROUND(x, 1) 19).
				return &colMeta{typ: mysqlTypeDouble, length: floatLength(int(m.decimals)), decimals: m.decimals}
			}
			if kindOf(Column{Type: m.typ}) == kindInt && m.typ != mysqlTypeYear && m.typ != mysqlTypeBit {
				// Of an integer expression, a BIGINT
				// (Item_sum_hybrid::fix_length_and_dec_numeric:
				// MAX(LENGTH(x)) is a BIGINT(10)); of a non-negative
				// date part, one character more for a sign
				// (fix_length_and_dec_sint_ge0: MAX(HOUR(x)) is 3 long).
				n := m.length
				if f, ok := arg.(sql.FunctionExpression); ok && nonNegativeDateParts[strings.ToLower(f.FunctionName())] {
					n++
				}
				return &colMeta{typ: mysqlTypeLongLong, length: n}
			}
			return m
		}
	}
	if types.IsTimespan(e.Type()) {
		// A TIME: hh:mm:ss and its fraction digits (timePrecision).
		d := timePrecision(e)
		length := 10
		if d > 0 {
			length += d + 1
		}
		return &colMeta{typ: mysqlTypeTime, length: uint32(length), decimals: uint8(d)}
	}
	t := e.Type()
	switch {
	case types.IsText(t):
		if m := minMaxColumn(e, child, tmp); m != nil {
			return m
		}
		if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "format") {
			if n, ok := formatChars(e.Children(), child); ok {
				return stringMeta(n, notFixedDec, tmp)
			}
		}
		chars, ok := charLength(e, child)
		if !ok {
			return nil
		}
		return stringMeta(chars, stringDecimals(e), tmp)
	case t == types.Null:
		return nil
	case types.IsFloat(t):
		if m := realMeta(e, child, tmp); m != nil {
			return m
		}
		if f, ok := e.(sql.FunctionExpression); ok && realFunctions[strings.ToLower(f.FunctionName())] {
			// Item_real_func: float_length(NOT_FIXED_DEC).
			return &colMeta{typ: mysqlTypeDouble, length: 23, decimals: notFixedDec31}
		}
		switch x := e.(type) {
		case *expression.Arithmetic, *expression.Div, *checkedDiv, *expression.UnaryMinus, *checkedArith, *aggregation.Min, *aggregation.Max:
			if x.Type() == types.Float64 {
				// Item_func and MIN/MAX of a DOUBLE:
				// float_length(NOT_FIXED_DEC), DBL_DIG + 8 (MIN/MAX grouped
				// by their own column are 22 on MariaDB).
				return &colMeta{typ: mysqlTypeDouble, length: 23, decimals: notFixedDec31}
			}
		}
		if a, ok := e.(*exactAgg); ok && a.Type() == types.Float64 {
			return doubleAggMeta(a, child)
		}
		if a, ok := e.(sql.Aggregation); ok {
			if arg, ok := a.Children()[0].(*asDouble); ok {
				return varianceMeta(arg.child, child)
			}
		}
		if _, ok := e.(*floatMod); ok {
			// Item_func_mod of a DOUBLE: float_length(NOT_FIXED_DEC).
			return &colMeta{typ: mysqlTypeDouble, length: floatLength(notFixedDec31), decimals: notFixedDec31}
		}
		if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "abs") {
			// Item_func_abs of a DOUBLE: its argument's decimals,
			// float_length of them.
			dec := notFixedDec31
			if m := exprMeta(unalias(e.Children()[0]), child, tmp); m != nil && m.typ == mysqlTypeDouble {
				dec = int(m.decimals)
			}
			return &colMeta{typ: mysqlTypeDouble, length: floatLength(dec), decimals: uint8(dec)}
		}
		if _, ok := e.(*intVal); ok {
			// FLOOR and CEIL of a DOUBLE: float_length(0), no decimals.
			return &colMeta{typ: mysqlTypeDouble, length: floatLength(0)}
		}
		if r, ok := e.(*decimalRound); ok {
			// ROUND(double, d), TRUNCATE(double, d): a DOUBLE with d decimals, printed with d
			// fraction digits (float_length: DBL_DIG + 2 + d).
			if d, ok := roundDigits(r); ok {
				return &colMeta{typ: mysqlTypeDouble, length: uint32(17 + d), decimals: uint8(d)}
			}
			// d not constant: float_length(NOT_FIXED_DEC), DBL_DIG + 8.
			return &colMeta{typ: mysqlTypeDouble, length: 23, decimals: notFixedDec31}
		}
	case types.IsInteger(t):
		if c, ok := e.(*expression.Convert); ok {
			if m := castSignedMeta(c, child); m != nil {
				return m
			}
		}
		if m := intChoiceMeta(e); m != nil {
			return m
		}
		if r, ok := e.(*decimalRound); ok {
			if m := intRoundMeta(r); m != nil {
				return m
			}
		}
		if lit, ok := e.(*expression.Literal); ok {
			// Item_int: type_handler_long_or_longlong, INT up to 9
			// characters (SELECT 1000000000 is a BIGINT).
			n, _ := numLength(lit, child)
			if n <= int32DecimalDigitsLE-1 {
				return &colMeta{typ: mysqlTypeLong, length: uint32(n)}
			}
			return &colMeta{typ: mysqlTypeLongLong, length: uint32(n)}
		}
		if t == types.Boolean {
			// Comparisons, AND/OR/NOT, IS NULL, LIKE, IN: INT(1).
			return &colMeta{typ: mysqlTypeLong, length: 1}
		}
		if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "unix_timestamp") {
			return &colMeta{typ: mysqlTypeLongLong, length: unixTimestampDigits}
		}
		if d, ok := e.(*exactIntDiv); ok {
			// Item_func_int_div of a DECIMAL: x's integer digits, INT
			// when they fit in 9.
			if p, s, ok := decimalPS(d.LeftChild, child); ok {
				n := max(p-s, 1)
				if n <= int32DecimalDigitsLE-1 {
					return &colMeta{typ: mysqlTypeLong, length: uint32(n)}
				}
				return &colMeta{typ: mysqlTypeLongLong, length: uint32(n)}
			}
		}
		if f, ok := e.(sql.FunctionExpression); ok {
			if m, ok := intStringFunctions[strings.ToLower(f.FunctionName())]; ok {
				return &m
			}
		}
		if n, ok := numLength(e, child); ok {
			mt, _ := sqltypes.TypeToMySQL(t.Type())
			switch e.(type) {
			case *expression.IntDiv, *checkedArith, *expression.Arithmetic, *intMod, *expression.Mod:
				// Item_num_op (+ - * % DIV) of integers: INT when it fits
				// in 9 digits (type_handler_long_or_longlong);
				// go-mysql-server's is BIGINT (WEEK(x, 6) + 1, Metabase's
				// week of year).
				if n <= int32DecimalDigitsLE-1 {
					mt = mysqlTypeLong
				}
			}
			if f, ok := e.(sql.FunctionExpression); ok && intDateParts[strings.ToLower(f.FunctionName())] && n < 11 {
				// MariaDB's INT functions of a date (go-mysql-server's
				// are BIGINT): INT below 11 characters.
				mt = mysqlTypeLong
			}
			if f, ok := e.(sql.FunctionExpression); ok && tmp && signedDatePart[strings.ToLower(f.FunctionName())] {
				// A temporary table's column has room for a sign.
				n++
			}
			return &colMeta{typ: byte(mt), length: uint32(n)}
		}
	case types.IsDecimal(t):
		scale := int(t.(sql.DecimalType).Scale())
		if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "unix_timestamp") {
			// Item_func_unix_timestamp: 17 digits and the fraction.
			return &colMeta{typ: mysqlTypeNewDecimal, length: uint32(unixTimestampDigits + 1 + scale), decimals: uint8(scale)}
		}
		if p, s, ok := decimalPS(e, child); ok && s == scale {
			return &colMeta{typ: mysqlTypeNewDecimal, length: decimalLength(p, s), decimals: uint8(s)}
		}
	}
	return nil
}

// intDateParts are the functions of a date MariaDB types INT (BIGINT
// from 11 characters on) where go-mysql-server's are BIGINT.
var intDateParts = map[string]bool{"datediff": true, "to_days": true, "weekofyear": true, "microsecond": true, "extract": true,
	"period_add": true, "period_diff": true}

// intStringFunctions are MariaDB's definitions of the integer functions
// of strings whose go-mysql-server types differ (INSTR and LOCATE:
// Item_func_locate, MY_INT32_NUM_DECIMAL_DIGITS; ASCII, ORD, STRCMP,
// FIELD, FIND_IN_SET: an INT of a few characters, signed, where
// go-mysql-server says TINYINT UNSIGNED or BIGINT; BIT_LENGTH: a BIGINT;
// sql/item_func.h, item_strfunc.h, item_cmpfunc.h, 10.11.18).
var intStringFunctions = map[string]colMeta{
	"instr": {typ: mysqlTypeLong, length: 11}, "locate": {typ: mysqlTypeLong, length: 11},
	"ascii": {typ: mysqlTypeLong, length: 3}, "ord": {typ: mysqlTypeLong, length: 7},
	"strcmp": {typ: mysqlTypeLong, length: 2}, "field": {typ: mysqlTypeLong, length: 3},
	"find_in_set": {typ: mysqlTypeLong, length: 3}, "bit_length": {typ: mysqlTypeLongLong, length: 11},
}

// nonNegativeDateParts are the functions MariaDB types as a non-negative
// INT (Item_long_ge0_func and its date and time field kinds,
// sql/item_timefunc.h).
var nonNegativeDateParts = map[string]bool{"to_days": true, "dayofmonth": true, "day": true, "month": true, "dayofyear": true,
	"hour": true, "minute": true, "quarter": true, "second": true, "week": true, "weekofyear": true, "year": true, "microsecond": true}

// extractLength is EXTRACT(unit FROM x)'s length as MariaDB's
// Item_extract::fix_length_and_dec gives it: the unit's digits, a sign
// for units from DAY on, and a day part of 2 digits for a date or time
// (7 for other x, an interval that may be long).
func extractLength(e sql.Expression) (int64, bool) {
	kids := e.Children()
	if len(kids) != 2 {
		return 0, false
	}
	unit, ok := constString(kids[0])
	if !ok {
		return 0, false
	}
	day := int64(7)
	if t := kids[1].Type(); types.IsTime(t) || types.IsTimespan(t) {
		day = 2
	}
	switch strings.ToUpper(unit) {
	case "YEAR":
		return 4, true
	case "YEAR_MONTH":
		return 6, true
	case "QUARTER":
		return 1, true
	case "MONTH", "WEEK":
		return 2, true
	case "DAY":
		return day + 1, true
	case "DAY_HOUR":
		return day + 3, true
	case "DAY_MINUTE":
		return day + 5, true
	case "DAY_SECOND":
		return day + 7, true
	case "HOUR", "MINUTE", "SECOND":
		return 3, true
	case "HOUR_MINUTE", "MINUTE_SECOND":
		return 5, true
	case "HOUR_SECOND", "MICROSECOND":
		return 7, true
	case "DAY_MICROSECOND":
		return day + 13, true
	case "HOUR_MICROSECOND":
		return 13, true
	case "MINUTE_MICROSECOND":
		return 11, true
	case "SECOND_MICROSECOND":
		return 9, true
	}
	return 0, false
}

// formatMaxDecimals is FORMAT's most fraction digits (MariaDB's
// FORMAT_MAX_DECIMALS), also what it assumes when d is not a constant.
const formatMaxDecimals = 38

// formatChars is the length MariaDB gives FORMAT(x, d)
// (Item_func_format::fix_length_and_dec): x's integer digits (one more
// when rounding to d digits may carry), a separator per three of them, a
// sign, and d digits after a point.
func formatChars(args []sql.Expression, child sql.Node) (int64, bool) {
	if len(args) < 2 {
		return 0, false
	}
	dec := int64(formatMaxDecimals)
	if d, ok := constInt(args[1]); ok {
		dec = max(0, min(d, formatMaxDecimals))
	}
	var intDigits, scale int64
	switch t := args[0].Type(); {
	case types.IsInteger(t):
		intDigits = intTypeDigits(args[0])
	case types.IsDecimal(t):
		p, s, ok := decimalPS(args[0], child)
		if !ok {
			dt := t.(sql.DecimalType)
			p, s = int(dt.Precision()), int(dt.Scale())
		}
		intDigits, scale = int64(max(p-s, 1)), int64(s)
	case t == types.Null:
		intDigits = 309
	default:
		// DOUBLE (text is read as one): DBL_MAX's 309 digits, its
		// decimals (realdecimals.go).
		intDigits, scale = 309, int64(realDecimals(args[0], child))
	}
	if dec < scale {
		intDigits++
	}
	n := intDigits + intDigits/3 + 1
	if dec > 0 {
		n += dec + 1
	}
	return n, true
}

// intTypeDigits is the digits of e's integer type as MariaDB types it
// (an integer literal is INT up to ten digits, else BIGINT).
func intTypeDigits(e sql.Expression) int64 {
	if lit, ok := unalias(e).(*expression.Literal); ok {
		n, _ := numLength(lit, nil)
		if n <= int32DecimalDigitsLE {
			return 10
		}
		return max(n, 19) // beyond BIGINT a DECIMAL(n, 0)
	}
	n := intLength(e.Type())
	if !types.IsUnsigned(e.Type()) {
		n--
	}
	return n
}

// intChoiceMeta is the definition of IF, CASE, IFNULL and COALESCE
// choosing among integer literals: MariaDB's INT (BIGINT beyond ten
// digits) as long as the most digits and a sign (an IF with a NULL
// branch takes the other branch's own); go-mysql-server says BIGINT or
// TINYINT. nil for other expressions.
func intChoiceMeta(e sql.Expression) *colMeta {
	var vals []sql.Expression
	switch x := unalias(e).(type) {
	case *function.If:
		vals = x.Children()[1:]
		if len(vals) == 2 {
			for i, v := range vals {
				if isNullLiteral(v) {
					if lit, ok := vals[1-i].(*expression.Literal); ok && types.IsInteger(lit.Type()) {
						n, _ := numLength(lit, nil)
						return intLiteralMeta(n, n)
					}
					return nil
				}
			}
		}
	case *expression.Case:
		for _, b := range x.Branches {
			vals = append(vals, b.Value)
		}
		if x.Else != nil {
			vals = append(vals, x.Else)
		}
	case sql.FunctionExpression:
		switch strings.ToLower(x.FunctionName()) {
		case "ifnull", "coalesce":
			vals = e.Children()
		}
	}
	if len(vals) == 0 {
		return nil
	}
	var digits, longest int64
	for _, v := range vals {
		if isNullLiteral(v) {
			continue
		}
		lit, ok := v.(*expression.Literal)
		if !ok || !types.IsInteger(lit.Type()) {
			return nil
		}
		n, _ := numLength(lit, nil)
		longest = max(longest, n)
		if i, ok := constInt(lit); ok && i < 0 {
			n-- // the sign is counted once, below
		}
		digits = max(digits, n)
	}
	return intLiteralMeta(digits+1, longest)
}

// intLiteralMeta is an INT of length n, BIGINT when the longest literal
// behind it has more than ten characters.
func intLiteralMeta(n, longest int64) *colMeta {
	if longest <= int32DecimalDigitsLE {
		return &colMeta{typ: mysqlTypeLong, length: uint32(n)}
	}
	return &colMeta{typ: mysqlTypeLongLong, length: uint32(n)}
}

func isNullLiteral(e sql.Expression) bool {
	lit, ok := e.(*expression.Literal)
	return ok && lit.Value() == nil
}

// intRoundMeta is ROUND and TRUNCATE of an integer as MariaDB types them:
// of a literal an INT as long as the literal (ROUND to tens and beyond
// one longer, for the carry), ROUND of a BIGINT column to tens and beyond
// a DECIMAL one digit longer. nil where go-mysql-server's type stands.
func intRoundMeta(r *decimalRound) *colMeta {
	kids := r.Children()
	neg := false
	if len(kids) > 1 {
		d, ok := constInt(kids[1])
		if !ok {
			return nil
		}
		neg = d < 0
	}
	if lit, ok := unalias(kids[0]).(*expression.Literal); ok && types.IsInteger(lit.Type()) {
		n, _ := numLength(lit, nil)
		l := n
		if neg && !r.trunc {
			l++
		}
		return intLiteralMeta(l, n)
	}
	if neg && !r.trunc && kids[0].Type().Type() == sqltypes.Int64 {
		return &colMeta{typ: mysqlTypeNewDecimal, length: uint32(intLength(kids[0].Type()) + 1)}
	}
	return nil
}

// unixTimestampDigits is the integer digits MariaDB gives UNIX_TIMESTAMP.
const unixTimestampDigits = 17

// signedDatePart are the date and time parts MariaDB's temporary tables
// widen by a sign's place.
var signedDatePart = map[string]bool{"hour": true, "minute": true, "second": true, "day": true, "dayofmonth": true,
	"month": true, "week": true, "quarter": true, "dayofyear": true, "year": true}

// decimalLength is a signed DECIMAL(p, s)'s printed length.
func decimalLength(p, s int) uint32 {
	n := p + 1
	if s > 0 {
		n++
	}
	return uint32(n)
}

// roundDigits is ROUND's constant number of digits (0 without one).
func roundDigits(r *decimalRound) (int, bool) {
	kids := r.Children()
	if len(kids) < 2 {
		return 0, true
	}
	d, ok := constInt(kids[1])
	if !ok {
		return 0, false
	}
	return int(max(0, min(d, maxDecimalScale))), true
}

// decimalPS is MariaDB's decimal precision and scale of a numeric
// expression (Item::decimal_precision and decimals): how DECIMAL results
// are sized.
func decimalPS(e sql.Expression, child sql.Node) (p, s int, ok bool) {
	e = unalias(e)
	t := e.Type()
	switch x := e.(type) {
	case *expression.GetField:
		if pe, c := findColumn(child, x.Id()); pe != nil {
			return decimalPS(pe, c)
		}
	case *plan.Subquery:
		if pe, c := selected(x.Query, 0); pe != nil {
			return decimalPS(pe, c)
		}
	case *expression.Div:
		return divPS(x, child)
	case *exactDiv:
		return divPS(x.Div, child)
	case *shownDecimal:
		return decimalPS(x.child, child)
	case *checkedArith:
		return arithPS(x.Arithmetic, child)
	case *exactArith:
		return arithPS(x.Arithmetic, child)
	case *intVal:
		if types.IsDecimal(x.child.Type()) {
			return x.digits(), 0, true
		}

	case *exactMod:
		// Item_func_mod::result_precision: the larger precision and scale.
		p1, s1, ok1 := decimalPS(x.LeftChild, child)
		p2, s2, ok2 := decimalPS(x.RightChild, child)
		return max(p1, p2), max(s1, s2), ok1 && ok2
	case *expression.Arithmetic:
		return arithPS(x, child)
	case *decimalRound:
		p0, s0, ok := decimalPS(x.Children()[0], child)
		d, okd := roundDigits(x)
		if !ok || !okd {
			return 0, 0, false
		}
		p = p0 - s0 + d
		if d < s0 && !x.trunc {
			p++ // rounding may carry into a new digit
		}
		return max(p, 1), d, true
	case *extremum:
		return choicePS(x.args, child)
	case *exactNullIf:
		return decimalPS(x.LeftChild, child)
	case *numNullIf:
		return decimalPS(x.LeftChild, child)
	case *numericNullIf:
		return decimalPS(x.LeftChild, child)
	case *function.NullIf:
		return decimalPS(x.LeftChild, child)
	case *exactCoalesce:
		return choicePS(x.Children(), child)
	case *function.Coalesce:
		return choicePS(x.Children(), child)
	case *function.IfNull:
		return choicePS(x.Children(), child)
	case *exactIfNull:
		return choicePS(x.Children(), child)
	case *function.If:
		return choicePS(x.Children()[1:], child)
	case *exactIf:
		return choicePS(x.Children()[1:], child)
	case *exactCase, *expression.Case:
		return choicePS(caseValues(x), child)
	case *exactAgg:
		if dt, ok := x.Type().(sql.DecimalType); ok {
			pa, _, ok := decimalPS(x.child, child)
			if !ok {
				return int(dt.Precision()), int(dt.Scale()), true
			}
			if x.avg {
				return min(pa+divPrecisionIncrement, maxDecimalPrecision), int(dt.Scale()), true
			}
			return min(pa+22, maxDecimalPrecision), int(dt.Scale()), true
		}
	}
	if f, ok := e.(sql.FunctionExpression); ok && strings.EqualFold(f.FunctionName(), "abs") && types.IsDecimal(t) {
		return decimalPS(e.Children()[0], child) // Item_func_abs: its argument's
	}
	switch {
	case types.IsDecimal(t):
		dt := t.(sql.DecimalType)
		return int(dt.Precision()), int(dt.Scale()), true
	case types.IsInteger(t):
		if n, ok := numLength(e, child); ok {
			// A column's length has a sign's place; a literal's only
			// when it is negative (1000 has 4 digits).
			if lit, isLit := e.(*expression.Literal); !types.IsUnsigned(t) && (!isLit || strings.HasPrefix(lit.String(), "-")) {
				n--
			}
			return int(max(n, 1)), 0, true
		}
		return intDigits(t), 0, true
	case isTemporal(t):
		_, p, s := argKind(t)
		return p, s, true
	}
	return 0, 0, false
}

// choicePS is the DECIMAL type of an expression answering one of args
// (GREATEST, COALESCE, CASE, IF, NULLIF): the most integer digits and the
// most fraction digits of any (a NULL counts none), as MariaDB's
// Type_handler_decimal_result aggregates them.
func choicePS(args []sql.Expression, child sql.Node) (int, int, bool) {
	ip, sc, any := 0, 0, false
	for _, a := range args {
		if a.Type() == types.Null {
			continue
		}
		pa, sa, ok := decimalPS(a, child)
		if !ok {
			return 0, 0, false
		}
		ip, sc, any = max(ip, pa-sa), max(sc, sa), true
	}
	return min(ip+sc, maxDecimalPrecision), sc, any
}

// divPS: x / y has x's digits, y's scale and 4 more.
func divPS(x *expression.Div, child sql.Node) (int, int, bool) {
	p1, s1, ok1 := decimalPS(x.LeftChild, child)
	_, s2, ok2 := decimalPS(x.RightChild, child)
	return min(p1+s2+divPrecisionIncrement, maxDecimalPrecision), min(s1+divPrecisionIncrement, maxDecimalScale), ok1 && ok2
}

// arithPS: + and - keep the longer integer part and the larger scale and
// may carry; * adds both.
func arithPS(a *expression.Arithmetic, child sql.Node) (int, int, bool) {
	p1, s1, ok1 := decimalPS(a.LeftChild, child)
	p2, s2, ok2 := decimalPS(a.RightChild, child)
	if !ok1 || !ok2 {
		return 0, 0, false
	}
	switch a.Op {
	case "+", "-":
		sc := max(s1, s2)
		return min(max(p1-s1, p2-s2)+sc+1, maxDecimalPrecision), sc, true
	case "*":
		return min(p1+p2, maxDecimalPrecision), min(s1+s2, maxDecimalScale), true
	}
	return 0, 0, false
}

// minMaxOfExpr is the argument of MIN or MAX (not over a window) of an
// expression other than a column.
func minMaxOfExpr(e sql.Expression) (sql.Expression, bool) {
	var a sql.Aggregation
	switch x := e.(type) {
	case *aggregation.Min:
		a = x
	case *aggregation.Max:
		a = x
	default:
		return nil, false
	}
	if a.Window() != nil {
		return nil, false
	}
	arg := unalias(a.Children()[0])
	if _, col := arg.(*expression.GetField); col {
		return nil, false
	}
	return arg, true
}

// minMaxColumn: MIN and MAX of a table's column have the column's type
// (in a temporary table MariaDB copies the field, whatever its length);
// nil for anything else.
func minMaxColumn(e sql.Expression, child sql.Node, tmp bool) *colMeta {
	f, ok := e.(sql.FunctionExpression)
	if !ok {
		return nil
	}
	switch strings.ToLower(f.FunctionName()) {
	case "min", "max":
		return columnItem(e.Children()[0], child, tmp)
	}
	return nil
}

// columnItem is the definition of an item reading a table's string
// column (MIN, MAX, a subquery's select item); nil for anything else.
func columnItem(e sql.Expression, child sql.Node, tmp bool) *colMeta {
	gf, ok := unalias(e).(*expression.GetField)
	if !ok {
		return nil
	}
	if p, _ := findColumn(child, gf.Id()); p != nil {
		return nil
	}
	st, ok := gf.Type().(sql.StringType)
	if !ok {
		return nil
	}
	// Outside a temporary table the aggregate has the column's type
	// and NOT_FIXED_DEC.
	var decimals uint8
	if !tmp {
		decimals = notFixedDec
	}
	if st.Type() == sqltypes.Text {
		// The field's bytes, each a character of up to 4 bytes, and the
		// item's once more when not copied (MariaDB counts blob lengths so).
		n := st.MaxByteLength() * resultCharsetMaxLen
		if !tmp {
			n *= resultCharsetMaxLen
		}
		return &colMeta{typ: mysqlTypeBlob, length: uint32(min(n, maxWireColumnLength)), decimals: decimals}
	}
	return &colMeta{typ: mysqlTypeVarString, length: uint32(st.Length() * resultCharsetMaxLen), decimals: decimals}
}

// stringMeta is the definition of a string result of chars characters:
// VARCHAR up to 65535 octets, then MEDIUMBLOB or LONGBLOB by size
// (Type_handler::string_type_handler), blobs' lengths counted in the
// result charset's bytes per character; in a temporary table, a BLOB
// (TEXT, MEDIUMTEXT, LONGTEXT) beyond 512 characters.
func stringMeta(chars int64, decimals uint8, tmp bool) *colMeta {
	octets := min(chars*resultCharsetMaxLen, maxBlobWidth)
	if tmp {
		if chars <= convertToBlobChars {
			return &colMeta{typ: mysqlTypeVarString, length: uint32(octets)}
		}
		var blob int64
		switch {
		case octets <= types.TinyTextBlobMax:
			blob = types.TinyTextBlobMax
		case octets <= types.TextBlobMax:
			blob = types.TextBlobMax
		case octets <= types.MediumTextBlobMax:
			blob = types.MediumTextBlobMax
		default:
			blob = types.LongTextBlobMax
		}
		return &colMeta{typ: mysqlTypeBlob, length: uint32(min(blob*resultCharsetMaxLen, maxWireColumnLength))}
	}
	switch {
	case octets >= maxBlobWidth:
		return &colMeta{typ: mysqlTypeLongBlob, length: uint32(octets * resultCharsetMaxLen), decimals: decimals}
	case octets >= 65536:
		return &colMeta{typ: mysqlTypeMediumBlob, length: uint32(octets * resultCharsetMaxLen), decimals: decimals}
	case octets >= maxVarcharOctets:
		return &colMeta{typ: mysqlTypeBlob, length: uint32(octets * resultCharsetMaxLen), decimals: decimals}
	}
	return &colMeta{typ: mysqlTypeVarString, length: uint32(octets), decimals: decimals}
}

// doubleAggMeta is MariaDB's SUM or AVG of a DOUBLE or of text
// (Item_sum_sum and Item_sum_avg::fix_length_and_dec_double): SUM keeps
// the argument's decimals, AVG adds div_precision_increment; fixed
// decimals print that many digits (AVG(CAST(x AS CHAR)) is 0.0000), and
// AVG is no longer than its argument and the increment.
func doubleAggMeta(a *exactAgg, child sql.Node) *colMeta {
	arg, argChild := resolveRef(a.child, child)
	if arg == nil {
		arg, argChild = unalias(a.child), child
	}
	dec := notFixedDec31
	if types.IsText(arg.Type()) {
		dec = min(int(stringDecimals(arg)), notFixedDec31)
	}
	if a.avg {
		dec = min(dec+divPrecisionIncrement, notFixedDec31)
	}
	m := &colMeta{typ: mysqlTypeDouble, length: floatLength(dec), decimals: uint8(dec)}
	if a.avg && types.IsText(arg.Type()) {
		if chars, ok := charLength(arg, argChild); ok {
			m.length = uint32(min(int64(m.length), chars*resultCharsetMaxLen+divPrecisionIncrement))
		}
	}
	return m
}

// numberChars is the length of a number's text as MariaDB counts it (its
// column's length): an expression's definition, a DOUBLE column's 22
// (DBL_DIG + 7), an integer's digits and sign, a DECIMAL's digits, point
// and sign.
func numberChars(e sql.Expression, child sql.Node) (int64, bool) {
	if m := exprMeta(unalias(e), child, false); m != nil {
		return int64(m.length), true
	}
	switch t := e.Type(); {
	case types.IsFloat(t):
		return 22, true
	case types.IsDecimal(t):
		if p, s, ok := decimalPS(e, child); ok {
			return int64(decimalLength(p, s)), true
		}
	}
	return numLength(e, child)
}

// castSignedMeta is MariaDB's CAST(x AS SIGNED) of a DOUBLE, DECIMAL,
// text or date x (Item_func_signed::fix_length_and_dec_double, _generic
// and _string): a DOUBLE's is BIGINT(20); another's is as long as x's
// text, at most 21 and at least 2, INT when that is 9 or less
// (type_handler_long_or_longlong). nil for other CASTs.
func castSignedMeta(c *expression.Convert, child sql.Node) *colMeta {
	ci, ok := c.Child.(*castInt)
	if !ok || ci.unsigned {
		return nil
	}
	x := ci.child
	var n int64
	switch t := x.Type(); {
	case types.IsFloat(t):
		return &colMeta{typ: mysqlTypeLongLong, length: 20}
	case types.IsDecimal(t):
		p, s, ok := decimalPS(x, child)
		if !ok {
			return nil
		}
		n = int64(decimalLength(p, s))
	case types.IsText(t):
		if n, ok = charLength(x, child); !ok {
			return nil
		}
	case isTemporal(t):
		n = int64(datetimeLength(t))
		if t.Type() == types.Date.Type() {
			n = 10
		}
	default:
		return nil
	}
	n = max(min(n, 21), 2)
	if n <= int32DecimalDigitsLE-1 {
		return &colMeta{typ: mysqlTypeLong, length: uint32(n)}
	}
	return &colMeta{typ: mysqlTypeLongLong, length: uint32(n)}
}

// realFunctions are MariaDB's Item_real_func: DOUBLEs of their
// arguments' values, without fixed decimals.
var realFunctions = map[string]bool{
	"sqrt": true, "pow": true, "power": true, "exp": true, "ln": true, "log": true, "log2": true, "log10": true,
	"sin": true, "cos": true, "tan": true, "asin": true, "acos": true, "atan": true, "atan2": true, "cot": true,
	"degrees": true, "radians": true, "rand": true,
}

// floatLength is MariaDB's float_length(decimals): DBL_DIG + 2 + decimals
// digits, DBL_DIG + 8 when they are not fixed.
func floatLength(decimals int) uint32 {
	if decimals >= notFixedDec31 {
		return 23
	}
	return uint32(17 + decimals)
}

// stringDecimals: MariaDB marks string functions' results NOT_FIXED_DEC,
// CAST(x AS CHAR) and the date formatting functions' 0.
func stringDecimals(e sql.Expression) uint8 {
	if c, ok := e.(*expression.Convert); ok && types.IsText(c.Type()) {
		return 0
	}
	if f, ok := e.(sql.FunctionExpression); ok {
		switch strings.ToLower(f.FunctionName()) {
		case "date_format", "time_format", "from_unixtime", "hex", "dayname", "monthname":
			return 0
		}
	}
	return notFixedDec
}

// constInt is e's value when e is an integer literal.
func constInt(e sql.Expression) (int64, bool) {
	lit, ok := unalias(e).(*expression.Literal)
	if !ok {
		return 0, false
	}
	n, ok := types.CoalesceInt(lit.Value())
	return int64(n), ok
}

// constText is the value of text e made of literals by string
// functions that do not multiply it (CONCAT('a', 'b')), which MariaDB
// evaluates while it types the statement; false for anything reading a
// row, a variable or the clock, and for REPEAT, LPAD and the like, which
// could build a large string before the statement runs.
func constText(e sql.Expression) (string, bool) {
	if s, ok := constString(e); ok {
		return s, true
	}
	nodes, constant := 0, true
	transform.InspectExpr(e, func(x sql.Expression) bool {
		nodes++
		switch x := x.(type) {
		case *expression.Literal, *dateValue:
		case sql.FunctionExpression:
			constant = constTextFunctions[strings.ToLower(x.FunctionName())]
		default:
			constant = false
		}
		return !constant || nodes > 8
	})
	if !constant || nodes > 8 {
		return "", false
	}
	v, err := e.Eval(sql.NewEmptyContext(), nil)
	s, ok := v.(string)
	return s, err == nil && ok
}

// constTextFunctions are the functions constText evaluates.
var constTextFunctions = map[string]bool{
	"concat": true, "concat_ws": true, "trim": true, "ltrim": true, "rtrim": true, "upper": true, "ucase": true,
	"lower": true, "lcase": true, "left": true, "right": true, "substring": true, "substr": true, "mid": true,
}

// constString is e's value when e is a string literal.
func constString(e sql.Expression) (string, bool) {
	lit, ok := unalias(e).(*expression.Literal)
	if !ok {
		return "", false
	}
	s, ok := lit.Value().(string)
	return s, ok
}

// charLength is MariaDB's max_char_length of e: the most characters its
// text can have.
func charLength(e sql.Expression, child sql.Node) (int64, bool) {
	e = unalias(e)
	if gf, ok := e.(*expression.GetField); ok {
		if p, c := findColumn(child, gf.Id()); p != nil {
			return charLength(p, c)
		}
		return typeChars(gf.Type())
	}
	if tt, ok := e.(*temporalText); ok {
		return typeChars(tt.child.Type())
	}
	if tt, ok := e.(*timeAsText); ok {
		return int64(tt.length()), true
	}
	if types.IsFloat(e.Type()) {
		// A DOUBLE read as text is as long as it is (CONCAT(x * 1.5) 23,
		// CONCAT of a DOUBLE column 22).
		if m := exprMeta(e, child, false); m != nil && m.typ == mysqlTypeDouble {
			return int64(m.length), true
		}
	}
	if ft, ok := e.(*fixedDoubleText); ok {
		// The DOUBLE's max_length (PI() is 8 long).
		if m := exprMeta(unalias(ft.child), child, false); m != nil {
			return int64(m.length), true
		}
		return int64(ft.length), true
	}
	if nt, ok := e.(*numberText); ok {
		return numberChars(nt.child, child)
	}
	if et, ok := e.(*enumText); ok {
		return typeChars(et.Enum.Type())
	}
	if c, ok := e.(*expression.Convert); ok && types.IsText(c.Type()) && !types.IsTextBlob(c.Type()) {
		if st, ok := c.Type().(sql.StringType); ok {
			return st.Length(), true // CAST(x AS CHAR(n))
		}
	}
	if c, ok := e.(*expression.Convert); ok && types.IsText(c.Type()) {
		return charLength(c.Children()[0], child) // CAST(x AS CHAR)
	}
	if c, ok := e.(*expression.CollatedExpression); ok {
		// x COLLATE c: x's characters (go-mysql-server types it LONGTEXT).
		return charLength(c.Child(), child)
	}
	if lit, ok := e.(*expression.Literal); ok {
		switch v := lit.Value().(type) {
		case string:
			return int64(utf8.RuneCountInString(v)), true
		case nil:
			return 0, true
		}
		return typeChars(lit.Type())
	}
	if !types.IsText(e.Type()) {
		if types.IsDecimal(e.Type()) {
			if p, s, ok := decimalPS(e, child); ok {
				return int64(decimalLength(p, s)), true
			}
		}
		if n, ok := numLength(e, child); ok {
			return n, true
		}
		return typeChars(e.Type())
	}
	if vals := caseValues(e); vals != nil {
		return maxChars(vals, child)
	}
	f, ok := e.(sql.FunctionExpression)
	if !ok {
		return 0, false
	}
	args := e.Children()
	arg := func(i int) (int64, bool) {
		if i >= len(args) {
			return 0, false
		}
		return charLength(args[i], child)
	}
	switch name := strings.ToLower(f.FunctionName()); name {
	case "upper", "ucase", "lower", "lcase", "trim", "ltrim", "rtrim", "reverse", "substring_index",
		"min", "max", "any_value", "first", "last", "nullif":
		return arg(0)
	case "if":
		return maxChars(args[1:], child)
	case "ifnull", "coalesce", "greatest", "least":
		return maxChars(args, child)
	case "hex":
		// Item_func_hex: twice the argument's length in bytes; of a
		// number 16.
		switch t := args[0].Type(); {
		case numeric(t):
			return 16, true
		case t == types.Null:
			return 0, true
		}
		n, ok := arg(0)
		if !ok {
			return 0, false
		}
		if _, temporal := args[0].(*temporalText); !temporal {
			if st, isText := args[0].Type().(sql.StringType); isText {
				n *= st.CharacterSet().MaxLength()
			}
		}
		return 2 * n, true
	case "dayname", "monthname":
		// The longest name in lc_time_names' en_US (Wednesday,
		// September).
		return 9, true
	case "bin", "oct", "conv":
		// 64 digits and a sign, as Debian 12's MariaDB 10.11 defines them
		// (TestNumericFunctionsMatchMariaDB).
		return 65, true
	case "concat", "concat_ws":
		// Each argument measured once: measuring CONCAT_WS's separator
		// again doubled the work per level of nesting.
		var sum, sep int64
		for i := range args {
			n, ok := arg(i)
			if !ok {
				return 0, false
			}
			if i == 0 {
				sep = n
			}
			sum += n
		}
		if name == "concat_ws" && len(args) > 1 {
			sum += sep*int64(len(args)-2) - sep
		}
		return sum, true
	case "left", "right":
		n, ok := arg(0)
		if !ok {
			return 0, false
		}
		if k, isConst := constInt(args[1]); isConst {
			return max(0, min(k, n)), true
		}
		return n, true
	case "substring", "substr", "mid":
		// MariaDB's Item_func_substr: the argument's length in octets,
		// less the skipped characters, at most the constant length, in
		// characters.
		n, ok := arg(0)
		if !ok {
			return 0, false
		}
		octets := n * resultCharsetMaxLen
		if _, num := args[0].(*numberText); num {
			octets = n // a number's text is one byte a character
		}
		m := min(octets, maxBlobWidth)
		if len(args) > 1 {
			if start, isConst := constInt(args[1]); isConst {
				if start < 0 {
					m = min(-start, m)
					if -start > m {
						m = 0
					}
				} else {
					m -= min(max(start-1, 0), m)
				}
			}
		}
		if len(args) > 2 {
			if l, isConst := constInt(args[2]); isConst {
				m = max(0, min(m, l))
			}
		}
		return m, true
	case "replace":
		n, ok := arg(0)
		to, ok2 := arg(2)
		if !ok || !ok2 {
			return 0, false
		}
		if to > 1 {
			n += n * (to - 1)
		}
		return n, true
	case "insert":
		// Item_func_insert: the string's and the inserted string's.
		if len(args) == 4 {
			a, ok1 := arg(0)
			b, ok2 := arg(3)
			return a + b, ok1 && ok2
		}
	case "lpad", "rpad":
		if k, isConst := constInt(args[1]); isConst {
			return max(0, k), true
		}
		return arg(0)
	case "date_format", "time_format":
		if format, isConst := constString(args[1]); isConst {
			return dateFormatLength(format), true
		}
		// Item_func_date_format of another format: ten characters for
		// each of the format's (0 for NULL).
		if n, ok := arg(1); ok {
			return n * 10, true
		}
	case "from_unixtime":
		if len(args) == 2 {
			if format, isConst := constString(args[1]); isConst {
				return dateFormatLength(format), true
			}
		}
	}
	return 0, false
}

// caseValues are the results a CASE chooses among (nil for other
// expressions).
func caseValues(e sql.Expression) []sql.Expression {
	var c *expression.Case
	switch x := e.(type) {
	case *expression.Case:
		c = x
	case *exactCase:
		c = x.Case
	default:
		return nil
	}
	var vals []sql.Expression
	for _, b := range c.Branches {
		vals = append(vals, b.Value)
	}
	if c.Else != nil {
		vals = append(vals, c.Else)
	}
	return vals
}

// maxChars is the longest charLength of es.
func maxChars(es []sql.Expression, child sql.Node) (int64, bool) {
	var n int64
	for _, e := range es {
		l, ok := charLength(e, child)
		if !ok {
			return 0, false
		}
		n = max(n, l)
	}
	return n, len(es) > 0
}

// dateFormatLength is MariaDB's Item_func_date_format::format_length: the
// longest text format can produce, in characters.
func dateFormatLength(format string) int64 {
	var n int64
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i == len(format)-1 {
			n++
			continue
		}
		i++
		switch format[i] {
		case 'M', 'W':
			n += 64
		case 'D', 'Y', 'x', 'X':
			n += 4
		case 'a', 'b':
			n += 32
		case 'j':
			n += 3
		case 'U', 'u', 'V', 'v', 'y', 'm', 'd', 'h', 'I', 'i', 'l', 'p', 'S', 's', 'c', 'e':
			n += 2
		case 'k', 'H':
			n += 7
		case 'r':
			n += 11
		case 'T':
			n += 8
		case 'f':
			n += 6
		default:
			n++
		}
	}
	return n
}

// typeChars is the characters a value of type t prints in at most, as
// MariaDB counts a column's max_length.
func typeChars(t sql.Type) (int64, bool) {
	switch {
	case types.IsEnum(t):
		// An ENUM's longest value.
		var n int64
		for _, v := range t.(sql.EnumType).Values() {
			n = max(n, int64(utf8.RuneCountInString(v)))
		}
		return n, true
	case types.IsText(t):
		if st, ok := t.(sql.StringType); ok {
			if st.Type() == sqltypes.Text {
				// MariaDB counts a TEXT's length in bytes, each of
				// which may be a character.
				return st.MaxByteLength(), true
			}
			return st.Length(), true
		}
	case types.IsInteger(t):
		return intLength(t), true
	case types.IsDecimal(t):
		dt := t.(sql.DecimalType)
		n := int64(dt.Precision()) + 1
		if dt.Scale() > 0 {
			n++
		}
		return n, true
	case types.IsFloat(t):
		return 22, true
	case t.Type() == sqltypes.Date:
		return 10, true
	case t.Type() == sqltypes.Datetime || t.Type() == sqltypes.Timestamp:
		return int64(datetimeLength(t)), true
	case t.Type() == sqltypes.Year:
		return 4, true
	}
	return 0, false
}

// intLength is MariaDB's display length of an integer type.
func intLength(t sql.Type) int64 {
	unsigned := types.IsUnsigned(t)
	switch t.Type() {
	case sqltypes.Int8, sqltypes.Uint8:
		if unsigned {
			return 3
		}
		return 4
	case sqltypes.Int16, sqltypes.Uint16:
		if unsigned {
			return 5
		}
		return 6
	case sqltypes.Int24, sqltypes.Uint24:
		if unsigned {
			return 8
		}
		return 9
	case sqltypes.Int32, sqltypes.Uint32:
		if unsigned {
			return 10
		}
		return 11
	}
	return 20
}

// datetimeLength is a DATETIME(p)'s printed length: 19, and p fraction
// digits after a point.
func datetimeLength(t sql.Type) uint32 {
	p := 0
	if dt, ok := t.(sql.DatetimeType); ok {
		p = dt.Precision()
	}
	if p == 0 {
		return 19
	}
	return uint32(20 + p)
}

// numLength is MariaDB's max_length of an integer expression.
func numLength(e sql.Expression, child sql.Node) (int64, bool) {
	e = unalias(e)
	switch x := e.(type) {
	case expression.NamedLiteral:
		// A string read as a number (numbers.go): MariaDB counts the
		// string's characters.
		return int64(utf8.RuneCountInString(strings.Trim(x.Name, "'"))), true
	case *expression.Literal:
		if u, ok := x.Value().(uint64); ok {
			return int64(len(strconv.FormatUint(u, 10))), true // CoalesceInt would wrap it
		}
		n, ok := types.CoalesceInt(x.Value())
		if !ok {
			return typeChars(x.Type())
		}
		return int64(len(strconv.FormatInt(int64(n), 10))), true
	case *expression.GetField:
		if p, c := findColumn(child, x.Id()); p != nil {
			return numLength(p, c)
		}
		return typeChars(x.Type())
	case *plan.Subquery:
		if p, c := selected(x.Query, 0); p != nil {
			return numLength(p, c)
		}
	case *checkedArith:
		return arithLength(x.Arithmetic, child)
	case *expression.Arithmetic:
		return arithLength(x, child)
	case *intMod:
		return maxLength(x.LeftChild, x.RightChild, child)
	case *intVal:
		switch t := x.child.Type(); {
		case types.IsDecimal(t):
			return int64(x.digits()) + 1, true // and a sign
		case t.Type() == types.Date.Type():
			return 8, true // YYYYMMDD
		}
		return numLength(x.child, child)
	case *expression.IntDiv:
		// Item_func_int_div: the dividend's digits, its sign left out
		// (a column's or an expression's length counts one; a literal's
		// is its digits: 12345 DIV 2 is 5 long).
		l, ok := numLength(x.LeftChild, child)
		if lit, isLit := unalias(x.LeftChild).(*expression.Literal); isLit && ok {
			if n, isInt := types.CoalesceInt(lit.Value()); isInt && n < 0 && !types.IsUnsigned(lit.Type()) {
				return max(l-1, 1), ok
			}
			return max(l, 1), ok
		}
		return max(l-1, 1), ok
	}
	if !types.IsInteger(e.Type()) {
		return 0, false
	}
	if m := intChoiceMeta(e); m != nil {
		return int64(m.length), true
	}
	f, ok := e.(sql.FunctionExpression)
	if !ok {
		return 0, false
	}
	switch strings.ToLower(f.FunctionName()) {
	case "abs", "min", "max", "any_value", "first", "last":
		return numLength(e.Children()[0], child)
	case "hour", "month", "day", "dayofmonth", "minute", "second", "week", "weekofyear":
		return 2, true
	case "microsecond", "to_days", "period_add", "period_diff":
		return 6, true
	case "datediff":
		// TO_DAYS(a) - TO_DAYS(b) (Create_func_datediff).
		return 8, true
	case "extract":
		return extractLength(e)
	case "dayofweek", "weekday", "quarter":
		return 1, true
	case "sign":
		return 2, true
	case "time_to_sec":
		return 17, true
	case "dayofyear":
		return 3, true
	case "year":
		return 4, true
	case "yearweek":
		return 6, true
	case "length", "char_length", "character_length", "octet_length":
		return 10, true
	case "instr", "locate", "ascii", "ord", "strcmp", "field", "find_in_set", "bit_length":
		return int64(intStringFunctions[strings.ToLower(f.FunctionName())].length), true
	case "timestampdiff", "count", "countdistinct", "bitor", "bitand", "bitxor": // go-mysql-server names BIT_OR "BitOr"
		return 21, true
	}
	return 0, false
}

func maxLength(a, b sql.Expression, child sql.Node) (int64, bool) {
	l, ok1 := numLength(a, child)
	r, ok2 := numLength(b, child)
	return max(l, r), ok1 && ok2
}

// arithLength: + and - are one longer than the longer operand, * as long
// as both together (MariaDB's Item_func_additive_op / Item_func_mul).
func arithLength(a *expression.Arithmetic, child sql.Node) (int64, bool) {
	if !types.IsInteger(a.Type()) {
		return 0, false
	}
	switch a.Op {
	case "+", "-":
		n, ok := maxLength(a.LeftChild, a.RightChild, child)
		return n + 1, ok
	case "*":
		l, ok1 := numLength(a.LeftChild, child)
		r, ok2 := numLength(a.RightChild, child)
		return l + r, ok1 && ok2
	}
	return 0, false
}

// usesTempTable says whether MariaDB's plan for n's query materializes
// its result in a temporary table (JOIN::test_if_need_tmp_table), as far
// as the query's shape tells: with DISTINCT or window functions; with
// GROUP BY, unless the rows are grouped by sorting (an aggregate of
// DISTINCT values) or by an index (one table grouped by the first column
// of one of its indexes); with a GROUP BY ordered by anything but its
// keys; with an ORDER BY over a join, unless it sorts by columns of the
// first table in FROM only. It reads the top-level query only.
func usesTempTable(ctx *sql.Context, n sql.Node, first string) bool {
	var group *plan.GroupBy
	var sorts []sql.SortField
	var sortChild sql.Node
	tmp := false
	var walk func(n sql.Node)
	walk = func(n sql.Node) {
		switch x := n.(type) {
		case *plan.Distinct, *plan.OrderedDistinct, *plan.Window:
			tmp = true
		case *plan.GroupBy:
			if group == nil {
				group = x
			}
			return
		case *plan.Sort:
			if sorts == nil {
				sorts, sortChild = x.SortFields, x.Child
			}
		case *plan.TopN:
			if sorts == nil {
				sorts, sortChild = x.Fields, x.Child
			}
		case *plan.SubqueryAlias, *plan.ResolvedTable, *plan.TableAlias:
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); tmp || ok && m.tempTable {
		return true
	}
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok && m.groupOrdered && group != nil {
		sorts = nil // the grouping's own order
	}
	if group != nil && len(group.GroupByExprs) > 0 {
		if sorts != nil && !sortsByKeys(sorts, sortChild, group) {
			return true
		}
		return !hasDistinctAggregate(group.SelectedExprs) && !groupsByIndex(ctx, group)
	}
	if sorts != nil && tableCount(n) > 1 {
		// MariaDB sorts the first table it reads, else the joined rows
		// in a temporary table; which table it reads first is its
		// optimizer's choice: here the first one in FROM.
		tables := map[string]bool{}
		for _, f := range sorts {
			tablesOf(f.Column, sortChild, tables)
		}
		return len(tables) > 1 || (len(tables) == 1 && !tables[first])
	}
	return false
}

// firstFromTable is the name or alias of the first table in a SELECT's
// FROM clause ("" when none or not a SELECT).
func firstFromTable(stmt ast.Statement) string {
	sel, ok := stmt.(*ast.Select)
	if !ok || len(sel.From) == 0 {
		return ""
	}
	t := sel.From[0]
	for {
		j, ok := t.(*ast.JoinTableExpr)
		if !ok {
			break
		}
		t = j.LeftExpr
	}
	a, ok := t.(*ast.AliasedTableExpr)
	if !ok {
		return ""
	}
	if !a.As.IsEmpty() {
		return strings.ToLower(a.As.String())
	}
	if tn, ok := a.Expr.(ast.TableName); ok {
		return strings.ToLower(tn.Name.String())
	}
	return ""
}

// noteFirstTable records stmt's first table in the statement's stmtMeta.
func noteFirstTable(ctx context.Context, stmt ast.Statement) {
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
		m.firstTable = firstFromTable(stmt)
	}
}

// sortsByKeys says the ORDER BY is a prefix of the GROUP BY keys (MariaDB
// then drops it: grouping sorts by the keys already).
func sortsByKeys(sorts []sql.SortField, child sql.Node, g *plan.GroupBy) bool {
	if len(sorts) > len(g.GroupByExprs) {
		return false
	}
	for i, f := range sorts {
		e, _ := resolveRef(f.Column, child)
		k := unalias(g.GroupByExprs[i])
		if kf, ok := k.(*expression.GetField); ok {
			if p, _ := findColumn(g.Child, kf.Id()); p != nil {
				k = p
			}
		}
		if e == nil || !strings.EqualFold(e.String(), k.String()) {
			return false
		}
	}
	return true
}

// groupsByIndex: one table grouped by one column that leads one of its
// indexes (MariaDB reads the index in order instead of a temporary table).
func groupsByIndex(ctx *sql.Context, g *plan.GroupBy) bool {
	if tableCount(g.Child) != 1 || len(g.GroupByExprs) != 1 {
		return false
	}
	gf, ok := unalias(g.GroupByExprs[0]).(*expression.GetField)
	if !ok {
		return false
	}
	if p, _ := findColumn(g.Child, gf.Id()); p != nil {
		if gf, ok = unalias(p).(*expression.GetField); !ok {
			return false
		}
	}
	var table sql.Table
	transform.Inspect(g.Child, func(n sql.Node) bool {
		if rt, ok := n.(*plan.ResolvedTable); ok {
			table = rt.UnderlyingTable()
		}
		return table == nil
	})
	ia, ok := table.(sql.IndexAddressable)
	if !ok {
		return false
	}
	idxs, err := ia.GetIndexes(ctx)
	if err != nil {
		return false
	}
	for _, x := range idxs {
		if exprs := x.Expressions(); len(exprs) > 0 {
			col := exprs[0]
			if i := strings.LastIndexByte(col, '.'); i >= 0 {
				col = col[i+1:]
			}
			if strings.EqualFold(col, gf.Name()) {
				return true
			}
		}
	}
	return false
}

// tablesOf adds the tables whose columns e reads to tables.
func tablesOf(e sql.Expression, child sql.Node, tables map[string]bool) {
	transform.InspectExpr(e, func(e sql.Expression) bool {
		gf, ok := e.(*expression.GetField)
		if !ok {
			return false
		}
		if p, c := findColumn(child, gf.Id()); p != nil {
			if _, same := p.(*expression.GetField); !same || c != child {
				tablesOf(p, c, tables)
				return false
			}
		}
		if gf.Table() != "" {
			tables[strings.ToLower(gf.Table())] = true
		}
		return false
	})
}

// tableCount is the number of tables and derived tables the query reads
// (not those of its subqueries).
func tableCount(n sql.Node) int {
	count := 0
	var walk func(n sql.Node)
	walk = func(n sql.Node) {
		switch n.(type) {
		case *plan.SubqueryAlias, *plan.ResolvedTable, *plan.TableAlias, *plan.IndexedTableAccess:
			count++
			return
		}
		for _, c := range n.Children() {
			walk(c)
		}
	}
	walk(n)
	return count
}

// hasDistinctAggregate says an aggregate of DISTINCT values is among es.
func hasDistinctAggregate(es []sql.Expression) bool {
	for _, e := range es {
		if transform.InspectExpr(e, func(e sql.Expression) bool {
			switch e.(type) {
			case *aggregation.CountDistinct, *expression.DistinctExpression:
				return true
			}
			return false
		}) {
			return true
		}
	}
	return false
}
