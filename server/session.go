package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/internal/relay"
)

// maxHandshakePacket bounds what a client may send before it is logged in.
const maxHandshakePacket = 64 << 10

// session is one client connection and, with an upstream, its own upstream
// connection: session state (USE, SET, transactions, temporary tables,
// prepared statements) lives upstream exactly as if the client were direct.
type session struct {
	srv    *Server
	id     uint32
	log    *zap.Logger
	client *mysqlwire.Conn
	up     *mysqlwire.Conn // nil in the embedded default

	caps uint32 // negotiated with the client
	user string // the name the client logged in with
	// account is who was authenticated (see Config.MayProfile): what
	// profile_users is checked against.
	account Account
	salt    []byte // the greeting's challenge (COM_CHANGE_USER answers it too)
	// upstreamSalt: the greeting offered the upstream's own challenge, so
	// the client's answers are forwarded as written (loginUpstream).
	upstreamSalt bool
	db           string
	status       uint16                     // last server status flags the client saw
	vars         map[string]mysqlwire.Value // SET values on the embedded default
	sql          *sqlview.Session           // state in the heapprof SQL engine, made on first use
	// charsets are the connection's character sets on the embedded
	// default (charset.go), loginCharsets those the login asked for
	// (COM_RESET_CONNECTION goes back to them); zero with an upstream.
	charsets, loginCharsets connCharsets
	// warnings are the last HeapProf statement's (what could not be
	// symbolized, and why), for SHOW WARNINGS until the next statement.
	warnings []string
	// errSent is set by sendError: a multi-statement query on the embedded
	// default stops at the first statement that failed.
	errSent bool

	// Prepared statements on the embedded default (prepared.go).
	stmts    map[uint32]*localStmt
	nextStmt uint32
	lastStmt uint32

	mu   sync.Mutex
	idle bool // waiting for the client's next command
	// since is when the session went idle or its command started, and
	// info that command's text (SHOW PROCESSLIST).
	since  time.Time
	info   string
	dbSeen string // s.db as of the last command (read by other sessions)
	addr   string // the client's address
	done   bool
	// cancelRunning stops the statement heapproxy is answering itself
	// (KILL QUERY); nil between statements.
	cancelRunning context.CancelCauseFunc
	// upstreamID and upstreamAddr are the upstream's connection id (what
	// the client's CONNECTION_ID() and KILL name) and address, once logged
	// in (killRelayed).
	upstreamID   uint32
	upstreamAddr string
}

func newSession(s *Server, c net.Conn, id uint32) *session {
	return &session{
		srv:    s,
		id:     id,
		log:    s.log.With(zap.Uint32("conn", id), zap.String("client", c.RemoteAddr().String())),
		client: mysqlwire.NewConn(relay.FastConn(c)),
		addr:   c.RemoteAddr().String(),
		status: mysql.SERVER_STATUS_AUTOCOMMIT,
	}
}

func (s *session) run() {
	defer s.closeConns()
	start := time.Now()
	deadline := start.Add(s.srv.cfg.Timeouts.Handshake)
	s.client.NetConn().SetDeadline(deadline)
	var err error
	if s.srv.cfg.embedded() {
		err = s.loginLocal()
	} else {
		err = s.withLoginSlot(deadline, func() error { return s.loginUpstream(deadline) })
	}
	if err != nil {
		s.log.Info("login failed", zap.String("user", s.user), zap.Error(err))
		s.srv.deps.Metrics.Error("login")
		return
	}
	s.client.NetConn().SetDeadline(time.Time{})
	if s.up != nil {
		s.up.NetConn().SetDeadline(time.Time{})
	}
	s.log = s.log.With(zap.String("user", s.user))
	// One line per connection is noise at production rates: debug.
	s.log.Debug("connection opened", zap.String("db", s.db), zap.Bool("tls", s.isTLS()))
	s.srv.deps.Metrics.ConnOpened()
	defer s.srv.deps.Metrics.ConnClosed()
	err = s.serve()
	s.closeLocalStmts()
	fields := []zap.Field{zap.Duration("duration", time.Since(start))}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		fields = append(fields, zap.Error(err))
	}
	if len(fields) > 1 {
		s.log.Info("connection closed with an error", fields...)
		return
	}
	s.log.Debug("connection closed", fields...)
}

// minLoginTime is the least time left before the handshake deadline (or
// a tenth of the whole wait, if less) for which a freed login slot is
// taken: with less, the upstream login would
// fail at once (the client would see the connection closed, no packet),
// and the slot would pass to the next waiter in the same state, so slots
// freed by logins timing out would cascade through every waiter instead
// of the waiters getting ERR 1040.
const minLoginTime = 100 * time.Millisecond

// withLoginSlot runs an upstream login once fewer than max_pending_logins
// are under way, waiting until deadline for a slot; none (or one that comes
// within minLoginTime of the deadline) is an ERR 1040 in place of the
// greeting, as MySQL answers when it is full.
func (s *session) withLoginSlot(deadline time.Time, login func() error) error {
	least := min(minLoginTime, time.Until(deadline)/10)
	t := time.NewTimer(time.Until(deadline) - least)
	defer t.Stop()
	got := false
	select {
	case s.srv.logins <- struct{}{}:
		got = time.Until(deadline) >= least
		if !got {
			<-s.srv.logins // a slot came too late for this login
		}
	case <-t.C:
	}
	if !got {
		n := cap(s.srv.logins)
		s.client.NetConn().SetWriteDeadline(time.Now().Add(time.Second))
		s.sendError(&mysql.MyError{Code: mysql.ER_CON_COUNT_ERROR, State: "08004", Message: fmt.Sprintf(
			"Too many connections: %d logins to the upstream were under way for timeouts.handshake (max_pending_logins)", n)})
		s.srv.deps.Metrics.Error("max_pending_logins")
		return fmt.Errorf("no login slot free (max_pending_logins %d)", n)
	}
	defer func() { <-s.srv.logins }()
	return login()
}

func (s *session) isTLS() bool {
	_, ok := s.client.NetConn().(*tls.Conn)
	return ok
}

// setIdle marks the session idle (between commands) or busy. It reports
// false when the server is shutting down and the session should end.
func (s *session) setIdle(idle bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.idle = idle
	s.since = time.Now()
	s.dbSeen = s.db
	if idle {
		s.info = ""
	}
	return !s.srv.isClosing()
}

// noteCommand records the statement a busy session runs (SHOW PROCESSLIST).
func (s *session) noteCommand(query []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up == nil {
		query = s.charsets.decode(query[:min(len(query), 1024)])
	}
	s.info = string(query[:min(len(query), 1024)])
}

// interruptIfIdle ends a session that waits for a command; a busy one
// notices the shutdown when its statement is done.
func (s *session) interruptIfIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.idle {
		s.client.NetConn().SetReadDeadline(time.Now())
	}
}

func (s *session) closeConns() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	// Shut the sockets down before closing: an event loop relaying for the
	// session holds descriptors of its own, and sees the end this way.
	if s.up != nil {
		relay.ShutdownConn(s.up.NetConn())
		s.up.NetConn().Close()
	}
	relay.ShutdownConn(s.client.NetConn())
	s.client.NetConn().Close()
}

// sendError writes an ERR packet to the client and flushes it.
func (s *session) sendError(e *mysql.MyError) error {
	s.errSent = true
	s.srv.deps.Metrics.SQLError(e.Code)
	e = s.charsets.convertError(e)
	if err := s.client.WritePacket(mysqlwire.ErrPacket(e)); err != nil {
		return err
	}
	return s.client.Flush()
}

func (s *session) sendOK() error {
	if err := s.client.WritePacket(mysqlwire.OKPacket(0, 0, s.status, 0)); err != nil {
		return err
	}
	return s.client.Flush()
}

// handshake greets the client, reads its login and settles the
// capabilities both sides have.
func (s *session) handshake(g *mysqlwire.Greeting) (*mysqlwire.HandshakeResponse, error) {
	if err := s.client.WritePacket(g.Encode()); err != nil {
		return nil, err
	}
	if err := s.client.Flush(); err != nil {
		return nil, err
	}
	r, err := s.readHandshakeResponse()
	if err != nil {
		return nil, err
	}
	s.caps = r.Caps & g.Caps
	return r, nil
}

// readHandshakeResponse reads the client's login, upgrading to TLS first
// when it asks for it.
func (s *session) readHandshakeResponse() (*mysqlwire.HandshakeResponse, error) {
	p, err := s.client.ReadPacket(maxHandshakePacket)
	if err != nil {
		return nil, fmt.Errorf("read handshake response: %w", err)
	}
	if mysqlwire.IsSSLRequest(p) {
		if s.srv.clientTLS == nil {
			return nil, errors.New("client asked for TLS, none is configured")
		}
		if _, err := s.client.Upgrade(func(c net.Conn) *tls.Conn { return tls.Server(c, s.srv.clientTLS) }); err != nil {
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		if p, err = s.client.ReadPacket(maxHandshakePacket); err != nil {
			return nil, fmt.Errorf("read handshake response: %w", err)
		}
	}
	r, err := mysqlwire.ParseHandshakeResponse(p)
	if err != nil {
		s.sendError(mysql.NewError(mysql.ER_HANDSHAKE_ERROR, "Bad handshake"))
		return nil, fmt.Errorf("parse handshake response: %w", err)
	}
	s.setUser(r.User)
	s.db = r.DB
	return r, nil
}

func (s *session) accessDenied(user string, usedPassword bool) *mysql.MyError {
	yes := "NO"
	if usedPassword {
		yes = "YES"
	}
	host, _, _ := net.SplitHostPort(s.client.NetConn().RemoteAddr().String())
	return mysql.NewError(mysql.ER_ACCESS_DENIED_ERROR,
		fmt.Sprintf("Access denied for user '%s'@'%s' (using password: %s)", user, host, yes))
}
