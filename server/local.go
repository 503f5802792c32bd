package server

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/parser"
)

// intercept answers the statements heapproxy owns. It reports whether the
// statement was handled; an error means the client connection broke.
func (s *session) intercept(query []byte) (bool, error) {
	if s.up == nil && s.caps&mysql.CLIENT_MULTI_STATEMENTS != 0 {
		if stmts := parser.Split(string(query)); len(stmts) > 1 {
			return true, s.answerEach(stmts)
		}
	}
	return s.interceptOne(query)
}

// interceptOne is intercept of one statement. On the embedded default it
// is read in the client's character set of the moment (charset.go): a SET
// NAMES changes how the next statement of a multi-statement query is read,
// as in MySQL.
func (s *session) interceptOne(query []byte) (bool, error) {
	if s.up == nil {
		query = s.charsets.decode(query)
	}
	stmt, forward, err := s.route(query)
	switch {
	case forward:
		return false, nil
	case err != nil:
		s.srv.deps.Metrics.Error("parse")
		return true, s.sendError(mysql.NewError(mysql.ER_PARSE_ERROR, err.Error()))
	}
	switch stmt.Kind {
	case parser.AdminExecute:
		s.srv.deps.Metrics.Statement("admin_execute")
		return true, s.adminExecute(stmt.Admin, query)
	case parser.ShowBackends, parser.ShowComputeNodes, parser.ShowFrontends:
		s.srv.deps.Metrics.Statement("show_backends")
		return true, s.showBackends(query, stmt.Kind)
	case parser.Kill:
		if s.up != nil {
			s.srv.deps.Metrics.Statement("forwarded")
			return true, s.relayKill(append([]byte{mysql.COM_QUERY}, query...), stmt.Kill.ID, !stmt.Kill.Query)
		}
	}
	s.srv.deps.Metrics.Statement("local")
	return true, s.answerLocal(stmt, query)
}

// answerEach answers the statements of a multi-statement query on the
// embedded default in turn (with an upstream, the upstream splits them),
// flagging every result but the last SERVER_MORE_RESULTS_EXISTS. The first
// error ends the response, as on MySQL.
func (s *session) answerEach(stmts []string) error {
	defer func() { s.status &^= mysql.SERVER_MORE_RESULTS_EXISTS }()
	for i, q := range stmts {
		if i < len(stmts)-1 {
			s.status |= mysql.SERVER_MORE_RESULTS_EXISTS
		} else {
			s.status &^= mysql.SERVER_MORE_RESULTS_EXISTS
		}
		s.errSent = false
		if _, err := s.interceptOne([]byte(q)); err != nil || s.errSent {
			return err
		}
	}
	return nil
}

// route classifies a query; forward is true when the upstream answers it
// unchanged. A statement heapproxy cannot parse is forwarded only when it
// is another of the FE's scripts (StarRocks runs any Wren script through
// ADMIN EXECUTE) and there is an upstream.
func (s *session) route(query []byte) (stmt *parser.Statement, forward bool, err error) {
	if s.up != nil {
		stmt, err = s.srv.classifier.ClassifyOwn(string(query))
	} else {
		stmt, err = s.srv.classifier.Classify(string(query))
	}
	if err != nil {
		var pe *parser.Error
		return nil, errors.As(err, &pe) && pe.NotHeapProf && s.up != nil, err
	}
	switch stmt.Kind {
	case parser.AdminExecute, parser.ShowBackends, parser.ShowComputeNodes, parser.ShowFrontends:
		return stmt, false, nil
	case parser.Kill: // relayed by the session, which also stops heapproxy's own statement (relayKill)
		return stmt, false, nil
	}
	return stmt, s.up != nil, nil
}

// answerEmbedded answers a command other than COM_QUERY when there is no
// upstream.
func (s *session) answerEmbedded(cmd command) error {
	if s.srv.deps.SQL != nil {
		if handled, err := s.answerStmt(cmd); handled {
			return err
		}
	}
	switch cmd.code() {
	case mysql.COM_PING, mysql.COM_RESET_CONNECTION:
		if cmd.code() == mysql.COM_RESET_CONNECTION {
			// Variables (user and system) start over in a new engine
			// session; the current database stays, as on MySQL, and the
			// character sets are the login's again (MariaDB's).
			s.vars = nil
			s.charsets = s.loginCharsets
			s.closeLocalStmts()
			if s.sql != nil {
				s.sql = nil
				s.status |= mysql.SERVER_STATUS_AUTOCOMMIT
				if s.db != "" {
					if e := s.localUseDB(s.db); e != nil {
						return s.sendError(e)
					}
				}
			}
		}
		return s.sendOK()
	case mysql.COM_STMT_CLOSE, mysql.COM_STMT_SEND_LONG_DATA:
		return nil
	case mysql.COM_STATISTICS:
		// MySQL's one-line status string (mycli's status, mysqladmin status).
		up := time.Since(s.srv.started)
		q := s.srv.questions.Load()
		stats := fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  Open tables: 0  Queries per second avg: %.3f",
			int64(up.Seconds()), s.srv.liveSessionCount(), q, float64(q)/max(up.Seconds(), 1))
		if err := s.client.WritePacket([]byte(stats)); err != nil {
			return err
		}
		return s.client.Flush()
	case mysql.COM_INIT_DB:
		if e := s.localUseDB(string(s.charsets.decode(cmd.data[1:]))); e != nil {
			return s.sendError(e)
		}
		return s.sendOK()
	case mysql.COM_SET_OPTION: // PHP's mysqli multi_query switches multi-statements on and off so
		if len(cmd.data) != 3 || cmd.data[1] > 1 || cmd.data[2] != 0 {
			return s.sendError(mysql.NewError(mysql.ER_UNKNOWN_COM_ERROR,
				"COM_SET_OPTION takes MYSQL_OPTION_MULTI_STATEMENTS_ON (0) or _OFF (1)"))
		}
		if cmd.data[1] == 0 {
			s.caps |= mysql.CLIENT_MULTI_STATEMENTS
		} else {
			s.caps &^= mysql.CLIENT_MULTI_STATEMENTS
		}
		if err := s.client.WritePacket(mysqlwire.EOFPacket(s.status, 0)); err != nil {
			return err
		}
		return s.client.Flush()
	case mysql.COM_FIELD_LIST:
		return s.sendError(mysql.NewError(mysql.ER_NOT_SUPPORTED_YET,
			"COM_FIELD_LIST is not supported on heapproxy's embedded default; use SHOW COLUMNS FROM <table>"))
	case mysql.COM_CHANGE_USER:
		return s.handleChangeUser(cmd)
	case mysql.COM_PROCESS_KILL:
		if len(cmd.data) < 5 {
			return s.sendError(mysql.NewError(mysql.ER_MALFORMED_PACKET, "COM_PROCESS_KILL needs a 4-byte connection id"))
		}
		return s.kill(binary.LittleEndian.Uint32(cmd.data[1:5]), false)
	}
	return s.sendError(noUpstream())
}

// showProcesslist answers SHOW [FULL] PROCESSLIST on the embedded default
// from heapproxy's sessions, as MySQL lays it out: every session for a
// profile user, one's own sessions for others (MySQL's PROCESS privilege).
func (s *session) showProcesslist() error {
	all := s.srv.cfg.MayProfile(s.account)
	var rows [][]mysqlwire.Value
	for _, o := range s.srv.sessionList() {
		o.mu.Lock()
		user, db, idle, since, info := o.user, o.dbSeen, o.idle, o.since, o.info
		o.mu.Unlock()
		if !all && user != s.user {
			continue
		}
		command, infoV := "Query", mysqlwire.Str(info)
		if idle {
			command, infoV = "Sleep", nil
		}
		dbV := mysqlwire.Str(db)
		if db == "" {
			dbV = nil
		}
		rows = append(rows, []mysqlwire.Value{mysqlwire.IntValue(int64(o.id)), mysqlwire.Str(user),
			mysqlwire.Str(o.addr), dbV, mysqlwire.Str(command),
			mysqlwire.IntValue(int64(time.Since(since).Seconds())), mysqlwire.Str(""), infoV})
	}
	cols := []mysqlwire.Column{mysqlwire.IntColumn("Id"), mysqlwire.TextColumn("User"), mysqlwire.TextColumn("Host"),
		mysqlwire.TextColumn("db"), mysqlwire.TextColumn("Command"), mysqlwire.IntColumn("Time"),
		mysqlwire.TextColumn("State"), mysqlwire.TextColumn("Info")}
	return s.writeResult(cols, rows)
}

// showOwnWarnings answers SHOW WARNINGS with the last statement's
// warnings heapproxy raised itself, as MySQL lays them out.
func (s *session) showOwnWarnings() error {
	rows := make([][]mysqlwire.Value, len(s.warnings))
	for i, w := range s.warnings {
		rows[i] = []mysqlwire.Value{mysqlwire.Str("Warning"), mysqlwire.IntValue(mysql.ER_UNKNOWN_ERROR), mysqlwire.Str(w)}
	}
	return s.writeResult([]mysqlwire.Column{mysqlwire.TextColumn("Level"), mysqlwire.IntColumn("Code"), mysqlwire.TextColumn("Message")}, rows)
}

// mayReadProfiles refuses the heapprof schema to users not in
// profile_users, as MySQL refuses a database without grants: the
// snapshots are profile data like ADMIN EXECUTE's answers.
func (s *session) mayReadProfiles() *mysql.MyError {
	if s.srv.cfg.MayProfile(s.account) {
		return nil
	}
	return mysql.NewError(mysql.ER_DBACCESS_DENIED_ERROR, fmt.Sprintf(
		"Access denied for user '%s' to database 'heapprof': profile data is for heapproxy's profile_users (now: %s)",
		s.user, strings.Join(s.srv.cfg.ProfileUsers, ", ")))
}

func errSetGlobal() *mysql.MyError {
	return mysql.NewError(mysql.ER_SPECIFIC_ACCESS_DENIED_ERROR,
		"Access denied; heapproxy's embedded default has no global variables to set")
}

func noUpstream() *mysql.MyError {
	return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET,
		"heapproxy runs on its embedded default without an upstream database, so this statement has nowhere to go; "+
			"start heapproxy with --upstream HOST:PORT (or upstream: in the config file) to forward it")
}

// localUseDB accepts the schemas heapproxy serves itself.
func (s *session) localUseDB(db string) *mysql.MyError {
	if s.srv.deps.SQL != nil {
		if e := s.mayReadProfiles(); e != nil && !strings.EqualFold(db, "information_schema") {
			return e
		}
		sess, e := s.sqlSession()
		if e != nil {
			return e
		}
		if err := s.srv.deps.SQL.SetDatabase(context.Background(), sess, db); err != nil {
			return sqlError(err)
		}
		s.db = sess.Database()
		return nil
	}
	if strings.EqualFold(db, "information_schema") {
		s.db = "information_schema"
		return nil
	}
	return mysql.NewError(mysql.ER_BAD_DB_ERROR, fmt.Sprintf("Unknown database '%s'", db))
}

// answerLocal answers, on the embedded default, the statements clients and
// drivers send on connect; the rest goes to the heapprof SQL engine.
func (s *session) answerLocal(stmt *parser.Statement, query []byte) error {
	if s.srv.deps.SQL != nil {
		switch stmt.Kind {
		case parser.Forward, parser.Use:
			if set, rest, ok := splitSetCharsets(query); ok {
				// SET NAMES of a character set the classifier's grammar
				// does not know: MySQL's 1115, or the set if it is one.
				var others []byte
				if rest != "" {
					others = []byte(rest)
				}
				return s.setSQLCharsets(set, others)
			}
			if parser.IsShowProcesslist(string(query)) {
				return s.showProcesslist()
			}
			if e := s.mayReadProfiles(); e != nil && !parser.IsShowGrants(string(query)) {
				return s.sendError(e)
			}
			return s.querySQL(query)
		case parser.ShowDatabases, parser.ShowVariables, parser.LocalSelect:
			// The engine keeps the session's variables and evaluates what
			// a SELECT without FROM may hold (@@x, @user_var, NOW() in the
			// session's time zone), so heapproxy's answers and the
			// engine's agree; the connection's character set variables
			// are the session's (reportCharsets).
			return s.querySQL(query)
		case parser.Set:
			for _, a := range stmt.Set {
				if a.Scope == parser.ScopeGlobal {
					return s.sendError(errSetGlobal())
				}
			}
			return s.setSQL(stmt.Set, query)
		}
	}
	switch stmt.Kind {
	case parser.Set:
		for _, a := range stmt.Set {
			if e := s.setVar(a); e != nil {
				return s.sendError(e)
			}
		}
		return s.sendOK()
	case parser.LocalSelect:
		return s.localSelect(stmt.Select)
	case parser.ShowWarnings:
		if s.srv.deps.SQL != nil && s.warnings == nil {
			return s.querySQL(query) // the engine's, of its last statement
		}
		return s.showOwnWarnings()
	case parser.ShowDatabases:
		var rows [][]mysqlwire.Value
		for _, db := range []string{"information_schema"} {
			if !stmt.Show.HasLike || likeMatch(stmt.Show.Like, db) {
				rows = append(rows, []mysqlwire.Value{mysqlwire.Str(db)})
			}
		}
		return s.writeResult([]mysqlwire.Column{mysqlwire.TextColumn("Database")}, rows)
	case parser.ShowVariables:
		var rows [][]mysqlwire.Value
		for _, name := range s.varNames() {
			if !stmt.Show.HasLike || likeMatch(stmt.Show.Like, name) {
				v, _ := s.sysVar(name, parser.ScopeDefault)
				rows = append(rows, []mysqlwire.Value{mysqlwire.Str(name), v})
			}
		}
		return s.writeResult([]mysqlwire.Column{mysqlwire.TextColumn("Variable_name"), mysqlwire.TextColumn("Value")}, rows)
	case parser.Use:
		if e := s.localUseDB(stmt.DB); e != nil {
			return s.sendError(e)
		}
		return s.sendOK()
	case parser.Begin:
		// Nothing transactional lives here, but drivers (PDO, JDBC) read
		// the status flag to know a transaction is open, as on MySQL.
		s.status |= mysql.SERVER_STATUS_IN_TRANS
		return s.sendOK()
	case parser.Commit, parser.Rollback:
		s.status &^= mysql.SERVER_STATUS_IN_TRANS
		return s.sendOK()
	case parser.Kill:
		return s.kill(stmt.Kill.ID, stmt.Kill.Query)
	}
	return s.sendError(noUpstream())
}

// embeddedVars are the system variables the embedded default answers:
// those mariadb, mysql, JDBC, PyMySQL and BI tools read on connect.
func (s *session) embeddedVars() map[string]string {
	return map[string]string{
		"version_comment":          "heapproxy embedded default (no upstream)",
		"version":                  s.srv.cfg.ServerVersion,
		"version_compile_os":       "Linux",
		"version_compile_machine":  "x86_64",
		"max_allowed_packet":       "67108864",
		"net_buffer_length":        "16384",
		"system_time_zone":         "UTC",
		"time_zone":                "SYSTEM",
		"auto_increment_increment": "1",
		"autocommit":               "1",
		"character_set_client":     "utf8mb4",
		"character_set_connection": "utf8mb4",
		"character_set_results":    "utf8mb4",
		"character_set_server":     "utf8mb4",
		"character_set_database":   "utf8mb4",
		"collation_connection":     "utf8mb4_general_ci",
		"collation_server":         "utf8mb4_general_ci",
		"sql_mode":                 sqlview.DefaultSQLMode(),
		"transaction_isolation":    "REPEATABLE-READ",
		"tx_isolation":             "REPEATABLE-READ",
		"transaction_read_only":    "0",
		"tx_read_only":             "0",
		"lower_case_table_names":   "0",
		"wait_timeout":             "28800",
		"interactive_timeout":      "28800",
		"net_write_timeout":        "60",
		"sql_select_limit":         "18446744073709551615",
		"license":                  "Apache-2.0",
		"init_connect":             "",
		"performance_schema":       "0",
		"query_cache_size":         "0",
		"query_cache_type":         "OFF",
		"have_ssl":                 map[bool]string{true: "YES", false: "DISABLED"}[s.srv.clientTLS != nil],
		"session_track_schema":     "ON",
		"sql_auto_is_null":         "0",
		"div_precision_increment":  "4",
		"language":                 "",
		"warning_count":            "0",
		"error_count":              "0",
		"hostname":                 "heapproxy",
		"port":                     portOfAddr(s.srv.cfg.Listen),
	}
}

func portOfAddr(addr string) string {
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return addr[i+1:]
	}
	return "0"
}

func (s *session) varNames() []string {
	names := make([]string, 0, 48)
	for k := range s.embeddedVars() {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// sysVar reads a system variable: the session's SET value, else the default.
func (s *session) sysVar(name string, scope parser.Scope) (mysqlwire.Value, *mysql.MyError) {
	if scope != parser.ScopeGlobal {
		if s.charsets.active() {
			if v, ok := s.charsets.variable(name); ok {
				return v, nil
			}
		}
		if v, ok := s.vars[name]; ok {
			return v, nil
		}
	}
	if v, ok := s.embeddedVars()[name]; ok {
		return mysqlwire.Str(v), nil
	}
	return nil, mysql.NewError(mysql.ER_UNKNOWN_SYSTEM_VARIABLE, fmt.Sprintf("Unknown system variable '%s'", name))
}

func (s *session) setVar(a parser.Assignment) *mysql.MyError {
	if s.vars == nil {
		s.vars = map[string]mysqlwire.Value{}
	}
	switch {
	case setsCharsets(a) && a.Scope != parser.ScopeGlobal:
		next, e := s.charsets.assignAll([]parser.Assignment{a}, nil)
		if e != nil {
			return e
		}
		s.charsets = next
		return nil
	case a.User:
		return nil // user variables are only read through the upstream
	case a.Scope == parser.ScopeGlobal:
		return errSetGlobal()
	}
	if _, ok := s.embeddedVars()[a.Name]; !ok {
		return mysql.NewError(mysql.ER_UNKNOWN_SYSTEM_VARIABLE, fmt.Sprintf("Unknown system variable '%s'", a.Name))
	}
	v, e := s.eval(a.Value)
	if e != nil {
		// Drivers set session options on connect with expressions heapproxy
		// does not evaluate (Connector/J: sql_mode = concat(@@sql_mode, ...)).
		// The embedded default serves no tables, so such settings change
		// nothing here: keep the old value rather than refuse the login.
		return nil
	}
	s.vars[a.Name] = v
	return nil
}

// eval evaluates what a LocalSelect or SET may contain.
func (s *session) eval(e parser.Expr) (mysqlwire.Value, *mysql.MyError) {
	switch e.Kind {
	case parser.ExprLiteral:
		if e.Lit == parser.LitNull {
			return nil, nil
		}
		return mysqlwire.Str(e.Value), nil
	case parser.ExprSysVar:
		return s.sysVar(e.Name, e.Scope)
	case parser.ExprFunc:
		now := time.Now()
		switch e.Name {
		case "database", "schema":
			if s.db == "" {
				return nil, nil
			}
			return mysqlwire.Str(s.db), nil
		case "version":
			return mysqlwire.Str(s.srv.cfg.ServerVersion), nil
		case "user", "session_user", "system_user":
			host := "localhost"
			if h := s.clientHost(); h != "" {
				host = h
			}
			return mysqlwire.Str(s.user + "@" + host), nil
		case "current_user":
			return mysqlwire.Str(s.user + "@%"), nil
		case "connection_id":
			return mysqlwire.IntValue(int64(s.id)), nil
		case "last_insert_id":
			return mysqlwire.IntValue(0), nil
		case "now", "current_timestamp", "localtime", "localtimestamp", "sysdate":
			return mysqlwire.Str(now.Format("2006-01-02 15:04:05")), nil
		case "utc_timestamp":
			return mysqlwire.Str(now.UTC().Format("2006-01-02 15:04:05")), nil
		case "curdate", "current_date":
			return mysqlwire.Str(now.Format("2006-01-02")), nil
		case "utc_date":
			return mysqlwire.Str(now.UTC().Format("2006-01-02")), nil
		case "curtime", "current_time":
			return mysqlwire.Str(now.Format("15:04:05")), nil
		case "utc_time":
			return mysqlwire.Str(now.UTC().Format("15:04:05")), nil
		case "unix_timestamp":
			return mysqlwire.IntValue(now.Unix()), nil
		}
	}
	return nil, mysql.NewError(mysql.ER_NOT_SUPPORTED_YET,
		fmt.Sprintf("heapproxy's embedded default cannot evaluate %s; start heapproxy with --upstream HOST:PORT to forward it", e.Text))
}

func (s *session) clientHost() string {
	addr := s.client.NetConn().RemoteAddr().String()
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		return strings.Trim(addr[:i], "[]")
	}
	return ""
}

func (s *session) localSelect(sel *parser.Select) error {
	cols := make([]mysqlwire.Column, len(sel.Fields))
	row := make([]mysqlwire.Value, len(sel.Fields))
	for i, f := range sel.Fields {
		v, e := s.eval(f.Expr)
		if e != nil {
			return s.sendError(e)
		}
		row[i] = v
		cols[i] = mysqlwire.TextColumn(f.Column)
		if f.Expr.Kind == parser.ExprLiteral && f.Expr.Lit == parser.LitInt {
			cols[i] = mysqlwire.IntColumn(f.Column)
		} else if v != nil {
			if _, err := strconv.ParseInt(*v, 10, 64); err == nil && f.Expr.Kind == parser.ExprSysVar {
				cols[i] = mysqlwire.IntColumn(f.Column)
			}
		}
	}
	var rows [][]mysqlwire.Value
	if !sel.HasLimit || sel.Limit > 0 {
		rows = append(rows, row)
	}
	return s.writeResult(cols, rows)
}

// likeMatch implements SQL LIKE (% and _, case-insensitive) via path.Match.
func likeMatch(pattern, s string) bool {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		switch c := pattern[i]; c {
		case '%':
			b.WriteByte('*')
		case '_':
			b.WriteByte('?')
		case '\\':
			if i+1 < len(pattern) {
				i++
				b.WriteString(escapeGlob(pattern[i]))
			}
		default:
			b.WriteString(escapeGlob(c))
		}
	}
	ok, _ := path.Match(strings.ToLower(b.String()), strings.ToLower(s))
	return ok
}

func escapeGlob(c byte) string {
	switch c {
	case '*', '?', '[', ']', '\\':
		return `\` + string(c)
	}
	return string(c)
}
