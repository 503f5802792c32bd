package backends

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/internal/nodetest"
)

// progs are the node programs of testdata/, built once by TestMain.
var progs *nodetest.Programs

func TestMain(m *testing.M) {
	p, err := nodetest.Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	progs = p
	code := m.Run()
	p.Remove()
	os.Exit(code)
}

// startJenode starts the real jemalloc node with profiling compiled in and
// inactive, sampling every 1 KiB; args are more jenode flags.
func startJenode(t testing.TB, args ...string) (host string, port int) {
	t.Helper()
	return nodetest.StartJenode(t, progs.Jenode, nodetest.Jenode{Args: args})
}

// startJenodeConf starts jenode with the given MALLOC_CONF.
func startJenodeConf(t testing.TB, mallocConf string, args ...string) (host string, port int) {
	t.Helper()
	return nodetest.StartJenode(t, progs.Jenode, nodetest.Jenode{MallocConf: mallocConf, Args: args})
}

func startGonode(t *testing.T) (host string, port int) {
	t.Helper()
	return nodetest.StartGonode(t, progs.Gonode)
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
