package sqlview

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// SessionOptions are what the MySQL front knows about a session better
// than the engine.
type SessionOptions struct {
	// Variables are initial values of system variables, by name: what
	// @@x, SHOW VARIABLES and the engine itself then use (the version the
	// front announces, its max_allowed_packet, ...). Every name must be one
	// of go-mysql-server's (MySQL's) system variables.
	Variables map[string]any
	// ReadsProfiles says the user may read the heapprof schema: SHOW GRANTS
	// lists SELECT on heapprof.* (else USAGE only).
	ReadsProfiles bool
}

// Variable is the session's value of a system variable (a SET value or
// the initial one), as go-mysql-server keeps it: int8 0/1 for booleans,
// int64/uint64 for numbers, strings otherwise.
func (s *Session) Variable(ctx context.Context, name string) (any, error) {
	v, err := s.base.GetSessionVariable(sql.NewContext(ctx, sql.WithSession(s.base)), name)
	if err != nil {
		return nil, toError(err)
	}
	return v, nil
}

// grantHost is the host part of every account: heapproxy's users are
// known by name alone, from any host.
const grantHost = "%"

// showGrants answers SHOW GRANTS [FOR CURRENT_USER[()] | FOR user]: what
// the session's user may do here, in MariaDB's words (USAGE on *.*, SELECT
// on heapprof.* for profile users). Another user's grants are the mysql
// schema's, refused as MariaDB refuses them to a user without access to it.
func (e *Engine) showGrants(sctx *sql.Context, b *stmtBudget, s *Session, n *ast.ShowGrants) (*Result, error) {
	if n.For != nil && !n.CurrentUser && n.For.Name != s.user {
		b.release()
		return nil, errDBAccess(s, "mysql")
	}
	account := fmt.Sprintf("`%s`@`%s`", s.user, grantHost)
	rows := []sql.Row{{"GRANT USAGE ON *.* TO " + account}}
	if s.profiles {
		rows = append(rows, sql.Row{"GRANT SELECT ON `" + SchemaName + "`.* TO " + account})
	}
	schema := sql.Schema{{Name: fmt.Sprintf("Grants for %s@%s", s.user, grantHost), Type: types.LongText}}
	r := &Result{ctx: sctx, schema: schema, iter: sql.RowsToRowIter(rows...), budget: b}
	r.Columns = columns(sctx, schema)
	return r, nil
}

// errDBAccess is MariaDB's answer to a user without grants on db.
func errDBAccess(s *Session, db string) *Error {
	return &Error{Code: mysql.ERDBAccessDenied, State: mysql.SSClientError,
		Message: fmt.Sprintf("Access denied for user '%s'@'%s' to database '%s'", s.user, s.base.Client().Address, db)}
}

// systemSchema is MySQL's grant schema: heapproxy's users are its own
// (its config), so a user has no access to mysql.*, as on MariaDB for a
// user granted only SELECT on heapprof.*.
const systemSchema = "mysql"

// checkSystemSchema refuses the mysql schema with MariaDB's answers to a
// user without grants there: 1142 for its tables, 1044 for USE.
func checkSystemSchema(s *Session, stmt ast.Statement) error {
	if u, ok := stmt.(*ast.Use); ok && strings.EqualFold(u.DBName.String(), systemSchema) {
		return errDBAccess(s, systemSchema)
	}
	if sh, ok := stmt.(*ast.Show); ok && strings.EqualFold(sh.Table.DbQualifier.String(), systemSchema) {
		return errTableAccess(s, "SELECT", sh.Table.Name.String())
	}
	var found error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if t, ok := node.(ast.TableName); ok && strings.EqualFold(t.DbQualifier.String(), systemSchema) {
			found = errTableAccess(s, "SELECT", t.Name.String())
			return false, found
		}
		return true, nil
	}, stmt)
	return found
}

func errTableAccess(s *Session, what, table string) *Error {
	return &Error{Code: erTableAccessDenied, State: mysql.SSClientError,
		Message: fmt.Sprintf("%s command denied to user '%s'@'%s' for table `%s`.`%s`", what, s.user, s.base.Client().Address, systemSchema, table)}
}

// erTableAccessDenied is MySQL's ER_TABLEACCESS_DENIED_ERROR (vitess names
// no constant for it).
const erTableAccessDenied = 1142

// sessionSets are stmt's assignments to the session's system variable
// name (SET name = ..., SET SESSION name, SET @@name, SET @@SESSION.name).
func sessionSets(stmt ast.Statement, name string) []*ast.SetVarExpr {
	set, ok := stmt.(*ast.Set)
	if !ok {
		return nil
	}
	var out []*ast.SetVarExpr
	for _, e := range set.Exprs {
		if strings.EqualFold(e.Name.Name.String(), name) && (e.Scope == ast.SetScope_None || e.Scope == ast.SetScope_Session) {
			out = append(out, e)
		}
	}
	return out
}

// checkSetVariables answers SET of a name that is no system variable with
// MySQL's 1193 (go-mysql-server takes an unscoped unknown name for a
// column and answers 1054).
func checkSetVariables(stmt ast.Statement) error {
	set, ok := stmt.(*ast.Set)
	if !ok {
		return nil
	}
	for _, e := range set.Exprs {
		if e.Scope != ast.SetScope_None && e.Scope != ast.SetScope_Session {
			continue
		}
		name := strings.ToLower(e.Name.Name.String())
		switch name {
		case "names", "charset", "transaction":
			continue
		}
		if _, _, known := sql.SystemVariables.GetGlobal(name); !known {
			return &Error{Code: mysql.ERUnknownSystemVariable, State: mysql.SSUnknownSQLState,
				Message: fmt.Sprintf("Unknown system variable '%s'", name)}
		}
	}
	return nil
}

// Reads of system variables that answer other values than go-mysql-server
// keeps: globals and reported session values.
//
// The global values of the variables a session starts with (the front's
// version, max_allowed_packet, ..., version_comment and time_zone) are
// those initial values: MariaDB's globals are what a new session starts
// with. go-mysql-server keeps one process-wide registry of globals
// (sql.SystemVariables) holding its own (version 8.0.31, version_comment
// Dolt); it is not changed here, so that engines in one process stay
// apart. Instead @@GLOBAL.x reads (ruleReads) and SHOW GLOBAL VARIABLES
// (readsIter) answer the session's starting values.
//
// A reported session value (Session.Report) is what @@x, @@SESSION.x and
// SHOW VARIABLES answer while the engine works with its own value: the
// connection's character sets, which the front converts to and from
// UTF-8 while the engine works in UTF-8.

// ruleReads is the analyzer rule that points @@GLOBAL.x reads at the
// session's starting values, and @@x reads at its reported values.
const ruleReads analyzer.RuleId = 100103

// sessionKey is the context key of the statement's *Session.
type sessionKey struct{}

func sessionOf(ctx context.Context) *Session {
	s, _ := ctx.Value(sessionKey{}).(*Session)
	return s
}

// Report makes reads of session variable name (@@name, @@SESSION.name,
// SHOW VARIABLES, in any statement) answer value, nil for NULL, while the
// engine goes on working with its own value of name. The MySQL front
// reports the connection's character sets this way: it converts text
// between them and UTF-8, in which the engine works. Call it between
// statements of s.
func (s *Session) Report(name string, value any) {
	if s.reported == nil {
		s.reported = map[string]any{}
	}
	s.reported[strings.ToLower(name)] = value
}

// valueScope answers reads of the variables in vals from vals, converted
// to the variable's type, and every other read as sql.MysqlScope.
type valueScope struct {
	*sql.MysqlScope
	vals map[string]any
}

func (g *valueScope) GetValue(ctx *sql.Context, name string, coll sql.CollationID) (any, error) {
	v, ok := g.vals[strings.ToLower(name)]
	if !ok {
		return g.MysqlScope.GetValue(ctx, name, coll)
	}
	if sv, _, known := sql.SystemVariables.GetGlobal(name); known && v != nil {
		c, _, err := sv.GetType().Convert(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("sqlview: variable %s: %w", name, err)
		}
		return c, nil
	}
	return v, nil
}

func readsRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	s := sessionOf(ctx)
	if s == nil || len(s.globals)+len(s.reported) == 0 {
		return n, transform.SameTree, nil
	}
	return readsNode(n, s)
}

// readsNode gives n's variable reads, subqueries' included, the session's
// globals and reported values. SET statements are left alone: the guard
// reads their targets' scope.
func readsNode(n sql.Node, s *Session) (sql.Node, transform.TreeIdentity, error) {
	if _, ok := n.(*plan.Set); ok {
		return n, transform.SameTree, nil
	}
	return transform.NodeExprsWithOpaque(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch x := e.(type) {
		case *plan.Subquery:
			q, same, err := readsNode(x.Query, s)
			if err != nil || same == transform.SameTree {
				return e, transform.SameTree, err
			}
			return x.WithQuery(q), transform.NewTree, nil
		case *expression.SystemVar:
			sc, ok := x.Scope.(*sql.MysqlScope)
			if !ok {
				return e, transform.SameTree, nil
			}
			vals := s.reported
			if sc.Type == sql.SystemVariableScope_Global {
				vals = s.globals
			}
			if strings.EqualFold(x.Name, "sql_mode") {
				if text, ok := vals["sql_mode"].(string); ok {
					return &sqlModeRead{SystemVar: x, text: text}, transform.NewTree, nil
				}
			}
			if _, ours := vals[strings.ToLower(x.Name)]; !ours {
				return e, transform.SameTree, nil
			}
			v := *x
			v.Scope = &valueScope{MysqlScope: sc, vals: vals}
			return &v, transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// readsIter is SHOW [GLOBAL] VARIABLES with the values in vals.
type readsIter struct {
	sql.RowIter
	vals map[string]any
}

func (it *readsIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || len(row) != 2 {
		return row, err
	}
	name, _ := row[0].(string)
	if v, ok := it.vals[strings.ToLower(name)]; ok {
		if v == nil {
			v = "" // SHOW VARIABLES prints NULL as empty
		}
		row = sql.Row{row[0], v}
	}
	return row, nil
}
