package backends

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// describe says in words what a node's answer is, for error messages:
// binary data (gzip, protobuf, anything not text) is named, never quoted;
// an HTML page is named with its title; text is quoted, cut to
// snippetBytes, with control characters escaped.
func describe(b []byte) string {
	size := strconv.Itoa(len(b)) + " bytes"
	s := bytes.TrimSpace(b)
	switch {
	case len(s) == 0:
		return "an empty answer"
	case isGzip(s):
		return "gzip data (" + size + ")"
	case hasPrefixLine(s, "heap_v2/"):
		return "a jemalloc heap_v2 dump (" + size + ")"
	case hasPrefixLine(s, "heap profile:"):
		return "a gperftools heap profile (" + size + ")"
	case bytes.HasPrefix(s, []byte("digraph ")):
		return "a DOT graph (" + size + ")"
	case isHTML(s):
		if t := htmlTitle(s); t != "" {
			return fmt.Sprintf("an HTML page titled %q (%s)", t, size)
		}
		return "an HTML page (" + size + ")"
	case !isText(s[:min(len(s), 512)]):
		return fmt.Sprintf("%s of binary data starting 0x%x", size, s[:min(len(s), 8)])
	case (s[0] == '{' || s[0] == '[') && json.Valid(s):
		return "JSON " + quoteText(s)
	}
	return quoteText(s)
}

// snippet is describe, for the bodies errors show.
func snippet(b []byte) string { return describe(b) }

// quoteText quotes at most snippetBytes of text.
func quoteText(s []byte) string {
	if len(s) > snippetBytes {
		cut := snippetBytes
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// isText reports whether b looks like text: valid UTF-8 (a cut last rune
// allowed) without control characters other than white space.
func isText(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return len(b) < utf8.UTFMax && !utf8.FullRune(b)
		}
		if unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' {
			return false
		}
		b = b[size:]
	}
	return true
}

func isHTML(s []byte) bool {
	head := bytes.ToLower(s[:min(len(s), 512)])
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.HasPrefix(head, []byte("<html")) ||
		(head[0] == '<' && bytes.Contains(head, []byte("<body")))
}

// htmlTitle is the page's <title>, cut to 80 bytes, or "".
func htmlTitle(s []byte) string {
	low := bytes.ToLower(s[:min(len(s), 4096)])
	i := bytes.Index(low, []byte("<title>"))
	if i < 0 {
		return ""
	}
	rest := s[i+len("<title>") : len(low)]
	j := bytes.Index(bytes.ToLower(rest), []byte("</title>"))
	if j < 0 {
		return ""
	}
	t := bytes.TrimSpace(rest[:j])
	if len(t) > 80 || !isText(t) {
		return ""
	}
	return string(t)
}
