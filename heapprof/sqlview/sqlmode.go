package sqlview

// sql_mode as MariaDB 10.11 keeps it (sql/sys_vars.cc, 10.11.18:
// Sys_sql_mode, sql_mode_names, expand_sql_mode). A session starts with
// MariaDB's default, not go-mysql-server's, whose ONLY_FULL_GROUP_BY made
// its validate_group_by refuse SELECT DATE(taken_at) ... GROUP BY
// DATE(taken_at) LIMIT 10 (it reads a function of a grouped column as the
// column) with ERROR 1105. SET sql_mode takes MariaDB's names and numbers,
// expands the compound modes (ANSI, TRADITIONAL, ...) and reads back in
// MariaDB's order; a name MariaDB does not know is its ERROR 1231.
// go-mysql-server is given the modes it knows (it acts on ANSI_QUOTES and
// ONLY_FULL_GROUP_BY).
//
// Modes that change what a statement means, which the engine does not
// implement, refuse the statements they would change with ERROR 1235 (a
// different answer without an error is worse): || under PIPES_AS_CONCAT,
// a backslash in a string under NO_BACKSLASH_ESCAPES, '' under
// EMPTY_STRING_IS_NULL, a NOT before an operand under
// HIGH_NOT_PRECEDENCE. ORACLE (MariaDB's other grammar) and
// TIME_ROUND_FRACTIONAL (rounding where the engine truncates) are refused
// at the SET.

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// sqlMode is a set of MariaDB's sql_mode flags, bit i naming
// sqlModeNames[i].
type sqlMode uint64

// sqlModeNames are MariaDB's sql_mode_names, in its bit order.
var sqlModeNames = [...]string{
	"REAL_AS_FLOAT", "PIPES_AS_CONCAT", "ANSI_QUOTES", "IGNORE_SPACE",
	"IGNORE_BAD_TABLE_OPTIONS",
	"ONLY_FULL_GROUP_BY", "NO_UNSIGNED_SUBTRACTION", "NO_DIR_IN_CREATE",
	"POSTGRESQL", "ORACLE", "MSSQL", "DB2", "MAXDB", "NO_KEY_OPTIONS",
	"NO_TABLE_OPTIONS", "NO_FIELD_OPTIONS", "MYSQL323", "MYSQL40", "ANSI",
	"NO_AUTO_VALUE_ON_ZERO", "NO_BACKSLASH_ESCAPES", "STRICT_TRANS_TABLES",
	"STRICT_ALL_TABLES", "NO_ZERO_IN_DATE", "NO_ZERO_DATE",
	"ALLOW_INVALID_DATES", "ERROR_FOR_DIVISION_BY_ZERO", "TRADITIONAL",
	"NO_AUTO_CREATE_USER", "HIGH_NOT_PRECEDENCE", "NO_ENGINE_SUBSTITUTION",
	"PAD_CHAR_TO_FULL_LENGTH", "EMPTY_STRING_IS_NULL", "SIMULTANEOUS_ASSIGNMENT",
	"TIME_ROUND_FRACTIONAL",
}

const (
	modeRealAsFloat sqlMode = 1 << iota
	modePipesAsConcat
	modeANSIQuotes
	modeIgnoreSpace
	modeIgnoreBadTableOptions
	modeOnlyFullGroupBy
	modeNoUnsignedSubtraction
	modeNoDirInCreate
	modePostgreSQL
	modeOracle
	modeMSSQL
	modeDB2
	modeMaxDB
	modeNoKeyOptions
	modeNoTableOptions
	modeNoFieldOptions
	modeMySQL323
	modeMySQL40
	modeANSI
	modeNoAutoValueOnZero
	modeNoBackslashEscapes
	modeStrictTransTables
	modeStrictAllTables
	modeNoZeroInDate
	modeNoZeroDate
	modeAllowInvalidDates
	modeErrorForDivisionByZero
	modeTraditional
	modeNoAutoCreateUser
	modeHighNotPrecedence
	modeNoEngineSubstitution
	modePadCharToFullLength
	modeEmptyStringIsNull
	modeSimultaneousAssignment
	modeTimeRoundFractional
	modeLimit // the first bit past the names
)

// defaultSQLMode is Sys_sql_mode's DEFAULT.
const defaultSQLMode = modeStrictTransTables | modeErrorForDivisionByZero | modeNoEngineSubstitution | modeNoAutoCreateUser

// gmsSQLModes are the flags go-mysql-server's sql_mode takes (its
// system_variables.go, v0.20.0), but for its compound ANSI and
// TRADITIONAL, which are passed on expanded.
const gmsSQLModes = modeAllowInvalidDates | modeANSIQuotes | modeErrorForDivisionByZero | modeHighNotPrecedence |
	modeIgnoreSpace | modeNoAutoValueOnZero | modeNoAutoCreateUser | modeNoBackslashEscapes | modeNoDirInCreate |
	modeNoEngineSubstitution | modeNoUnsignedSubtraction | modeNoZeroDate | modeNoZeroInDate | modeOnlyFullGroupBy |
	modePadCharToFullLength | modePipesAsConcat | modeRealAsFloat | modeStrictAllTables | modeStrictTransTables

// DefaultSQLMode is MariaDB's default sql_mode as @@sql_mode prints it, a
// session's first.
func DefaultSQLMode() string { return defaultSQLMode.String() }

// expand is MariaDB's expand_sql_mode: a compound mode sets its parts.
func (m sqlMode) expand() sqlMode {
	const dialect = modePipesAsConcat | modeANSIQuotes | modeIgnoreSpace | modeNoKeyOptions | modeNoTableOptions | modeNoFieldOptions
	if m&modeANSI != 0 {
		m |= modeRealAsFloat | modePipesAsConcat | modeANSIQuotes | modeIgnoreSpace
	}
	if m&modeOracle != 0 {
		m |= dialect | modeNoAutoCreateUser | modeSimultaneousAssignment
	}
	if m&(modeMSSQL|modePostgreSQL|modeDB2) != 0 {
		m |= dialect
	}
	if m&modeMaxDB != 0 {
		m |= dialect | modeNoAutoCreateUser
	}
	if m&(modeMySQL40|modeMySQL323) != 0 {
		m |= modeHighNotPrecedence
	}
	if m&modeTraditional != 0 {
		m |= modeStrictTransTables | modeStrictAllTables | modeNoZeroInDate | modeNoZeroDate |
			modeErrorForDivisionByZero | modeNoAutoCreateUser | modeNoEngineSubstitution
	}
	return m
}

// String is the mode as @@sql_mode reads: names in MariaDB's bit order.
func (m sqlMode) String() string {
	var names []string
	for i, name := range sqlModeNames {
		if m&(1<<i) != 0 {
			names = append(names, name)
		}
	}
	return strings.Join(names, ",")
}

// parseSQLMode reads a SET value's text as MariaDB's Sys_var_set does:
// names separated by commas, in any case, empty ones skipped; bad is the
// first element that names no mode, as written.
func parseSQLMode(text string) (m sqlMode, bad string, ok bool) {
	for _, el := range strings.Split(text, ",") {
		if el == "" {
			continue
		}
		found := false
		for i, name := range sqlModeNames {
			if strings.EqualFold(el, name) {
				m |= 1 << i
				found = true
				break
			}
		}
		if !found {
			return 0, el, false
		}
	}
	return m, "", true
}

func errSQLModeValue(v string) *Error {
	return &Error{Code: mysql.ERWrongValueForVar, State: mysql.SSClientError,
		Message: fmt.Sprintf("Variable 'sql_mode' can't be set to the value of '%s'", v)}
}

// setSQLModes reads the SET sql_mode assignments of stmt (session scope)
// as MariaDB does and puts in their place the value go-mysql-server is to
// keep; the mode MariaDB would keep is noted in the statement's meta, for
// Query to make the session's when the SET succeeds.
func (e *Engine) setSQLModes(ctx context.Context, s *Session, stmt ast.Statement) error {
	for _, x := range sessionSets(stmt, "sql_mode") {
		m, err := e.sqlModeValue(ctx, s, x.Expr)
		if err != nil {
			return err
		}
		m = m.expand()
		for _, refused := range []struct {
			mode sqlMode
			why  string
		}{
			{modeOracle, "sql_mode ORACLE (MariaDB's Oracle grammar)"},
			{modeTimeRoundFractional, "sql_mode TIME_ROUND_FRACTIONAL (it truncates fractional seconds, as MariaDB's default mode does)"},
		} {
			if m&refused.mode != 0 {
				return errUnsupported(refused.why)
			}
		}
		x.Expr = ast.NewStrVal([]byte((m & gmsSQLModes).String()))
		if meta, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
			meta.setSQLMode = &m
		}
	}
	return nil
}

// sqlModeValue is the mode a SET assigns: DEFAULT, names, a number
// (MariaDB's bits), or an expression giving one of those, which the
// session evaluates (Connector/J: CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES')).
func (e *Engine) sqlModeValue(ctx context.Context, s *Session, x ast.Expr) (sqlMode, error) {
	switch v := x.(type) {
	case *ast.Default:
		return defaultSQLMode, nil
	case *ast.NullVal:
		return 0, errSQLModeValue("NULL")
	case *ast.SQLVal:
		switch v.Type {
		case ast.StrVal:
			return sqlModeText(string(v.Val))
		case ast.IntVal:
			return sqlModeNumber(string(v.Val))
		}
	case *ast.ColName:
		// SET sql_mode = ansi: an unquoted name is the name.
		if v.Qualifier.IsEmpty() {
			return sqlModeText(v.Name.String())
		}
	}
	r, err := e.Query(ctx, s, "SELECT "+ast.String(x))
	if err != nil {
		return 0, err
	}
	defer r.Close()
	row, err := r.Next()
	if err == io.EOF || err == nil && row[0] == nil {
		return 0, errSQLModeValue("NULL")
	}
	if err != nil {
		return 0, err
	}
	switch r.Columns[0].Type {
	case mysql.TypeTiny, mysql.TypeShort, mysql.TypeInt24, mysql.TypeLong, mysql.TypeLongLong:
		return sqlModeNumber(string(row[0]))
	case mysql.TypeDecimal, mysql.TypeNewDecimal, mysql.TypeFloat, mysql.TypeDouble:
		return 0, &Error{Code: mysql.ERWrongTypeForVar, State: mysql.SSClientError,
			Message: "Incorrect argument type to variable 'sql_mode'"}
	}
	return sqlModeText(string(row[0]))
}

func sqlModeText(text string) (sqlMode, error) {
	m, bad, ok := parseSQLMode(text)
	if !ok {
		return 0, errSQLModeValue(bad)
	}
	return m, nil
}

func sqlModeNumber(text string) (sqlMode, error) {
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil || sqlMode(n) >= modeLimit {
		return 0, errSQLModeValue(text)
	}
	return sqlMode(n), nil
}

// setSQLMode makes m the session's mode, as @@sql_mode and SHOW VARIABLES
// read it.
func (s *Session) setSQLMode(m sqlMode) {
	s.mode = m
	s.Report("sql_mode", m.String())
}

// checkSQLModeSyntax refuses a statement whose meaning the session's mode
// changes in a way the engine does not implement (see the top of this
// file), naming the mode and what to write instead.
func checkSQLModeSyntax(m sqlMode, query string) error {
	if m&(modePipesAsConcat|modeNoBackslashEscapes|modeEmptyStringIsNull|modeHighNotPrecedence) == 0 {
		return nil
	}
	toks := tokens(query)
	for i, t := range toks {
		// Under ANSI_QUOTES "x" is a name, not a string.
		str := t.kind == 's' && !(m&modeANSIQuotes != 0 && query[t.start] == '"')
		switch {
		case m&modePipesAsConcat != 0 && t.kind == '|' && i+1 < len(toks) && toks[i+1].kind == '|' && toks[i+1].start == t.end:
			return errUnsupported("|| as concatenation (sql_mode PIPES_AS_CONCAT): write CONCAT(a, b), or SET sql_mode without it")
		case str && m&modeNoBackslashEscapes != 0 && strings.Contains(query[t.start:t.end], `\`):
			return errUnsupported(`a backslash in a string under sql_mode NO_BACKSLASH_ESCAPES: SET sql_mode without it and write \\ for one backslash`)
		case str && m&modeEmptyStringIsNull != 0 && t.text == "":
			return errUnsupported("'' under sql_mode EMPTY_STRING_IS_NULL: write NULL, or SET sql_mode without it")
		case t.is("not") && m&modeHighNotPrecedence != 0 && (i == 0 || !endsOperand(toks[i-1])):
			if next := skipOperand(toks, i+1); next < len(toks) && bindsTighterThanNot(toks, next) {
				return errUnsupported("NOT before an operand under sql_mode HIGH_NOT_PRECEDENCE: put what NOT negates in parentheses, NOT (a = b), or SET sql_mode without it")
			}
		}
	}
	return nil
}

// endsOperand says a token ends an operand, so that a NOT after it is
// infix (a NOT IN (...), a IS NOT NULL), which HIGH_NOT_PRECEDENCE leaves
// alone.
func endsOperand(t token) bool {
	switch t.kind {
	case 'n', 's', 'q', ')':
		return true
	case 'w':
		for _, k := range []string{"select", "where", "having", "on", "and", "or", "xor", "not", "when", "then", "else", "case", "distinct", "all", "by", "set"} {
			if t.is(k) {
				return false
			}
		}
		return true
	}
	return false
}

// skipOperand is the index of the token after the operand that starts at
// toks[i]: unary signs, then a parenthesized expression, or a name, value
// or call, with its dotted parts.
func skipOperand(toks []token, i int) int {
	for i < len(toks) && (toks[i].kind == '-' || toks[i].kind == '+' || toks[i].kind == '~' || toks[i].kind == '!' || toks[i].is("not")) {
		i++
	}
	if i < len(toks) && toks[i].kind != '(' {
		i++
		for i+1 < len(toks) && toks[i].kind == '.' {
			i += 2
		}
	}
	if i < len(toks) && toks[i].kind == '(' {
		for depth := 0; i < len(toks); i++ {
			if toks[i].kind == '(' {
				depth++
			} else if toks[i].kind == ')' {
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
	}
	return i
}

// bindsTighterThanNot says the operator at toks[i] binds tighter than NOT
// does in MariaDB's default grammar (comparisons, IS, IN, LIKE, BETWEEN,
// REGEXP, arithmetic, bits): NOT a = b means NOT (a = b) there and
// (NOT a) = b under HIGH_NOT_PRECEDENCE.
func bindsTighterThanNot(toks []token, i int) bool {
	switch t := toks[i]; t.kind {
	case '=', '<', '>', '!', '+', '-', '*', '/', '%', '&', '^':
		return true
	case '|':
		return i+1 >= len(toks) || toks[i+1].kind != '|' // || is OR
	case 'w':
		for _, k := range []string{"is", "in", "like", "between", "regexp", "rlike", "not", "div", "mod", "sounds"} {
			if t.is(k) {
				return true
			}
		}
	}
	return false
}

// sqlModeRead is a read of @@sql_mode: the mode as MariaDB prints it, a
// VARCHAR as long as the value (Item_func_get_system_var's length), where
// go-mysql-server's set type would sort the names and refuse those it
// does not know.
type sqlModeRead struct {
	*expression.SystemVar
	text string
}

func (r *sqlModeRead) Type() sql.Type {
	return types.MustCreateString(sqltypes.VarChar, int64(len(r.text)), sql.Collation_utf8mb4_general_ci)
}

func (r *sqlModeRead) Eval(*sql.Context, sql.Row) (any, error) { return r.text, nil }

func (r *sqlModeRead) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 0)
	}
	return r, nil
}
