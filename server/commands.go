package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/internal/relay"
	"github.com/heapproxy/heapproxy/parser"
)

// command is the first physical packet of a client command; more tells that
// continuation packets (a command of 16 MiB or more) follow unread.
type command struct {
	data []byte
	more bool
}

func (c command) code() byte { return c.data[0] }

// errSessionOver ends the command loop without an error worth logging.
var errSessionOver = errors.New("session over")

func (s *session) serve() error {
	for {
		if !s.setIdle(true) {
			return nil
		}
		if s.loopable() {
			if hb, ok := s.srv.loops.Relay(loopSession{s}); ok {
				if over, err := s.resume(hb); over || err != nil {
					return err
				}
				// The loop gave the session back for a command it does not
				// relay (now at the front of the client's input), or for
				// the shutdown.
				if s.srv.isClosing() {
					return nil
				}
			}
		}
		if d := s.srv.cfg.Timeouts.Idle; d > 0 {
			s.client.NetConn().SetReadDeadline(time.Now().Add(d))
		}
		cmd, err := s.readCommand()
		if !s.setIdle(false) {
			return nil
		}
		if err != nil {
			return err
		}
		if s.srv.cfg.Timeouts.Idle > 0 {
			s.client.NetConn().SetReadDeadline(time.Time{})
		}
		err = s.dispatch(cmd)
		s.client.ReleaseLargeBuffer()
		if s.up != nil {
			s.up.ReleaseLargeBuffer()
		}
		if err != nil {
			if errors.Is(err, errSessionOver) {
				return nil
			}
			return err
		}
	}
}

// loopable tells whether an event loop may relay the session's next
// commands (see relay.Loops): plain TCP on both sides, an upstream, and no
// idle timeout, which the loops do not keep.
func (s *session) loopable() bool {
	if s.srv.loops == nil || s.up == nil || s.srv.cfg.Timeouts.Idle > 0 || s.up.Buffered() > 0 {
		return false
	}
	if s.warnings != nil {
		return false // the next command decides whose SHOW WARNINGS it is (dispatch)
	}
	return relay.IsRawConn(s.client.NetConn()) && relay.IsRawConn(s.up.NetConn())
}

// resume takes a session back from an event loop: over is true when the
// session ends (with err to log, if any).
func (s *session) resume(hb relay.Handback) (over bool, err error) {
	s.client.Unread(hb.Client)
	s.up.Unread(hb.Up)
	if hb.MidReply {
		s.client.SetSeq(hb.Seq)
		s.up.SetSeq(hb.Seq)
	}
	switch {
	case hb.Err != nil && (hb.UpErr || hb.MidReply):
		return true, s.upstreamLost(hb.Err)
	case hb.Err != nil:
		return true, hb.Err // the client went away between statements
	case hb.Infile:
		if err := s.relayResultsFrom([]byte{mysqlwire.HdrLocalInfile}); err != nil {
			return true, s.upstreamLost(err)
		}
		if err := s.client.Flush(); err != nil {
			return true, err
		}
	}
	return false, nil
}

func (s *session) readCommand() (command, error) {
	data, more, err := s.client.ReadCommand()
	if err != nil {
		return command{}, err
	}
	if len(data) == 0 {
		return command{}, errors.New("empty command packet")
	}
	return command{data: data, more: more}, nil
}

func (s *session) dispatch(cmd command) error {
	s.srv.questions.Add(1)
	code := cmd.code()
	if code == mysql.COM_QUIT {
		if s.up != nil {
			s.up.ResetSeq()
			s.up.WritePacket([]byte{mysql.COM_QUIT})
			s.up.Flush()
		}
		return errSessionOver
	}
	if s.warnings != nil {
		// heapproxy's own warnings last for one statement, like MySQL's;
		// SHOW WARNINGS right after reads them, in either mode.
		if code == mysql.COM_QUERY && !cmd.more && parser.IsShowWarnings(string(cmd.data[1:])) {
			return s.showOwnWarnings()
		}
		s.warnings = nil
	}
	if code == mysql.COM_QUERY {
		s.noteCommand(cmd.data[1:])
	}
	if code == mysql.COM_QUERY && !cmd.more {
		if handled, err := s.intercept(cmd.data[1:]); handled || err != nil {
			return err
		}
	}
	if s.up == nil {
		if cmd.more {
			s.client.DiscardContinuation()
		}
		s.srv.deps.Metrics.Statement("local")
		return s.answerEmbedded(cmd)
	}
	s.srv.deps.Metrics.Statement("forwarded")
	switch code {
	case mysql.COM_BINLOG_DUMP, mysql.COM_BINLOG_DUMP_GTID, mysql.COM_REGISTER_SLAVE,
		mysql.COM_CONNECT_OUT, mysql.COM_TABLE_DUMP, mysql.COM_DAEMON, mysql.COM_CLONE:
		if cmd.more {
			s.client.DiscardContinuation()
		}
		return s.sendError(mysql.NewError(mysql.ER_UNKNOWN_COM_ERROR,
			fmt.Sprintf("heapproxy does not relay command 0x%02x (replication and clone protocols); connect to the upstream directly", code)))
	case mysql.COM_CHANGE_USER:
		return s.handleChangeUser(cmd)
	case mysql.COM_PROCESS_KILL:
		if !cmd.more && len(cmd.data) == 5 {
			return s.relayKill(cmd.data, binary.LittleEndian.Uint32(cmd.data[1:]), true)
		}
	}
	if err := s.forwardCommand(cmd); err != nil {
		return s.upstreamLost(err)
	}
	var err error
	switch code {
	case mysql.COM_STMT_SEND_LONG_DATA, mysql.COM_STMT_CLOSE:
		return nil // no response
	case mysql.COM_QUERY, mysql.COM_STMT_EXECUTE, mysql.COM_PROCESS_INFO:
		err = s.relayResults()
	case mysql.COM_STMT_PREPARE:
		err = s.relayPrepare()
	case mysql.COM_STMT_FETCH:
		err = s.relayRows()
	case mysql.COM_FIELD_LIST: // column definitions up to EOF, like rows
		err = s.relayRows()
	default: // INIT_DB, PING, RESET_CONNECTION, SET_OPTION, STATISTICS, KILL, ...
		err = s.relayOne()
	}
	if err != nil {
		return s.upstreamLost(err)
	}
	return s.client.Flush()
}

// forwardCommand sends the command to the upstream, streaming any
// continuation packets straight from the client.
func (s *session) forwardCommand(cmd command) error {
	s.up.ResetSeq()
	if err := s.up.WritePhysical(len(cmd.data), cmd.data); err != nil {
		return err
	}
	if cmd.more {
		if err := mysqlwire.CopyContinuation(s.up, s.client); err != nil {
			return err
		}
	}
	return s.up.Flush()
}

// upstreamLost tells the client its upstream connection broke and ends the
// session: the upstream's session state (transaction, temporary tables) is
// gone, so continuing silently on a new connection would lie.
func (s *session) upstreamLost(err error) error {
	s.log.Warn("upstream connection lost", zap.Error(err))
	s.srv.deps.Metrics.Error("upstream")
	s.sendError(&mysql.MyError{Code: 2013, State: "08S01",
		Message: fmt.Sprintf("heapproxy lost the connection to upstream %s: %v; reconnect to start a new session", s.srv.cfg.Upstream, err)})
	return errSessionOver
}

// The goroutine relay of a forwarded command's response (the relay
// package does the work; the session keeps its status flags).

func (s *session) relayOne() error {
	st, err := relay.One(s.client, s.up, s.status)
	s.status = st
	return err
}

func (s *session) relayResults() error {
	st, err := relay.Results(s.client, s.up, s.status)
	s.status = st
	return err
}

func (s *session) relayResultsFrom(head []byte) error {
	st, err := relay.ResultsFrom(s.client, s.up, head, s.status)
	s.status = st
	return err
}

func (s *session) relayRows() error {
	st, err := relay.Rows(s.client, s.up, s.status)
	s.status = st
	return err
}

func (s *session) relayPrepare() error { return relay.Prepare(s.client, s.up) }

// changeUser answers COM_CHANGE_USER exactly like a first login: checked
// against heapproxy's user list under auth: local and on the embedded
// default, else relayed to the upstream as the client wrote it (the client
// answered the upstream's own salt: loginUpstream).
// A refused change ends the session, as on MySQL.
func (s *session) handleChangeUser(cmd command) error {
	if cmd.more {
		s.client.DiscardContinuation()
		return s.sendError(mysql.NewError(mysql.ER_HANDSHAKE_ERROR, "COM_CHANGE_USER packet too large"))
	}
	cu, err := mysqlwire.ParseChangeUser(cmd.data, s.caps)
	if err != nil {
		return s.sendError(mysql.NewError(mysql.ER_HANDSHAKE_ERROR, "malformed COM_CHANGE_USER"))
	}
	if s.up == nil || s.srv.cfg.Auth == AuthLocal {
		err = s.changeUserLocal(cu)
	} else {
		err = s.changeUserUpstream(cu)
	}
	if err != nil {
		s.log.Info("change user refused", zap.String("new_user", cu.User), zap.Error(err))
		return errSessionOver
	}
	s.log.Info("user changed", zap.String("new_user", cu.User))
	s.log = s.srv.log.With(zap.Uint32("conn", s.id), zap.String("user", s.user))
	return nil
}

func (s *session) changeUserUpstream(cu *mysqlwire.ChangeUser) error {
	cu.Plugin = s.upstreamPlugin(cu.Plugin)
	s.up.ResetSeq()
	if err := s.up.WritePacket(cu.Encode(s.caps | mysql.CLIENT_PLUGIN_AUTH)); err != nil {
		return s.upstreamLost(err)
	}
	if err := s.up.Flush(); err != nil {
		return s.upstreamLost(err)
	}
	s.account = Account{}
	if err := s.relayAuth(cu.Plugin, s.upstreamChallenge()); err != nil {
		return err
	}
	s.setUser(cu.User)
	s.db = cu.DB
	s.learnAccount()
	return nil
}

// changeUserLocal checks the new user's password (answering the salt of the
// greeting, as MySQL's COM_CHANGE_USER does) and, in front of an upstream,
// changes the upstream session to that user's upstream account.
func (s *session) changeUserLocal(cu *mysqlwire.ChangeUser) error {
	s.account = Account{}
	if err := s.checkLocalLogin(cu.User, s.caps, cu.Plugin, cu.Auth, s.salt); err != nil {
		return err
	}
	if s.up == nil {
		s.closeLocalStmts()
		s.sql, s.vars = nil, nil
		// The character set the packet names, as MariaDB applies it.
		s.charsets = handshakeCharsets(cu.Charset)
		s.loginCharsets = s.charsets
		s.status = mysql.SERVER_STATUS_AUTOCOMMIT
		s.setUser(cu.User)
		s.db = ""
		s.account = Account{User: cu.User, Known: true}
		if cu.DB != "" {
			if e := s.localUseDB(cu.DB); e != nil {
				s.sendError(e)
				return fmt.Errorf("unknown database %q", cu.DB)
			}
			s.db = cu.DB
		}
		return s.sendOK()
	}
	user, password := s.srv.cfg.localUser(cu.User).upstreamAccount()
	up := &mysqlwire.ChangeUser{User: user, DB: cu.DB, Charset: cu.Charset, Plugin: passThroughPlugin, Attrs: cu.Attrs}
	s.up.ResetSeq()
	if err := s.authAs(up.Encode(s.caps|mysql.CLIENT_PLUGIN_AUTH), user, password, nil); err != nil {
		return err
	}
	s.setUser(cu.User)
	s.db = cu.DB
	s.account = Account{User: cu.User, Known: true}
	return nil
}
