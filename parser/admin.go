package parser

import (
	"strconv"
	"strings"
)

// Target is the ON clause of ADMIN EXECUTE: exactly one of its forms is set.
type Target struct {
	// Frontend is ON FRONTEND: heapproxy itself.
	Frontend bool
	// IDs is ON <id> or ON <id>, <id>, ... in the order written.
	IDs []int64
	// AllBackends is ON ALL BACKENDS.
	AllBackends bool
	// AllComputeNodes is ON ALL COMPUTE NODES.
	AllComputeNodes bool
}

// String renders the target as written after ON.
func (t Target) String() string {
	switch {
	case t.Frontend:
		return "FRONTEND"
	case t.AllBackends:
		return "ALL BACKENDS"
	case t.AllComputeNodes:
		return "ALL COMPUTE NODES"
	}
	var b strings.Builder
	for i, id := range t.IDs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	return b.String()
}

// AdminExecuteStmt is ADMIN EXECUTE ON <Target> '<Script>'.
type AdminExecuteStmt struct {
	Target Target
	// Script is the decoded string literal.
	Script string
	// Call is the parsed Script.
	Call Call
}

// String renders the statement in canonical form; Classify of it gives a.
func (a *AdminExecuteStmt) String() string {
	return "ADMIN EXECUTE ON " + a.Target.String() + " " + quoteSQL(a.Script)
}

const targetExpected = "expected node id, list of ids, ALL BACKENDS, ALL COMPUTE NODES or FRONTEND after ON"

// parseAdminExecute parses the rest of ADMIN EXECUTE after the two keywords.
func parseAdminExecute(l *lexer) (*AdminExecuteStmt, error) {
	t := l.next()
	if t.kind != tokWord || !keyword(t.text, "ON") {
		return nil, errorf(t.pos, "ADMIN EXECUTE: expected ON after ADMIN EXECUTE, got %s", quoteFound(t.text))
	}
	var a AdminExecuteStmt
	t = l.next()
	switch {
	case t.kind == tokWord && keyword(t.text, "FRONTEND"):
		a.Target.Frontend = true
	case t.kind == tokWord && keyword(t.text, "ALL"):
		t = l.next()
		switch {
		case t.kind == tokWord && keyword(t.text, "BACKENDS"):
			a.Target.AllBackends = true
		case t.kind == tokWord && keyword(t.text, "COMPUTE"):
			t = l.next()
			if t.kind != tokWord || !keyword(t.text, "NODES") {
				return nil, errorf(t.pos, "ADMIN EXECUTE: expected NODES after ON ALL COMPUTE, got %s", quoteFound(t.text))
			}
			a.Target.AllComputeNodes = true
		default:
			return nil, errorf(t.pos, "ADMIN EXECUTE: expected BACKENDS or COMPUTE NODES after ON ALL, got %s", quoteFound(t.text))
		}
	case t.kind == tokNumber:
		for {
			id, err := strconv.ParseInt(t.text, 10, 64)
			if err != nil {
				return nil, errorf(t.pos, "ADMIN EXECUTE: node id %s is out of range", t.text)
			}
			a.Target.IDs = append(a.Target.IDs, id)
			save := l.pos
			t = l.next()
			if t.kind != tokPunct || t.text != "," {
				l.pos = save
				break
			}
			t = l.next()
			if t.kind != tokNumber {
				return nil, errorf(t.pos, "ADMIN EXECUTE: expected node id after \",\", got %s", quoteFound(t.text))
			}
		}
	default:
		return nil, errorf(t.pos, "ADMIN EXECUTE: %s, got %s", targetExpected, quoteFound(t.text))
	}
	t = l.next()
	if t.kind != tokString {
		return nil, errorf(t.pos, "ADMIN EXECUTE: expected the script as a quoted string after ON %s, got %s", a.Target, quoteFound(t.text))
	}
	if !isTerminated(t.text) {
		return nil, errorf(t.pos, "ADMIN EXECUTE: unterminated string literal")
	}
	a.Script = unquoteSQL(t.text)
	call, err := ParseScript(a.Script)
	if err != nil {
		se := err.(*Error)
		return nil, &Error{Msg: "ADMIN EXECUTE " + se.Msg, Pos: t.pos + sqlOffset(t.text, se.Pos), Hint: se.Hint, NotHeapProf: se.NotHeapProf}
	}
	a.Call = call
	if err := expectEnd(l, "ADMIN EXECUTE: expected end of statement after the script"); err != nil {
		return nil, err
	}
	return &a, nil
}

// expectEnd accepts an optional ';' and then the end of input.
func expectEnd(l *lexer, what string) *Error {
	t := l.next()
	if t.kind == tokPunct && t.text == ";" {
		t = l.next()
	}
	if t.kind != tokEOF {
		return errorf(t.pos, "%s, got %s", what, quoteFound(t.text))
	}
	return nil
}
