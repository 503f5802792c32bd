package snapshot

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Test-only state: the jemalloc test program is compiled and run once per
// test binary, into a directory TestMain removes.
var (
	cacheDir  string
	leakOnce  sync.Once
	leakBin   string
	leakHeaps []string
	leakErr   error
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) != "" {
		os.Exit(crashChild())
	}
	dir, err := os.MkdirTemp("", "snapshot-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	code := m.Run()
	stopMariaDB()
	os.RemoveAll(dir)
	os.Exit(code)
}

// run runs a command (never through a shell) with a timeout and returns its
// stdout.
func run(t testing.TB, env []string, name string, args ...string) []byte {
	t.Helper()
	out, err := runErr(env, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runErr(env []string, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// leakProg compiles testdata/leak.c against libjemalloc and runs it three
// times: sampling periods of 1 KiB and 4 KiB, and 1 KiB with the leak
// grown by three rounds of query().
func leakProg(t testing.TB) (bin string, heaps []string) {
	t.Helper()
	leakOnce.Do(func() {
		src, err := filepath.Abs("testdata/leak.c")
		if err != nil {
			leakErr = err
			return
		}
		leakBin = filepath.Join(cacheDir, "leak")
		if _, leakErr = runErr(nil, "gcc", "-g", "-O0", "-o", leakBin, src, "-ljemalloc"); leakErr != nil {
			return
		}
		for _, r := range []struct{ lg, rounds int }{{10, 1}, {12, 1}, {10, 3}} {
			heap := filepath.Join(cacheDir, fmt.Sprintf("leak.%d.%d.heap", r.lg, r.rounds))
			env := []string{fmt.Sprintf("MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:%d", r.lg)}
			if _, leakErr = runErr(env, leakBin, heap, strconv.Itoa(r.rounds)); leakErr != nil {
				return
			}
			leakHeaps = append(leakHeaps, heap)
		}
	})
	if leakErr != nil {
		t.Fatalf("building the jemalloc test program: %v", leakErr)
	}
	return leakBin, leakHeaps
}
