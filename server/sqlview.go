package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/parser"
)

// sqlSession is the session's state in the heapprof SQL engine, made on
// first use.
func (s *session) sqlSession() (*sqlview.Session, *mysql.MyError) {
	if s.sql != nil {
		return s.sql, nil
	}
	// The engine answers @@x, SHOW VARIABLES and SET for the session: it
	// starts with the values heapproxy announces (the version of its
	// handshake, its max_allowed_packet, ...), so both agree.
	vars := map[string]any{}
	for _, name := range []string{"version", "version_comment", "version_compile_os", "version_compile_machine",
		"max_allowed_packet", "system_time_zone", "license", "hostname", "port"} {
		v := s.embeddedVars()[name]
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			vars[name] = n // the engine's numeric variables take numbers
		} else {
			vars[name] = v
		}
	}
	sess, err := s.srv.deps.SQL.NewSessionWith(context.Background(), s.user, s.client.NetConn().RemoteAddr().String(), s.id,
		sqlview.SessionOptions{Variables: vars, ReadsProfiles: s.mayReadProfiles() == nil})
	if err != nil {
		return nil, sqlError(err)
	}
	if !s.charsets.engineCharsetsDefault() {
		// The client's character sets, from its handshake or SET NAMES
		// (a SET in the engine, which watching the client would not help:
		// this may run during the login).
		ctx, cancel := context.WithTimeout(s.srv.ctx, s.srv.cfg.Timeouts.Admin)
		e := s.syncEngineCharsets(ctx, sess)
		cancel()
		if e != nil {
			s.srv.deps.SQL.CloseSession(sess)
			return nil, e
		}
	}
	s.reportCharsets(sess)
	s.sql = sess
	return sess, nil
}

// querySQL answers a statement from the heapprof SQL engine, streaming its
// rows to the client as the engine produces them.
func (s *session) querySQL(query []byte) error {
	sess, e := s.sqlSession()
	if e != nil {
		return s.sendError(e)
	}
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	defer done()
	res, err := s.srv.deps.SQL.Query(ctx, sess, string(query))
	if err != nil {
		return s.sendError(statementError(ctx, err))
	}
	return s.writeSQLResult(ctx, res, false)
}

// setSQL runs a SET in the heapprof SQL engine, which keeps the session's
// variables (system and user ones: a later SELECT or EXECUTE ... USING
// reads them there); autocommit also changes the status flag heapproxy
// sends. The connection's character sets (set) are the session's: each
// such assignment is checked before anything is applied, as MySQL does,
// and the engine is then told what it needs of them (charset.go); the
// engine runs the other assignments.
func (s *session) setSQL(set []parser.Assignment, query []byte) error {
	var charsets []parser.Assignment
	for _, a := range set {
		if setsCharsets(a) {
			charsets = append(charsets, a)
		}
	}
	if len(charsets) > 0 {
		query = setWithout(query, set, setsCharsets)
	}
	return s.setSQLCharsets(charsets, query)
}

// setSQLCharsets applies the character set assignments charsets, then
// runs query (if any) in the engine; the character sets change only when
// both succeed.
func (s *session) setSQLCharsets(charsets []parser.Assignment, query []byte) error {
	sess, e := s.sqlSession()
	if e != nil {
		return s.sendError(e)
	}
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	defer done()
	next, e := s.charsets.assignAll(charsets, s.evalInEngine(ctx, sess))
	if e != nil {
		return s.sendError(e)
	}
	res := &sqlview.Result{}
	if query != nil {
		var err error
		if res, err = s.srv.deps.SQL.Query(ctx, sess, string(query)); err != nil {
			return s.sendError(statementError(ctx, err))
		}
	}
	if len(charsets) > 0 {
		s.charsets = next
		if e := s.syncEngineCharsets(ctx, sess); e != nil {
			res.Close()
			return s.sendError(e)
		}
		s.reportCharsets(sess)
	}
	if v, err := sess.Variable(ctx, "autocommit"); err == nil {
		if fmt.Sprint(v) == "0" {
			s.status &^= mysql.SERVER_STATUS_AUTOCOMMIT
		} else {
			if s.status&mysql.SERVER_STATUS_AUTOCOMMIT == 0 {
				// Turning autocommit on commits, as on MySQL.
				s.status &^= mysql.SERVER_STATUS_IN_TRANS
			}
			s.status |= mysql.SERVER_STATUS_AUTOCOMMIT
		}
	}
	return s.writeSQLResult(ctx, res, false)
}

// writeSQLResult streams an engine result to the client as an OK packet or
// a result set, in the text protocol or (for prepared statements) the
// binary one, and closes it. Text values and column definitions go out in
// the client's character_set_results.
func (s *session) writeSQLResult(ctx context.Context, res *sqlview.Result, binaryRows bool) error {
	defer res.Close()
	s.db = s.sql.Database()
	if res.Columns == nil {
		s.noteTransaction(res)
		if err := s.client.WritePacket(mysqlwire.OKPacket(res.AffectedRows, res.InsertID, s.status, 0)); err != nil {
			return err
		}
		return s.client.Flush()
	}
	cols := engineColumns(res.Columns)
	convert := s.charsets.resultColumns(cols)
	w, err := s.startResult(cols...)
	if err != nil {
		return err
	}
	for {
		row, err := res.Next()
		if errors.Is(err, io.EOF) {
			if s.noteTransaction(res) {
				w.SetStatus(s.status)
			}
			return w.Finish()
		}
		if err != nil {
			// An ERR packet may end a result set midway.
			return s.sendError(statementError(ctx, err))
		}
		s.charsets.convertRow(row, convert)
		if binaryRows {
			if w.Row, err = mysqlwire.AppendBinaryRow(w.Row[:0], cols, row); err != nil {
				return s.sendError(mysql.NewError(mysql.ER_UNKNOWN_ERROR, fmt.Sprintf("binary result row: %v", err)))
			}
			err = s.client.WritePacket(w.Row)
		} else {
			err = w.WriteRaw(row)
		}
		if err != nil {
			return err
		}
	}
}

// noteTransaction sets SERVER_STATUS_IN_TRANS, as MariaDB does, when a
// statement under autocommit=0 read a heapprof table: the implicit
// transaction lasts until COMMIT, ROLLBACK or SET autocommit=1. It
// reports whether the status changed.
func (s *session) noteTransaction(res *sqlview.Result) bool {
	if s.status&(mysql.SERVER_STATUS_AUTOCOMMIT|mysql.SERVER_STATUS_IN_TRANS) != 0 || !res.ReadTables() {
		return false
	}
	s.status |= mysql.SERVER_STATUS_IN_TRANS
	return true
}

// engineColumns are the column definitions of an engine result.
func engineColumns(in []sqlview.Column) []mysqlwire.Column {
	cols := make([]mysqlwire.Column, len(in))
	for i, c := range in {
		cols[i] = mysqlwire.Column{Name: c.Name, Table: c.Table, Schema: c.Database, Type: c.Type, Flags: c.Flags,
			Charset: c.Charset, Length: c.Length, Decimals: c.Decimals}
	}
	return cols
}
