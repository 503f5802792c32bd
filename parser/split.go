package parser

import "strings"

// Split cuts a multi-statement COM_QUERY text (CLIENT_MULTI_STATEMENTS) into
// its statements at the semicolons outside literals, quoted identifiers and
// comments, as the server would. Statements that are empty (only
// whitespace and comments) are dropped; a text without semicolons is
// returned whole.
func Split(sql string) []string {
	if strings.IndexByte(sql, ';') < 0 {
		return []string{sql}
	}
	var out []string
	l := lexer{src: sql}
	start, empty := 0, true
	for {
		t := l.next()
		if t.kind == tokEOF || t.kind == tokPunct && t.text == ";" {
			if !empty {
				out = append(out, sql[start:t.pos])
			}
			if t.kind == tokEOF {
				return out
			}
			start, empty = l.pos, true
			continue
		}
		empty = false
	}
}
