package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The jeprof-like commands run from jeprofcmd's init, before the
// server's heaviest packages initialize (72 packages, 13.6 of the 19.6 ms
// of package init; 127 lighter ones still run first, see jeprofcmd's
// init): an import that made jeprofcmd wait for them (net/http in heapprof
// or elfsym, say) would bring that back silently.
// GODEBUG=inittrace=1 prints a line per package initialized.
func TestDotSkipsServerInit(t *testing.T) {
	server := []string{
		"github.com/dolthub/go-mysql-server/sql/information_schema",
		"github.com/dolthub/go-mysql-server/sql/variables",
		"github.com/pingcap/tidb/pkg/parser",
		"github.com/google/pprof/internal/driver",
		"github.com/heapproxy/heapproxy/heapprof/web",
	}
	for _, c := range []struct {
		name       string
		args       []string
		serverInit bool
	}{
		{"dot", []string{"dot", "-h"}, false},
		{"text", []string{"text", "--nodecount", "3", "nobin", "noprof"}, false},
		{"proto", []string{"proto", "-h"}, false},
		// The same detection sees them where main runs.
		{"help dot", []string{"help", "dot"}, true},
		{"version", []string{"version"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, heapproxyBinary(t), c.args...)
			cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			_ = cmd.Run() // "text nobin noprof" fails: only the order matters
			inited := map[string]bool{}
			for _, l := range strings.Split(stderr.String(), "\n") {
				if f := strings.Fields(l); len(f) > 1 && f[0] == "init" {
					inited[f[1]] = true
				}
			}
			if !inited["github.com/heapproxy/heapproxy/heapprof"] {
				t.Fatalf("heapproxy %s: no init trace of heapprof:\n%s", strings.Join(c.args, " "), stderr.String())
			}
			for _, pkg := range server {
				if inited[pkg] != c.serverInit {
					t.Errorf("heapproxy %s: %s initialized: %v, want %v", strings.Join(c.args, " "), pkg, inited[pkg], c.serverInit)
				}
			}
		})
	}
}

// A heapproxy process runs the commands from jeprofcmd's init, with what
// only a process of its own does (the collector's limit, the released
// start-up pages, the profile scanned and symbolized while it is parsed):
// its output is still jeprof's.
func TestCommandProcessMatchesJeprof(t *testing.T) {
	bin, heaps := buildProfiled(t, "templates.cc", "g++", 1)
	gbin, gheaps := buildProfiled(t, "growth.c", "gcc", 2)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"templates", []string{bin, heaps[0]}},
		{"base", []string{"--base", gheaps[0], gbin, gheaps[1]}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, cmd := range []string{"dot", "text"} {
				got, stderr, code := runBinary(t, append([]string{cmd}, c.args...)...)
				if code != 0 {
					t.Fatalf("heapproxy %s: exit %d: %s", cmd, code, stderr)
				}
				want := jeprof(t, append([]string{"--" + cmd}, c.args...)...)
				if cmd == "dot" && !sameDOT(got, want) || cmd == "text" && got != want {
					t.Fatalf("heapproxy %s differs from jeprof --%s\n--- heapproxy\n%s\n--- jeprof\n%s", cmd, cmd, got, want)
				}
			}
		})
	}
}
