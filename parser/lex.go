package parser

import (
	"strings"
)

// tokKind is the kind of a token of the SQL lexer.
type tokKind int

const (
	tokEOF    tokKind = iota
	tokWord           // identifier or keyword: letters, digits, _, $, non-ASCII bytes
	tokNumber         // a word made only of decimal digits
	tokString         // '...' or "..." (Text is the raw literal, quotes included)
	tokPunct          // any other single byte: , ; ( ) ...
)

type token struct {
	kind tokKind
	text string // the token's source text
	pos  int    // byte offset of text in the source
}

// lexer is a small MySQL lexer: just enough to find the first keywords of a
// statement and to read the ADMIN EXECUTE / SHOW BACKENDS grammars exactly.
// It works on the source string without copying, so classification of
// forwarded statements does not allocate.
type lexer struct {
	src    string
	pos    int
	inExec bool // inside a /*! ... */ executable comment, whose body is code
}

// skip moves past whitespace and comments. MySQL's executable comments
// (/*! ... */, /*!50001 ... */, MariaDB's /*M!100100 ... */) are code: only
// their opener and closer are skipped.
func (l *lexer) skip() {
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.pos++
		case c == '#':
			l.skipLine()
		case c == '-' && strings.HasPrefix(l.src[l.pos:], "--") &&
			(l.pos+2 == len(l.src) || isDashCommentSpace(l.src[l.pos+2])):
			l.skipLine()
		case c == '*' && l.inExec && strings.HasPrefix(l.src[l.pos:], "*/"):
			l.pos += 2
			l.inExec = false
		case c == '/' && strings.HasPrefix(l.src[l.pos:], "/*"):
			rest := l.src[l.pos+2:]
			switch {
			case strings.HasPrefix(rest, "!"):
				l.pos += 3
				l.skipVersion()
				l.inExec = true
			case strings.HasPrefix(rest, "M!"):
				l.pos += 4
				l.skipVersion()
				l.inExec = true
			default:
				end := strings.Index(rest, "*/")
				if end < 0 {
					// An unterminated comment runs to the end.
					l.pos = len(l.src)
				} else {
					l.pos += 2 + end + 2
				}
			}
		default:
			return
		}
	}
}

// isDashCommentSpace reports whether c may follow "--" to start a comment:
// MySQL needs a whitespace or control character there.
func isDashCommentSpace(c byte) bool {
	return c <= ' '
}

func (l *lexer) skipLine() {
	end := strings.IndexByte(l.src[l.pos:], '\n')
	if end < 0 {
		l.pos = len(l.src)
		return
	}
	l.pos += end + 1
}

// skipVersion skips the optional server version after /*! (5 or 6 digits).
func (l *lexer) skipVersion() {
	for n := 0; n < 6 && l.pos < len(l.src) && isDigit(l.src[l.pos]); n++ {
		l.pos++
	}
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '$' || c >= 0x80
}

// next returns the next token after whitespace and comments.
func (l *lexer) next() token {
	l.skip()
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tokEOF, pos: start}
	}
	c := l.src[start]
	switch {
	case isWordByte(c):
		allDigits := true
		for l.pos < len(l.src) && isWordByte(l.src[l.pos]) {
			allDigits = allDigits && isDigit(l.src[l.pos])
			l.pos++
		}
		kind := tokWord
		if allDigits {
			kind = tokNumber
		}
		return token{kind: kind, text: l.src[start:l.pos], pos: start}
	case c == '\'' || c == '"':
		l.pos = scanQuoted(l.src, start)
		return token{kind: tokString, text: l.src[start:l.pos], pos: start}
	case c == '`':
		l.pos = scanQuoted(l.src, start)
		return token{kind: tokPunct, text: l.src[start:l.pos], pos: start}
	default:
		l.pos++
		return token{kind: tokPunct, text: l.src[start:l.pos], pos: start}
	}
}

// scanQuoted returns the offset just past the quoted literal starting at
// src[start], or len(src) if it is not terminated. Backslash escapes and
// doubled quotes are honoured (backticks have no backslash escapes).
func scanQuoted(src string, start int) int {
	q := src[start]
	i := start + 1
	for i < len(src) {
		c := src[i]
		switch {
		case c == '\\' && q != '`':
			i += 2
		case c == q:
			if i+1 < len(src) && src[i+1] == q {
				i += 2
				continue
			}
			return i + 1
		default:
			i++
		}
	}
	return len(src)
}

// isTerminated reports whether a tokString's text ends with its closing quote
// (and not with an escaped quote, as in 'abc\').
func isTerminated(lit string) bool {
	q := lit[0]
	for i := 1; i < len(lit); i++ {
		switch lit[i] {
		case '\\':
			i++
		case q:
			if i+1 < len(lit) && lit[i+1] == q {
				i++
				continue
			}
			return i == len(lit)-1
		}
	}
	return false
}

// unquoteSQL decodes a MySQL string literal (quotes included) with the
// escapes of the default sql_mode: \0 \' \" \b \n \r \t \Z \\, \% and \_
// kept with their backslash, any other \x as x, and a doubled quote as one.
func unquoteSQL(lit string) string {
	body := lit[1 : len(lit)-1]
	q := lit[0]
	if strings.IndexByte(body, '\\') < 0 && strings.IndexByte(body, q) < 0 {
		return body
	}
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == q { // doubled quote
			b.WriteByte(q)
			i++
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		if e, ok := sqlEscape(body[i]); ok {
			b.WriteString(e)
		} else {
			b.WriteByte(body[i])
		}
	}
	return b.String()
}

// sqlEscape returns what \c decodes to in a MySQL string literal; false
// means c stands for itself.
func sqlEscape(c byte) (string, bool) {
	switch c {
	case '0':
		return "\x00", true
	case 'b':
		return "\b", true
	case 'n':
		return "\n", true
	case 'r':
		return "\r", true
	case 't':
		return "\t", true
	case 'Z':
		return "\x1a", true
	case '%':
		return `\%`, true
	case '_':
		return `\_`, true
	}
	return "", false
}

// sqlOffset maps an offset in the decoded value of lit back to the offset
// in lit itself, so errors in a script point into the SQL text.
func sqlOffset(lit string, decoded int) int {
	q := lit[0]
	n := 0
	i := 1
	for i < len(lit)-1 && n < decoded {
		c := lit[i]
		switch {
		case c == q:
			i += 2
			n++
		case c == '\\' && i+2 < len(lit):
			if e, ok := sqlEscape(lit[i+1]); ok {
				n += len(e)
			} else {
				n++
			}
			i += 2
		default:
			i++
			n++
		}
	}
	return i
}

// quoteSQL renders s as a single-quoted MySQL literal that unquoteSQL decodes back to s.
func quoteSQL(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case 0:
			b.WriteString(`\0`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0x1a:
			b.WriteString(`\Z`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// keyword reports whether word equals kw (upper-case ASCII) ignoring case.
func keyword(word, kw string) bool {
	if len(word) != len(kw) {
		return false
	}
	for i := 0; i < len(kw); i++ {
		c := word[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c != kw[i] {
			return false
		}
	}
	return true
}
