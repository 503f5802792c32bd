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

// buildProfiled compiles a testdata/progs program against jemalloc and runs
// it with profiling on; it returns the binary and the dumps it wrote.
func buildProfiled(t *testing.T, src, compiler string, dumps int) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	progs, _ := filepath.Abs("../../testdata/progs")
	bin := filepath.Join(dir, strings.TrimSuffix(src, filepath.Ext(src)))
	if out, err := exec.Command(compiler, "-g", "-O2", "-I", progs, "-o", bin, filepath.Join(progs, src), "-ljemalloc").CombinedOutput(); err != nil {
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
	out, err := exec.Command("jeprof", args...).Output()
	if err != nil {
		t.Fatalf("jeprof %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
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
		t.Run(c.name, func(t *testing.T) {
			got := runRender(t, append([]string{"dot"}, c.args...)...)
			want := jeprof(t, append([]string{"--dot"}, c.args...)...)
			if !sameDOT(got, want) {
				t.Fatalf("heapproxy dot differs from jeprof --dot\n--- heapproxy\n%s\n--- jeprof\n%s", got, want)
			}
			if got, want := runRender(t, append([]string{"text"}, c.args...)...), jeprof(t, append([]string{"--text"}, c.args...)...); got != want {
				t.Fatalf("heapproxy text differs from jeprof --text\n--- heapproxy\n%s\n--- jeprof\n%s", got, want)
			}
		})
	}
	var out bytes.Buffer
	if err := render("dot", []string{bin}, &out); err == nil {
		t.Fatal("dot with one argument succeeded")
	}
}
