package sqlview

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// User variables assigned inside expressions: SELECT @dt := 4, @dt + 1.
//
// The parser (dolthub/vitess) reads := only in SET. MariaDB Connector/ODBC
// (3.1 and 3.2: ma_catalog.h MADB_SQL_DATATYPE, MADB_COLUMN_SIZE,
// MADB_TRANSFER_OCTET_LENGTH) builds SQLColumns' and SQLSpecialColumns'
// answers with them: a column's ODBC type is assigned to @dt in one select
// item and read back in later ones of the same row. A statement the parser
// rejects for := is therefore written again with each `@v := expr` as
// heapproxy_set_user_var('v', expr), a function that stores the value in
// the session's variable and returns it; the select list is evaluated
// left to right, row by row, so a later item of the row reads it, as on
// MariaDB. Planning a reference to @v takes the variable's type: when @v
// does not exist yet, the assignment declares it (NULL, with the assigned
// expression's type) while the statement is planned, as MariaDB's
// Item_func_set_user_var::fix_fields creates its entry.

// setUserVarFunc is the function assignments are written as.
const setUserVarFunc = "heapproxy_set_user_var"

// rewriteAssignments writes every `@v := expr` of query as a call of
// setUserVarFunc, innermost first; ok is false when query has none.
// An assignment that is a whole select item of the outer statement keeps
// its text as its column name, as MariaDB names it.
func rewriteAssignments(query string) (string, bool) {
	changed := false
	for range strings.Count(query, ":=") {
		toks := tokens(query)
		at := -1
		for i := len(toks) - 1; i >= 2; i-- {
			if toks[i].text == ":=" && toks[i].kind == '=' && toks[i-1].isName() && toks[i-2].kind == '@' &&
				toks[i-2].end == toks[i-1].start && (i < 3 || toks[i-3].kind != '@' || toks[i-3].end != toks[i-2].start) {
				at = i
				break
			}
		}
		if at < 0 || at+1 >= len(toks) {
			break
		}
		end, next := assignmentEnd(toks, at+1)
		start := toks[at-2].start
		exprEnd := toks[end-1].end
		var b strings.Builder
		b.WriteString(query[:start])
		b.WriteString(setUserVarFunc + "('" + strings.ReplaceAll(toks[at-1].text, "'", "''") + "', ")
		b.WriteString(query[toks[at+1].start:exprEnd])
		b.WriteString(")")
		if wholeSelectItem(toks, at-2, next) {
			b.WriteString(" AS `" + strings.ReplaceAll(query[start:exprEnd], "`", "``") + "`")
		}
		b.WriteString(query[exprEnd:])
		query = b.String()
		changed = true
	}
	return query, changed
}

// assignmentEnd finds where the expression starting at toks[from] ends:
// end is one past its last token, next the index of the token after it
// (len(toks) at the end). := binds loosest, so the expression runs to
// the first comma, closing parenthesis, clause keyword or alias at its own
// depth; CASE ... END nests like parentheses.
func assignmentEnd(toks []token, from int) (end, next int) {
	depth := 0
	for i := from; i < len(toks); i++ {
		t := toks[i]
		switch {
		case t.kind == '(' || t.is("CASE"):
			depth++
		case t.kind == ')' || t.is("END"):
			if depth == 0 {
				return i, i
			}
			depth--
		case depth > 0:
		case t.kind == ',' || t.kind == ';' || t.kind == 'q':
			return i, i
		case t.kind == 'w' && i > from && endsExpression(t):
			return i, i
		}
	}
	return len(toks), len(toks)
}

// endsExpression: the words after which an expression cannot go on.
func endsExpression(t token) bool {
	switch strings.ToUpper(t.text) {
	case "AS", "FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "UNION", "INTERSECT", "EXCEPT", "INTO",
		"FOR", "WINDOW", "WHEN", "THEN", "ELSE", "ON", "USING", "JOIN", "INNER", "LEFT", "RIGHT", "CROSS",
		"STRAIGHT_JOIN", "NATURAL", "LOCK", "ASC", "DESC", "OFFSET", "ROWS", "RANGE":
		return true
	}
	return false
}

// wholeSelectItem: the assignment from toks[start] to toks[next] is a
// select item of the outermost SELECT with no alias of its own.
func wholeSelectItem(toks []token, start, next int) bool {
	depth := 0
	for _, t := range toks[:start] {
		switch t.kind {
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	if depth != 0 || start == 0 {
		return false
	}
	prev := toks[start-1]
	if !(prev.kind == ',' || prev.is("SELECT") || prev.is("DISTINCT") || prev.is("ALL")) {
		return false
	}
	if next == len(toks) {
		return true
	}
	n := toks[next]
	return n.kind == ',' || n.kind == ';' || n.is("FROM") || n.is("UNION") || n.is("ORDER") || n.is("LIMIT") || n.is("INTO")
}

// setUserVar is heapproxy_set_user_var(name, value).
type setUserVar struct {
	name  string
	value sql.Expression
}

var (
	_ sql.Expression                 = (*setUserVar)(nil)
	_ sql.NonDeterministicExpression = (*setUserVar)(nil)
)

// newSetUserVar builds the call while the statement is planned, and
// declares a variable that does not exist yet with the value's type.
func newSetUserVar(ctx *sql.Context, args ...sql.Expression) (sql.Expression, error) {
	if len(args) != 2 {
		return nil, sql.ErrInvalidArgumentNumber.New(setUserVarFunc, 2, len(args))
	}
	notName := fmt.Errorf("%s: the variable's name must be a string literal", setUserVarFunc)
	lit, ok := args[0].(*expression.Literal)
	if !ok {
		return nil, notName
	}
	name, ok := lit.Value().(string)
	if !ok {
		return nil, notName
	}
	v := &setUserVar{name: strings.ToLower(name), value: args[1]}
	if ctx != nil && v.value.Resolved() {
		if t, _, err := ctx.GetUserVariable(ctx, v.name); err == nil && t == nil {
			if err := ctx.SetUserVariable(ctx, v.name, nil, v.value.Type()); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

func (v *setUserVar) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	val, err := v.value.Eval(ctx, row)
	if err != nil {
		return nil, err
	}
	if err := ctx.SetUserVariable(ctx, v.name, val, v.value.Type()); err != nil {
		return nil, err
	}
	return val, nil
}

func (v *setUserVar) Type() sql.Type {
	if v.value.Type() == nil {
		return types.Null
	}
	return v.value.Type()
}

func (v *setUserVar) IsNullable() bool           { return v.value.IsNullable() }
func (v *setUserVar) Resolved() bool             { return v.value.Resolved() }
func (v *setUserVar) IsNonDeterministic() bool   { return true }
func (v *setUserVar) Children() []sql.Expression { return []sql.Expression{v.value} }
func (v *setUserVar) String() string             { return fmt.Sprintf("@%s := %s", v.name, v.value) }
func (v *setUserVar) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, v.value)
}

func (v *setUserVar) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(v, len(children), 1)
	}
	return &setUserVar{name: v.name, value: children[0]}, nil
}
