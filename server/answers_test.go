package server

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/heapproxy/heapproxy/backends"
)

// A diff with nothing above jeprof's thresholds is a valid graph that says
// so (Graphviz accepts it), not an error; list_snapshots answers one
// column per field, and its name column feeds diff_dot_snapshot.
func TestEmptyDiffAndSnapshotList(t *testing.T) {
	host, port := startJenode(t)
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.jenode})
	srv := startProxyDeps(t, Config{}, deps)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	name := mustLines(t, db, adminSQL("10001", "snapshot()"))[0]
	list := snapshotList(t, db, "10001")
	if len(list) != 1 || strings.Split(list[0], "\t")[0] != name {
		t.Fatalf("list_snapshots: %q, want one row named %s", list, name)
	}
	lines := mustLines(t, db, adminSQL("10001", fmt.Sprintf(`diff_dot_snapshot(\"%s\")`, strings.Split(list[0], "\t")[0])))
	graph := strings.Join(lines, "\n") + "\n"
	if !strings.HasPrefix(lines[0], `digraph "`) || !strings.Contains(graph, "Nothing changed above jeprof's thresholds since "+name) {
		t.Fatalf("diff of an idle node:\n%s", graph)
	}
	dot := exec.Command("dot", "-Tsvg")
	dot.Stdin = strings.NewReader(graph)
	if out, err := dot.CombinedOutput(); err != nil {
		t.Fatalf("Graphviz refuses the empty diff: %v\n%s", err, out)
	}
}

// What the symbolizer chain could not name reaches the client as the
// statement's warnings: the graph is still answered, SHOW WARNINGS right
// after lists why, and the next statement clears them.
func TestSymbolizerWarnings(t *testing.T) {
	host, port := startJenode(t)
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: "/nonexistent/jenode"})
	srv := startProxyDeps(t, Config{}, deps)
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "root", "", "-N", "-r", "--show-warnings", "-e",
		adminSQL("10001", "enable_prof()")+"; "+adminSQL("10001", "dump_dot_snapshot()")+"; SHOW WARNINGS; SELECT 1; SHOW WARNINGS")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "digraph \"") || !strings.Contains(out, "/nonexistent/jenode") {
		t.Fatalf("want the graph and a warning naming the missing binary:\n%s", out)
	}
	// --show-warnings prints the statement's warnings; SHOW WARNINGS lists them again.
	for _, want := range []string{"Warning (Code 1105): node 10001: ", "Warning\t1105\tnode 10001: ", "shown as hex"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	tail := out[strings.LastIndex(out, "1\n"):]
	if strings.Contains(tail, "Warning") {
		t.Errorf("warnings outlived the next statement:\n%s", out)
	}
}
