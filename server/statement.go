package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// Why a statement heapproxy works on itself (a HeapProf call, a heapprof
// SQL query) was stopped before it finished.
var (
	errKilled     = errors.New("killed (KILL QUERY)")
	errClientGone = errors.New("the client disconnected")
	errShutdown   = errors.New("heapproxy is shutting down")
)

// startStatement gives a statement heapproxy answers itself its context:
// bounded by timeout, ended by KILL QUERY, by the client going away and by
// the end of the shutdown grace. done must be called when the statement
// is answered, before the session reads from the client again.
func (s *session) startStatement(timeout time.Duration) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancelCause(s.srv.ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	s.mu.Lock()
	s.cancelRunning = cancel
	s.mu.Unlock()
	stopWatch := s.watchClient(cancel)
	var once sync.Once
	return ctx, func() {
		once.Do(func() {
			stopWatch()
			s.mu.Lock()
			s.cancelRunning = nil
			s.mu.Unlock()
			cancelTimeout()
			cancel(nil)
		})
	}
}

// watchClient cancels the statement when the client's connection ends
// while heapproxy works, so that a query or a dump does not go on for
// nobody. It peeks at the client's input through the session's buffered
// reader: bytes a client sends meanwhile stay buffered for the next
// command. stop returns once the watcher no longer reads.
func (s *session) watchClient(cancel context.CancelCauseFunc) (stop func()) {
	if s.client.Buffered() > 0 {
		return func() {} // the client already sent more: it is there
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := s.client.Peek(1); err != nil && !isTimeout(err) {
			cancel(errClientGone)
		}
	}()
	return func() {
		s.client.NetConn().SetReadDeadline(time.Now())
		<-done
		s.client.NetConn().SetReadDeadline(time.Time{})
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// killQuery cancels the statement the session is running, if any.
func (s *session) killQuery() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancelRunning != nil {
		s.cancelRunning(errKilled)
	}
}

// kill answers KILL [CONNECTION | QUERY] id on the embedded default: a user
// may kill its own sessions' statements, a profile user any session's.
func (s *session) kill(id uint32, queryOnly bool) error {
	target := s.srv.sessionByID(id)
	if target == nil {
		return s.sendError(mysql.NewError(mysql.ER_NO_SUCH_THREAD, fmt.Sprintf("Unknown thread id: %d", id)))
	}
	if target.owner() != s.user && !s.srv.cfg.MayProfile(s.account) {
		return s.sendError(mysql.NewError(mysql.ER_KILL_DENIED_ERROR, fmt.Sprintf("You are not owner of thread %d", id)))
	}
	target.killQuery()
	if !queryOnly && target != s {
		target.closeConns()
	}
	if !queryOnly && target == s {
		s.closeConns()
		return errSessionOver
	}
	return s.sendOK()
}

// setUser sets the session's user name; owner reads it from another
// session's goroutine (KILL).
func (s *session) setUser(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user = name
}

func (s *session) owner() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.user
}

// relayKill relays KILL [QUERY] id (or COM_PROCESS_KILL) to the upstream,
// which decides whether the client may kill that connection and kills what
// runs there. When it agrees, the statement heapproxy answers itself for
// the session holding that upstream connection (a dump, which the
// upstream cannot see) is stopped too, and on KILL CONNECTION the session
// is closed. Connection ids are the upstream's, so they are unique only per
// upstream server: behind a load balancer several FEs count from 0. The
// session is found by id and upstream address; if that still names more
// than one, none is touched and the ambiguity is logged.
func (s *session) relayKill(data []byte, id uint32, connection bool) error {
	if err := s.forwardCommand(command{data: data}); err != nil {
		return s.upstreamLost(err)
	}
	head, err := mysqlwire.RelayPacket(s.client, s.up)
	if err != nil {
		return s.upstreamLost(err)
	}
	if len(head) > 0 && head[0] == mysqlwire.HdrOK {
		s.status = mysqlwire.OKStatus(head)
		s.stopRelayedTarget(id, connection)
	}
	return s.client.Flush()
}

func (s *session) stopRelayedTarget(id uint32, connection bool) {
	s.mu.Lock()
	addr := s.upstreamAddr
	s.mu.Unlock()
	var targets []*session
	for _, t := range s.srv.sessionList() {
		t.mu.Lock()
		if t.upstreamID == id && t.upstreamAddr == addr {
			targets = append(targets, t)
		}
		t.mu.Unlock()
	}
	switch {
	case len(targets) > 1:
		s.log.Warn("KILL names several sessions on one upstream address (a load balancer in front of several servers?); heapproxy stopped none of their own statements",
			zap.Uint32("upstream_conn", id), zap.Int("sessions", len(targets)))
	case len(targets) == 1 && targets[0] != s:
		targets[0].killQuery()
		if connection {
			targets[0].closeConns()
		}
	}
}
