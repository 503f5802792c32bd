// Package server is heapproxy's MySQL front: it accepts clients, logs them
// in (passing authentication through to the upstream, or checking its own
// user list in the embedded default), answers the statements heapproxy
// owns and hands everything else to the relay (internal/relay). Packets are
// read and written through internal/mysqlwire; HeapProf work is the
// profiling service's, whose answers and errors become packets here.
//
// Where a change goes: a new command is a case in dispatch (commands.go); a
// statement heapproxy answers itself, a route in route and intercept
// (local.go); a HeapProf method's printed answer, admin.go.
package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/internal/relay"
	"github.com/heapproxy/heapproxy/parser"
	"github.com/heapproxy/heapproxy/profiling"
)

// Server is one listening heapproxy front.
type Server struct {
	cfg         Config
	log         *zap.Logger
	clientTLS   *tls.Config
	upstreamTLS *tls.Config
	deps        Deps
	classifier  *parser.Classifier
	loops       *relay.Loops       // nil: sessions relay on their goroutines
	prof        *profiling.Service // the HeapProf service
	maxConns    int
	// authKey is the RSA key a plain client encrypts its
	// caching_sha2_password with when the upstream connection is TLS
	// (bridgeSHA2FullAuth), made on first use: MySQL's
	// caching_sha2_password_auto_generate_rsa_keys, per process.
	authKey func() (*rsa.PrivateKey, error)

	ln     net.Listener
	nextID atomic.Uint32
	// ctx is the parent of every statement heapproxy works on itself; it
	// ends when the shutdown's grace is over.
	ctx       context.Context
	cancel    context.CancelCauseFunc
	started   time.Time     // for COM_STATISTICS' uptime
	questions atomic.Uint64 // commands served, for COM_STATISTICS
	// logins bounds sessions between accept and the end of login with an
	// upstream connection each (Config.MaxPendingLogins).
	logins chan struct{}

	mu       sync.Mutex
	sessions map[*session]struct{}
	closing  atomic.Bool // read on every command: no lock
	wg       sync.WaitGroup
}

// New checks the configuration and prepares a server; Listen starts it.
// deps.Registry and deps.Snapshots must be set.
func New(cfg Config, log *zap.Logger, deps Deps) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ct, err := cfg.clientTLS()
	if err != nil {
		return nil, err
	}
	ut, err := cfg.UpstreamClientTLS()
	if err != nil {
		return nil, err
	}
	if deps.Registry == nil {
		return nil, errors.New("server: no node registry")
	}
	if deps.Snapshots == nil {
		return nil, errors.New("server: no snapshot store")
	}
	if deps.Metrics == nil {
		deps.Metrics = noMetrics{}
	}
	srv := &Server{
		cfg: cfg, log: log, clientTLS: ct, upstreamTLS: ut, deps: deps, classifier: parser.NewClassifier(),
		sessions: map[*session]struct{}{},
		authKey:  sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) }),
	}
	srv.prof, err = profiling.New(profiling.Options{Registry: deps.Registry, Store: deps.Snapshots, Metrics: deps.Metrics,
		Log: log, Symbols: deps.Symbols, SymbolPath: deps.SymbolPath, IsCompute: deps.IsCompute,
		MaxDumps: cfg.MaxDumps, MaxHeldDumps: cfg.MaxHeldDumps, Timeout: cfg.Timeouts.Admin, MaxDumpBytes: deps.MaxDumpBytes,
		SymbolServers: deps.SymbolServers, SymbolCacheDir: deps.SymbolCacheDir,
		SymbolCacheMaxBytes: deps.SymbolCacheMaxBytes, SymbolServerTimeout: deps.SymbolServerTimeout})
	if err != nil {
		return nil, err
	}
	srv.ctx, srv.cancel = context.WithCancelCause(context.Background())
	srv.started = time.Now()
	pending := cfg.MaxPendingLogins
	if pending == 0 {
		pending = defaultMaxPendingLogins
	}
	srv.logins = make(chan struct{}, pending)
	srv.maxConns = cfg.MaxConnections
	if srv.maxConns == 0 {
		srv.maxConns = defaultMaxConnections
	}
	if !cfg.embedded() {
		n := cfg.EventLoops
		if n == 0 {
			n = runtime.NumCPU()
		}
		srv.loops, err = relay.NewLoops(n, relay.Options{
			Closing:   srv.isClosing,
			Forwarded: func() { srv.deps.Metrics.Statement("forwarded") },
			LogError:  func(err error) { log.Error("event loop stopped", zap.Error(err)) },
		})
		if err != nil {
			return nil, err
		}
	}
	return srv, nil
}

// Listen binds the configured address.
func (s *Server) Listen() error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	s.ln = ln
	return nil
}

// Addr is the bound address (useful with port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve accepts clients until Shutdown.
func (s *Server) Serve() error {
	mode := "upstream " + s.cfg.Upstream
	if s.cfg.embedded() {
		mode = "embedded default (no upstream)"
	}
	s.log.Info("listening", zap.String("addr", s.ln.Addr().String()), zap.String("mode", mode))
	for _, sc := range s.cfg.Schedules {
		if err := s.prof.Schedule(sc.Node, sc.Every); err != nil {
			return err
		}
	}
	var delay time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if s.isClosing() {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("accept: %w", err)
		}
		delay = 0
		sess := newSession(s, c, s.nextID.Add(1))
		switch s.track(sess) {
		case trackClosing:
			c.Close()
			return nil
		case trackFull:
			go s.refuse(c)
			continue
		}
		go func() {
			defer s.untrack(sess)
			// A bug that panics ends its session, not every session.
			defer func() {
				if r := recover(); r != nil {
					s.log.Error("session panicked; closed", zap.Uint32("conn", sess.id), zap.Any("panic", r), zap.Stack("stack"))
					s.deps.Metrics.Error("panic")
				}
			}()
			sess.run()
		}()
	}
}

func (s *Server) isClosing() bool { return s.closing.Load() }

// The outcomes of track.
const (
	trackOK = iota
	trackClosing
	trackFull
)

func (s *Server) track(sess *session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing.Load() {
		return trackClosing
	}
	if len(s.sessions) >= s.maxConns {
		return trackFull
	}
	s.sessions[sess] = struct{}{}
	s.wg.Add(1)
	return trackOK
}

// refuse answers a connection over max_connections as MySQL does: ERR 1040
// in place of the greeting, then close.
func (s *Server) refuse(c net.Conn) {
	defer c.Close()
	s.log.Warn("connection refused: max_connections reached", zap.String("client", c.RemoteAddr().String()),
		zap.Int("max_connections", s.maxConns))
	s.deps.Metrics.Error("max_connections")
	c.SetWriteDeadline(time.Now().Add(s.cfg.Timeouts.Handshake))
	pc := mysqlwire.NewConn(relay.FastConn(c))
	if pc.WritePacket(mysqlwire.ErrPacket(&mysql.MyError{Code: mysql.ER_CON_COUNT_ERROR, State: "08004",
		Message: fmt.Sprintf("Too many connections: heapproxy serves at most %d (max_connections)", s.maxConns)})) == nil {
		pc.Flush()
	}
}

func (s *Server) untrack(sess *session) {
	s.mu.Lock()
	delete(s.sessions, sess)
	s.mu.Unlock()
	s.wg.Done()
}

// Shutdown stops accepting, closes idle sessions at once and lets running
// statements finish until ctx ends; then it closes what is left.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing.Store(true)
	live := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		live = append(live, sess)
	}
	s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
	}
	s.log.Info("shutting down", zap.Int("sessions", len(live)))
	s.prof.StopSchedules()
	for _, sess := range live {
		sess.interruptIfIdle()
	}
	s.loops.Close()
	done := make(chan struct{})
	go func() { s.wg.Wait(); s.loops.Stop(); close(done) }()
	select {
	case <-done:
		s.cancel(errShutdown)
		s.prof.Close()
		return nil
	case <-ctx.Done():
		// The grace is over: stop what runs (dumps, SQL) and close.
		s.cancel(errShutdown)
		s.prof.Close()
		s.loops.Stop() // sessions in a loop come back and end
		s.mu.Lock()
		for sess := range s.sessions {
			sess.closeConns()
		}
		s.mu.Unlock()
		select {
		case <-done:
		case <-time.After(shutdownMargin):
			s.log.Warn("shutdown: sessions still running after their statements were cancelled; leaving them",
				zap.Duration("margin", shutdownMargin))
		}
		return fmt.Errorf("shutdown: closed sessions still running: %w", ctx.Err())
	}
}

// shutdownMargin is how long Shutdown waits, after the grace, for
// cancelled statements to notice before it returns anyway: the process
// exits within timeouts.shutdown plus this.
const shutdownMargin = 2 * time.Second

// liveSessionCount is how many sessions are open (COM_STATISTICS' Threads).
func (s *Server) liveSessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// sessionList is the live sessions, by id.
func (s *Server) sessionList() []*session {
	s.mu.Lock()
	list := make([]*session, 0, len(s.sessions))
	for sess := range s.sessions {
		list = append(list, sess)
	}
	s.mu.Unlock()
	slices.SortFunc(list, func(a, b *session) int { return cmp.Compare(a.id, b.id) })
	return list
}

// sessionByID finds a live session (KILL).
func (s *Server) sessionByID(id uint32) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	for sess := range s.sessions {
		if sess.id == id {
			return sess
		}
	}
	return nil
}
