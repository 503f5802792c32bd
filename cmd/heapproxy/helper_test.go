package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/cmd/heapproxy/internal/helper"
	"github.com/heapproxy/heapproxy/cmd/heapproxy/internal/jeprofcmd"
)

// helper must not import jeprofcmd, so it lists the commands again.
func TestHelperCommands(t *testing.T) {
	var want []string
	for _, c := range jeprofcmd.Commands() {
		want = append(want, c.Name)
	}
	if got := helper.Commands(); !slices.Equal(got, want) {
		t.Fatalf("helper.Commands() = %v, jeprofcmd's commands are %v", got, want)
	}
}

// buildPair builds heapproxy and heapproxy-jeprof into dir with make
// build, the recipe users run: the helper first, its build ID recorded in
// heapproxy.
func buildPair(t *testing.T, dir string) {
	t.Helper()
	if out, err := exec.Command("make", "-s", "-C", "../..", "build", "BIN="+dir).CombinedOutput(); err != nil {
		t.Fatalf("make build: %v\n%s", err, out)
	}
	jeprofBin := filepath.Join(dir, helper.Name)
	out, err := exec.Command("go", "tool", "buildid", jeprofBin).Output()
	if err != nil {
		t.Fatalf("go tool buildid %s: %v", jeprofBin, err)
	}
	if got, want := helper.ReadBuildID(jeprofBin), strings.TrimSpace(string(out)); got != want {
		t.Fatalf("ReadBuildID(%s) = %q, go tool buildid says %q", jeprofBin, got, want)
	}
}

// `heapproxy dot` hands itself to the heapproxy-jeprof built with it, and
// answers exactly what it answers in-process; a helper of another build is
// never run.
func TestDotThroughHelper(t *testing.T) {
	bin, heaps := buildProfiled(t, "templates.cc", "g++", 1)
	dir := t.TempDir()
	buildPair(t, dir)
	heapproxy := filepath.Join(dir, "heapproxy")
	// dot's output, and the packages that initialized (GODEBUG=inittrace=1).
	dot := func(env ...string) (string, map[string]bool) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, heapproxy, "dot", bin, heaps[0])
		cmd.Env = append(append(os.Environ(), "GODEBUG=inittrace=1"), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("heapproxy dot %v: %v\n%s", env, err, stderr.String())
		}
		inited := map[string]bool{}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "init" {
				inited[f[1]] = true
			}
		}
		return stdout.String(), inited
	}
	// A package of the server that initializes before jeprofcmd in-process
	// (heapproxy's init order), and so only without the helper.
	const serverPkg = "github.com/dolthub/vitess/go/vt/proto/query"

	inProcess, inited := dot(helper.InProcessEnv + "=1")
	if !inited[serverPkg] {
		t.Fatalf("in-process: %s did not initialize; pick another package of the server for this test", serverPkg)
	}
	want := jeprof(t, "--dot", bin, heaps[0])
	if !sameDOT(inProcess, want) {
		t.Fatalf("in-process heapproxy dot differs from jeprof --dot\n--- heapproxy\n%s\n--- jeprof\n%s", inProcess, want)
	}

	viaHelper, inited := dot()
	if inited[serverPkg] {
		t.Errorf("heapproxy dot initialized %s: it did not hand itself to %s", serverPkg, helper.Name)
	}
	if viaHelper != inProcess {
		t.Errorf("heapproxy dot through %s differs from in-process\n--- helper\n%s\n--- in-process\n%s", helper.Name, viaHelper, inProcess)
	}

	// A helper from another build (here a program that only prints) has
	// another build ID: heapproxy answers in-process.
	stale := filepath.Join(t.TempDir(), "stale")
	if err := os.WriteFile(filepath.Join(stale+".go"), []byte("package main\n\nfunc main() { println(\"stale helper\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, helper.Name), stale+".go").CombinedOutput(); err != nil {
		t.Fatalf("go build stale helper: %v\n%s", err, out)
	}
	got, inited := dot()
	if !inited[serverPkg] || got != inProcess {
		t.Errorf("with a helper of another build: ran in-process %v, output equal %v (want both)\n%s", inited[serverPkg], got == inProcess, got)
	}
}
