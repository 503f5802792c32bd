package heapprof_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"
	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// mariadbd is a real stripped PIE Debian binary with shared libraries.
const mariadbd = "/usr/sbin/mariadbd"

// mariadbDumps runs Debian's mariadbd under LD_PRELOAD of Debian's
// libjemalloc with profiling on, on a fresh data directory and a free
// loopback port, runs some statements, shuts it down cleanly and returns
// the jemalloc interval dumps it wrote (lg_prof_interval), oldest first.
func mariadbDumps(t *testing.T) []string {
	t.Helper()
	// This machine's own: with arm64 packages installed too (.ci/run),
	// /usr/lib/*/ also holds aarch64-linux-gnu's, which ld.so would skip.
	multiarch := map[string]string{"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}[runtime.GOARCH]
	lib := filepath.Join("/usr/lib", multiarch, "libjemalloc.so.2")
	if _, err := os.Stat(lib); multiarch == "" || err != nil {
		t.Fatalf("Debian's libjemalloc2 for %s (%s) is not installed", runtime.GOARCH, lib)
	}
	prefix := filepath.Join(t.TempDir(), "jeprof")
	srv, err := mariadbtest.Start(mariadbtest.Options{Env: []string{"LD_PRELOAD=" + lib,
		"MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:14,lg_prof_interval:22,prof_prefix:" + prefix}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	db, err := sql.Open("mysql", srv.DSN("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE t",
		"CREATE TABLE t.a (x INT PRIMARY KEY, y TEXT)",
		"INSERT INTO t.a SELECT seq, REPEAT('x', seq % 500) FROM t.seq_1_to_20000",
		"SELECT COUNT(*), SUM(LENGTH(y)) FROM t.a GROUP BY x % 7",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	pid := srv.PID()
	db.Close()
	log := srv.Log()
	srv.Stop() // every dump is complete once mariadbd has ended
	// <prefix>.<pid>.<seq>.i<iseq>.heap
	dumps, _ := filepath.Glob(fmt.Sprintf("%s.%d.*.i*.heap", prefix, pid))
	seq := func(f string) int {
		n, _ := strconv.Atoi(strings.Split(strings.TrimPrefix(f, prefix+"."), ".")[1])
		return n
	}
	sort.Slice(dumps, func(i, j int) bool { return seq(dumps[i]) < seq(dumps[j]) })
	if len(dumps) < 2 {
		t.Fatalf("mariadbd wrote %d interval dumps (%s.*), want 2 or more\n%s", len(dumps), prefix, log)
	}
	return dumps
}

// TestMariadbdMatchesJeprof compares heapproxy's pipeline (Parse, the
// native symbolizer, WriteDOT / WriteText / WriteProto) with the real
// jeprof on a real server: Debian's stripped PIE mariadbd and its shared
// libraries, profiled by Debian's libjemalloc through LD_PRELOAD.
func TestMariadbdMatchesJeprof(t *testing.T) {
	dumps := mariadbDumps(t)
	last, earlier := dumps[len(dumps)-1], dumps[0]
	t.Logf("%d dumps; comparing %s, base %s", len(dumps), filepath.Base(last), filepath.Base(earlier))
	sym := &symbolize.Local{Binary: mariadbd, Cache: symbolize.NewCache()}
	load := func(path string) *profile.Profile {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := heapprof.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := sym.Symbolize(context.Background(), p); err != nil {
			t.Fatalf("Symbolize: %v", err)
		}
		return p
	}
	for _, c := range []struct {
		name    string
		flags   []string
		objects bool
		base    bool
	}{
		{name: "last"},
		{name: "objects", flags: []string{"--inuse_objects"}, objects: true},
		{name: "base", base: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := heapprof.DefaultOptions()
			opt.Program = mariadbd
			args := append([]string{}, c.flags...)
			if c.objects {
				opt.SampleType = "inuse_objects"
			}
			if c.base {
				opt.Base = load(earlier)
				args = append(args, "--base="+earlier)
			}
			args = append(args, mariadbd, last)
			p := load(last)

			var dot bytes.Buffer
			if err := heapprof.WriteDOT(&dot, p, opt); err != nil {
				t.Fatal(err)
			}
			want := heapprof.RunForTest(t, "jeprof", append([]string{"--dot"}, args...)...)
			heapprof.CompareDOTForTest(t, dot.String(), string(want))
			if strings.Count(dot.String(), "\n") < 20 {
				t.Errorf("suspiciously small graph:\n%s", dot.String())
			}

			var text bytes.Buffer
			if err := heapprof.WriteText(&text, p, opt); err != nil {
				t.Fatal(err)
			}
			jtext := heapprof.RunForTest(t, "jeprof", append([]string{"--text"}, args...)...)
			if text.String() != string(jtext) {
				t.Errorf("text differs from jeprof --text:\n%s", heapprof.LineDiffForTest(text.String(), string(jtext)))
			}
			if c.base || c.objects {
				return
			}
			// The protobuf's top function under go tool pprof is jeprof's.
			var pb bytes.Buffer
			if err := heapprof.WriteProto(&pb, p); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "heap.pb.gz")
			if err := os.WriteFile(path, pb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			goTool, err := exec.LookPath("go")
			if err != nil {
				goTool = "/usr/local/go/bin/go"
			}
			top := heapprof.RunForTest(t, goTool, "tool", "pprof", "-top", path)
			if got, want := firstRowName(string(top), "flat"), firstRowName(string(jtext), "Total:"); got != want || want == "" {
				t.Errorf("go tool pprof -top's first function is %q, jeprof --text's %q\n%s", got, want, top)
			}
		})
	}
}

// firstRowName is the function name of the first row after the line
// starting with header in `jeprof --text` or `go tool pprof -top` output
// (both: flat flat% sum% cum cum% name).
func firstRowName(out, header string) string {
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if f := strings.Fields(l); len(f) > 0 && f[0] == header && i+1 < len(lines) {
			if f := strings.Fields(lines[i+1]); len(f) > 5 {
				return strings.Join(f[5:], " ")
			}
			return ""
		}
	}
	return ""
}
