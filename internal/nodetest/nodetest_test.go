package nodetest

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// helperEnv names the node program a child test binary runs for
// TestDiesWithTestBinary.
const helperEnv = "NODETEST_HELPER_BIN"

// progs are built once by TestMain.
var progs *Programs

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(m.Run()) // a child of TestDiesWithTestBinary: nothing to build
	}
	p, err := Build()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	progs = p
	code := m.Run()
	p.Remove()
	os.Exit(code)
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, string(b)
}

// Each program starts, is found where it says it listens, and runs with
// the options asked for.
func TestStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		start  func(t *testing.T) (string, int)
		path   string
		status int
		body   string // a part of the answer
	}{
		{"jenode", func(t *testing.T) (string, int) { return StartJenode(t, progs.Jenode, Jenode{}) },
			"/debug/prof/mem/status", http.StatusOK, `"active": false`},
		{"jenode prof active", func(t *testing.T) (string, int) {
			return StartJenode(t, progs.Jenode, Jenode{MallocConf: ProfActive})
		}, "/debug/prof/mem/status", http.StatusOK, `"active": true`},
		{"jenode as TiKV 6.5", func(t *testing.T) (string, int) {
			return StartJenode(t, progs.Jenode, Jenode{Product: "tikv", Version: "6.5"})
		}, "/debug/pprof/heap", http.StatusNotFound, "path not found"},
		{"jenode with auth", func(t *testing.T) (string, int) {
			return StartJenode(t, progs.Jenode, Jenode{Auth: "root:s3cret"})
		}, "/pprof/symbol", http.StatusUnauthorized, ""},
		{"gonode", func(t *testing.T) (string, int) { return StartGonode(t, progs.Gonode) },
			"/debug/pprof/heap?debug=1", http.StatusOK, "main.gonodeRetainBlocks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			host, port := c.start(t)
			status, body := get(t, fmt.Sprintf("http://%s:%d%s", host, port, c.path))
			if status != c.status || !strings.Contains(body, c.body) {
				t.Errorf("GET %s: %d %.200q, want %d with %q", c.path, status, body, c.status, c.body)
			}
		})
	}
}
