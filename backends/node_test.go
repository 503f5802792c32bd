package backends

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Binaries built once by TestMain from testdata/ with the real toolchains.
var (
	jenodeBin string
	gonodeBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "backends-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "temp dir:", err)
		os.Exit(1)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		jenodeBin = filepath.Join(dir, "jenode")
		// The build command of testdata/jenode/jenode.c; needs Debian's
		// libjemalloc-dev.
		cc := exec.Command("cc", "-O1", "-g", "-rdynamic", "-o", jenodeBin,
			filepath.Join("..", "testdata", "jenode", "jenode.c"), "-ljemalloc")
		if out, err := cc.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build jenode (needs cc and libjemalloc-dev): %v\n%s", err, out)
			return 1
		}
		gonodeBin = filepath.Join(dir, "gonode")
		gob := exec.Command("go", "build", "-o", gonodeBin, "../testdata/gonode")
		if out, err := gob.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "build gonode: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	os.Exit(code)
}

// startProc runs a test node and reads its "... listening on host:port"
// line. The process is killed when the test ends.
func startProc(t testing.TB, env []string, bin string, args ...string) (host string, port int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("%s exited before listening", bin)
		}
		addr := line[strings.LastIndex(line, " ")+1:]
		h, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%s printed %q: %v", bin, line, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil {
			t.Fatal(err)
		}
		return h, port
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not start listening within 20s", bin)
	}
	return "", 0
}

// startJenode starts the real jemalloc node with profiling compiled in and
// inactive, sampling every 1 KiB.
func startJenode(t testing.TB, args ...string) (host string, port int) {
	t.Helper()
	return startJenodeConf(t, "prof:true,prof_active:false,lg_prof_sample:10", args...)
}

// startJenodeConf starts jenode with the given MALLOC_CONF.
func startJenodeConf(t testing.TB, mallocConf string, args ...string) (host string, port int) {
	t.Helper()
	tmp := t.TempDir()
	env := []string{"MALLOC_CONF=" + mallocConf, "TMPDIR=" + tmp}
	return startProc(t, env, jenodeBin, append([]string{"--port", "0", "--dump-dir", tmp}, args...)...)
}

func startGonode(t *testing.T) (host string, port int) {
	t.Helper()
	return startProc(t, nil, gonodeBin, "-addr", "127.0.0.1:0")
}

// nodeHTTP makes a test-side call to a node (not through a driver).
func nodeHTTP(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// requestCount reads jenode's per-path request counter.
func requestCount(t *testing.T, base, path string) int {
	t.Helper()
	_, stats := nodeHTTP(t, http.MethodGet, base+"/stats", "")
	for _, line := range strings.Split(stats, "\n") {
		if p, n, ok := strings.Cut(line, " "); ok && p == path {
			v, err := strconv.Atoi(n)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	return 0
}
