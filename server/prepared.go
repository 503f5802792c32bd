package server

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// Prepared statements on the embedded default run in the heapprof SQL
// engine (with an upstream they are the upstream's, relayed unchanged):
// Go's database/sql with arguments, Rust's sqlx, Node's mysql2 execute()
// and JDBC with useServerPrepStmts send their queries this way.

// maxLocalStmts bounds the statements one session keeps prepared, as
// max_prepared_stmt_count does on a server (per session here).
const maxLocalStmts = 1024

// maxLongData bounds what COM_STMT_SEND_LONG_DATA may accumulate for one
// statement between executions (MySQL's bound is max_allowed_packet).
const maxLongData = 16 << 20

// lastPrepared is the statement id MariaDB clients send to execute the
// statement they prepared last without waiting for its id (pipelining).
const lastPrepared = math.MaxUint32

// localStmt is one prepared statement of the session.
type localStmt struct {
	p *sqlview.Prepared
	// types are the parameter types of the last execution that sent them
	// (2 bytes each: type, 0x80 for unsigned); later ones may omit them.
	types []byte
	// longData holds values sent by COM_STMT_SEND_LONG_DATA since the last
	// execution, by parameter; longDataSize is their total, and
	// longDataLost says maxLongData was passed (the execution then fails).
	longData     map[int][]byte
	longDataSize int
	longDataLost bool
}

// addLongData appends a COM_STMT_SEND_LONG_DATA piece to parameter param.
func (st *localStmt) addLongData(param int, data []byte) {
	if st.longDataSize += len(data); st.longDataSize > maxLongData {
		st.longData, st.longDataLost = nil, true
	}
	if st.longDataLost {
		return
	}
	if st.longData == nil {
		st.longData = make(map[int][]byte)
	}
	st.longData[param] = append(st.longData[param], data...)
}

// resetLongData forgets the long data (after an execution, at COM_STMT_RESET).
func (st *localStmt) resetLongData() {
	st.longData, st.longDataSize, st.longDataLost = nil, 0, false
}

// answerStmt answers a COM_STMT_* command on the embedded default. It
// reports false for commands that are not about prepared statements.
func (s *session) answerStmt(cmd command) (bool, error) {
	code := cmd.code()
	switch code {
	case mysql.COM_STMT_PREPARE, mysql.COM_STMT_EXECUTE, mysql.COM_STMT_CLOSE,
		mysql.COM_STMT_SEND_LONG_DATA, mysql.COM_STMT_RESET, mysql.COM_STMT_FETCH:
	default:
		return false, nil
	}
	// CLOSE and SEND_LONG_DATA have no response, even for errors.
	silent := code == mysql.COM_STMT_CLOSE || code == mysql.COM_STMT_SEND_LONG_DATA
	if cmd.more && !silent {
		return true, s.sendError(mysql.NewError(mysql.ER_NET_PACKET_TOO_LARGE,
			"a prepared statement command over 16 MB is not supported on the embedded default; send long values with COM_STMT_SEND_LONG_DATA"))
	}
	if code == mysql.COM_STMT_PREPARE {
		if e := s.mayReadProfiles(); e != nil {
			return true, s.sendError(e)
		}
		return true, s.prepareLocal(cmd.data[1:])
	}
	body := cmd.data[1:]
	if len(body) < 4 {
		if silent {
			return true, nil
		}
		return true, s.sendError(malformed("no statement id"))
	}
	id := binary.LittleEndian.Uint32(body)
	if id == lastPrepared && code == mysql.COM_STMT_EXECUTE {
		id = s.lastStmt
	}
	st := s.stmts[id]
	if st == nil {
		if silent {
			return true, nil
		}
		return true, s.sendError(mysql.NewError(mysql.ER_UNKNOWN_STMT_HANDLER,
			fmt.Sprintf("Unknown prepared statement handler (%d) given to %s", id, stmtCommandName(code))))
	}
	switch code {
	case mysql.COM_STMT_EXECUTE:
		return true, s.executeLocal(st, body[4:])
	case mysql.COM_STMT_CLOSE:
		delete(s.stmts, id)
		s.srv.deps.SQL.ClosePrepared(s.sql, st.p)
		return true, nil
	case mysql.COM_STMT_SEND_LONG_DATA:
		if cmd.more { // a piece over 16 MB, cut: the execution fails
			st.longData, st.longDataLost = nil, true
		} else if len(body) >= 6 {
			st.addLongData(int(binary.LittleEndian.Uint16(body[4:])), body[6:])
		}
		return true, nil
	case mysql.COM_STMT_RESET:
		st.resetLongData()
		return true, s.sendOK()
	}
	return true, s.sendError(mysql.NewError(mysql.ER_STMT_HAS_NO_OPEN_CURSOR,
		fmt.Sprintf("The statement (%d) has no open cursor: heapproxy's embedded default sends whole result sets", id)))
}

// closeLocalStmts drops every prepared statement of the session (at
// COM_RESET_CONNECTION and when the session ends).
func (s *session) closeLocalStmts() {
	s.stmts, s.lastStmt = nil, 0
	if s.sql != nil {
		s.srv.deps.SQL.CloseSession(s.sql)
	}
}

func stmtCommandName(code byte) string {
	switch code {
	case mysql.COM_STMT_EXECUTE:
		return "mysqld_stmt_execute"
	case mysql.COM_STMT_RESET:
		return "mysqld_stmt_reset"
	}
	return "mysqld_stmt_fetch"
}

func malformed(what string) *mysql.MyError {
	return mysql.NewError(mysql.ER_MALFORMED_PACKET, "Malformed communication packet: "+what)
}

// prepareLocal answers COM_STMT_PREPARE: the statement's id, its parameter
// and column definitions.
func (s *session) prepareLocal(query []byte) error {
	sess, e := s.sqlSession()
	if e != nil {
		return s.sendError(e)
	}
	if len(s.stmts) >= maxLocalStmts {
		return s.sendError(mysql.NewError(mysql.ER_MAX_PREPARED_STMT_COUNT_REACHED,
			fmt.Sprintf("Can't create more than max_prepared_stmt_count statements (current value: %d); close the statements you no longer use", maxLocalStmts)))
	}
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	p, err := s.srv.deps.SQL.Prepare(ctx, sess, string(s.charsets.decode(query)))
	done()
	if err != nil {
		return s.sendError(sqlError(err))
	}
	s.nextStmt++
	if s.nextStmt == lastPrepared {
		s.nextStmt = 1
	}
	id := s.nextStmt
	if s.stmts == nil {
		s.stmts = make(map[uint32]*localStmt)
	}
	s.stmts[id] = &localStmt{p: p}
	s.lastStmt = id

	ok := []byte{mysqlwire.HdrOK}
	ok = binary.LittleEndian.AppendUint32(ok, id)
	ok = binary.LittleEndian.AppendUint16(ok, uint16(len(p.Columns)))
	ok = binary.LittleEndian.AppendUint16(ok, uint16(p.Params))
	ok = append(ok, 0, 0, 0) // filler, no warnings
	if err := s.client.WritePacket(ok); err != nil {
		return err
	}
	if p.Params > 0 {
		param := mysqlwire.Column{Name: "?", Type: mysql.MYSQL_TYPE_VAR_STRING, Charset: mysqlwire.BinaryCollation}.Dump()
		for range p.Params {
			if err := s.client.WritePacket(param); err != nil {
				return err
			}
		}
		if err := s.client.WritePacket(mysqlwire.EOFPacket(s.status, 0)); err != nil {
			return err
		}
	}
	if len(p.Columns) > 0 {
		cols := engineColumns(p.Columns)
		s.charsets.resultColumns(cols)
		for _, c := range cols {
			if err := s.client.WritePacket(c.Dump()); err != nil {
				return err
			}
		}
		if err := s.client.WritePacket(mysqlwire.EOFPacket(s.status, 0)); err != nil {
			return err
		}
	}
	return s.client.Flush()
}

// executeLocal answers COM_STMT_EXECUTE (body after the statement id) with
// a binary-protocol result set.
func (s *session) executeLocal(st *localStmt, body []byte) error {
	args, e := st.bind(body)
	if st.longDataLost {
		e = mysql.NewError(mysql.ER_NET_PACKET_TOO_LARGE,
			fmt.Sprintf("long data (COM_STMT_SEND_LONG_DATA) over %d bytes for one execution; heapprof values are short", maxLongData))
	}
	st.resetLongData()
	if e != nil {
		return s.sendError(e)
	}
	s.decodeArgs(args, st.types)
	ctx, done := s.startStatement(s.srv.cfg.Timeouts.Admin)
	defer done()
	res, err := s.srv.deps.SQL.Execute(ctx, s.sql, st.p, args)
	if err != nil {
		return s.sendError(statementError(ctx, err))
	}
	return s.writeSQLResult(ctx, res, true)
}

// bind reads the parameter values of a COM_STMT_EXECUTE body: flags (1),
// iteration count (4), NULL bitmap, new-types flag, types, values.
func (st *localStmt) bind(body []byte) ([]any, *mysql.MyError) {
	n := st.p.Params
	if len(body) < 5 {
		return nil, malformed("short COM_STMT_EXECUTE")
	}
	body = body[5:]
	if n == 0 {
		return nil, nil
	}
	nullBytes := (n + 7) / 8
	if len(body) < nullBytes+1 {
		return nil, malformed("no NULL bitmap")
	}
	nulls, body := body[:nullBytes], body[nullBytes:]
	if body[0] == 1 {
		if len(body) < 1+2*n {
			return nil, malformed("short parameter types")
		}
		st.types = append(st.types[:0], body[1:1+2*n]...)
		body = body[1+2*n:]
	} else {
		body = body[1:]
	}
	if len(st.types) != 2*n {
		return nil, mysql.NewError(mysql.ER_WRONG_ARGUMENTS, "Incorrect arguments to mysqld_stmt_execute: no parameter types were sent")
	}
	args := make([]any, n)
	for i := range n {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		if data, ok := st.longData[i]; ok {
			args[i] = string(data)
			continue
		}
		v, rest, err := mysqlwire.DecodeParam(st.types[2*i], st.types[2*i+1]&0x80 != 0, body)
		if err != nil {
			return nil, malformed(fmt.Sprintf("parameter %d: %v", i+1, err))
		}
		if d, ok := v.(mysqlwire.Decimal); ok {
			v = sqlview.Decimal(d)
		}
		args[i], body = v, rest
	}
	return args, nil
}

// decodeArgs converts string parameters (long data included) from the
// client's character set, except those sent as BLOB types, which MySQL
// binds as bytes.
func (s *session) decodeArgs(args []any, types []byte) {
	for i, a := range args {
		if str, ok := a.(string); ok && 2*i < len(types) && !isBlobType(types[2*i]) {
			args[i] = string(s.charsets.decode([]byte(str)))
		}
	}
}

// isBlobType tells the parameter types MySQL binds as bytes, without
// character set conversion.
func isBlobType(typ byte) bool {
	switch typ {
	case mysql.MYSQL_TYPE_TINY_BLOB, mysql.MYSQL_TYPE_MEDIUM_BLOB, mysql.MYSQL_TYPE_LONG_BLOB, mysql.MYSQL_TYPE_BLOB:
		return true
	}
	return false
}
