package parser

import (
	"fmt"
	"strconv"
)

// Error is a syntax error in a statement heapproxy parses itself (ADMIN EXECUTE,
// SHOW BACKENDS, the HeapProf script). The server sends it to the client as
// MySQL error 1064, so Msg says what to write instead.
type Error struct {
	// Msg says what was expected and what was found.
	Msg string
	// Pos is the 0-based byte offset in the input where the problem is.
	Pos int
	// Hint, when set, lists what is accepted (e.g. the supported methods).
	Hint string
	// NotHeapProf marks a well-formed ADMIN EXECUTE whose script is not a
	// System.print(HeapProf...) call at all: another of the FE's scripts,
	// which a proxy in front of a StarRocks FE hands to the FE.
	NotHeapProf bool
}

func (e *Error) Error() string {
	s := e.Msg + " at position " + strconv.Itoa(e.Pos)
	if e.Hint != "" {
		s += "; " + e.Hint
	}
	return s
}

func errorf(pos int, format string, args ...any) *Error {
	return &Error{Msg: fmt.Sprintf(format, args...), Pos: pos}
}

// quoteFound renders the text found at an error position for a message:
// "end of statement" at the end, else the token quoted and cut to a short length.
func quoteFound(tok string) string {
	if tok == "" {
		return "end of statement"
	}
	const max = 40
	if len(tok) > max {
		tok = tok[:max] + "..."
	}
	return strconv.Quote(tok)
}
