package sqlview

// What the engine refuses, and why. go-mysql-server v0.20.0 is a general
// MySQL server: besides SELECT over our tables it can read and write host
// files, keep state shared by all connections and drive replication. The
// heapprof schema is read-only, so everything that reaches beyond the
// statement's own session and our four tables is refused before it is
// planned (parse) and again on the analyzed plan (an analyzer rule, which
// also sees SQL-level PREPARE ... FROM @var when EXECUTE plans it), always
// with ERROR 1290 (HY000), MySQL's answer for a disabled feature:
//
// Host files ("The MySQL server is running with the --secure-file-priv
// option so it cannot execute this statement", MySQL's own text):
//   - LOAD_FILE(path)               reads any file the proxy can read
//   - SELECT ... INTO OUTFILE/DUMPFILE, TABLE ... INTO OUTFILE
//     (plan.Into)                   creates files
//   - LOAD DATA [LOCAL] INFILE (plan.LoadData) reads server or client files
//
// Shared or global state, network, other sessions ("The heapprof schema
// refuses X: why"):
//   - GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK:
//     named locks live in the engine, shared by all connections, and a lock
//     outlives the statement that took it
//   - SET GLOBAL / SET PERSIST / SET PERSIST_ONLY / SET @@global.x: go-mysql-
//     server keeps global variables process-wide (secure_file_priv among them)
//   - SET PASSWORD, CREATE/DROP/RENAME/ALTER USER, CREATE/DROP ROLE, GRANT,
//     REVOKE, FLUSH: users are heapproxy's (config), not the engine's
//   - CHANGE REPLICATION SOURCE/FILTER, START/STOP/RESET REPLICA, PURGE
//     BINARY LOGS: connect to other servers, manage binlog files
//   - KILL: heapproxy's front answers KILL itself; the engine's process list
//     is not the proxy's
//   - CALL and stored-program control statements: there are no procedures;
//     go-mysql-server's external procedures are integrator hooks
//   - LOCK TABLES ... WRITE: table locks shared across connections (LOCK
//     TABLES ... READ [LOCAL] and UNLOCK TABLES, what mariadb-dump sends,
//     answer OK without locking anything: nobody writes the tables)
//   - ANALYZE TABLE (writes statistics), CREATE SPATIAL REFERENCE SYSTEM
//     (adds to a process-wide table), CREATE/DROP/ALTER DATABASE and all
//     other DDL and DML (the existing "heapprof is read-only" answer)
//   - any statement not on the allow list below (allowStatement): new
//     go-mysql-server statements are refused until reviewed
//
// Allowed: SELECT / UNION / TABLE / VALUES, SHOW (SHOW GRANTS is answered by
// the engine itself: session.go), DESCRIBE / EXPLAIN of
// those, USE, SET of session and user variables, BEGIN / COMMIT /
// ROLLBACK / SAVEPOINT (no-ops on read-only tables), PREPARE / EXECUTE /
// DEALLOCATE (the prepared text is checked the same way).
//
// Reviewed and kept: SLEEP (it returns as soon as the statement's context is
// canceled), RANDOM_BYTES (go-mysql-server caps it at 1,024 bytes),
// UNCOMPRESS (capped by go-mysql-server), CONVERT_TZ / SET time_zone (a
// zone name is looked up among the zoneinfo files, timezone.go; what
// go-mysql-server loads itself goes through Go's time.LoadLocation, which
// refuses paths),
// UUID, RAND, CONNECTION_ID, USER, VERSION. REPEAT, SPACE, LPAD, RPAD and
// REPLACE are kept but bounded (valueGuard): REPEAT('x', 2147483647) would
// otherwise allocate 2 GB in one call.

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
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// secureFileMessage is MySQL's text for a file operation refused by
// --secure-file-priv.
const secureFileMessage = "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement"

// erWarnAllowedPacketOverflowed is MySQL's warning 1301 for a string
// function whose result would exceed max_allowed_packet.
const erWarnAllowedPacketOverflowed = 1301

// errFileAccess is the answer to anything that reads or writes host files.
func errFileAccess() *Error {
	return &Error{Code: mysql.EROptionPreventsStatement, State: mysql.SSUnknownSQLState, Message: secureFileMessage}
}

// errRefused names what the schema refuses and why.
func errRefused(what, why string) *Error {
	return &Error{Code: mysql.EROptionPreventsStatement, State: mysql.SSUnknownSQLState,
		Message: fmt.Sprintf("The heapprof schema refuses %s: %s", what, why)}
}

// refusedFunctions are the builtins that touch the host or state shared
// by all connections, lower case, with the reason given to the client.
func refusedFunction(name string) (*Error, bool) {
	switch strings.ToLower(name) {
	case "load_file":
		return errFileAccess(), true
	case "get_lock", "release_lock", "release_all_locks", "is_free_lock", "is_used_lock":
		return errRefused(strings.ToUpper(name)+"()", "named locks are shared by all connections and outlive the statement"), true
	}
	return nil, false
}

// checkStatement refuses, before planning, what the schema does not do.
// Writes are left to isWrite (its "read-only" answer); file access comes
// first so that LOAD DATA names --secure-file-priv.
func checkStatement(stmt ast.Statement) error {
	if err := checkFileAccess(stmt); err != nil {
		return err
	}
	if isWrite(stmt) {
		return toError(sql.ErrReadOnly.New())
	}
	if err := allowStatement(stmt); err != nil {
		return err
	}
	var found error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if f, ok := node.(*ast.FuncExpr); ok {
			if e, refused := refusedFunction(f.Name.String()); refused {
				found = e
				return false, e
			}
		}
		return true, nil
	}, stmt)
	return found
}

// checkFileAccess finds LOAD DATA, INTO OUTFILE/DUMPFILE and LOAD_FILE
// anywhere in the statement.
func checkFileAccess(stmt ast.Statement) error {
	if _, ok := stmt.(*ast.Load); ok {
		return errFileAccess()
	}
	var found error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Into:
			if n != nil && (n.Outfile != "" || n.Dumpfile != "") {
				found = errFileAccess()
			}
		case *ast.Select:
			if n.Into != nil && (n.Into.Outfile != "" || n.Into.Dumpfile != "") {
				found = errFileAccess()
			}
		case *ast.SetOp:
			if n.Into != nil && (n.Into.Outfile != "" || n.Into.Dumpfile != "") {
				found = errFileAccess()
			}
		case *ast.FuncExpr:
			if n.Name.Lowered() == "load_file" {
				found = errFileAccess()
			}
		}
		if found != nil {
			return false, found
		}
		return true, nil
	}, stmt)
	return found
}

// allowStatement is the allow list of statement kinds.
func allowStatement(stmt ast.Statement) error {
	switch s := stmt.(type) {
	case *ast.Select, *ast.SetOp, *ast.ParenSelect, *ast.Show, *ast.Use, *ast.ShowGrants,
		*ast.Begin, *ast.Commit, *ast.Rollback, *ast.Savepoint, *ast.RollbackSavepoint, *ast.ReleaseSavepoint,
		*ast.Execute, *ast.Deallocate:
		return nil
	case *ast.Explain:
		if s.Statement == nil {
			return nil
		}
		return checkStatement(s.Statement)
	case *ast.Set:
		return checkSet(s)
	case *ast.Prepare:
		// PREPARE s FROM @var: Engine.parse put the variable's text in
		// its place; one it could not read (not a string) is left to
		// the analyzer rule (checkPlan), which sees the plan.
		if strings.HasPrefix(s.Expr, "@") {
			return nil
		}
		inner, err := ast.Parse(s.Expr)
		if err != nil {
			return nil // go-mysql-server reports the syntax error
		}
		return checkStatement(inner)
	case *ast.Kill:
		return errRefused("KILL", "heapproxy answers KILL itself; the SQL engine has no other connections to end")
	case *ast.Call:
		return errRefused("CALL", "the heapprof schema has no stored procedures")
	case *ast.LockTables:
		if readLocksOnly(s) {
			return nil // answered OK without locking: see Engine.Query
		}
		return errRefused("LOCK TABLES ... WRITE", "table locks are shared by all connections and the tables are read-only")
	case *ast.UnlockTables:
		return nil // answered OK: see Engine.Query
	case *ast.Analyze:
		return errRefused("ANALYZE TABLE", "it writes table statistics; the schema is read-only")
	case *ast.Flush:
		return errRefused("FLUSH", "it changes server-wide state")
	case *ast.ChangeReplicationSource, *ast.ChangeReplicationFilter, *ast.StartReplica, *ast.StopReplica,
		*ast.ResetReplica, *ast.PurgeBinaryLogs:
		return errRefused("replication statements", "they connect to other servers and manage binary log files")
	}
	name := strings.TrimPrefix(fmt.Sprintf("%T", stmt), "*sqlparser.")
	return errRefused(name+" statements", "only SELECT, SHOW, DESCRIBE/EXPLAIN, USE, SET of session and user variables and prepared statements run on the read-only heapprof schema")
}

// checkSet refuses global and persisted variables and passwords.
func checkSet(s *ast.Set) error {
	for _, e := range s.Exprs {
		switch e.Scope {
		case ast.SetScope_Global, ast.SetScope_Persist, ast.SetScope_PersistOnly:
			return errRefused("SET "+strings.ToUpper(string(e.Scope)), "global variables are shared by the whole proxy; use SET SESSION")
		}
		name := ""
		if e.Name != nil {
			name = strings.ToLower(e.Name.String())
		}
		for _, p := range []string{"@@global.", "@@persist.", "@@persist_only."} {
			if strings.HasPrefix(name, p) {
				return errRefused("SET "+strings.TrimSuffix(strings.TrimPrefix(p, "@@"), "."), "global variables are shared by the whole proxy; use SET SESSION")
			}
		}
		if name == "password" {
			return errRefused("SET PASSWORD", "users are configured in heapproxy, not in the SQL engine")
		}
	}
	return nil
}

// checkPlan is the same policy on an analyzed plan, subqueries included.
func checkPlan(n sql.Node) error {
	if n == nil {
		return nil
	}
	if err := checkNode(n); err != nil {
		return err
	}
	if ex, ok := n.(sql.Expressioner); ok {
		for _, e := range ex.Expressions() {
			var found error
			transform.InspectExpr(e, func(e sql.Expression) bool {
				if found == nil {
					found = checkExpr(e)
				}
				return found != nil
			})
			if found != nil {
				return found
			}
		}
	}
	for _, c := range n.Children() {
		if err := checkPlan(c); err != nil {
			return err
		}
	}
	return nil
}

func checkNode(n sql.Node) error {
	switch n := n.(type) {
	case *plan.Into:
		if n.Outfile != "" || n.Dumpfile != "" {
			return errFileAccess()
		}
	case *plan.LoadData:
		return errFileAccess()
	case *plan.ChangeReplicationSource, *plan.ChangeReplicationFilter, *plan.StartReplica, *plan.StopReplica, *plan.ResetReplica:
		return errRefused("replication statements", "they connect to other servers and manage binary log files")
	case *plan.Kill:
		return errRefused("KILL", "heapproxy answers KILL itself; the SQL engine has no other connections to end")
	case *plan.Grant, *plan.GrantRole, *plan.GrantProxy, *plan.Revoke, *plan.RevokeAll, *plan.RevokeRole, *plan.RevokeProxy,
		*plan.CreateUser, *plan.DropUser, *plan.RenameUser, *plan.AlterUser, *plan.CreateRole, *plan.DropRole, *plan.FlushPrivileges:
		return errRefused("user and privilege statements", "users are configured in heapproxy, not in the SQL engine")
	case *plan.Call, *plan.ExternalProcedure:
		return errRefused("CALL", "the heapprof schema has no stored procedures")
	case *plan.LockTables, *plan.UnlockTables:
		return errRefused("LOCK/UNLOCK TABLES", "table locks are shared by all connections and the tables are read-only")
	case *plan.AnalyzeTable, *plan.UpdateHistogram, *plan.DropHistogram:
		return errRefused("ANALYZE TABLE", "it writes table statistics; the schema is read-only")
	case *plan.CreateDB, *plan.DropDB, *plan.AlterDB, *plan.CreateSpatialRefSys:
		return toError(sql.ErrReadOnly.New())
	case *plan.Set:
		for _, e := range n.Exprs {
			sf, ok := e.(*expression.SetField)
			if !ok {
				continue
			}
			if v, ok := sf.LeftChild.(*expression.SystemVar); ok {
				if sc, ok := v.Scope.(*sql.MysqlScope); ok && sc.Type != sql.SystemVariableScope_Session && sc.Type != sql.SystemVariableScope_Both {
					return errRefused("SET GLOBAL", "global variables are shared by the whole proxy; use SET SESSION")
				}
			}
		}
	}
	return nil
}

func checkExpr(e sql.Expression) error {
	switch e := e.(type) {
	case *function.LoadFile:
		return errFileAccess()
	case *function.GetLock, *function.ReleaseLock, *function.ReleaseAllLocks, function.ReleaseAllLocks,
		*function.IsFreeLock, *function.IsUsedLock:
		err, _ := refusedFunction(e.(sql.FunctionExpression).FunctionName())
		return err
	case *plan.Subquery:
		return checkPlan(e.Query)
	case sql.FunctionExpression:
		// By name too, whatever type the registry builds.
		if err, refused := refusedFunction(e.FunctionName()); refused {
			return err
		}
	}
	return nil
}

// Rule ids of the engine's own analyzer rules, far above go-mysql-server's.
const (
	ruleCheckBefore analyzer.RuleId = 100000 + iota
	ruleCheckAfter
	ruleValueGuard
	ruleTopN
	ruleDialect
	ruleInterrupt
)

// interruptRule ends planning once the statement's context is done
// (KILL QUERY, the client gone, the statement timeout). go-mysql-server
// never looks at the context while it plans, and some plans take it time
// exponential in the statement's nesting (finalizeSubqueries analyzes a
// derived table's subtree again at every level: 16 nested derived tables
// with a WHERE each took minutes); it runs the analyzer's batches again for
// every subquery, so this rule, in the batches a subquery's analysis runs
// (pre-analyzer before finalizing, post-analyzer after), is reached often.
func interruptRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if err := ctx.Err(); err != nil {
		return nil, transform.SameTree, err
	}
	return n, transform.SameTree, nil
}

// checkRule runs checkPlan as an analyzer rule: before the standard rules
// (nothing is evaluated yet) and after validation (the final plan).
func checkRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if err := checkPlan(n); err != nil {
		return nil, transform.SameTree, err
	}
	return n, transform.SameTree, nil
}

// valueGuard bounds the result of a function that builds a string from a
// count (REPEAT, SPACE, LPAD, RPAD) or multiplies one (REPLACE): it
// evaluates the arguments, answers NULL with warning 1301 when the result
// would exceed the limit (MySQL's behaviour beyond max_allowed_packet), and
// otherwise lets the function build it from the evaluated arguments.
type valueGuard struct {
	fn    sql.Expression
	limit int64
}

var _ sql.Expression = (*valueGuard)(nil)

func (g *valueGuard) Resolved() bool             { return g.fn.Resolved() }
func (g *valueGuard) String() string             { return g.fn.String() }
func (g *valueGuard) Type() sql.Type             { return g.fn.Type() }
func (g *valueGuard) IsNullable() bool           { return true }
func (g *valueGuard) Children() []sql.Expression { return g.fn.Children() }
func (g *valueGuard) FunctionName() string       { return funcName(g.fn) }
func (g *valueGuard) Description() string        { return "bounded " + funcName(g.fn) }
func (g *valueGuard) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	if c, ok := g.fn.(sql.CollationCoercible); ok {
		return c.CollationCoercibility(ctx)
	}
	return sql.Collation_binary, 5
}

func (g *valueGuard) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	fn, err := g.fn.WithChildren(children...)
	if err != nil {
		return nil, err
	}
	return &valueGuard{fn: fn, limit: g.limit}, nil
}

func funcName(e sql.Expression) string {
	if f, ok := e.(sql.FunctionExpression); ok {
		return f.FunctionName()
	}
	return fmt.Sprintf("%T", e)
}

func (g *valueGuard) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := g.fn.Children()
	vals := make([]any, len(kids))
	lits := make([]sql.Expression, len(kids))
	for i, k := range kids {
		v, err := k.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		vals[i] = v
		lits[i] = expression.NewLiteral(v, k.Type())
	}
	if size := resultBound(ctx, g.fn, vals); size > g.limit {
		ctx.Warn(erWarnAllowedPacketOverflowed, "Result of %s() was larger than max_allowed_packet (%d) - truncated", funcName(g.fn), g.limit)
		return nil, nil
	}
	fn, err := g.fn.WithChildren(lits...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", funcName(g.fn), err)
	}
	return fn.Eval(ctx, row)
}

// resultBound is an upper bound of the bytes fn builds from vals; 0 when
// an argument is NULL or not a number (the function answers that itself).
func resultBound(ctx *sql.Context, fn sql.Expression, vals []any) int64 {
	str := func(i int) string {
		if i >= len(vals) || vals[i] == nil {
			return ""
		}
		s, _, err := types.LongText.Convert(ctx, vals[i])
		if err != nil {
			return ""
		}
		v, _ := s.(string)
		return v
	}
	num := func(i int) int64 {
		if i >= len(vals) || vals[i] == nil {
			return 0
		}
		n, _, err := types.Int64.Convert(ctx, vals[i])
		if err != nil {
			return 0
		}
		v, _ := n.(int64)
		return max(v, 0)
	}
	switch fn.(type) {
	case *function.Repeat:
		s, n := int64(len(str(0))), num(1)
		if s == 0 || n == 0 {
			return 0
		}
		if n > (1<<62)/s {
			return 1 << 62
		}
		return s * n
	case *function.Space:
		return num(0)
	case *charPad:
		// a character takes up to 4 bytes in utf8mb4
		return min(num(1), 1<<60) * 4
	case *function.Replace:
		s, from, to := str(0), str(1), str(2)
		if from == "" || len(to) <= len(from) {
			return int64(len(s))
		}
		return int64(len(s)) + int64(strings.Count(s, from))*int64(len(to)-len(from))
	}
	return 0
}

// guardValues wraps the bounded functions of a plan, subqueries included,
// and meters the rows of every subquery (budget.go).
func guardValues(n sql.Node, limit int64, eb *execBuilder) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeExprsWithOpaque(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		switch e := e.(type) {
		case *valueGuard:
			return e, transform.SameTree, nil
		case *function.Repeat, *function.Space, *charPad, *function.Replace:
			return &valueGuard{fn: e, limit: limit}, transform.NewTree, nil
		case *plan.Subquery:
			q, same, err := guardValues(e.Query, limit, eb)
			if err != nil {
				return e, transform.SameTree, err
			}
			if _, metered := q.(*meteredNode); !metered {
				q, same = &meteredNode{child: q, eb: eb, limit: -1}, transform.NewTree
			}
			if same == transform.SameTree {
				return e, transform.SameTree, nil
			}
			return e.WithQuery(q), transform.NewTree, nil
		}
		return e, transform.SameTree, nil
	})
}

// readLocksOnly tells a LOCK TABLES that takes only READ [LOCAL] locks.
func readLocksOnly(l *ast.LockTables) bool {
	for _, t := range l.Tables {
		if t.Lock != ast.LockRead && t.Lock != ast.LockReadLocal {
			return false
		}
	}
	return len(l.Tables) > 0
}
