package parser

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	tidb "github.com/pingcap/tidb/pkg/parser"
	"github.com/pingcap/tidb/pkg/parser/ast"
	"github.com/pingcap/tidb/pkg/parser/format"
	"github.com/pingcap/tidb/pkg/parser/opcode"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Scope is the scope a system variable is named with.
type Scope int

const (
	// ScopeDefault is a variable named without scope (@@x, SET x = ...):
	// the session value, or the global one for global-only variables.
	ScopeDefault Scope = iota
	// ScopeSession is @@session.x, @@local.x, SET SESSION x = ...
	ScopeSession
	// ScopeGlobal is @@global.x, SET GLOBAL x = ...
	ScopeGlobal
)

func (s Scope) String() string {
	switch s {
	case ScopeSession:
		return "SESSION"
	case ScopeGlobal:
		return "GLOBAL"
	}
	return "DEFAULT"
}

// ExprKind is the kind of an Expr.
type ExprKind int

const (
	// ExprOther is any other expression; only Expr.Text is set.
	ExprOther ExprKind = iota
	// ExprSysVar is a system variable @@[scope.]name.
	ExprSysVar
	// ExprFunc is a call of a function without arguments, e.g. DATABASE().
	ExprFunc
	// ExprLiteral is a literal: NULL, a number or a string.
	ExprLiteral
)

// LiteralKind is the type of a literal Expr.
type LiteralKind int

const (
	LitNull LiteralKind = iota
	LitInt
	LitDecimal
	LitFloat
	LitString
)

// Expr is an expression heapproxy may evaluate itself.
type Expr struct {
	Kind ExprKind
	// Name is the lower-case variable name (ExprSysVar) or function name (ExprFunc).
	Name string
	// Scope is the scope of an ExprSysVar.
	Scope Scope
	// Lit and Value are an ExprLiteral's type and value (the decoded string,
	// or the number in decimal text).
	Lit   LiteralKind
	Value string
	// Text is the expression as SQL (re-rendered by the TiDB parser).
	Text string
}

// Field is one column of a LocalSelect.
type Field struct {
	// Column is the column header as MySQL names it: the alias, the value
	// of a string literal, else the expression's text as written.
	Column string
	Expr   Expr
}

// Select is a SELECT heapproxy can answer itself: no FROM, only system
// variables, known functions without arguments and literals.
type Select struct {
	Fields []Field
	// HasLimit and Limit are the LIMIT clause (row count; no offset).
	HasLimit bool
	Limit    uint64
}

// Assignment is one assignment of a SET statement.
type Assignment struct {
	// Name is the lower-case variable name; "names" for SET NAMES and
	// "character set" for SET CHARACTER SET.
	Name string
	// User marks a user variable (@name); else Name is a system variable.
	User bool
	// Scope is ScopeGlobal for SET GLOBAL x / SET @@global.x, else
	// ScopeDefault (the TiDB parser does not tell SET SESSION from SET).
	Scope Scope
	// Value is the assigned expression (the charset for SET NAMES); Kind
	// ExprOther with empty Text for DEFAULT.
	Value Expr
	// Collate is the collation of SET NAMES ... COLLATE ...
	Collate string
}

// Show holds the parts of SHOW WARNINGS / DATABASES / VARIABLES.
type Show struct {
	// Errors is SHOW ERRORS (Kind ShowWarnings).
	Errors bool
	// Global is SHOW GLOBAL VARIABLES.
	Global bool
	// HasLike and Like are the LIKE pattern.
	HasLike bool
	Like    string
}

// localFuncs are the argument-less functions a LocalSelect may call: those
// clients send on connect and the server can answer without an upstream.
var localFuncs = map[string]bool{
	"database": true, "schema": true, "version": true, "user": true, "current_user": true,
	"session_user": true, "system_user": true, "connection_id": true, "last_insert_id": true,
	"now": true, "current_timestamp": true, "localtime": true, "localtimestamp": true,
	"sysdate": true, "utc_timestamp": true, "utc_date": true, "utc_time": true,
	"curdate": true, "current_date": true, "curtime": true, "current_time": true,
	"unix_timestamp": true,
}

// fromTiDB classifies a statement with the TiDB parser. Statements it cannot
// parse, or that heapproxy does not answer, are Forward: the upstream may
// understand more than TiDB's grammar, and has the last word.
func fromTiDB(node ast.StmtNode, err error, sql string) *Statement {
	if err != nil {
		return stmtForward
	}
	var st *Statement
	switch n := node.(type) {
	case *ast.SelectStmt:
		st = fromSelect(n, sql)
	case *ast.SetStmt:
		st = fromSet(n)
	case *ast.ShowStmt:
		st = fromShow(n)
	case *ast.UseStmt:
		st = &Statement{Kind: Use, DB: n.DBName}
	}
	if st == nil {
		return stmtForward
	}
	return st
}

// errParserPanic marks a TiDB parser that panicked: it is not reused.
var errParserPanic = errors.New("tidb parser panic")

// parseOne runs the TiDB parser, turning its panics into errors: its
// literal driver panics on some inputs (a decimal literal of more than 81
// digits, found by FuzzClassify), and user text must never crash the proxy.
func parseOne(p *tidb.Parser, sql string) (node ast.StmtNode, err error) {
	defer func() {
		if r := recover(); r != nil {
			node, err = nil, fmt.Errorf("%w: %v", errParserPanic, r)
		}
	}()
	return p.ParseOneStmt(mariaDBComments(sql), "", "")
}

// mariaDBComments turns MariaDB's executable comments /*M!<version> into
// MySQL's /*! that the TiDB parser knows, keeping every byte offset.
func mariaDBComments(sql string) string {
	if !strings.Contains(sql, "/*M!") {
		return sql
	}
	b := []byte(sql)
	l := lexer{src: sql}
	for {
		// Rewrite only between tokens, never inside a string literal.
		gap := l.pos
		t := l.next()
		for i := gap; i+4 <= t.pos; i++ {
			if string(b[i:i+4]) != "/*M!" {
				continue
			}
			copy(b[i:], "/*! ")
			for j := i + 4; j < len(b) && j < i+10 && isDigit(b[j]); j++ {
				b[j] = ' '
			}
		}
		if t.kind == tokEOF {
			return string(b)
		}
	}
}

func fromSelect(n *ast.SelectStmt, sql string) *Statement {
	if n.Kind != ast.SelectStmtKindSelect || n.From != nil || n.Where != nil || n.GroupBy != nil ||
		n.Having != nil || n.OrderBy != nil || len(n.WindowSpecs) > 0 || n.LockInfo != nil ||
		n.SelectIntoOpt != nil || n.With != nil || n.Fields == nil || len(n.Fields.Fields) == 0 {
		return nil
	}
	sel := &Select{}
	var ends []int
	if n.Limit != nil {
		if n.Limit.Offset != nil {
			return nil
		}
		v, ok := n.Limit.Count.(*driver.ValueExpr)
		if !ok {
			return nil
		}
		switch v.Kind() {
		case driver.KindInt64:
			if v.GetInt64() < 0 {
				return nil
			}
			sel.Limit = uint64(v.GetInt64())
		case driver.KindUint64:
			sel.Limit = v.GetUint64()
		default:
			return nil
		}
		sel.HasLimit = true
	}
	for _, f := range n.Fields.Fields {
		if f.WildCard != nil || f.Expr == nil {
			return nil
		}
		e := toExpr(f.Expr)
		switch e.Kind {
		case ExprOther:
			return nil
		case ExprFunc:
			if !localFuncs[e.Name] {
				return nil
			}
		}
		col := f.AsName.O
		if col == "" {
			if ends == nil {
				ends = tokenEnds(sql)
			}
			col = columnName(f.Text(), f.Offset, ends)
			if e.Kind == ExprLiteral && e.Lit == LitString {
				col = e.Value
			}
		}
		sel.Fields = append(sel.Fields, Field{Column: col, Expr: e})
	}
	return &Statement{Kind: LocalSelect, Select: sel}
}

// tokenEnds returns the end offset of every token of sql, in order.
func tokenEnds(sql string) []int {
	var ends []int
	l := lexer{src: sql}
	for t := l.next(); t.kind != tokEOF; t = l.next() {
		ends = append(ends, l.pos)
	}
	return ends
}

// columnName cuts a select field's text (which starts at offset in the
// statement) after its last token: the TiDB parser's field text runs up to
// the next token, comments and the */ of an executable comment included,
// while MySQL names the column by the expression alone.
func columnName(text string, offset int, ends []int) string {
	end := offset
	for _, e := range ends {
		if e > offset+len(text) {
			break
		}
		end = e
	}
	if end <= offset {
		return text
	}
	return text[:end-offset]
}

func fromSet(n *ast.SetStmt) *Statement {
	st := &Statement{Kind: Set}
	for _, v := range n.Variables {
		if v.IsInstance {
			return nil
		}
		a := Assignment{Name: strings.ToLower(v.Name), User: !v.IsSystem}
		if v.IsGlobal {
			a.Scope = ScopeGlobal
		}
		switch v.Name {
		case ast.SetNames:
			a.Name, a.User = "names", false
		case ast.SetCharset:
			a.Name, a.User = "character set", false
		}
		if v.Value != nil {
			a.Value = toExpr(v.Value)
		}
		if v.ExtendValue != nil {
			if c, ok := v.ExtendValue.(*driver.ValueExpr); ok {
				a.Collate = c.GetString()
			}
		}
		st.Set = append(st.Set, a)
	}
	return st
}

func fromShow(n *ast.ShowStmt) *Statement {
	if n.Where != nil || n.Full || n.CountWarningsOrErrors {
		return nil
	}
	sh := &Show{}
	var kind Kind
	switch n.Tp {
	case ast.ShowWarnings, ast.ShowErrors:
		kind = ShowWarnings
		sh.Errors = n.Tp == ast.ShowErrors
	case ast.ShowDatabases:
		kind = ShowDatabases
	case ast.ShowVariables:
		kind = ShowVariables
		sh.Global = n.GlobalScope
	default:
		return nil
	}
	if n.Pattern != nil {
		v, ok := n.Pattern.Pattern.(*driver.ValueExpr)
		if !ok || n.Pattern.Not || !n.Pattern.IsLike {
			return nil
		}
		sh.HasLike = true
		sh.Like = v.GetString()
	}
	return &Statement{Kind: kind, Show: sh}
}

// toExpr converts what heapproxy may evaluate; anything else is ExprOther.
func toExpr(n ast.ExprNode) Expr {
	e := Expr{Text: restore(n)}
	switch x := n.(type) {
	case *ast.VariableExpr:
		if !x.IsSystem || x.Value != nil || x.IsInstance {
			return e
		}
		e.Kind = ExprSysVar
		e.Name = strings.ToLower(x.Name)
		switch {
		case x.ExplicitScope && x.IsGlobal:
			e.Scope = ScopeGlobal
		case x.ExplicitScope:
			e.Scope = ScopeSession
		}
	case *ast.FuncCallExpr:
		if len(x.Args) > 0 || x.Schema.L != "" {
			return e
		}
		e.Kind = ExprFunc
		e.Name = x.FnName.L
	case *driver.ValueExpr:
		if lit, val, ok := literal(x, false); ok {
			e.Kind, e.Lit, e.Value = ExprLiteral, lit, val
		}
	case *ast.UnaryOperationExpr:
		if v, ok := x.V.(*driver.ValueExpr); ok && x.Op == opcode.Minus {
			if lit, val, ok := literal(v, true); ok {
				e.Kind, e.Lit, e.Value = ExprLiteral, lit, val
			}
		}
	}
	return e
}

// literal returns a value literal's type and text, negated if neg (only numbers).
func literal(v *driver.ValueExpr, neg bool) (LiteralKind, string, bool) {
	var lit LiteralKind
	var s string
	switch v.Kind() {
	case driver.KindNull:
		return LitNull, "", !neg
	case driver.KindString:
		return LitString, v.GetString(), !neg
	case driver.KindInt64:
		lit, s = LitInt, strconv.FormatInt(v.GetInt64(), 10)
	case driver.KindUint64:
		lit, s = LitInt, strconv.FormatUint(v.GetUint64(), 10)
	case driver.KindMysqlDecimal:
		lit, s = LitDecimal, v.GetMysqlDecimal().String()
	case driver.KindFloat64, driver.KindFloat32:
		lit, s = LitFloat, strconv.FormatFloat(v.GetFloat64(), 'g', -1, 64)
	default:
		return 0, "", false
	}
	if neg {
		if strings.HasPrefix(s, "-") {
			s = s[1:]
		} else if s != "0" {
			s = "-" + s
		}
	}
	return lit, s, true
}

// restoreFlags render expressions as MySQL reads them back (no TiDB charset introducers).
const restoreFlags = format.RestoreStringSingleQuotes | format.RestoreStringEscapeBackslash |
	format.RestoreKeyWordUppercase | format.RestoreNameBackQuotes | format.RestoreStringWithoutCharset

func restore(n ast.Node) string {
	var b strings.Builder
	if err := n.Restore(format.NewRestoreCtx(restoreFlags, &b)); err != nil {
		return ""
	}
	return b.String()
}
