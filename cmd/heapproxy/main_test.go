package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// startBinaryAddrs builds heapproxy, runs it with args and waits for n
// listening log lines ("listening", "http
// listening") and returns their addresses by message.
func startBinaryAddrs(t *testing.T, n int, args ...string) (map[string]string, *exec.Cmd) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "heapproxy")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return startAddrs(t, n, exec.Command(bin, args...))
}

// startAddrs starts cmd, a heapproxy server, and returns the addresses of
// its first n listening log lines by message.
func startAddrs(t *testing.T, n int, cmd *exec.Cmd) (map[string]string, *exec.Cmd) {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan [2]string, 4)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			var line struct{ Msg, Addr string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Addr != "" {
				lines <- [2]string{line.Msg, line.Addr}
			}
		}
	}()
	addrs := map[string]string{}
	for len(addrs) < n {
		select {
		case l := <-lines:
			addrs[l[0]] = l[1]
		case <-time.After(30 * time.Second):
			t.Fatalf("heapproxy logged %d of %d listen addresses", len(addrs), n)
		}
	}
	return addrs, cmd
}

// graphvizAccepts renders a DOT graph with Graphviz's dot -Tsvg.
func graphvizAccepts(t *testing.T, graph string) {
	t.Helper()
	dot := exec.Command("dot", "-Tsvg")
	dot.Stdin = strings.NewReader(graph)
	if svg, err := dot.Output(); err != nil || !bytes.Contains(svg, []byte("<svg")) {
		t.Fatalf("dot -Tsvg: %v", err)
	}
}

// The README's first command: heapproxy on the embedded default answers
// ADMIN EXECUTE on its built-in node with a DOT graph Graphviz accepts, and
// SIGTERM stops it cleanly.
func TestEmbeddedDefaultDumpDOT(t *testing.T) {
	addrs, cmd := startBinaryAddrs(t, 2, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(), "--http", "127.0.0.1:0")
	addr := addrs["listening"]
	host, port, _ := strings.Cut(addr, ":")
	mariadb := func(sql string) (string, error) {
		out, err := exec.Command("mariadb", "--no-defaults", "-h", host, "-P", port, "-uroot", "-N", "-r", "-e", sql).CombinedOutput()
		return string(out), err
	}
	out, err := mariadb("SHOW FRONTENDS")
	if err != nil || !strings.HasPrefix(out, "1\tlocalhost\t") || !strings.Contains(out, "heapproxy\tbuiltin") {
		t.Fatalf("SHOW FRONTENDS: %v\n%s", err, out)
	}
	if out, err := mariadb("ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().has_enable())'"); err != nil || out != "true\n" {
		t.Fatalf("has_enable: %v %q", err, out)
	}
	out, err = mariadb("ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().dump_dot_snapshot())'")
	if err != nil || !strings.HasPrefix(out, "digraph \"heapproxy-node-1; ") || !strings.Contains(out, `\lTotal MB: `) {
		t.Fatalf("dump_dot_snapshot: %v\n%s", err, out)
	}
	graphvizAccepts(t, out)
	// The dump is a snapshot the HTTP view lists; /metrics counted it.
	get := func(path string) string {
		resp, err := http.Get("http://" + addrs["http listening"] + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %s\n%s", path, resp.Status, b)
		}
		return string(b)
	}
	// The answer goes out before the snapshot is stored (the README's
	// contract): the list shows it once the background save ends.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		page := get("/")
		if strings.Contains(page, "heap_profile.1.") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("snapshot list page lacks the dump 20 s after it was answered:\n%s", page)
		}
	}
	if m := get("/metrics"); !strings.Contains(m, `kind="heapproxy"`) {
		t.Fatalf("metrics lack the dump:\n%s", m)
	}
	if h := get("/healthz"); h != "ok" {
		t.Fatalf("healthz: %q", h)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("heapproxy did not exit after SIGTERM")
	}
}

// The capture stores a dump's format by the name backends gives it; the
// HTTP view tells a graph-only snapshot by the store's name for it
// (snapshot does not import backends). They must agree.
func TestDOTFormatName(t *testing.T) {
	if got := backends.FormatDOT.String(); got != snapshot.FormatDOT {
		t.Errorf("backends.FormatDOT is %q, snapshot.FormatDOT %q", got, snapshot.FormatDOT)
	}
}

// A configuration file with an unknown key is refused with its name.
func TestConfigErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ yaml, want string }{
		{"listen: 127.0.0.1:0\nlisten_addr: x\n", `unknown key "listen_addr" at line 2`},
		{"nodes:\n  - {id: 5, kind: mysql, host: h, http_port: 1}\n", "unknown node kind"},
		{"nodes:\n  - {id: 1, kind: tikv, host: h, http_port: 1}\n", "id 1 is used twice"},
		{"users:\n  - {name: a, password_hash: nothex}\n", "password_hash must be"},
	} {
		f := filepath.Join(dir, "c.yaml")
		os.WriteFile(f, []byte(c.yaml), 0o600)
		err := run([]string{"--config", f})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.yaml, err, c.want)
		}
	}
}

// Every YAML example in the README is a configuration heapproxy accepts.
func TestREADMEConfigExamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := strings.Split(string(readme), "```yaml\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("no yaml examples in README.md")
	}
	for i, b := range blocks {
		b, _, _ = strings.Cut(b, "```")
		f := filepath.Join(t.TempDir(), "example.yaml")
		os.WriteFile(f, []byte(b), 0o600)
		cfg := defaultFileConfig()
		if err := loadConfig(f, &cfg); err != nil {
			t.Errorf("README yaml example %d: %v", i+1, err)
			continue
		}
		if _, _, err := cfg.nodes(); err != nil {
			t.Errorf("README yaml example %d: %v", i+1, err)
		}
	}
}

// SIGTERM while a heavy heapprof query runs: heapproxy exits within
// timeouts.shutdown plus a small margin, cancelling the query, and frees
// the store so that a restart on the same directory starts.
func TestSIGTERMCancelsRunningWork(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(t.TempDir(), "heapproxy.yaml")
	if err := os.WriteFile(conf, []byte("self_profile_active: true\ntimeouts: {shutdown: 1s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs, cmd := startBinaryAddrs(t, 1, "--config", conf, "--listen", "127.0.0.1:0", "--data-dir", dir)
	host, port, _ := strings.Cut(addrs["listening"], ":")
	mariadb := func(sql string) *exec.Cmd {
		return exec.Command("mariadb", "--no-defaults", "-h", host, "-P", port, "-uroot", "-N", "-e", sql)
	}
	for range 3 {
		if out, err := mariadb("ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().snapshot())'").CombinedOutput(); err != nil {
			t.Fatalf("snapshot: %v\n%s", err, out)
		}
	}
	heavy := mariadb(`SELECT COUNT(*) FROM heapprof.functions a, heapprof.functions b, heapprof.functions c,
heapprof.functions d, heapprof.functions e, heapprof.functions f`)
	if err := heavy.Start(); err != nil {
		t.Fatal(err)
	}
	defer heavy.Process.Kill()
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(15 * time.Second): // timeouts.shutdown 1 s, a 2 s margin, and slack for a loaded machine
		t.Fatal("heapproxy still runs 15 s after SIGTERM with timeouts.shutdown 1s")
	}
	heavy.Wait()
	addrs, _ = startBinaryAddrs(t, 1, "--listen", "127.0.0.1:0", "--data-dir", dir)
	if addrs["listening"] == "" {
		t.Fatal("restart on the same data directory did not listen")
	}
}
