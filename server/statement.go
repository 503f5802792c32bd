package server

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
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
