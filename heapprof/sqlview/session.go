package sqlview

import (
	"context"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
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
