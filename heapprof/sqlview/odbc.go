package sqlview

// ODBC's escape sequences, which MariaDB's parser reads itself (sql_yacc.yy
// `'{' ident expr '}'`) and ODBC tools send as they are: {d '2026-11-20'},
// {t '10:00:00'}, {ts '2026-11-20 10:00:00'}, {fn UCASE(x)},
// {fn TIMESTAMPDIFF(SQL_TSI_HOUR, a, b)}, {oj a LEFT OUTER JOIN b ON ...}.
// The parser has none of them (ERROR 1064). odbcEscapes writes a
// statement without them: a {d|t|ts 'text'} whose text is a whole date,
// time or datetime becomes CAST('text' AS DATE|TIME(n)|DATETIME(n)) (the
// typed literal MariaDB makes), any other text stays the string, and any
// other escape is its expression. A select item is named by the text as
// written, as MariaDB names it (but a literal by its value, as MariaDB's
// Item_string and Item_int name themselves).

import (
	"fmt"
	"sort"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// textEdit replaces query[start:end] by with.
type textEdit struct {
	start, end int
	with       string
}

// odbcEscapes are the edits that write query's ODBC escapes out (none
// when it has none, or its braces do not pair).
func odbcEscapes(toks []token) []textEdit {
	var edits []textEdit
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].kind != '{' || toks[i+1].kind != 'w' {
			continue
		}
		j, depth := i, 0
		for ; j < len(toks); j++ {
			switch toks[j].kind {
			case '{':
				depth++
			case '}':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if j == len(toks) {
			return nil
		}
		inner := toks[i+2 : j]
		if kind := strings.ToLower(toks[i+1].text); len(inner) == 1 && inner[0].kind == 's' && (kind == "d" || kind == "t" || kind == "ts") {
			lit := inner[0]
			with := odbcLiteral(kind, lit.text)
			if with == "" {
				with = "'" + strings.ReplaceAll(lit.text, "'", "''") + "'"
			}
			edits = append(edits, textEdit{toks[i].start, toks[j].end, with})
			i = j
			continue
		}
		edits = append(edits, textEdit{toks[i].start, toks[i+1].end, ""}, textEdit{toks[j].start, toks[j].end, ""})
	}
	sort.Slice(edits, func(a, b int) bool { return edits[a].start < edits[b].start })
	return edits
}

// odbcLiteral is the typed literal MariaDB makes of {kind 'text'}: a CAST
// when text is a whole value of the kind (a date for d, a datetime for
// ts, a time for t, with nothing cut), else "".
func odbcLiteral(kind, text string) string {
	quoted := "'" + strings.ReplaceAll(text, "'", "''") + "'"
	switch kind {
	case "d":
		if d := readDateText(text); d.read && !d.datetime && !d.truncated && !d.badDay {
			return "CAST(" + quoted + " AS DATE)"
		}
	case "ts":
		if d := readDateText(text); d.read && d.datetime && !d.truncated && !d.badDay {
			return fmt.Sprintf("CAST(%s AS DATETIME(%d))", quoted, d.fracDigits)
		}
	case "t":
		if t := readTimeText(text); t.read && t.datetime == nil && !t.truncated {
			digits, _ := timeTextDigits(text)
			return fmt.Sprintf("CAST(%s AS TIME(%d))", quoted, min(digits, maxFractionDigits))
		}
	}
	return ""
}

// applyEdits is query with edits made, and the position in query of a
// position in the result (end: of a span's end).
func applyEdits(query string, edits []textEdit) (string, func(pos int, end bool) int) {
	type segment struct{ from, to, origFrom, origTo int }
	var b strings.Builder
	var segs []segment
	last := 0
	for _, e := range edits {
		b.WriteString(query[last:e.start])
		at := b.Len()
		b.WriteString(e.with)
		segs = append(segs, segment{at, b.Len(), e.start, e.end})
		last = e.end
	}
	b.WriteString(query[last:])
	orig := func(pos int, end bool) int {
		shift := 0
		for _, s := range segs {
			switch {
			case pos < s.from || pos == s.from && !end:
				return pos + shift
			case pos < s.to || pos == s.to && end:
				if end {
					return s.origTo
				}
				return s.origFrom
			}
			shift = s.origTo - s.to
		}
		return pos + shift
	}
	return b.String(), orig
}

// odbcNames names the select items of st, parsed from the edited text,
// by the text query wrote (a literal keeps the name of its value).
func odbcNames(st ast.Statement, query string, orig func(int, bool) int) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		ae, ok := node.(*ast.AliasedExpr)
		if !ok || ae.InputExpression == "" || ae.EndParsePos <= ae.StartParsePos {
			return true, nil
		}
		if _, lit := ae.Expr.(*ast.SQLVal); lit {
			return true, nil
		}
		from, to := orig(ae.StartParsePos, false), orig(ae.EndParsePos, true)
		if from >= 0 && from < to && to <= len(query) {
			if name := spanText(query[from:to]); name != "" {
				ae.InputExpression = name
			}
		}
		return true, nil
	}, st)
}
