package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// buildProfiled compiles a testdata/progs program against jemalloc (-g -O2,
// then flags) and runs it with profiling on; it returns the binary and the
// dumps it wrote.
func buildProfiled(t *testing.T, src, compiler string, dumps int, flags ...string) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	progs, _ := filepath.Abs("../../testdata/progs")
	bin := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	args := append([]string{"-g", "-O2"}, flags...)
	args = append(args, "-I", progs, "-o", bin, filepath.Join(progs, src), "-ljemalloc")
	if out, err := exec.Command(compiler, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", compiler, err, out)
	}
	var files []string
	for i := range dumps {
		files = append(files, filepath.Join(dir, fmt.Sprintf("%d.heap", i)))
	}
	cmd := exec.Command(bin, files...)
	cmd.Env = append(os.Environ(), "MALLOC_CONF=prof:true,prof_active:true,lg_prof_sample:10")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, out)
	}
	return bin, files
}

func runRender(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	if err := render(args[0], args[1:], &out); err != nil {
		t.Fatalf("heapproxy %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

func jeprof(t *testing.T, args ...string) string {
	t.Helper()
	return jeprofEnv(t, nil, args...)
}

// jeprofEnv runs jeprof with env added to its environment (JEPROF_TOOLS).
func jeprofEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("jeprof", args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("jeprof %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// renderMatchesJeprof checks that heapproxy dot and text on args print what
// jeprof --dot and --text print (jeprof run with env added), and returns
// the DOT.
func renderMatchesJeprof(t *testing.T, env []string, args ...string) string {
	t.Helper()
	got := runRender(t, append([]string{"dot"}, args...)...)
	if want := jeprofEnv(t, env, append([]string{"--dot"}, args...)...); !sameDOT(got, want) {
		t.Fatalf("heapproxy dot differs from jeprof --dot\n--- heapproxy\n%s\n--- jeprof\n%s", got, want)
	}
	text := runRender(t, append([]string{"text"}, args...)...)
	if want := jeprofEnv(t, env, append([]string{"--text"}, args...)...); text != want {
		t.Fatalf("heapproxy text differs from jeprof --text\n--- heapproxy\n%s\n--- jeprof\n%s", text, want)
	}
	return got
}

// sameDOT compares two DOT graphs: every line equal, except that edges of
// equal weight may come in another order (jeprof orders them by Perl's
// randomized hash order).
func sameDOT(a, b string) bool {
	split := func(s string) (other, edges []string) {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, " -> ") {
				edges = append(edges, l)
			} else {
				other = append(other, l)
			}
		}
		slices.Sort(edges)
		return
	}
	ao, ae := split(a)
	bo, be := split(b)
	return slices.Equal(ao, bo) && slices.Equal(ae, be)
}

// heapproxy dot/text on files print what jeprof prints, --base included.
func TestRenderMatchesJeprof(t *testing.T) {
	bin, heaps := buildProfiled(t, "templates.cc", "g++", 1)
	gbin, gheaps := buildProfiled(t, "growth.c", "gcc", 2)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"templates", []string{bin, heaps[0]}},
		{"nodecount", []string{"--nodecount", "5", bin, heaps[0]}},
		{"base", []string{"--base", gheaps[0], gbin, gheaps[1]}},
	} {
		t.Run(c.name, func(t *testing.T) { renderMatchesJeprof(t, nil, c.args...) })
	}
	var out bytes.Buffer
	if err := render("dot", []string{bin}, &out); err == nil {
		t.Fatal("dot with one argument succeeded")
	}
}

// firstTopRow is the function of the first row of `jeprof --text` or
// `go tool pprof -top` (both: flat flat% sum% cum cum% name), or "".
func firstTopRow(out string) string {
	header := true
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if header {
			// jeprof: "Total: ..."; pprof: "flat  flat%  sum% ...".
			header = !(len(f) > 0 && (f[0] == "Total:" || f[0] == "flat"))
			continue
		}
		if len(f) > 5 {
			return strings.Join(f[5:], " ")
		}
	}
	return ""
}

// heapproxy proto's .pb.gz, opened by the real `go tool pprof -top`, has
// the same top function as jeprof --text on the same files: jemalloc's
// own frames (which pprof would show as malloc_usable_size, 100 % flat)
// are dropped as jeprof drops them.
func TestProtoTopMatchesJeprof(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go"
	}
	for _, c := range []struct{ src, compiler string }{
		{"templates.cc", "g++"}, {"shallow.c", "gcc"}, {"growth.c", "gcc"},
	} {
		t.Run(c.src, func(t *testing.T) {
			bin, heaps := buildProfiled(t, c.src, c.compiler, 2)
			pb := filepath.Join(t.TempDir(), "heap.pb.gz")
			if err := os.WriteFile(pb, []byte(runRender(t, "proto", bin, heaps[0])), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(goTool, "tool", "pprof", "-top", pb).CombinedOutput()
			if err != nil {
				t.Fatalf("go tool pprof -top: %v\n%s", err, out)
			}
			want := firstTopRow(jeprof(t, "--text", bin, heaps[0]))
			if got := firstTopRow(string(out)); got != want || want == "" {
				t.Fatalf("go tool pprof -top's first function is %q, jeprof --text's %q\n%s", got, want, out)
			}
		})
	}
}
