// Package funcname holds jeprof's shortening of function names, shared by
// the symbolizer (which needs it to pick nm's symbol for a PC) and the
// renderer (which labels nodes with it).
package funcname

import "strings"

// Short is jeprof's ShortFunctionName, the node label of a C++ or C
// function: argument lists (with a trailing const), template arguments and
// a leading return type removed. jeprof applies three regular expressions:
//
//	1 while s/\([^()]*\)(\s*const)?//g;   # argument lists, innermost first
//	1 while s/<[^<>]*>//g;                 # template arguments
//	s/^.*\s+(\w+::)/$1/;                   # a leading return type
//
// Removing innermost pairs until none is left is what one pass with a
// stack of open brackets does; the regular expressions took a third of a
// cold call's answering time on template-heavy C++ names.
// TestShort checks this against the expressions.
func Short(s string) string {
	s = dropPairs(s, '(', ')', true)
	s = dropPairs(s, '<', '>', false)
	return dropLeadingType(s)
}

// dropPairs removes every matched open...close pair with its contents,
// and, with constSuffix, whitespace and "const" right after a removed pair.
// Unmatched brackets stay.
func dropPairs(s string, open, close byte, constSuffix bool) string {
	if strings.IndexByte(s, open) < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	var stack []int // output lengths at the open brackets not yet closed
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == open:
			stack = append(stack, len(out))
			out = append(out, c)
		case c == close && len(stack) > 0:
			out = out[:stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			if constSuffix {
				j := i + 1
				for j < len(s) && isSpace(s[j]) {
					j++
				}
				if strings.HasPrefix(s[j:], "const") {
					i = j + len("const") - 1
				}
			}
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

// dropLeadingType is s/^.*\s+(\w+::)/$1/: everything up to the last run
// of whitespace starting on the first line that is followed by a word and
// "::".
func dropLeadingType(s string) string {
	limit := len(s)
	if nl := strings.IndexByte(s, '\n'); nl >= 0 {
		limit = nl + 1 // "." does not match a newline; "\s" does
	}
	for i := limit - 1; i >= 0; i-- {
		if !isSpace(s[i]) {
			continue
		}
		w := i + 1 // the word starts after the whitespace run
		for w < len(s) && isSpace(s[w]) {
			w++
		}
		j := w
		for j < len(s) && isWordChar(s[j]) {
			j++
		}
		if j > w && strings.HasPrefix(s[j:], "::") {
			return s[w:]
		}
	}
	return s
}

// isSpace is RE2's \s.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// isWordChar is RE2's \w.
func isWordChar(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// Pprof is the name `go tool pprof` gives a function in its graphs (the
// shortening of pprof's internal/graph ShortenFunctionName), used for the
// nodes of profiles from Go programs. It removes:
//
//   - a leading "(anonymous namespace)::";
//   - the first major-version element of a Go module path ("/v2" to "/v99…"
//     followed by "/" or "."): "github.com/a/b/v4.F" is "github.com/a/b.F";
//   - a Go package path up to its last element: "net/http.(*conn).serve" is
//     "http.(*conn).serve", keeping receivers, closures ("F.func1") and type
//     parameters ("F[...]"), so distinct methods keep distinct names;
//   - otherwise a Java package and argument list ("java.util.Map.get(...)"
//     is "Map.get"; this also turns a Go value-receiver method with a
//     lower-case name and no package path, "main.T.m", into "T.m", as pprof
//     does);
//   - otherwise the C++ namespaces before a capitalised class
//     ("ns::Class::method" is "Class::method").
//
// Names matching none of these (C functions, "runtime.main") are returned
// as they are. TestPprofAgainstGoTool checks it against `go tool pprof`.
func Pprof(s string) string {
	s = strings.TrimPrefix(s, "(anonymous namespace)::")
	s = dropMajorVersion(s)
	if r, ok := goPackageTail(s); ok {
		return r
	}
	if r, ok := javaMethod(s); ok {
		return r
	}
	if r, ok := cppMethod(s); ok {
		return r
	}
	return s
}

// dropMajorVersion removes the first "/vN" (N a number from 2 without
// leading zeros) that is followed by "/" or ".". Names spanning lines are
// left alone, as pprof leaves them.
func dropMajorVersion(s string) string {
	if strings.IndexByte(s, '\n') >= 0 {
		return s
	}
	for i := 0; i+2 < len(s); i++ {
		if s[i] != '/' || s[i+1] != 'v' {
			continue
		}
		j := i + 2
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		d := s[i+2 : j]
		if j == len(s) || (s[j] != '/' && s[j] != '.') || d == "" || d[0] == '0' || d == "1" {
			continue
		}
		return s[:i] + s[j:]
	}
	return s
}

// goPackageTail drops the longest run of path elements ([\w.-]+ each,
// ending in "/") from the start of s that leaves a name of the form
// "pkg.rest": something without a dot, a dot, then at least one more
// character on the same line.
func goPackageTail(s string) (string, bool) {
	var slashes []int
	start := 0 // where the current path element starts
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '/' {
			if i == start {
				break // an empty element
			}
			slashes = append(slashes, i)
			start = i + 1
			continue
		}
		if !isWordChar(c) && c != '.' && c != '-' {
			break
		}
	}
	for k := len(slashes) - 1; k >= 0; k-- {
		r := s[slashes[k]+1:]
		dot := strings.IndexByte(r, '.')
		if dot < 1 || dot+1 >= len(r) || r[dot+1] == '\n' {
			continue
		}
		end := len(r)
		if nl := strings.IndexByte(r[dot+1:], '\n'); nl >= 0 {
			end = dot + 1 + nl
		}
		return r[:end], true
	}
	return "", false
}

// javaMethod finds "Class.method" after a lower-case package
// ("a.b.Class.method" or "a.b.Class.<init>"), which must end s or be
// followed by "(".
func javaMethod(s string) (string, bool) {
	i := 0
	for {
		// A package element: [a-z]\w* and a dot.
		if i >= len(s) || s[i] < 'a' || s[i] > 'z' {
			break
		}
		j := i + 1
		for j < len(s) && isWordChar(s[j]) {
			j++
		}
		if j >= len(s) || s[j] != '.' {
			break
		}
		i = j + 1
	}
	if i >= len(s) || s[i] < 'A' || s[i] > 'Z' {
		return "", false
	}
	j := i + 1
	for j < len(s) && (isWordChar(s[j]) || s[j] == '$') {
		j++
	}
	if j >= len(s) || s[j] != '.' {
		return "", false
	}
	j++
	switch {
	case strings.HasPrefix(s[j:], "<init>"):
		j += len("<init>")
	case j < len(s) && s[j] >= 'a' && s[j] <= 'z':
		for j++; j < len(s) && (isWordChar(s[j]) || s[j] == '$'); j++ {
		}
	default:
		return "", false
	}
	if j < len(s) && s[j] != '(' {
		return "", false
	}
	return s[i:j], true
}

// cppMethod finds the last "Class::member" after at least one namespace
// ("ns::Class::member"), Class starting with underscores and a capital, a
// destructor's "~" kept, and a template argument list right after member
// kept up to the last ">" on its line. What follows is dropped.
func cppMethod(s string) (string, bool) {
	var idents []int // start of each identifier followed by "::"
	for i := 0; ; {
		j := identEnd(s, i)
		if j == i || !strings.HasPrefix(s[j:], "::") {
			break
		}
		idents = append(idents, i)
		i = j + 2
	}
	for k := len(idents) - 1; k >= 1; k-- {
		c := idents[k]
		u := c
		for u < len(s) && s[u] == '_' {
			u++
		}
		if u >= len(s) || s[u] < 'A' || s[u] > 'Z' {
			continue
		}
		m := identEnd(s, c) + 2 // the member
		if m < len(s) && s[m] == '~' && identEnd(s, m+1) > m+1 {
			m++
		}
		e := identEnd(s, m)
		if e == m {
			continue
		}
		if e < len(s) && s[e] == '<' {
			line := s[e+1:]
			if nl := strings.IndexByte(line, '\n'); nl >= 0 {
				line = line[:nl]
			}
			if g := strings.LastIndexByte(line, '>'); g >= 0 {
				e += 1 + g + 1
			}
		}
		return s[c:e], true
	}
	return "", false
}

// identEnd returns the end of the identifier ([_a-zA-Z]\w*) at s[i:], or i
// if there is none.
func identEnd(s string, i int) int {
	if i >= len(s) || !(s[i] == '_' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		return i
	}
	j := i + 1
	for j < len(s) && isWordChar(s[j]) {
		j++
	}
	return j
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
