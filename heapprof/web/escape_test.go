package web

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// Names a hostile or broken node could send: DOT attribute injection (a
// node of its own and a javascript: link in Graphviz's SVG), HTML markup,
// a bare javascript: URL.
const (
	dotInjection  = `"];X[label="INJECTED",URL="javascript:alert(1)"];Y[label="`
	htmlInjection = `</script><script>alert(2)</script><img src=x onerror=alert(3)>`
	jsURLName     = `javascript:alert(4)`
	hostileID     = `snap"><img src=x onerror=alert(12)>`
)

// attrInjection closes a quoted DOT string and adds a link and a label
// of its own: valid DOT wherever pprof writes a string unescaped.
func attrInjection(n int) string {
	return fmt.Sprintf(`x" URL="javascript:alert(%d)" label="INJECTED`, n)
}

// hostileProfile is a heap profile whose every string a node controls is
// an injection: function, file and mapping names, sample labels and units,
// comments and doc URL.
func hostileProfile(t *testing.T) []byte {
	t.Helper()
	names := []string{dotInjection, htmlInjection, jsURLName}
	m := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x100000, File: "/lib/" + attrInjection(6), HasFunctions: true}
	var fns []*profile.Function
	var locs []*profile.Location
	for i, n := range names {
		f := &profile.Function{ID: uint64(i + 1), Name: n, SystemName: n, Filename: "/src/" + attrInjection(5)}
		l := &profile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x2000 + uint64(i)*16,
			Line: []profile.Line{{Function: f, Line: int64(10 + i)}}}
		fns, locs = append(fns, f), append(locs, l)
	}
	// An address without symbols: graph nodes name its mapping.
	bare := &profile.Location{ID: 4, Mapping: m, Address: 0x3000}
	locs = append(locs, bare)
	sample := func(stack []*profile.Location, mb int64, labeled bool) *profile.Sample {
		s := &profile.Sample{
			Location: stack,
			Value:    []int64{mb, mb << 20},
			NumLabel: map[string][]int64{"bytes": {1 << 20}},
			NumUnit:  map[string][]string{"bytes": {attrInjection(9)}},
		}
		if labeled {
			s.Label = map[string][]string{"k": {attrInjection(8)}, attrInjection(7): {"v"}}
		}
		return s
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Sample: []*profile.Sample{
			sample([]*profile.Location{locs[0], locs[1], locs[2]}, 8, true),
			sample([]*profile.Location{locs[1], locs[2]}, 4, false),
			sample([]*profile.Location{locs[2]}, 2, true),
			sample([]*profile.Location{bare, locs[2]}, 3, false),
		},
		Location: locs, Function: fns, Mapping: []*profile.Mapping{m},
		Comments: []string{`<script>alert(10)</script>`, dotInjection},
		DocURL:   "javascript:alert(11)",
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestHostileNames renders every page for a profile of hostile names and
// checks that no name became markup: no element, attribute, event handler
// or script of its own, no javascript: URL, no node of its own in the
// graph; and that pprof's pages run only their own scripts (CSP nonce).
func TestHostileNames(t *testing.T) {
	prof := hostileProfile(t)
	store := &memStore{
		entries: []snapshot.Snapshot{{ID: hostileID, NodeID: 10001, NodeKind: htmlInjection, NodeAddr: jsURLName,
			TakenAt: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), TotalBytes: 14 << 20}},
		profiles: map[string][]byte{hostileID: prof},
	}
	srv, _ := newTestServer(t, Options{Store: store})
	// The source view is offered only with local sources.
	local, _ := newTestServer(t, Options{Store: store, LocalSources: true})
	snap := "/snapshots/" + url.PathEscape(hostileID) + "/"
	diff := "/diff/" + url.PathEscape(hostileID) + "/" + url.PathEscape(hostileID) + "/"
	tests := []struct {
		path  string
		pprof bool   // a pprof page: nonce CSP
		local bool   // served with LocalSources
		shows string // the page shows the names (as text): the test reached them
	}{
		{path: "/", shows: "onerror=alert(12)"},
		{path: snap + "graph", pprof: true, shows: "INJECTED"},
		{path: snap + "graph?g=lines", pprof: true, shows: "INJECTED"},
		{path: snap + "graph?g=files", pprof: true, shows: "INJECTED"},
		{path: snap + "graph?g=addresses", pprof: true, shows: "INJECTED"},
		{path: snap + "flamegraph", pprof: true, shows: "INJECTED"},
		{path: snap + "top", pprof: true, shows: "INJECTED"},
		{path: snap + "top?g=lines", pprof: true, shows: "INJECTED"},
		{path: snap + "source?f=.", pprof: true, local: true, shows: "INJECTED"},
		{path: snap + "peek?f=.", pprof: true, shows: "INJECTED"},
		{path: snap + "graph?f=" + url.QueryEscape(`"><script>alert(13)</script>`), pprof: true},
		{path: diff + "graph", pprof: true},
		{path: diff + "flamegraph", pprof: true},
	}
	for _, tt := range tests {
		t.Run(strings.ReplaceAll(tt.path, "/", "_"), func(t *testing.T) {
			base := srv.URL
			if tt.local {
				base = local.URL
			}
			resp, body := get(t, base+tt.path)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, body)
			}
			if !strings.Contains(html.UnescapeString(body), tt.shows) {
				t.Errorf("page does not show %q: the test did not reach the names", tt.shows)
			}
			if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", got)
			}
			csp := resp.Header.Get("Content-Security-Policy")
			nonce := ""
			if tt.pprof {
				m := regexp.MustCompile(`script-src 'nonce-([A-Za-z0-9_-]+)'`).FindStringSubmatch(csp)
				if m == nil {
					t.Fatalf("CSP %q has no script nonce", csp)
				}
				nonce = m[1]
			}
			for _, d := range strings.Split(csp, ";") {
				if d = strings.TrimSpace(d); (strings.HasPrefix(d, "script-src") || strings.HasPrefix(d, "default-src")) &&
					(strings.Contains(d, "'unsafe-inline'") || strings.Contains(d, "*")) {
					t.Errorf("CSP allows inline or foreign scripts: %q", csp)
				}
			}
			if !strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("CSP %q lets other sites frame the page", csp)
			}
			for _, p := range checkMarkup(body, nonce) {
				t.Error(p)
			}
		})
	}
}

// urlAttrs are the attributes a browser follows or loads as a URL.
var urlAttrs = map[string]bool{"href": true, "xlink:href": true, "src": true, "action": true,
	"formaction": true, "data": true, "background": true, "poster": true}

// checkMarkup scans a page as a browser's tokenizer would (tags, their
// attributes, raw text of script and style, comments, CDATA) and lists
// what a hostile name could have made of it. With a nonce, every script
// element must carry it (pprof's own do).
func checkMarkup(page, nonce string) []string {
	var problems []string
	tagRE := regexp.MustCompile(`^<([A-Za-z][A-Za-z0-9:-]*)`)
	attrRE := regexp.MustCompile(`^\s*([^\s=/>"']+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?`)
	for i := 0; i < len(page); {
		rest := page[i:]
		switch {
		case strings.HasPrefix(rest, "<!--"):
			end := strings.Index(rest, "-->")
			if end < 0 {
				return append(problems, "unterminated comment")
			}
			i += end + 3
			continue
		case strings.HasPrefix(rest, "<![CDATA["):
			end := strings.Index(rest, "]]>")
			if end < 0 {
				return append(problems, "unterminated CDATA")
			}
			i += end + 3
			continue
		case !strings.HasPrefix(rest, "<"):
			next := strings.IndexByte(rest, '<')
			if next < 0 {
				next = len(rest)
			}
			if text := strings.TrimSpace(html.UnescapeString(rest[:next])); text == "INJECTED" {
				problems = append(problems, "a graph node of its own: text INJECTED")
			}
			i += next
			continue
		}
		m := tagRE.FindStringSubmatch(rest)
		if m == nil {
			i++ // an end tag, doctype or a lone '<'
			continue
		}
		name := strings.ToLower(m[1])
		j := len(m[0])
		attrs := map[string]string{}
		for {
			a := attrRE.FindStringSubmatch(rest[j:])
			if a == nil {
				break
			}
			j += len(a[0])
			v := a[2]
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
				v = v[1 : len(v)-1]
			}
			attrs[strings.ToLower(a[1])] = html.UnescapeString(v)
		}
		end := strings.IndexByte(rest[j:], '>')
		if end < 0 {
			return append(problems, "unterminated tag <"+name)
		}
		i += j + end + 1
		switch name {
		case "img", "iframe", "object", "embed", "base", "x", "y":
			problems = append(problems, "element <"+name+"> from a name")
		}
		for k, v := range attrs {
			norm := strings.ToLower(strings.Map(func(r rune) rune {
				if r <= ' ' {
					return -1
				}
				return r
			}, v))
			if strings.HasPrefix(k, "on") && !(name == "pre" && k == "onclick" && v == pprofHandler) {
				problems = append(problems, "<"+name+"> event handler "+k+"="+v)
			}
			if urlAttrs[k] && strings.Contains(norm, "javascript:") {
				problems = append(problems, "<"+name+"> "+k+"="+v)
			}
		}
		if name == "script" || name == "style" {
			if name == "script" {
				if nonce == "" || attrs["nonce"] != nonce {
					problems = append(problems, "script without the answer's nonce")
				}
				if _, ok := attrs["src"]; ok {
					problems = append(problems, "script with a src")
				}
			}
			close := strings.Index(strings.ToLower(page[i:]), "</"+name)
			if close < 0 {
				return append(problems, "unterminated <"+name+">")
			}
			if content := strings.TrimSpace(page[i : i+close]); strings.HasPrefix(content, "alert(") {
				problems = append(problems, "a script of a name's: "+content)
			}
			i += close
		}
	}
	return problems
}

// TestStripSVGLinks feeds the cleaner what Graphviz really draws for a DOT
// source that an unescaped name broke into: a node of its own with a
// javascript: link. Embedded as pprof embeds it, the links go and the
// drawing and svgpan's script stay.
func TestStripSVGLinks(t *testing.T) {
	tests := []struct {
		name string
		dot  string
		keep []string
	}{
		{
			name: "injected URL",
			dot:  `digraph { N1 [label="f" tooltip="f"]; X [label="INJECTED" URL="javascript:alert(1)"]; N1 -> X }`,
			keep: []string{">INJECTED</text>", `<g id="node2"`, "svgpan(", `href="kept-in-cdata"`},
		},
		{
			name: "https link",
			dot:  `digraph { X [label="click" URL="https://phish.example/" target="_blank"] }`,
			keep: []string{">click</text>"},
		},
		{
			name: "mixed-case scheme",
			dot:  `digraph { X [label="img" URL="JaVaScRiPt:alert(2)" tooltip="t"] }`,
			keep: []string{">img</text>"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, "dot", "-Tsvg")
			cmd.Stdin = strings.NewReader(tt.dot)
			svg, err := cmd.Output()
			if err != nil {
				t.Fatalf("dot: %v", err)
			}
			svg = svg[bytes.Index(svg, []byte("<svg")):]
			if !bytes.Contains(svg, []byte("href=")) {
				t.Fatalf("Graphviz drew no link; the test needs one:\n%s", svg)
			}
			// As pprof's massageSVG embeds it: svgpan's script in CDATA.
			svg = bytes.Replace(svg, []byte(`<g id="graph0"`),
				[]byte(`<script type="text/ecmascript"><![CDATA[function svgpan(){ a = '<a href="kept-in-cdata">'; }]]></script><g id="graph0"`), 1)
			page := "<!DOCTYPE html><html><body><a href=\"./top\">Top</a>" + string(svg) + "<a href=\"./flamegraph\">after</a></body></html>"
			out := string(stripSVGLinks([]byte(page)))
			svgPart := out[strings.Index(out, "<svg"):strings.LastIndex(out, "</svg>")]
			cdata := regexp.MustCompile(`(?s)<!\[CDATA\[.*?\]\]>`)
			if regexp.MustCompile(`href\s*=`).MatchString(cdata.ReplaceAllString(svgPart, "")) {
				t.Errorf("a link is left in the SVG:\n%s", svgPart)
			}
			for _, k := range append(tt.keep, `<a href="./top">Top</a>`, `<a href="./flamegraph">after</a>`) {
				if !strings.Contains(out, k) {
					t.Errorf("cleaned page lacks %q", k)
				}
			}
			for _, p := range checkMarkup(out, "") {
				if !strings.Contains(p, "nonce") && !strings.Contains(p, "INJECTED") {
					t.Error(p)
				}
			}
		})
	}
}
