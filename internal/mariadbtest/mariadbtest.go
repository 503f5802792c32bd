// Package mariadbtest runs a throwaway MariaDB server for tests: Debian's
// mariadbd on a fresh data directory in a temporary directory, reachable
// on a unix socket there and, when asked, on a free loopback TCP port.
// Every package whose tests compare with or forward to a real MariaDB
// starts it here, so the server options and the shutdown live in one place.
package mariadbtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql" // the DSNs are its
)

// Options says how to run the server.
type Options struct {
	// TCP makes the server listen on 127.0.0.1 at a free port as well as
	// on its socket.
	TCP bool
	// Args are more mariadbd options ("--max-allowed-packet=256M", TLS
	// files, a collation, ...); later options win over the defaults.
	Args []string
	// Env is added to mariadbd's environment (LD_PRELOAD of an allocator
	// to profile the server, MALLOC_CONF, ...).
	Env []string
}

// Server is a running MariaDB. root has no password; the socket lives in
// Dir, which Stop removes.
type Server struct {
	Dir    string
	Socket string
	Addr   string // 127.0.0.1:port, "" without Options.TCP

	env    []string
	cmd    *exec.Cmd
	exited chan struct{}
}

// Start installs a data directory and starts mariadbd on it, and returns
// once root can connect (at most a minute). The server is killed if the
// test binary dies without calling Stop (a test timeout runs no cleanup).
func Start(opt Options) (*Server, error) {
	dir, err := os.MkdirTemp("", "heapproxy-mariadb-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, Socket: filepath.Join(dir, "sock"), env: opt.Env}
	if err := s.start(opt); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(opt Options) error {
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"}
	}
	data, tmp := filepath.Join(s.Dir, "data"), filepath.Join(s.Dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return err
	}
	// A temporary directory of its own: servers bootstrapping at once in a
	// shared /tmp delete each other's temporary tables (two test packages
	// starting together failed 'Unknown table mysql.tmp_user_sys').
	install := exec.Command("mariadb-install-db", append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db", "--tmpdir=" + tmp}, asRoot...)...)
	if out, err := install.CombinedOutput(); err != nil {
		return fmt.Errorf("mariadb-install-db: %v\n%s", err, out)
	}
	args := append([]string{"--no-defaults", "--datadir=" + data, "--tmpdir=" + tmp, "--socket=" + s.Socket,
		"--pid-file=" + filepath.Join(s.Dir, "pid"), "--log-error=" + s.logFile(),
		"--innodb-buffer-pool-size=32M"}, asRoot...)
	if !opt.TCP {
		return s.launch(append(append(args, "--skip-networking"), opt.Args...))
	}
	// A free port can be taken by someone else before mariadbd binds it
	// (test packages run in parallel); then it exits and another is tried.
	for attempt := 1; ; attempt++ {
		port, err := FreePort()
		if err != nil {
			return err
		}
		s.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		err = s.launch(append(append(args, fmt.Sprintf("--port=%d", port), "--bind-address=127.0.0.1"), opt.Args...))
		if err == nil || attempt == 3 || !errors.Is(err, errExited) || !strings.Contains(s.Log(), "Address already in use") {
			return err
		}
	}
}

// errExited is launch's error when mariadbd ends before it answers.
var errExited = errors.New("mariadbd exited")

// launch starts mariadbd with args and waits until root can connect (at
// most a minute).
func (s *Server) launch(args []string) error {
	s.cmd, s.exited = exec.Command("mariadbd", args...), make(chan struct{})
	if len(s.env) > 0 {
		s.cmd.Env = append(os.Environ(), s.env...)
	}
	dieWithParent(s.cmd)
	// The kernel sends the parent-death signal when the thread that
	// started the child ends, not the process, and Go ends threads (one an
	// event loop locked and left, for instance). So mariadbd is started
	// from a locked thread that waits for it.
	cmd, exited := s.cmd, s.exited
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		s.cmd = nil
		return fmt.Errorf("start mariadbd: %w", err)
	}

	db, err := sql.Open("mysql", s.DSN("root", "", ""))
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("%w:\n%s", errExited, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("mariadbd does not answer on %s: %v\n%s", s.Socket, err, s.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DSN is a go-sql-driver/mysql data source name for the server's socket;
// append "?param=value" for driver parameters.
func (s *Server) DSN(user, password, database string) string {
	return fmt.Sprintf("%s:%s@unix(%s)/%s", user, password, s.Socket, database)
}

// Stop shuts the server down cleanly (SIGTERM), kills it after 30 s, and
// removes its directory.
func (s *Server) Stop() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.cmd.Process.Kill()
			<-s.exited
		}
	}
	os.RemoveAll(s.Dir)
}

// PID is the running server's process id.
func (s *Server) PID() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Log is the server's error log so far.
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logFile())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err.Error()
	}
	return string(b)
}

func (s *Server) logFile() string { return filepath.Join(s.Dir, "error.log") }

// FreePort returns a loopback port nothing listens on (yet).
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Scan reads the rest of rows' current result set with every value as
// text (NULL is !Valid), for tests that compare answers as a client
// prints them.
func Scan(rows *sql.Rows) ([][]sql.NullString, error) {
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]sql.NullString
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return out, err
		}
		out = append(out, vals)
	}
	return out, rows.Err()
}
