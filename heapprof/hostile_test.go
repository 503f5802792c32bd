package heapprof

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/funcname"
)

// hostileNames are function names a node's symbolizer may send to break
// out of the DOT, SVG or folded syntax.
var hostileNames = []string{
	`"];X[label="INJECTED",URL="javascript:alert(1)"];Y[label="`,
	`evil\"];Z[URL="javascript:x"];W[label=\`,
	`tail backslash\`,
	"line\n}\ndigraph injected {\nQ [URL=\"javascript:y\"];",
	`\N\G\L\l\r\n escapes`,
	"semi;colon</text><script>alert(1)</script><a href=\"javascript:z\">",
	"bad utf8 \xff\xfe and ctrl \x01\x7f",
	`operator"" _km(char const*)`,
}

// hostileProfile is a symbolized profile in which main calls every
// hostile function, each holding the same share of memory.
func hostileProfile() *profile.Profile {
	p := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		DefaultSampleType: "inuse_space",
	}
	fn := func(name string) *profile.Location {
		f := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name, SystemName: name}
		p.Function = append(p.Function, f)
		loc := &profile.Location{ID: uint64(len(p.Location) + 1), Address: 0x1000 * uint64(len(p.Location)+1), Line: []profile.Line{{Function: f}}}
		p.Location = append(p.Location, loc)
		return loc
	}
	main := fn("main")
	for _, name := range hostileNames {
		p.Sample = append(p.Sample, &profile.Sample{Location: []*profile.Location{fn(name), main}, Value: []int64{10, 10 << 20}})
	}
	return p
}

// svgDoc is what the tests read of an SVG: every element's name, id,
// class, title and link attributes.
type svgElem struct {
	name, class, id, title string
	links                  []string
	text                   string
}

// readSVG parses an SVG strictly and lists its elements.
func readSVG(t *testing.T, svg []byte) []svgElem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = true
	var out []svgElem
	var stack []int
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := svgElem{name: tok.Name.Local}
			for _, a := range tok.Attr {
				switch a.Name.Local {
				case "class":
					e.class = a.Value
				case "id":
					e.id = a.Value
				case "href", "URL":
					e.links = append(e.links, a.Value)
				}
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				i := stack[len(stack)-1]
				out[i].text += string(tok)
				// A title belongs to the group holding it.
				if out[i].name == "title" && len(stack) > 1 {
					out[stack[len(stack)-2]].title += string(tok)
				}
			}
		}
	}
	return out
}

// TestHostileNamesDOT renders hostile names as DOT, lays the graph out
// with the real Graphviz and checks that it has exactly the intended
// nodes and edges, no links, and every name as label text.
func TestHostileNamesDOT(t *testing.T) {
	p := hostileProfile()
	for _, c := range []struct {
		name    string
		program string
	}{
		{"plain program", "/usr/bin/server"},
		{"hostile program", `/opt/x"];I[URL="javascript:p"];J[label="\`},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := DefaultOptions()
			opt.Program = c.program
			var dot bytes.Buffer
			if err := WriteDOT(&dot, p, opt); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "dot", "-Tsvg")
			cmd.Stdin = bytes.NewReader(dot.Bytes())
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			svg, err := cmd.Output()
			if err != nil {
				t.Fatalf("dot -Tsvg: %v: %s\n%s", err, stderr.String(), dot.String())
			}
			var nodes, edges []string
			var texts strings.Builder
			graphs := 0
			for _, e := range readSVG(t, svg) {
				switch {
				case e.class == "graph":
					graphs++
				case e.class == "node":
					nodes = append(nodes, e.title)
				case e.class == "edge":
					edges = append(edges, e.title)
				case e.name == "text":
					texts.WriteString(e.text)
				}
				if len(e.links) > 0 {
					t.Errorf("element %s %q links to %q", e.name, e.title, e.links)
				}
			}
			wantNodes := []string{"Legend"}
			var wantEdges []string
			for i := 1; i <= len(hostileNames)+1; i++ {
				wantNodes = append(wantNodes, fmt.Sprintf("N%d", i))
				if i > 1 {
					wantEdges = append(wantEdges, fmt.Sprintf("N1->N%d", i))
				}
			}
			slices.Sort(nodes)
			slices.Sort(wantNodes)
			slices.Sort(edges)
			slices.Sort(wantEdges)
			if graphs != 1 || !slices.Equal(nodes, wantNodes) || !slices.Equal(edges, wantEdges) {
				t.Errorf("graph has %d graphs, nodes %q, edges %q; want 1, %q, %q\n%s", graphs, nodes, edges, wantNodes, wantEdges, dot.String())
			}
			// Each name shows as text, its whitespace and "::" as line
			// breaks, its short name (funcname.Short) otherwise as it was (invalid UTF-8 as
			// U+FFFD, control characters as spaces).
			shown := texts.String()
			for _, name := range hostileNames {
				want := strings.ToValidUTF8(funcname.Short(name), "\uFFFD")
				want = strings.Map(func(r rune) rune {
					if r < 0x20 || r == 0x7f || r == ' ' {
						return -1
					}
					return r
				}, strings.ReplaceAll(want, "::", ""))
				if !strings.Contains(strings.ReplaceAll(shown, " ", ""), want) {
					t.Errorf("label text lacks %q", want)
				}
			}
		})
	}
}

// TestHostileNamesFlame checks that the SVG flame graph, the folded
// stacks and the text report keep hostile names inside their frame or
// line.
func TestHostileNamesFlame(t *testing.T) {
	p := hostileProfile()
	opt := DefaultOptions()
	opt.Program = `prog"><script>alert(1)</script>`
	var svg, folded, text bytes.Buffer
	if err := WriteFlameGraph(&svg, p, opt); err != nil {
		t.Fatal(err)
	}
	if err := WriteFolded(&folded, p, opt); err != nil {
		t.Fatal(err)
	}
	if err := WriteText(&text, p, opt); err != nil {
		t.Fatal(err)
	}
	groups := 0
	for _, e := range readSVG(t, svg.Bytes()) {
		switch e.name {
		case "g":
			groups++
		case "script", "a", "foreignObject":
			t.Errorf("flame graph has a <%s> element", e.name)
		}
		if len(e.links) > 0 {
			t.Errorf("flame graph element %s links to %q", e.name, e.links)
		}
	}
	if want := 2 + len(hostileNames); groups != want { // all, main, one per name
		t.Errorf("flame graph has %d frames, want %d", groups, want)
	}
	lines := strings.Split(strings.TrimSuffix(folded.String(), "\n"), "\n")
	if len(lines) != len(hostileNames) {
		t.Fatalf("folded output has %d lines, want %d:\n%s", len(lines), len(hostileNames), folded.String())
	}
	for _, l := range lines {
		if frames := strings.Split(l[:strings.LastIndexByte(l, ' ')], ";"); len(frames) != 2 || frames[0] != "main" {
			t.Errorf("folded line %q has frames %q, want main and one other", l, frames)
		}
	}
	if got, want := strings.Count(text.String(), "\n"), 2+len(hostileNames); got != want {
		t.Errorf("text output has %d lines, want %d:\n%s", got, want, text.String())
	}
}

// TestCutNMTag: only jeprof's 16-digit nm address tag is cut from folded
// names, not a template argument.
func TestCutNMTag(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"work(int)<0000000000001139>", "work(int)"},
		{"std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke<0>", "std::_Function_handler<void (), main::{lambda()#1}>::_M_invoke<0>"},
		{"f<deadbeef>", "f<deadbeef>"},
		{"<0000000000001139>", "<0000000000001139>"},
		{"g<000000000000113g>", "g<000000000000113g>"},
	} {
		if got := cutNMTag(c.in); got != c.want {
			t.Errorf("cutNMTag(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
