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
