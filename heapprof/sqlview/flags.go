package sqlview

// Column definition flags as MariaDB sends them (Send_field and
// Item::make_send_field): JDBC's ResultSetMetaData.isNullable, SQLAlchemy
// and BI tools read NOT_NULL; BINARY says the column compares bytewise.
// A heapprof table's column, selected as it is (aliased, ordered, through
// a join or DISTINCT), carries its table's flags: NOT_NULL and
// NO_DEFAULT_VALUE (every column is NOT NULL without a default), BLOB for
// TEXT, BINARY for utf8mb4_bin and DATETIME, PRI_KEY or MULTIPLE_KEY and
// PART_KEY for indexed columns. An expression is BINARY when its result is
// a number or a date (the binary character set) or text in a binary
// collation (a _bin column's, not the connection's), and NOT_NULL unless
// MariaDB's maybe_null says it may be NULL: string functions, date
// functions, /, DIV, %, aggregates but COUNT, subqueries and a CASE
// without ELSE may. MariaDB's temporary tables (GROUP BY, DISTINCT of an
// expression) change the flags of expressions again; there the
// expressions keep go-mysql-server's flags.

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// Column definition flags beyond vitess's names for them.
const (
	flagNotNull        = uint16(querypb.MySqlFlag_NOT_NULL_FLAG)
	flagPriKey         = uint16(querypb.MySqlFlag_PRI_KEY_FLAG)
	flagMultipleKey    = uint16(querypb.MySqlFlag_MULTIPLE_KEY_FLAG)
	flagBlob           = uint16(querypb.MySqlFlag_BLOB_FLAG)
	flagUnsigned       = uint16(querypb.MySqlFlag_UNSIGNED_FLAG)
	flagBinary         = uint16(querypb.MySqlFlag_BINARY_FLAG)
	flagNoDefaultValue = uint16(querypb.MySqlFlag_NO_DEFAULT_VALUE_FLAG)
	flagPartKey        = uint16(querypb.MySqlFlag_PART_KEY_FLAG)
)

// keyFlags are the key flags of the heapprof tables' indexed columns, by
// table and column.
type keyFlags map[string]map[string]uint16

// colFlags is a column's flags as derived, or -1 for go-mysql-server's.
type colFlags int32

const flagsUnknown colFlags = -1

// deriveFlags is the flags of n's result columns MariaDB would send.
func deriveFlags(ctx *sql.Context, n sql.Node, keys keyFlags, tmp bool, explicit explicitLiterals) []colFlags {
	schema := n.Schema()
	out := make([]colFlags, len(schema))
	top := n
	for {
		c, ok := passThrough(top)
		if !ok {
			break
		}
		top = c
	}
	for i, c := range schema {
		out[i] = flagsUnknown
		var e sql.Expression
		switch p := top.(type) {
		case *plan.Project:
			e = p.Projections[i]
		case *plan.GroupBy:
			e = p.SelectedExprs[i]
		case *plan.Window:
			e = p.SelectExprs[i]
		case *plan.SetOp:
			// MariaDB's UNION result is a temporary table of its own.
			continue
		}
		if e == nil {
			// A table's rows as they are (SELECT * without a projection).
			if f, ok := tableColumnFlags(n, c, c.Source, c.Name, keys); ok {
				out[i] = f
			}
			continue
		}
		e = unalias(e)
		if gf, ok := e.(*expression.GetField); ok {
			child := childOf(top)
			if p, _ := findColumn(child, gf.Id()); p == nil {
				if f, ok := tableColumnFlags(n, c, gf.Table(), gf.Name(), keys); ok {
					out[i] = f
				}
				continue
			}
		}
		if pe, _ := produced(n, i); pe != nil && rankFunction(pe) {
			// Item_sum_row_number and its kin: a signed BIGINT, never
			// NULL, in a temporary table too (window functions make one).
			out[i] = colFlags(flagBinary | flagNotNull)
			continue
		}
		if tmp {
			continue
		}
		pe, child := produced(n, i)
		if pe == nil {
			continue
		}
		if f, ok := exprFlags(ctx, pe, child, explicit); ok {
			out[i] = f
		}
	}
	return out
}

func childOf(n sql.Node) sql.Node {
	if c := n.Children(); len(c) == 1 {
		return c[0]
	}
	return nil
}

// tableColumnFlags: the flags of column name of the heapprof table (or
// alias) table in n's plan; ok false for other tables' columns.
func tableColumnFlags(n sql.Node, c *sql.Column, table, name string, keys keyFlags) (colFlags, bool) {
	base := realTable(n, table)
	if base == "" || c.DatabaseSource != "" && !strings.EqualFold(c.DatabaseSource, SchemaName) {
		return 0, false
	}
	var col *sql.Column
	transform.Inspect(n, func(x sql.Node) bool {
		if t, ok := x.(sql.TableNode); ok && strings.EqualFold(t.UnderlyingTable().Name(), base) && t.Database() != nil && strings.EqualFold(t.Database().Name(), SchemaName) {
			for _, sc := range t.UnderlyingTable().Schema() {
				if strings.EqualFold(sc.Name, name) {
					col = sc
				}
			}
		}
		return col == nil
	})
	if col == nil {
		return 0, false
	}
	f := flagNoDefaultValue | keys[base][col.Name]
	if !c.Nullable {
		// The inner side of an outer join may be NULL.
		f |= flagNotNull
	}
	if types.IsTextBlob(col.Type) {
		f |= flagBlob
	}
	if binaryType(col.Type) {
		f |= flagBinary
	}
	if types.IsUnsigned(col.Type) {
		f |= flagUnsigned
	}
	return colFlags(f), true
}

// realTable is the table an alias in n names ("" when none does).
func realTable(n sql.Node, alias string) string {
	base := ""
	transform.Inspect(n, func(x sql.Node) bool {
		switch t := x.(type) {
		case *plan.TableAlias:
			if strings.EqualFold(t.Name(), alias) {
				if tn, ok := t.Child.(sql.TableNode); ok {
					base = tn.UnderlyingTable().Name()
				}
			}
		case sql.TableNode:
			if strings.EqualFold(t.UnderlyingTable().Name(), alias) {
				base = t.UnderlyingTable().Name()
			}
		}
		return base == ""
	})
	return base
}

// binaryType: a table column's type compares bytewise (MariaDB's
// BINARY_FLAG): binary strings, _bin collations, dates and times.
func binaryType(t sql.Type) bool {
	if types.IsText(t) {
		tc, ok := t.(sql.TypeWithCollation)
		return ok && binaryCollation(tc.Collation())
	}
	return types.IsBinaryType(t) || isTemporal(t)
}

func binaryCollation(c sql.CollationID) bool {
	return c == sql.Collation_binary || strings.HasSuffix(c.Name(), "_bin")
}

// exprFlags are an expression's flags in MariaDB (ok false where the
// engine does not know them).
func exprFlags(ctx *sql.Context, e sql.Expression, child sql.Node, explicit explicitLiterals) (colFlags, bool) {
	t := e.Type()
	var f uint16
	switch {
	case t == types.Null:
		return colFlags(flagBinary), true
	case types.IsText(t):
		if _, isConv := e.(*expression.Convert); !isConv {
			if d, ok := operandCollation(ctx, explicit, e); ok && d.deriv <= derivImplicit && binaryCollation(d.coll) {
				f |= flagBinary
			}
		}
	case types.IsBinaryType(t):
		f |= flagBinary
	default:
		f |= flagBinary
		if types.IsUnsigned(t) && !signedIntFunction(e) {
			f |= flagUnsigned
		}
	}
	nullable, ok := mayBeNull(e, child)
	if !ok {
		return 0, false
	}
	if !nullable {
		f |= flagNotNull
	}
	return colFlags(f), true
}

// signedIntFunction is whether e is a function MariaDB types signed
// where go-mysql-server's type is unsigned: of a date (WEEKOFYEAR,
// MICROSECOND: Item_long_ge0_func, signed though never negative) or of
// a string (ASCII).
func signedIntFunction(e sql.Expression) bool {
	f, ok := unalias(e).(sql.FunctionExpression)
	if !ok {
		return false
	}
	name := strings.ToLower(f.FunctionName())
	_, ofString := intStringFunctions[name]
	return intDateParts[name] || ofString
}

// rankFunction is whether e is ROW_NUMBER, RANK, DENSE_RANK or NTILE,
// which MariaDB types a signed BIGINT where go-mysql-server's are
// unsigned.
func rankFunction(e sql.Expression) bool {
	switch unalias(e).(type) {
	case *window.RowNumber, *window.Rank, *window.DenseRank, *window.NTile:
		return true
	}
	return false
}

// notNullFunctions are the functions MariaDB marks maybe_null only when
// an argument may be NULL; it marks the others (string functions: a
// result beyond max_allowed_packet is NULL; date functions: an invalid
// date is NULL) maybe_null whatever their arguments.
var notNullFunctions = map[string]bool{
	"length": true, "char_length": true, "character_length": true, "octet_length": true, "locate": true,
	"instr": true, "position": true, "round": true, "truncate": true, "abs": true, "sign": true,
	"greatest": true, "least": true, "floor": true, "ceil": true, "ceiling": true, "now": true,
	"current_timestamp": true, "utc_timestamp": true, "curdate": true, "current_date": true, "utc_date": true, "count": true, "if": true, "ifnull": true,
	"coalesce": true, "isnull": true, "bit_length": true, "ascii": true, "ord": true,
	"strcmp": true, "row_number": true, "rank": true, "dense_rank": true,
}

// mayBeNull is MariaDB's maybe_null of e (ok false when unknown).
func mayBeNull(e sql.Expression, child sql.Node) (bool, bool) {
	e = unalias(e)
	anyKid := func(kids []sql.Expression) (bool, bool) {
		for _, k := range kids {
			n, ok := mayBeNull(k, child)
			if !ok || n {
				return n, ok
			}
		}
		return false, true
	}
	switch x := e.(type) {
	case *expression.Literal:
		return x.Value() == nil, true
	case *expression.GetField:
		if p, c := findColumn(child, x.Id()); p != nil {
			return mayBeNull(p, c)
		}
		return x.IsNullable(), true
	case *expression.IsNull, *expression.IsTrue:
		return false, true
	case *plan.Subquery, *expression.CollatedExpression:
		return true, true
	case *expression.Div, *exactDiv, *checkedDiv, *expression.IntDiv, *exactIntDiv, *expression.Mod, *intMod, *floatMod, *exactMod,
		*function.NullIf, *exactNullIf, *numNullIf, *numericNullIf:
		return true, true
	case *expression.Arithmetic, *checkedArith, *exactArith, *expression.UnaryMinus,
		expression.Comparer, *expression.Like, *expression.InTuple, *expression.HashInTuple, *expression.Between,
		*expression.Not, *expression.And, *expression.Or, *expression.Xor, *shownDecimal, *asNumber:
		if x, ok := e.(*expression.Arithmetic); ok && x.Op != "+" && x.Op != "-" && x.Op != "*" {
			return true, true
		}
		return anyKid(e.Children())
	case *expression.Case:
		if x.Else == nil {
			return true, true
		}
		return anyKid(caseValues(x))
	case *exactCase:
		if x.Else == nil {
			return true, true
		}
		return anyKid(caseValues(x))
	case *exactAgg, *aggregation.Sum, *aggregation.Avg, *aggregation.Min, *aggregation.Max, *aggregation.GroupConcat:
		return true, true
	case *aggregation.Count, *aggregation.CountDistinct:
		return false, true
	case *expression.Convert:
		if types.IsText(x.Type()) {
			return true, true // CAST(... AS CHAR) is a string function
		}
		return anyKid(e.Children())
	case *exactIf:
		return anyKid(e.Children()[1:])
	case *decimalRound, expression.Tuple:
		return anyKid(e.Children())
	case *extremum:
		return anyKid(x.args)
	case *numericIn:
		return anyKid(x.args)
	case *storedDouble:
		return mayBeNull(x.child, child)
	case *numericBetween:
		return anyKid(x.Children())
	case *numericInSubquery:
		return true, true
	case sql.FunctionExpression:
		name := strings.ToLower(x.FunctionName())
		switch name {
		case "if":
			return anyKid(e.Children()[1:])
		case "ifnull":
			return anyKid(e.Children()[1:])
		case "coalesce":
			// NULL only when every argument may be.
			for _, k := range e.Children() {
				n, ok := mayBeNull(k, child)
				if !ok || !n {
					return n, ok
				}
			}
			return true, true
		}
		if notNullFunctions[name] {
			return anyKid(e.Children())
		}
		return true, true
	}
	return false, false
}
