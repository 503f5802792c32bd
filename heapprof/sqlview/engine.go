package sqlview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"go.uber.org/zap"
)

// VersionComment is what @@version_comment answers, so a client's banner
// says it talks to heapproxy's own schema.
const VersionComment = "heapproxy heapprof schema"

// Engine answers SQL over the heapprof schema. It is safe for concurrent use
// by many sessions; one Session serves one connection at a time.
type Engine struct {
	gms  *sqle.Engine
	opts Options
	// sqlMemory is what the running statements hold, as their budgets
	// estimate it (see budget.go).
	sqlMemory atomic.Int64
	// keys are the heapprof tables' key flags (flags.go).
	keys keyFlags
	// columns are the heapprof tables' column names (ambiguous.go).
	columns tableColumns
	// zones are the system's time zones (timezone.go).
	zones *zoneDB
}

// New builds an engine whose heapprof tables read src on every scan, with
// the default Options.
func New(src Source) (*Engine, error) { return NewWithOptions(src, Options{}) }

// NewWithOptions builds an engine with limits; zero fields of opts take
// their defaults.
func NewWithOptions(src Source, opts Options) (*Engine, error) {
	if src == nil {
		return nil, errors.New("sqlview: nil Source")
	}
	opts = opts.withDefaults()
	pro := &provider{db: &database{tables: withIndexes(newTables(src))}}
	keys := newSchemaKeys(pro.db.tables)
	limit := opts.MaxValueBytes
	// Every plan, subqueries included, is built through execBuilder:
	// cancellation and memory accounting (budget.go).
	eb := newExecBuilder()
	zones := newZoneDB()
	eb.keys = keys
	a := analyzer.NewBuilder(pro).
		AddPreAnalyzeRule(ruleInterrupt, interruptRule).
		AddPreAnalyzeRule(ruleCheckBefore, checkRule).
		// Illegal mixes of collations, before rewrites (collations.go).
		AddPreAnalyzeRule(ruleCollations, collationRule).
		// The HAVING workaround's hidden select items go first (having.go).
		AddPreAnalyzeRule(ruleHiddenHaving, stripHiddenRule).
		// DISTINCT ordered by a select item's position (orderdistinct.go).
		AddPreAnalyzeRule(ruleOrderDistinct, orderDistinctRule).
		// Before the standard rules, so that constant folding and
		// filters see MySQL's arithmetic (dialect.go).
		AddPreAnalyzeRule(ruleDialect, dialectRule).
		// SUM and AVG columns typed as the aggregates are (aggregates.go).
		AddPreAnalyzeRule(ruleAggTypes, aggTypesRule).
		// Decimal division as MariaDB computes it, once SUM and AVG
		// columns have their types (division.go).
		AddPreAnalyzeRule(ruleDivision, divisionRule).
		// Numbers compared as MariaDB compares them, once every operand
		// is typed and wrapped (realcompare.go).
		AddPreAnalyzeRule(ruleRealCompare, realCompareRule).
		// @@GLOBAL.x of the variables a session starts with, reported
		// session values (session.go).
		AddPreAnalyzeRule(ruleReads, readsRule).
		// x IN (list) of a date and text as =s before the list is
		// hashed (datecompare.go).
		AddPreAnalyzeRule(ruleDateIn, dateInRule).
		AddPostAnalyzeRule(ruleTopN, topNUnderProject).
		AddPostAnalyzeRule(ruleInterrupt, interruptRule).
		AddPostValidationRule(ruleCheckAfter, checkRule).
		AddPostValidationRule(ruleValueGuard, func(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
			return guardValues(n, limit, eb)
		}).
		// Dates made of text as MariaDB reads the text (datetext.go),
		// before the column definitions are read: go-mysql-server types
		// UNIX_TIMESTAMP by its argument's text.
		AddPostValidationRule(ruleDateValue, dateValueRule(zones)).
		// The result's column definitions as MariaDB's (resultmeta.go),
		// from the plan before the padding rule wraps its comparisons.
		AddPostValidationRule(ruleResultMeta, resultMetaRule).
		// After it, on the final plan: text compares PAD SPACE
		// (padspace.go); the column definitions were read before.
		AddPostValidationRule(rulePadSpace, padSpaceRule).
		// Dates compared with text as MariaDB reads the text
		// (datecompare.go), also after the column definitions.
		AddPostValidationRule(ruleDateCompare, dateCompareRule).
		Build()
	a.ExecBuilder = eb.base
	// information_schema with MariaDB's answers about the heapprof tables
	// (infoschema.go).
	a.Catalog.InfoSchema = &infoSchemaDB{Database: a.Catalog.InfoSchema, keys: keys}
	gms := sqle.New(a, &sqle.Config{IsReadOnly: true})
	return &Engine{gms: gms, opts: opts, keys: keys.cols, columns: newTableColumns(pro.db.tables), zones: zones}, nil
}

// Close releases the engine's background resources.
func (e *Engine) Close() error { return e.gms.Close() }

// Session is one client connection's state: user, current database, session
// variables. Create it with NewSession when the connection is accepted.
type Session struct {
	base *sql.BaseSession
	// globals are the global values of the variables the session started
	// with: those starting values (see globalScope).
	globals map[string]any
	// reported are what reads of session variables answer (Report).
	reported map[string]any
	// prepared counts the open prepared statements per query text: the
	// engine caches one parsed statement per text and session.
	prepared map[string]int
	// user is the account name; profiles says it may read the heapprof
	// schema (SHOW GRANTS lists SELECT on it).
	user     string
	profiles bool
	// mode is the session's sql_mode as MariaDB keeps it; go-mysql-server
	// keeps the part it knows (sqlmode.go).
	mode sqlMode
}

// NewSession starts a session for user connected from addr (host:port);
// connID is the connection id the proxy announced in its handshake.
// The session's time zone is UTC, matching how taken_at is stored (Grafana
// sends FROM_UNIXTIME bounds and reads the times back as UTC).
func (e *Engine) NewSession(ctx context.Context, user, addr string, connID uint32) (*Session, error) {
	return e.NewSessionWith(ctx, user, addr, connID, SessionOptions{})
}

// NewSessionWith is NewSession with the front's own session settings:
// values of system variables it knows better than the engine (the
// version it announces, max_allowed_packet, ...) and the user's grants.
func (e *Engine) NewSessionWith(ctx context.Context, user, addr string, connID uint32, opts SessionOptions) (*Session, error) {
	// USER() is user@host, as in MySQL: the client's port is not part of it.
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	base := sql.NewBaseSessionWithClientServer("heapproxy", sql.Client{User: user, Address: host}, connID)
	sctx := sql.NewContext(ctx, sql.WithSession(base))
	// group_concat_max_len is MariaDB's default (1M since 10.2.4), not
	// MySQL's 1024 that go-mysql-server starts with: GROUP_CONCAT of a
	// snapshot's function names was cut at 1024 bytes.
	// sql_mode is MariaDB's default (sqlmode.go).
	vars := map[string]any{"version_comment": VersionComment, "time_zone": "+00:00", "group_concat_max_len": uint64(1 << 20),
		"sql_mode": defaultSQLMode.String()}
	for name, v := range opts.Variables {
		vars[strings.ToLower(name)] = v
	}
	for name, v := range vars {
		if err := base.InitSessionVariable(sctx, name, v); err != nil {
			return nil, fmt.Errorf("sqlview: session variable %s: %w", name, err)
		}
	}
	s := &Session{base: base, user: user, profiles: opts.ReadsProfiles, globals: vars}
	s.setSQLMode(defaultSQLMode)
	return s, nil
}

// Database is the session's current database ("" when none).
func (s *Session) Database() string { return s.base.GetCurrentDatabase() }

// SetDatabase changes the current database, as COM_INIT_DB does; USE through
// Query does the same. It fails with a 1049 Error for an unknown database.
func (e *Engine) SetDatabase(ctx context.Context, s *Session, name string) error {
	sctx := sql.NewContext(ctx, sql.WithSession(s.base))
	if !e.gms.Analyzer.Catalog.HasDatabase(sctx, name) {
		return &Error{Code: mysql.ERBadDb, State: mysql.SSClientError, Message: fmt.Sprintf("Unknown database '%s'", name)}
	}
	s.base.SetCurrentDatabase(name)
	return nil
}

// Column describes one result column in the terms of a MySQL column
// definition packet.
type Column struct {
	Name     string
	Table    string
	Database string
	// Type is the MySQL protocol type code (MYSQL_TYPE_LONGLONG = 8, ...).
	Type byte
	// Flags are the column definition flags (NOT_NULL 1, PRI_KEY 2,
	// UNSIGNED 32, BINARY 128, ...).
	Flags uint16
	// Charset is the collation id: 45 utf8mb4_general_ci, 33
	// utf8mb3_general_ci (information_schema), 63 binary (numbers, dates).
	Charset  uint16
	Length   uint32
	Decimals uint8
}

// Result is a statement's answer: either rows (Columns non-nil, read them
// with Next) or an OK (Columns nil, AffectedRows set). Close it when done.
type Result struct {
	Columns      []Column
	AffectedRows uint64
	InsertID     uint64
	Info         string

	ctx    *sql.Context
	schema sql.Schema
	iter   sql.RowIter
	budget *stmtBudget
}

// Next returns the next row as MySQL text-protocol values: one element per
// column, nil for NULL (a non-NULL empty string is a non-nil empty slice).
// It returns io.EOF after the last row.
func (r *Result) Next() (_ [][]byte, err error) {
	if r.iter == nil {
		return nil, io.EOF
	}
	defer r.budget.eng.recoverPanic(r.ctx, r.budget, &err)
	row, err := r.iter.Next(r.ctx)
	if err == io.EOF {
		return nil, io.EOF
	}
	if err != nil {
		return nil, r.budget.toError(err)
	}
	out := make([][]byte, len(r.schema))
	for i, c := range r.schema {
		if i >= len(row) || row[i] == nil {
			continue
		}
		if b, ok := datetimeText(c.Type, row[i]); ok {
			out[i] = b
			continue
		}
		if dt, ok := c.Type.(sql.DecimalType); ok {
			// MariaDB prints a DECIMAL with all its scale's digits
			// (GREATEST(x, 1.25) of 10485760 is 10485760.00).
			if d, ok := row[i].(interface{ StringFixed(int32) string }); ok {
				out[i] = []byte(d.StringFixed(int32(dt.Scale())))
				continue
			}
		}
		switch f := row[i].(type) {
		case types.Timespan:
			if i < len(r.Columns) && r.Columns[i].Type == mysqlTypeTime {
				// A TIME with its own fraction digits, as MariaDB prints
				// it (go-mysql-server: six or none).
				out[i] = []byte(timeString(f.AsMicroseconds(), int(r.Columns[i].Decimals)))
				continue
			}
		case float64:
			if math.IsInf(f, 0) || math.IsNaN(f) {
				// MariaDB has no infinite DOUBLE; what arithmetic and
				// functions do not catch (SUM of DOUBLEs) is ERROR 1690 here.
				return nil, outOfRange("DOUBLE", c.Name)
			}
			if i < len(r.Columns) && r.Columns[i].Type == mysqlTypeDouble && r.Columns[i].Decimals < 31 {
				// A DOUBLE with a scale (ROUND(x, 1)) prints all its
				// digits, as MariaDB does: 0.0, not 0.
				out[i] = fixedDouble(f, int(r.Columns[i].Decimals))
				continue
			}
			out[i] = doubleText(f, 64)
			continue
		case float32:
			out[i] = doubleText(float64(f), 32)
			continue
		}
		v, err := c.Type.SQL(r.ctx, nil, row[i])
		if err != nil {
			return nil, toError(fmt.Errorf("column %s: %w", c.Name, err))
		}
		if v.IsNull() {
			continue
		}
		b := v.ToBytes()
		if b == nil {
			b = []byte{}
		}
		out[i] = b
	}
	return out, nil
}

// datetimeText prints DATETIME(p)/TIMESTAMP(p) values with all p fraction
// digits, as MySQL and MariaDB do; go-mysql-server drops zero fractions.
func datetimeText(typ sql.Type, v any) ([]byte, bool) {
	dt, ok := typ.(sql.DatetimeType)
	if !ok || dt.Precision() <= 0 || (typ.Type() != sqltypes.Datetime && typ.Type() != sqltypes.Timestamp) {
		return nil, false
	}
	t, ok := v.(time.Time)
	if !ok {
		return nil, false
	}
	const layout = "2006-01-02 15:04:05.000000"
	return t.AppendFormat(nil, layout[:20+dt.Precision()]), true
}

// doubleText prints a DOUBLE as MariaDB does: the shortest digits that read
// back to the same value, in exponent form only when the decimal exponent is
// below -15 or above 14 (go-mysql-server prints 9437184 as 9.437184e+06,
// which BI tools show as is).
func doubleText(f float64, bits int) []byte {
	if f == 0 {
		f = 0 // -0 prints 0, as on MariaDB
	}
	e := strconv.FormatFloat(f, 'e', -1, bits)
	mant, exp, _ := strings.Cut(e, "e")
	x, err := strconv.Atoi(exp)
	if err != nil || (x >= -15 && x < 15) {
		return strconv.AppendFloat(nil, f, 'f', -1, bits)
	}
	return fmt.Appendf(nil, "%se%d", mant, x)
}

// fixedDouble prints a DOUBLE with d fraction digits as MariaDB does: its
// shortest digits that read back to the same value, rounded to d or padded
// with zeros to d (VAR_POP's 17526406523151.14453125 is
// 17526406523151.1450, not the binary value's 17526406523151.1445).
func fixedDouble(f float64, d int) []byte {
	if f == 0 {
		f = 0 // -0 prints 0
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	_, frac, _ := strings.Cut(s, ".")
	if len(frac) > d {
		return strconv.AppendFloat(nil, f, 'f', d, 64)
	}
	out := []byte(s)
	if d > 0 && len(frac) == 0 {
		out = append(out, '.')
	}
	for range d - len(frac) {
		out = append(out, '0')
	}
	return out
}

// Close ends the statement; it is safe to call twice, and before the
// first row was read.
func (r *Result) Close() (err error) {
	if r.iter == nil {
		return nil
	}
	iter := r.iter
	r.iter = nil
	defer r.budget.release()
	defer func() {
		// go-mysql-server's GROUP BY iterator makes its buffers in its
		// first Next and dereferences them in Close: closing a grouped
		// result unread (a client gone before the rows) panics there.
		if p := recover(); p != nil {
			err = &Error{Code: mysql.ERUnknownError, State: mysql.SSUnknownSQLState, Message: fmt.Sprintf("closing the result: %v", p)}
		}
	}()
	if err := iter.Close(r.ctx); err != nil {
		return toError(err)
	}
	return nil
}

// Query runs one statement in session s. ctx bounds the whole statement,
// including the reading of its rows, until the Result is closed.
// Errors are *Error values carrying a MySQL error code and SQLSTATE.
func (e *Engine) Query(ctx context.Context, s *Session, query string) (_ *Result, err error) {
	if s == nil {
		return nil, errors.New("sqlview: nil Session")
	}
	sctx, b := e.newContext(ctx, s, query)
	defer e.recoverPanic(sctx, b, &err)
	stmt, err := e.parse(sctx, s, query)
	if errors.Is(err, ast.ErrEmpty) {
		return &Result{}, nil // a comment alone: MariaDB answers OK
	}
	if err != nil {
		return nil, err
	}
	switch st := stmt.(type) {
	case *ast.ShowGrants:
		return e.showGrants(sctx, b, s, st)
	case *ast.LockTables, *ast.UnlockTables:
		// Read locks only (the guard refused others): the tables are
		// read-only, so there is nothing to wait for; go-mysql-server's
		// locks would be shared by all connections.
		return &Result{}, nil
	}
	r, err := e.run(sctx, b, query, stmt, nil)
	if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok && m.setSQLMode != nil && err == nil {
		s.setSQLMode(*m.setSQLMode)
	}
	return r, err
}

// recoverPanic, deferred by each entry point of a statement, turns a panic
// inside go-mysql-server (FORMAT(1.5, 2, 1) panicked on a locale that is
// not a string) into the statement's error: ERROR 1105 for the client,
// whose session goes on, instead of a lost connection, and the stack in
// the log. The statement's memory charge is released.
func (e *Engine) recoverPanic(sctx *sql.Context, b *stmtBudget, err *error) {
	p := recover()
	if p == nil {
		return
	}
	b.release()
	e.opts.Logger.Error("sql engine panicked", zap.Uint32("conn", sctx.Session.ID()), zap.String("query", sctx.Query()),
		zap.Any("panic", p), zap.Stack("stack"))
	*err = &Error{Code: mysql.ERUnknownError, State: mysql.SSUnknownSQLState,
		Message: fmt.Sprintf("heapprof's SQL engine (go-mysql-server) failed on this statement: %v; the session goes on", p)}
}

// newContext is the go-mysql-server context of one statement of s, with
// the statement's memory budget.
func (e *Engine) newContext(ctx context.Context, s *Session, query string) (*sql.Context, *stmtBudget) {
	b := &stmtBudget{eng: e}
	ctx = context.WithValue(ctx, snapshotListKey{}, &snapshotList{})
	ctx = context.WithValue(ctx, budgetKey{}, b)
	ctx = context.WithValue(ctx, metaKey{}, &stmtMeta{keys: e.keys})
	ctx = context.WithValue(ctx, sessionKey{}, s)
	sctx := sql.NewContext(ctx, sql.WithSession(s.base), sql.WithQuery(query))
	sctx.Memory = sql.NewMemoryManager(&reporter{ctx: sctx, b: b})
	return sctx, b
}

// toError is toError, except that a statement over its memory budget
// answers the budget's error whatever go-mysql-server made of it.
func (b *stmtBudget) toError(err error) *Error {
	if b != nil {
		if e := b.err.Load(); e != nil {
			return e
		}
	}
	return toError(err)
}

// parse parses one statement and refuses writes. An empty statement (a
// comment alone) is ast.ErrEmpty, unwrapped.
func (e *Engine) parse(sctx *sql.Context, s *Session, query string) (ast.Statement, error) {
	if err := checkSQLModeSyntax(s.mode, query); err != nil {
		return nil, err
	}
	stmt, _, _, err := e.gms.Parser.Parse(sctx, query, false)
	if errors.Is(err, ast.ErrEmpty) {
		return nil, ast.ErrEmpty
	}
	if err == nil {
		itemNames(stmt, query)
	}
	if err != nil {
		// query becomes the text stmt was parsed from: notNames reads
		// positions in it.
		if stmt, query, err = e.reparse(query, toError(sql.ErrSyntaxError.New(err.Error()))); err != nil {
			return nil, err
		}
	}
	if p, ok := stmt.(*ast.Prepare); ok {
		preparedText(sctx, p)
	}
	// Writes, file access and statements that reach beyond the session
	// are refused before planning (guard.go): go-mysql-server reports some
	// writes (DELETE without a current database) as unrelated resolution
	// errors, and planning may evaluate constant expressions.
	if err := checkStatement(stmt); err != nil {
		var refused *Error
		if errors.As(err, &refused) && refused.Code == mysql.EROptionPreventsStatement && !isWrite(stmt) {
			e.opts.Logger.Warn("sql statement refused", zap.Uint32("conn", sctx.Session.ID()),
				zap.String("user", sctx.Session.Client().User), zap.String("query", query), zap.String("reason", refused.Message))
		}
		return nil, toError(err)
	}
	if err := checkSetVariables(stmt); err != nil {
		return nil, err
	}
	if err := e.zones.checkTimeZone(stmt); err != nil {
		return nil, err
	}
	if err := e.setSQLModes(sctx, s, stmt); err != nil {
		return nil, err
	}
	if err := checkSystemSchema(s, stmt); err != nil {
		return nil, err
	}
	notNames(query, stmt)
	cumeDists(stmt)
	if err := rollups(sctx, stmt); err != nil {
		return nil, err
	}
	groupedWindows(stmt)
	groupOrder(sctx, stmt, e.columns)
	subqueryTableNames(stmt)
	duplicateItemNames(sctx, stmt)
	if _, err := e.plannable(sctx, stmt); err != nil {
		return nil, err
	}
	if p, ok := stmt.(*ast.Prepare); ok {
		if err := e.plannablePrepared(sctx, p); err != nil {
			return nil, err
		}
	}
	noteExplicitLiterals(sctx, stmt)
	addHavingAggregates(stmt)
	noteFirstTable(sctx, stmt)
	return stmt, nil
}

// run plans and starts a parsed statement, with the values of its ?
// markers when it was prepared.
func (e *Engine) run(sctx *sql.Context, b *stmtBudget, query string, stmt ast.Statement, bindings map[string]ast.Expr) (*Result, error) {
	noteFirstTable(sctx, stmt)
	schema, iter, _, err := e.gms.QueryWithBindings(sctx, query, stmt, bindings, nil)
	if err != nil {
		b.release()
		return nil, b.toError(err)
	}
	r := &Result{ctx: sctx, schema: schema, iter: iter, budget: b}
	// SET and USE answer an empty schema: an OK packet for the client.
	if len(schema) == 0 || types.IsOkResultSchema(schema) {
		return r.okResult()
	}
	r.Columns = columns(sctx, schema)
	if sh, ok := stmt.(*ast.Show); ok && strings.EqualFold(sh.Type, ast.CreateTableStr) && len(schema) == 2 {
		r.iter = &ddlIter{RowIter: iter}
	}
	if sh, ok := stmt.(*ast.Show); ok && strings.EqualFold(sh.Type, ast.TableStatusStr) {
		// MariaDB's (and MySQL's) name of the table comment's column.
		for i := range r.Columns {
			if r.Columns[i].Name == "Comments" {
				r.Columns[i].Name = "Comment"
			}
		}
	}
	if sh, ok := stmt.(*ast.Show); ok && strings.EqualFold(sh.Type, "variables") && len(schema) == 2 {
		if s := sessionOf(sctx); s != nil {
			vals := s.reported
			if strings.EqualFold(sh.Scope, "global") {
				vals = s.globals
			}
			r.iter = &readsIter{RowIter: iter, vals: vals}
		}
	}
	return r, nil
}

// plannable refuses what go-mysql-server cannot plan in bounded time
// (planlimits.go) or would answer by guessing a column (ambiguous.go),
// reads GROUP_CONCAT's arguments as MariaDB does (groupconcat.go) and lines up
// UNION chains (unions.go); changed tells
// whether stmt was rewritten.
func (e *Engine) plannable(sctx *sql.Context, stmt ast.Statement) (changed bool, err error) {
	// Depth first: counting a SELECT's joins descends into its IN and
	// EXISTS subqueries again at every level.
	if err := checkSubqueryDepth(stmt); err != nil {
		return false, err
	}
	if err := checkJoinSizes(stmt); err != nil {
		return false, err
	}
	if err := checkArithmeticDepth(stmt); err != nil {
		return false, err
	}
	if err := checkDoublingDepth(stmt); err != nil {
		return false, err
	}
	if err := checkWhereAggregates(stmt); err != nil {
		return false, err
	}
	if err := e.columns.checkAmbiguousColumns(stmt, sctx.GetCurrentDatabase()); err != nil {
		return false, err
	}
	concat, err := groupConcatArgs(stmt)
	if err != nil {
		return false, err
	}
	lined, err := e.lineUpUnions(sctx, stmt)
	return concat || lined, err
}

// ddlIter makes SHOW CREATE TABLE's statement one MariaDB (and MySQL)
// accepts, so mariadb-dump of the schema restores: see mariaDBDDL.
type ddlIter struct{ sql.RowIter }

func (it *ddlIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := it.RowIter.Next(ctx)
	if err != nil || len(row) != 2 {
		return row, err
	}
	if ddl, ok := row[1].(string); ok {
		row = sql.Row{row[0], mariaDBDDL(ddl)}
	}
	return row, nil
}

// columnComment is a column line of go-mysql-server's CREATE TABLE that ends
// in a comment: the comment runs to the last quote of the line.
var columnComment = regexp.MustCompile(`(?m)^(  ` + "`" + `.*? COMMENT ')(.*)'(,?)$`)

// mariaDBDDL fixes what go-mysql-server's CREATE TABLE gets wrong for
// MariaDB: column comments are printed unescaped (a quote ends the string
// early), and its default collation utf8mb4_0900_bin is MySQL 8's only;
// utf8mb4_bin compares the same way (binary) and both servers know it.
func mariaDBDDL(ddl string) string {
	ddl = columnComment.ReplaceAllStringFunc(ddl, func(line string) string {
		m := columnComment.FindStringSubmatch(line)
		return m[1] + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(m[2]) + "'" + m[3]
	})
	return strings.ReplaceAll(ddl, "utf8mb4_0900_bin", "utf8mb4_bin")
}

// isWrite tells statements that would change data or schema.
func isWrite(stmt ast.Statement) bool {
	switch stmt.(type) {
	case *ast.Insert, *ast.Update, *ast.Delete, *ast.DDL, *ast.DBDDL, *ast.AlterTable, *ast.Load:
		return true
	}
	return false
}

// okResult drains an OK-schema iterator into AffectedRows and friends.
func (r *Result) okResult() (*Result, error) {
	defer r.Close()
	for {
		row, err := r.iter.Next(r.ctx)
		if err == io.EOF {
			return r, nil
		}
		if err != nil {
			return nil, r.budget.toError(err)
		}
		if len(row) == 1 {
			if ok, isOK := row[0].(types.OkResult); isOK {
				r.AffectedRows += ok.RowsAffected
				r.InsertID = ok.InsertID
				if ok.Info != nil {
					r.Info = ok.Info.String()
				}
			}
		}
	}
}

func columns(ctx *sql.Context, schema sql.Schema) []Column {
	var meta []*colMeta
	var flagsOf []colFlags
	var union []Column
	var names map[int]string
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
		union, names = m.union, m.names
	}
	if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok && len(m.cols) == len(schema) {
		meta = m.cols
		if len(m.flags) == len(schema) {
			flagsOf = m.flags
		}
	}
	if hasHidden(schema) {
		// A statement planned but not analyzed (Prepare) still shows the
		// HAVING workaround's hidden items (having.go); execution drops them.
		var kept sql.Schema
		var keptMeta []*colMeta
		var keptFlags []colFlags
		for i, c := range schema {
			if !strings.HasPrefix(c.Name, hiddenPrefix) {
				kept = append(kept, c)
				if i < len(meta) {
					keptMeta = append(keptMeta, meta[i])
				}
				if i < len(flagsOf) {
					keptFlags = append(keptFlags, flagsOf[i])
				}
			}
		}
		schema, meta, flagsOf = kept, keptMeta, keptFlags
	}
	cols := make([]Column, len(schema))
	for i, c := range schema {
		mt, flags := sqltypes.TypeToMySQL(c.Type.Type())
		charset := uint16(collationUTF8MB4)
		if ct, ok := c.Type.(sql.TypeWithCollation); ok {
			charset = wireCollation(ct.Collation())
		}
		// ENUM and SET (information_schema's TABLE_TYPE, COLUMN_KEY, ...)
		// are text in their collation, as MySQL sends them; drivers read
		// binary-labelled columns as bytes.
		if types.IsBinaryType(c.Type) || !(types.IsText(c.Type) || types.IsEnum(c.Type) || types.IsSet(c.Type)) {
			// MySQL labels numbers, dates and blobs with the binary collation.
			charset = uint16(sql.Collation_binary)
		}
		if c.Type == types.Null && c.Source != "" {
			// A table column go-mysql-server types NULL (always NULL:
			// information_schema.SCHEMATA.SQL_PATH, ...) is text in MySQL.
			charset = collationUTF8MB4
		}
		if !c.Nullable {
			flags |= int64(querypb.MySqlFlag_NOT_NULL_FLAG)
		}
		if c.PrimaryKey {
			flags |= int64(querypb.MySqlFlag_PRI_KEY_FLAG)
		}
		if types.IsUnsigned(c.Type) {
			flags |= int64(querypb.MySqlFlag_UNSIGNED_FLAG)
		}
		var decimals uint8
		switch t := c.Type.(type) {
		case sql.DatetimeType:
			decimals = uint8(t.Precision())
		case sql.DecimalType:
			decimals = t.Scale()
		default:
			if types.IsFloat(c.Type) {
				decimals = 31 // MySQL's "not fixed" marker for FLOAT/DOUBLE
			}
		}
		length := uint32(min(c.Type.MaxTextResponseByteLength(ctx), 1<<32-1))
		if t := c.Type.Type(); t == sqltypes.Datetime || t == sqltypes.Timestamp {
			length = datetimeLength(c.Type) // go-mysql-server says 26 whatever the precision
		}
		cols[i] = Column{
			Name:     c.Name,
			Table:    c.Source,
			Database: c.DatabaseSource,
			Type:     byte(mt),
			Flags:    uint16(flags),
			Charset:  charset,
			Length:   length,
			Decimals: decimals,
		}
		if i < len(meta) && meta[i] != nil {
			cols[i].Type, cols[i].Length, cols[i].Decimals = meta[i].typ, meta[i].length, meta[i].decimals
		}
		if i < len(flagsOf) && flagsOf[i] != flagsUnknown {
			cols[i].Flags = uint16(flagsOf[i])
		}
		if n, ok := names[i]; ok {
			cols[i].Name = n
		}
		if len(union) == len(schema) {
			u := union[i]
			cols[i].Type, cols[i].Length, cols[i].Decimals, cols[i].Flags, cols[i].Charset = u.Type, u.Length, u.Decimals, u.Flags, u.Charset
		}
	}
	return cols
}

// preparedColumns are the result columns of a statement planned but not
// analyzed (what Prepare has): the engine's rewrites that change result
// types run on it first (MariaDB's SUM/AVG and date arithmetic types, the
// HAVING workaround's hidden items, MariaDB's column definitions), so
// that COM_STMT_PREPARE announces the columns COM_STMT_EXECUTE answers.
func (e *Engine) preparedColumns(sctx *sql.Context, node sql.Node) ([]Column, error) {
	n, err := e.preparedNode(sctx, node)
	if err != nil {
		return nil, err
	}
	return columns(sctx, n.Schema()), nil
}

// preparedNode is node with the dialect's type rules applied, its
// result's metadata derived into the statement's meta.
func (e *Engine) preparedNode(sctx *sql.Context, node sql.Node) (sql.Node, error) {
	n, _, err := dialectNode(node)
	if err != nil {
		return nil, err
	}
	if n, _, err = aggTypesRule(sctx, nil, n, nil, nil, nil); err != nil {
		return nil, err
	}
	if n, _, err = divisionNode(n); err != nil {
		return nil, err
	}
	if hasHidden(n.Schema()) {
		if n, _, err = stripOutermost(n); err != nil {
			return nil, err
		}
	}
	if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok {
		m.cols = deriveMeta(sctx, n)
		m.flags = deriveFlags(sctx, n, m.keys, usesTempTable(sctx, n, m.firstTable), m.explicit)
	}
	return n, nil
}

// Collation ids MariaDB and MySQL 5.7 clients all know; go-mysql-server's
// default utf8mb4_0900_bin (309) is MySQL 8 only.
const (
	collationUTF8MB3 = 33 // utf8mb3_general_ci
	collationUTF8MB4 = 45 // utf8mb4_general_ci
)

func wireCollation(c sql.CollationID) uint16 {
	switch c.CharacterSet() {
	case sql.CharacterSet_utf8mb4:
		return collationUTF8MB4
	case sql.CharacterSet_utf8mb3:
		return collationUTF8MB3
	}
	return uint16(c)
}

// Error is a statement's failure in MySQL terms.
type Error struct {
	Code    uint16
	State   string
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("ERROR %d (%s): %s", e.Code, e.State, e.Message) }

// toError gives err a MySQL code: go-mysql-server's own mapping
// (sql.CastSQLError) leaves syntax errors and many others at 1105 "unknown",
// so the kinds clients act on are mapped here first.
func toError(err error) *Error {
	var ours *Error
	if errors.As(err, &ours) {
		return ours
	}
	msg := err.Error()
	code, state := 0, ""
	switch {
	case sql.ErrSyntaxError.Is(err):
		code, state = mysql.ERParseError, mysql.SSClientError
	case sql.ErrReadOnly.Is(err), sql.ErrDatabaseWriteLocked.Is(err),
		plan.ErrInsertIntoNotSupported.Is(err), plan.ErrUpdateNotSupported.Is(err),
		plan.ErrDeleteFromNotSupported.Is(err), plan.ErrReplaceIntoNotSupported.Is(err),
		sql.ErrCreateTableNotSupported.Is(err), sql.ErrDropTableNotSupported.Is(err),
		sql.ErrRenameTableNotSupported.Is(err), sql.ErrAlterTableNotSupported.Is(err),
		sql.ErrViewsNotSupported.Is(err), sql.ErrTriggersNotSupported.Is(err),
		sql.ErrStoredProceduresNotSupported.Is(err), sql.ErrEventsNotSupported.Is(err),
		sql.ErrTemporaryTableNotSupported.Is(err):
		code, state = mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState
		msg = "heapprof is read-only: snapshots are written by heapproxy (ADMIN EXECUTE ... snapshot()), not by SQL"
	case sql.ErrTableNotFound.Is(err):
		code, state = mysql.ERNoSuchTable, mysql.SSUnknownTable
	case sql.ErrDatabaseNotFound.Is(err):
		code, state = mysql.ERBadDb, mysql.SSClientError
	case sql.ErrColumnNotFound.Is(err), sql.ErrTableColumnNotFound.Is(err), sql.ErrUnknownColumn.Is(err):
		code, state = mysql.ERBadFieldError, mysql.SSBadFieldError
	case sql.ErrFunctionNotFound.Is(err):
		code, state = mysql.ERSPDoesNotExist, mysql.SSClientError
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		code, state = mysql.ERQueryInterrupted, mysql.SSQueryInterrupted
	// Character sets and collations: MariaDB's codes, SQLSTATEs and
	// quoted names (go-mysql-server answers 1105 for all of them).
	case sql.ErrCollationInvalidForCharSet.Is(err):
		code, state = mysql.ERCollationCharsetMismatch, mysql.SSClientError
	case sql.ErrCollationUnknown.Is(err):
		code, state, msg = mysql.ERUnknownCollation, mysql.SSUnknownSQLState, quoteErrorName(msg, "Unknown collation: ")
	case sql.ErrCharSetUnknown.Is(err):
		code, state, msg = mysql.ERUnknownCharacterSet, mysql.SSClientError, quoteErrorName(msg, "Unknown character set: ")
	case sql.ErrCollationIllegalMix.Is(err):
		code, state = mysql.ERCantAggregate2Collations, mysql.SSUnknownSQLState
	case sql.ErrCollationNotYetImplementedTemp.Is(err), sql.ErrCharSetNotYetImplementedTemp.Is(err):
		return errUnsupported("this character set or collation: " + msg)
	case sql.ErrUnsupportedFeature.Is(err):
		// e.g. the unary ~ (go-mysql-server's parser reads it, its
		// planner has no such operator).
		return errUnsupported(strings.TrimPrefix(msg, "unsupported feature: "))
	}
	if code == 0 {
		se := sql.CastSQLError(err)
		code, state, msg = se.Num, se.State, se.Message
	}
	if state == "" {
		state = mysql.SSUnknownSQLState
	}
	return &Error{Code: uint16(code), State: state, Message: strings.TrimSpace(msg)}
}

// quoteErrorName rewrites "<prefix>name" as MariaDB words it,
// "<prefix>'name'".
func quoteErrorName(msg, prefix string) string {
	i := strings.Index(msg, prefix)
	if i < 0 {
		return msg
	}
	name := strings.TrimSpace(msg[i+len(prefix):])
	if strings.HasPrefix(name, "'") {
		return msg
	}
	return msg[:i] + prefix + "'" + name + "'"
}

// provider serves the heapprof database; go-mysql-server adds
// information_schema (and mysql) itself.
type provider struct{ db *database }

var _ sql.DatabaseProvider = (*provider)(nil)

func (p *provider) Database(_ *sql.Context, name string) (sql.Database, error) {
	if strings.EqualFold(name, SchemaName) {
		return p.db, nil
	}
	return nil, sql.ErrDatabaseNotFound.New(name)
}

func (p *provider) HasDatabase(_ *sql.Context, name string) bool {
	return strings.EqualFold(name, SchemaName)
}

func (p *provider) AllDatabases(*sql.Context) []sql.Database { return []sql.Database{p.db} }

type database struct{ tables map[string]sql.Table }

var _ sql.Database = (*database)(nil)

func (d *database) Name() string { return SchemaName }

func (d *database) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	t, ok := d.tables[strings.ToLower(name)]
	if !ok {
		return nil, false, nil
	}
	return t, true, nil
}

func (d *database) GetTableNames(*sql.Context) ([]string, error) {
	return []string{TableDiffs, TableFunctions, TableSnapshots, TableStacks}, nil
}
