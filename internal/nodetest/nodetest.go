// Package nodetest builds and runs the test node programs of testdata/:
// jenode, a real jemalloc node that answers with the heap-profiling
// routes of each product heapproxy drives (and, on request, as one
// release of one product), and gonode, a Go service serving
// net/http/pprof. Every package whose tests talk to a node builds the
// programs here once per test binary (from TestMain) and starts them
// here, so the build commands, the start-up handshake and the shutdown
// live in one place.
package nodetest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MALLOC_CONF values for jenode: profiling compiled in and sampling every
// 1 KiB, so a short test sees its allocations.
const (
	// ProfInactive leaves profiling off until a driver switches it on
	// (the products' default).
	ProfInactive = "prof:true,prof_active:false,lg_prof_sample:10"
	// ProfActive profiles from the start, as a node started with
	// MALLOC_CONF=prof:true.
	ProfActive = "prof:true,prof_active:true,lg_prof_sample:10"
)

// startTimeout bounds how long a node may take to print its address.
const startTimeout = 20 * time.Second

// Programs are the node programs Build compiled.
type Programs struct {
	Jenode string // testdata/jenode built with -O1 -g -rdynamic
	Gonode string // testdata/gonode

	dir string
}

// Build compiles jenode and gonode into a new temporary directory, which
// Remove deletes. It needs cc and Debian's libjemalloc-dev, and go.
func Build() (*Programs, error) {
	dir, err := os.MkdirTemp("", "heapproxy-nodes-")
	if err != nil {
		return nil, fmt.Errorf("node programs: %w", err)
	}
	p := &Programs{Jenode: filepath.Join(dir, "jenode"), Gonode: filepath.Join(dir, "gonode"), dir: dir}
	if err := BuildJenode(p.Jenode, "-O1"); err != nil {
		p.Remove()
		return nil, err
	}
	if err := BuildGonode(p.Gonode); err != nil {
		p.Remove()
		return nil, err
	}
	return p, nil
}

// Remove deletes the programs.
func (p *Programs) Remove() { os.RemoveAll(p.dir) }

// BuildJenode compiles testdata/jenode to out with the build command in
// jenode.c, at optimisation level opt ("-O1" as there; "-O2" gives
// another build-id). -rdynamic exports the jenode_* functions so the
// node's dladdr symbolizer can name them.
func BuildJenode(out, opt string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	src := filepath.Join(root, "testdata", "jenode", "jenode.c")
	cc := exec.Command("cc", opt, "-g", "-rdynamic", "-o", out, src, "-ljemalloc")
	if b, err := cc.CombinedOutput(); err != nil {
		return fmt.Errorf("build jenode (needs cc and libjemalloc-dev): %w\n%s", err, b)
	}
	return nil
}

// BuildGonode compiles testdata/gonode to out.
func BuildGonode(out string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	gob := exec.Command("go", "build", "-o", out, "./testdata/gonode")
	gob.Dir = root
	if b, err := gob.CombinedOutput(); err != nil {
		return fmt.Errorf("build gonode: %w\n%s", err, b)
	}
	return nil
}

// repoRoot is the repository's top directory, the first above the working
// directory (a test runs in its package's) that holds testdata/jenode.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find testdata: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "testdata", "jenode", "jenode.c")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("find testdata: no testdata/jenode/jenode.c above the working directory")
		}
		dir = up
	}
}

// Jenode says how to run jenode. The zero value is a node serving every
// product's newest routes, profiling inactive.
type Jenode struct {
	// MallocConf is jemalloc's MALLOC_CONF; "" is ProfInactive.
	MallocConf string
	// Product and Version choose a release personality (--product
	// tikv|greptimedb|databend, --version 7.5, 0.9, release, ...; the
	// releases are listed in jenode.c).
	Product, Version string
	// Auth ("user:password") makes it a Doris with enable_all_http_auth.
	Auth string
	// Args are more jenode flags (--doris-legacy, --slow-dump-ms N,
	// --heap-profiling off, or a personality spelled as flags).
	Args []string
}

// StartJenode runs the jenode binary bin (Programs.Jenode or a copy of
// it) on a free loopback port, dumping into a fresh temporary directory,
// and returns where it listens. It is killed when the test ends.
func StartJenode(t testing.TB, bin string, opt Jenode) (host string, port int) {
	t.Helper()
	conf := opt.MallocConf
	if conf == "" {
		conf = ProfInactive
	}
	tmp := t.TempDir()
	args := []string{"--port", "0", "--dump-dir", tmp}
	for _, f := range []struct{ flag, value string }{
		{"--product", opt.Product}, {"--version", opt.Version}, {"--auth", opt.Auth},
	} {
		if f.value != "" {
			args = append(args, f.flag, f.value)
		}
	}
	return start(t, []string{"MALLOC_CONF=" + conf, "TMPDIR=" + tmp}, bin, append(args, opt.Args...)...)
}

// StartGonode runs the gonode binary bin on a free loopback port and
// returns where it listens. It is killed when the test ends.
func StartGonode(t testing.TB, bin string) (host string, port int) {
	t.Helper()
	return start(t, nil, bin, "-addr", "127.0.0.1:0")
}

// start runs a node program with env added to the test's environment and
// reads the "... listening on host:port" line both programs print once
// they serve.
func start(t testing.TB, env []string, bin string, args ...string) (string, int) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	dieWithParent(cmd)
	// The kernel sends the parent-death signal when the thread that
	// started the child ends, not the process, and Go ends threads: the
	// node is started from a locked thread that waits for it.
	started, exited := make(chan error, 1), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(exited)
	}()
	err = <-started
	w.Close() // the node holds the write end now
	if err != nil {
		r.Close()
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	lines := make(chan string, 1)
	go func() {
		defer r.Close()
		sc := bufio.NewScanner(r)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, r)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("%s exited before listening", bin)
		}
		host, p, err := net.SplitHostPort(line[strings.LastIndexByte(line, ' ')+1:])
		if err != nil {
			t.Fatalf("%s printed %q: %v", bin, line, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("%s printed %q: %v", bin, line, err)
		}
		return host, port
	case <-time.After(startTimeout):
		t.Fatalf("%s did not listen within %s", bin, startTimeout)
	}
	return "", 0
}
