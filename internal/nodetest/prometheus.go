package nodetest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// StartPrometheus starts Debian's Prometheus (a real Go service serving
// net/http/pprof) on a free loopback port in a temporary directory,
// scraping itself every second, and returns that port once it is ready
// (/-/ready answers 200) and has answered 50 queries and /metrics as many
// times: a heap profile taken any earlier holds little but the runtime's
// own start-up.
func StartPrometheus(t testing.TB) (port int) {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	cfg := filepath.Join(dir, "prometheus.yml")
	err = os.WriteFile(cfg, []byte(fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n"+
		"  - {job_name: self, static_configs: [{targets: ['127.0.0.1:%d']}]}\n", port)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/prometheus", fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port),
		"--storage.tsdb.path="+filepath.Join(dir, "tsdb"), "--config.file="+cfg)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatalf("prometheus (Debian's package): %v", err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	c := &http.Client{Timeout: 10 * time.Second}
	get := func(url string) (int, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, err := get(base + "/-/ready")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus did not become ready in 60 s: %d %v", code, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for i := range 50 {
		for _, url := range []string{
			fmt.Sprintf("%s/api/v1/query?query=rate(prometheus_http_requests_total[%ds])", base, 10+i),
			base + "/metrics",
		} {
			if code, err := get(url); err != nil || code != http.StatusOK {
				t.Fatalf("GET %s: %d %v", url, code, err)
			}
		}
	}
	return port
}
