package web

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"mime"
	"net/http"
	"regexp"
	"strings"
)

// baseCSP is the Content-Security-Policy of every answer but pprof's
// pages: no scripts at all, inline styles (the list page's), forms only to
// this server, no framing.
const baseCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// pageCSP is the policy of pprof's pages. Their scripts are inline, so each
// answer gets a nonce and only the script elements pprof writes carry it:
// javascript: URLs, event handler attributes and any other script are
// refused by the browser, whatever a profile's names contain.
//
// The one event handler attribute pprof writes (source.html's
// onClick="pprof_toggle_asm(event)") is allowed by its hash; 'unsafe-hashes'
// allows exactly the handlers (and javascript: URLs) with that text.
func pageCSP(nonce string) string {
	return "default-src 'none'; script-src 'nonce-" + nonce + "' 'unsafe-hashes' '" + toggleAsmHash + "'; " +
		"style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; " +
		"frame-ancestors 'none'; object-src 'none'"
}

// pprofHandler is the source view's event handler attribute.
const pprofHandler = "pprof_toggle_asm(event)"

// toggleAsmHash is pprofHandler's CSP hash source.
var toggleAsmHash = func() string {
	sum := sha256.Sum256([]byte(pprofHandler))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

// setSecurityHeaders sets the headers every answer carries.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", baseCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	// Profiles are sensitive: no shared or disk caches.
	h.Set("Cache-Control", "no-store")
}

// pageWriter holds a pprof page's answer so that its HTML can be given the
// nonce and its SVG cleaned before it is sent.
type pageWriter struct {
	w    http.ResponseWriter
	code int
	buf  bytes.Buffer
}

func (p *pageWriter) Header() http.Header { return p.w.Header() }

func (p *pageWriter) WriteHeader(code int) {
	if p.code == 0 {
		p.code = code
	}
}

func (p *pageWriter) Write(b []byte) (int, error) {
	if p.code == 0 {
		p.code = http.StatusOK
	}
	return p.buf.Write(b)
}

// finish sends the held answer: HTML gets its nonce and CSP, the inline
// graph loses any link; everything else goes out unchanged.
func (p *pageWriter) finish() error {
	if p.code == 0 {
		p.code = http.StatusOK
	}
	body := p.buf.Bytes()
	hdr := p.w.Header()
	ct := hdr.Get("Content-Type")
	if ct == "" && len(body) > 0 {
		ct = http.DetectContentType(body)
		hdr.Set("Content-Type", ct)
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "text/html" {
		nonce, err := newNonce()
		if err != nil {
			http.Error(p.w, "heapproxy: "+err.Error(), http.StatusInternalServerError)
			return err
		}
		body = stripSVGLinks(body)
		body = addNonce(body, nonce)
		hdr.Set("Content-Type", "text/html; charset=utf-8")
		hdr.Set("Content-Security-Policy", pageCSP(nonce))
	}
	hdr.Del("Content-Length")
	p.w.WriteHeader(p.code)
	if _, err := p.w.Write(body); err != nil {
		return fmt.Errorf("write page: %w", err)
	}
	return nil
}

func newNonce() (string, error) {
	var b [18]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("CSP nonce: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// pprofScriptTags are the opening tags of the script elements pprof's
// pages write: its templates' inline scripts and svgpan's in the graph.
// and the source view's from pprof's report package.
func pprofScriptTags() []string {
	return []string{`<script>`, `<script type="text/ecmascript">`, `<script type="text/javascript">`}
}

// addNonce gives pprof's script elements the answer's nonce. Names from a
// profile reach the page escaped (html/template, Graphviz), so they cannot
// form one of these tags.
func addNonce(body []byte, nonce string) []byte {
	for _, tag := range pprofScriptTags() {
		withNonce := strings.TrimSuffix(tag, ">") + ` nonce="` + nonce + `">`
		body = bytes.ReplaceAll(body, []byte(tag), []byte(withNonce))
	}
	return body
}

const (
	svgStart   = "<svg"
	svgEnd     = "</svg>"
	cdataStart = "<![CDATA["
	cdataEnd   = "]]>"
)

var (
	// svgTag is a tag in Graphviz's SVG; svgLink one of its link attributes.
	svgTag  = regexp.MustCompile(`<[A-Za-z][^<>]*>`)
	svgLink = regexp.MustCompile(`\s(?:xlink:)?href\s*=\s*(?:"[^"]*"|'[^']*')`)
)

// stripSVGLinks removes every link attribute from the tags of the page's
// inline SVG. pprof's graph page links nothing (its script handles clicks),
// so a link there could only come from a name that made it into the DOT
// source as markup: it must not become a javascript: or phishing link.
// svgpan's script (in a CDATA section) is left as it is.
func stripSVGLinks(body []byte) []byte {
	start := bytes.Index(body, []byte(svgStart))
	end := bytes.LastIndex(body, []byte(svgEnd))
	if start < 0 || end < start {
		return body
	}
	var out bytes.Buffer
	out.Grow(len(body))
	out.Write(body[:start])
	rest := body[start:end]
	for len(rest) > 0 {
		cs := bytes.Index(rest, []byte(cdataStart))
		if cs < 0 {
			out.Write(cleanTags(rest))
			break
		}
		out.Write(cleanTags(rest[:cs]))
		ce := bytes.Index(rest[cs:], []byte(cdataEnd))
		if ce < 0 {
			out.Write(rest[cs:])
			break
		}
		ce += cs + len(cdataEnd)
		out.Write(rest[cs:ce])
		rest = rest[ce:]
	}
	out.Write(body[end:])
	return out.Bytes()
}

func cleanTags(b []byte) []byte {
	return svgTag.ReplaceAllFunc(b, func(tag []byte) []byte {
		return svgLink.ReplaceAll(tag, nil)
	})
}
