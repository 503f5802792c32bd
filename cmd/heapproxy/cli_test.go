package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
	out  []byte
	// heads: git's HEAD before and after the build (none outside a git
	// work tree); dirty: the work tree had changes before it.
	heads []string
	dirty bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// heapproxyBinary builds the binary once for the tests that run it as a
// user does.
func heapproxyBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "heapproxy-cli-test"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "heapproxy")
		head := func() {
			if out, err := exec.Command("git", "rev-parse", "HEAD").Output(); err == nil {
				built.heads = append(built.heads, strings.TrimSpace(string(out)))
			}
		}
		head()
		status, _ := exec.Command("git", "status", "--porcelain").Output()
		built.dirty = len(status) > 0
		// -buildvcs=auto: stamp the revision as a user's go build does,
		// whatever GOFLAGS says.
		built.out, built.err = exec.Command("go", "build", "-buildvcs=auto", "-o", built.bin, ".").CombinedOutput()
		head()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// runBinary runs heapproxy with args and returns its stdout, stderr and
// exit status; a command that would start the server is stopped after 30 s.
func runBinary(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, heapproxyBinary(t), args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("heapproxy %s still ran after 30 s (started the server?)\nstderr:\n%s", strings.Join(args, " "), stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// What a new user types first: help, version, a typo, a subcommand's -h.
func TestCommandLine(t *testing.T) {
	serverFlags := []string{"--config FILE", "--listen HOST:PORT", "--upstream", "--data-dir", "--http", "--log-level", "--event-loops", "--version"}
	commands := []string{"\n  dot ", "\n  text ", "\n  folded ", "\n  flamegraph ", "\n  proto ", "\n  version ", "\n  help "}
	usage := append(append([]string{}, serverFlags...), commands...)
	dotFlags := []string{"usage: heapproxy dot [flags] BINARY PROFILE", "--base PROFILE", "--nodecount N", "--nodefraction", "--edgefraction", "--maxdegree", "--inuse_objects", "--symbol-path DIR"}
	for _, c := range []struct {
		name       string
		args       []string
		code       int
		stdout     []string // each must appear
		stderr     []string
		notStdout  []string // none may appear
		emptyOther bool     // the stream not checked is empty
	}{
		{name: "help", args: []string{"help"}, stdout: usage, emptyOther: true},
		{name: "--help", args: []string{"--help"}, stdout: usage, emptyOther: true},
		{name: "-h", args: []string{"-h"}, stdout: usage, emptyOther: true},
		{name: "-h among flags", args: []string{"--listen", "127.0.0.1:0", "-h"}, stdout: usage, emptyOther: true},
		{name: "unknown command", args: []string{"foo"}, code: 2,
			stderr: append([]string{`heapproxy: unknown command "foo" (commands: dot, text, folded, flamegraph, proto, version, help)`}, usage...)},
		{name: "argument after flags", args: []string{"--listen", "127.0.0.1:0", "foo"}, code: 2,
			stderr: append([]string{`heapproxy: unexpected argument "foo"`}, usage...)},
		{name: "unknown flag", args: []string{"--listen-addr", "127.0.0.1:0"}, code: 2,
			stderr: append([]string{"heapproxy: unknown flag --listen-addr\n"}, usage...)},
		{name: "bad flag value", args: []string{"--event-loops", "many"}, code: 2,
			stderr: []string{`heapproxy: invalid value "many" for --event-loops`, "--listen HOST:PORT"}},
		{name: "help dot", args: []string{"help", "dot"}, stdout: dotFlags, notStdout: []string{"--listen", "--upstream"}, emptyOther: true},
		{name: "dot -h", args: []string{"dot", "-h"}, stdout: dotFlags, notStdout: []string{"--listen", "--upstream"}, emptyOther: true},
		{name: "dot --help after arguments", args: []string{"dot", "bin", "prof", "--help"}, stdout: dotFlags, emptyOther: true},
		{name: "text -h", args: []string{"text", "-h"}, stdout: []string{"usage: heapproxy text", "--base", "--nodecount N", "accepted for jeprof command lines"}, emptyOther: true},
		{name: "proto -h", args: []string{"proto", "-h"}, stdout: []string{"usage: heapproxy proto", "--symbol-path DIR"},
			notStdout: []string{"--nodecount", "--nodefraction", "--edgefraction", "--maxdegree", "--base", "--inuse_objects", "--listen"}, emptyOther: true},
		{name: "help folded", args: []string{"help", "folded"}, stdout: []string{"usage: heapproxy folded", "--base", "--inuse_objects", "--symbol-path"},
			notStdout: []string{"--nodecount", "--nodefraction", "--edgefraction", "--maxdegree", "--listen"}, emptyOther: true},
		{name: "help flamegraph", args: []string{"help", "flamegraph"}, stdout: []string{"usage: heapproxy flamegraph", "--base"},
			notStdout: []string{"--nodecount", "--listen"}, emptyOther: true},
		{name: "help version", args: []string{"help", "version"}, stdout: []string{"usage: heapproxy version"}, emptyOther: true},
		{name: "help unknown", args: []string{"help", "foo"}, code: 2, stderr: []string{`unknown command "foo"`}},
		{name: "DOT flag on proto", args: []string{"proto", "bin", "prof", "--nodecount", "3"}, code: 2,
			stderr: []string{"heapproxy: proto has no --nodecount (a flag of dot and text)\n", "usage: heapproxy proto"}},
		{name: "unknown render flag", args: []string{"folded", "--cum", "bin", "prof"}, code: 2,
			stderr: []string{"heapproxy: unknown flag --cum\n", "usage: heapproxy folded"}},
		{name: "dot without PROFILE", args: []string{"dot", "bin"}, code: 2,
			stderr: []string{`heapproxy: dot: missing PROFILE after BINARY "bin"`, "usage: heapproxy dot", "--nodecount"}},
		{name: "dot without arguments", args: []string{"dot"}, code: 2, stderr: []string{"heapproxy: dot: missing BINARY and PROFILE"}},
		{name: "dot with three", args: []string{"dot", "a", "b", "c"}, code: 2, stderr: []string{"heapproxy: dot: want BINARY and PROFILE, got 3 arguments (a b c)"}},
		{name: "flag value missing", args: []string{"dot", "a", "b", "--nodecount"}, code: 2, stderr: []string{"heapproxy: flag --nodecount needs a value\n"}},
		{name: "dot on missing files", args: []string{"dot", "nobin", "noprof", "--nodecount", "3"}, code: 1,
			stderr: []string{"heapproxy: open noprof: no such file or directory\n"}},
		{name: "version with argument", args: []string{"version", "x"}, code: 2, stderr: []string{`version takes no arguments, got "x"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runBinary(t, c.args...)
			if code != c.code {
				t.Fatalf("heapproxy %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(c.args, " "), code, c.code, stdout, stderr)
			}
			for _, w := range c.stdout {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
			for _, w := range c.notStdout {
				if strings.Contains(stdout, w) {
					t.Errorf("stdout has %q:\n%s", w, stdout)
				}
			}
			for _, w := range c.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if c.emptyOther && stderr != "" {
				t.Errorf("stderr: %s", stderr)
			}
			if c.code != 0 && stdout != "" {
				t.Errorf("a failure printed on stdout: %s", stdout)
			}
		})
	}
}

// heapproxy version and --version name the module, the revision the binary
// was built from (dirty when the work tree was) and the Go version.
func TestVersion(t *testing.T) {
	heapproxyBinary(t)
	for _, args := range [][]string{{"version"}, {"--version"}, {"--listen", "127.0.0.1:0", "--version"}} {
		stdout, stderr, code := runBinary(t, args...)
		if code != 0 || stderr != "" {
			t.Fatalf("heapproxy %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		for _, w := range []string{"heapproxy ", "\nmodule    github.com/heapproxy/heapproxy\n", "\ngo        " + runtime.Version() + " "} {
			if !strings.Contains(stdout, w) {
				t.Errorf("heapproxy %s lacks %q:\n%s", strings.Join(args, " "), w, stdout)
			}
		}
		_, rev, _ := strings.Cut(stdout, "\nrevision  ")
		rev, _, _ = strings.Cut(rev, "\n")
		switch {
		case len(built.heads) == 0: // not built in a git work tree
			if rev != "unknown (built without VCS information)" {
				t.Errorf("built outside git, revision %q", rev)
			}
		case !strings.HasPrefix(rev, built.heads[0]+" (") && !strings.HasPrefix(rev, built.heads[len(built.heads)-1]+" ("):
			t.Errorf("revision %q, want git's HEAD %s", rev, built.heads)
		case strings.HasSuffix(rev, ", dirty: built with uncommitted changes") != built.dirty:
			t.Errorf("revision %q, but the work tree dirty: %v", rev, built.dirty)
		}
	}
}

// Flags after BINARY and PROFILE work as before them.
func TestRenderFlagsAfterArguments(t *testing.T) {
	bin, heaps := buildProfiled(t, "templates.cc", "g++", 1)
	dot := func(args ...string) string {
		t.Helper()
		stdout, stderr, code := runBinary(t, append([]string{"dot"}, args...)...)
		if code != 0 {
			t.Fatalf("heapproxy dot %s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		return stdout
	}
	before := dot("--nodecount", "3", bin, heaps[0])
	if full := dot(bin, heaps[0]); before == full {
		t.Fatal("--nodecount 3 changed nothing: the test proves nothing")
	}
	for _, args := range [][]string{
		{bin, heaps[0], "--nodecount", "3"},
		{bin, "--nodecount=3", heaps[0]},
		{"--nodecount", "3", "--", bin, heaps[0]},
	} {
		if got := dot(args...); got != before {
			t.Errorf("heapproxy dot %s differs from dot --nodecount 3 BINARY PROFILE", strings.Join(args, " "))
		}
	}
}

// Logged durations are strings: "every":"2s", not 2.
func TestLogDurationsAsStrings(t *testing.T) {
	conf := filepath.Join(t.TempDir(), "heapproxy.yaml")
	if err := os.WriteFile(conf, []byte("schedules: [{node: 1, every: 2s}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(heapproxyBinary(t), "--config", conf, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan map[string]any, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "snapshot schedule started" {
				found <- line
				return
			}
		}
	}()
	select {
	case line := <-found:
		if line["every"] != "2s" {
			t.Fatalf(`"every" is %#v, want "2s": %v`, line["every"], line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal(`no "snapshot schedule started" line in 30 s`)
	}
}

// make run passes ARGS to the server: here the HTTP view and a data
// directory of the test's own.
func TestMakeRunArgs(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bin, err := filepath.Rel(root, dir) // the Makefile runs ./$(BIN)/heapproxy
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-s", "-C", root, "run", "BIN="+bin, "LISTEN=127.0.0.1:0",
		"ARGS=--http 127.0.0.1:0 --data-dir "+filepath.Join(dir, "data"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // make and the heapproxy it starts
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	addrs := make(chan [2]string, 4)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				addrs <- [2]string{line.Msg, line.Addr}
			}
		}
		close(addrs)
	}()
	got := map[string]string{}
	deadline := time.After(120 * time.Second) // make builds the binary first
	for got["listening"] == "" || got["http listening"] == "" {
		select {
		case a, ok := <-addrs:
			if !ok {
				t.Fatalf("make run ended; listening on %v", got)
			}
			got[a[0]] = a[1]
		case <-deadline:
			t.Fatalf("make run: listening on %v after 120 s, want the MySQL port and the HTTP view", got)
		}
	}
	resp, err := http.Get("http://" + got["http listening"] + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/healthz: %s", resp.Status)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); err != nil {
		t.Fatalf("--data-dir from ARGS: %v", err)
	}
}
