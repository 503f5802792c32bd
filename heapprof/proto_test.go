package heapprof

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/heapproxy/heapproxy/heapprof/funcname"
)

var funcnameShort = funcname.Short

// TestWriteProto writes symbolized profiles as protobuf, checks the real
// `go tool pprof -top` opens them and shows our function names, and that
// Parse reads them back into the same jeprof graph.
func TestWriteProto(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go"
	}
	for _, c := range dotCases {
		if c.flags != nil || c.base {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			p, opt, _ := c.setup(t)
			var before bytes.Buffer
			if err := WriteDOT(&before, p, opt); err != nil {
				t.Fatal(err)
			}
			orig := p.String()
			var pb bytes.Buffer
			if err := WriteProto(&pb, p); err != nil {
				t.Fatal(err)
			}
			if p.String() != orig {
				t.Error("WriteProto modified the profile it wrote")
			}
			path := filepath.Join(t.TempDir(), "heap.pb.gz")
			if err := os.WriteFile(path, pb.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			top := RunForTest(t, goTool, "tool", "pprof", "-top", "-sample_index=inuse_space", path)
			if !strings.Contains(string(top), "main") || !strings.Contains(string(top), "flat%") {
				t.Errorf("go tool pprof -top output lacks our symbols:\n%s", top)
			}
			q, err := Parse(pb.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			// The allocator's frames are gone, as in jeprof's graph.
			for _, s := range q.Sample {
				for _, loc := range s.Location {
					if len(loc.Line) == 0 {
						continue
					}
					if fn := loc.Line[len(loc.Line)-1].Function; IsAllocatorFrame(funcnameShort(fn.SystemName)) {
						t.Fatalf("protobuf keeps allocator frame %q", fn.SystemName)
					}
				}
			}
			var after bytes.Buffer
			if err := WriteDOT(&after, q, opt); err != nil {
				t.Fatal(err)
			}
			if after.String() != before.String() {
				t.Errorf("DOT after protobuf round trip differs:\n%s", lineDiff(after.String(), before.String()))
			}
		})
	}
}
