package sqlview

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// MySQL syntax go-mysql-server's parser (dolthub/vitess) lacks. When it
// rejects a statement, the statement is looked at once more, token by
// token: the forms BI tools send are answered with the statement MySQL
// means (built as a parse tree, or with a keyword column quoted as MySQL's
// lexer reads it after a dot), and the forms the engine cannot run fail
// with ERROR 1235 naming what is unsupported instead of a bare 1064.

// token is one lexical token of a statement: kind is 'w' (a bare word),
// 'q' (a `quoted` identifier), 's' (a string literal), 'n' (a number) or
// the punctuation byte itself.
type token struct {
	kind       byte
	text       string // the word, the unquoted identifier or string
	start, end int
}

// tokens splits query, skipping comments (but not the contents of MySQL's
// executable /*! ... */ comments). It never fails: an unterminated quote
// runs to the end.
func tokens(query string) []token {
	var out []token
	i := 0
	for i < len(query) {
		c := query[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' || (c == '-' && strings.HasPrefix(query[i:], "-- ")):
			for i < len(query) && query[i] != '\n' {
				i++
			}
		case strings.HasPrefix(query[i:], "/*!") || strings.HasPrefix(query[i:], "/*M!"):
			i += 3
			for i < len(query) && (query[i] == '!' || query[i] >= '0' && query[i] <= '9') {
				i++
			}
		case strings.HasPrefix(query[i:], "*/"):
			i += 2
		case strings.HasPrefix(query[i:], "/*"):
			end := strings.Index(query[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 4
		case c == '\'' || c == '"' || c == '`':
			var b strings.Builder
			j := i + 1
			for j < len(query) {
				if query[j] == '\\' && c != '`' && j+1 < len(query) {
					b.WriteByte(query[j+1])
					j += 2
					continue
				}
				if query[j] == c {
					if j+1 < len(query) && query[j+1] == c {
						b.WriteByte(c)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(query[j])
				j++
			}
			kind := byte('s')
			if c == '`' {
				kind = 'q'
			}
			out = append(out, token{kind: kind, text: b.String(), start: i, end: min(j+1, len(query))})
			i = j + 1
		case isWordByte(c):
			j := i
			for j < len(query) && isWordByte(query[j]) {
				j++
			}
			kind := byte('w')
			if c >= '0' && c <= '9' {
				kind = 'n'
			}
			out = append(out, token{kind: kind, text: query[i:j], start: i, end: j})
			i = j
		case c == ':' && strings.HasPrefix(query[i:], ":="):
			out = append(out, token{kind: '=', text: ":=", start: i, end: i + 2})
			i += 2
		default:
			out = append(out, token{kind: c, text: query[i : i+1], start: i, end: i + 1})
			i++
		}
	}
	return out
}

func isWordByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (t token) is(word string) bool { return t.kind == 'w' && strings.EqualFold(t.text, word) }

func (t token) isName() bool { return t.kind == 'q' || t.kind == 'w' }

// errUnsupported is ERROR 1235 naming what the engine does not do.
func errUnsupported(what string) *Error {
	return &Error{Code: mysql.ERNotSupportedYet, State: mysql.SSClientError,
		Message: "heapprof's SQL engine (go-mysql-server) does not support " + what}
}

// reparse is the second look at a statement the parser rejected with
// parseErr: a parse tree for what MySQL means and the text it was parsed
// from, a 1235 for what the engine cannot do, else parseErr.
func (e *Engine) reparse(query string, parseErr error) (ast.Statement, string, error) {
	if rewritten, ok := rewriteAssignments(query); ok {
		if st, err := ast.Parse(rewritten); err == nil {
			return st, rewritten, nil
		}
		query = rewritten // perhaps also a form below
	}
	toks := tokens(query)
	if st := describeColumns(toks); st != nil {
		return st, query, nil
	}
	if quoted, units, ok := quoteIntervalUnits(query, toks); ok {
		if st, err := ast.Parse(quoted); err == nil {
			unquoteUnitNames(st, units)
			return st, quoted, nil
		}
	}
	if edits := odbcEscapes(toks); edits != nil {
		written, orig := applyEdits(query, edits)
		st, err := ast.Parse(written)
		if err != nil {
			// {fn TIMESTAMPDIFF(SQL_TSI_HOUR, ...)}: ODBC's units too.
			if plain, _, ok := plainTSIUnits(written, tokens(written)); ok {
				if st, err = ast.Parse(plain); err == nil {
					written = plain
				}
			}
		}
		if err == nil {
			odbcNames(st, query, orig)
			return st, written, nil
		}
	}
	if plain, spans, ok := plainTSIUnits(query, toks); ok {
		if st, err := ast.Parse(plain); err == nil {
			tsiUnitNames(st, query, spans)
			return st, plain, nil
		}
	}
	if quoted, ok := quoteQualifiedKeywords(query, toks); ok {
		if st, err := ast.Parse(quoted); err == nil {
			return st, quoted, nil
		}
	}
	if edits := rollupEdits(toks); edits != nil {
		written, _ := applyEdits(query, edits)
		if st, err := ast.Parse(written); err == nil {
			return st, written, nil // rollups rewrites the marked SELECTs
		}
	}
	return nil, "", parseErr
}

// describeColumns reads MySQL's DESCRIBE/DESC/EXPLAIN table column_or_wild
// (Perl DBI's column_info sends DESCRIBE t 'col%'): SHOW COLUMNS FROM table
// LIKE pattern, as MySQL answers it.
func describeColumns(toks []token) ast.Statement {
	if len(toks) > 0 && toks[len(toks)-1].kind == ';' {
		toks = toks[:len(toks)-1]
	}
	if len(toks) < 3 || !(toks[0].is("DESCRIBE") || toks[0].is("DESC") || toks[0].is("EXPLAIN")) || !toks[1].isName() {
		return nil
	}
	table := ast.TableName{Name: ast.NewTableIdent(toks[1].text)}
	rest := toks[2:]
	if len(rest) >= 2 && rest[0].kind == '.' && rest[1].isName() {
		table = ast.TableName{DbQualifier: ast.NewTableIdent(toks[1].text), Name: ast.NewTableIdent(rest[1].text)}
		rest = rest[2:]
	}
	if len(rest) != 1 || !(rest[0].kind == 's' || rest[0].isName()) {
		return nil
	}
	return &ast.Show{Type: "columns", Table: table,
		ShowTablesOpt: &ast.ShowTablesOpt{Filter: &ast.ShowFilter{Like: rest[0].text}}}
}

// quoteQualifiedKeywords quotes the last part of a three-part name
// db.table.column when it is a bare word: after a dot MySQL reads any word
// as an identifier (heapprof.snapshots.format, as SQLAlchemy and pandas
// write it), the parser only non-keywords. Nothing else changes.
func quoteQualifiedKeywords(query string, toks []token) (string, bool) {
	var b strings.Builder
	last := 0
	for i := 4; i < len(toks); i++ {
		t := toks[i]
		if t.kind != 'w' || toks[i-1].kind != '.' || toks[i-3].kind != '.' || !toks[i-2].isName() || !toks[i-4].isName() ||
			toks[i-1].start != toks[i-2].end || toks[i-1].end != t.start {
			continue
		}
		b.WriteString(query[last:t.start])
		b.WriteString("`" + t.text + "`")
		last = t.end
	}
	if last == 0 {
		return "", false
	}
	b.WriteString(query[last:])
	return b.String(), true
}

// quoteIntervalUnits quotes the units of two fields after INTERVAL x
// (HOUR_MINUTE, YEAR_MONTH, ...): the parser takes an identifier there
// but has those units as reserved words, so `x + INTERVAL '1:30'
// HOUR_MINUTE` was ERROR 1064 (EXTRACT(HOUR_MINUTE FROM x), which it
// reads, is left alone). units are the words quoted.
func quoteIntervalUnits(query string, toks []token) (string, []string, bool) {
	var b strings.Builder
	var units []string
	last := 0
	for i, t := range toks {
		if t.kind != 'w' || i == 0 || toks[i-1].kind == '(' || i+1 < len(toks) && toks[i+1].is("FROM") {
			continue
		}
		if _, ok := compoundUnits[strings.ToUpper(t.text)]; !ok {
			continue
		}
		b.WriteString(query[last:t.start])
		b.WriteString("`" + t.text + "`")
		last = t.end
		units = append(units, t.text)
	}
	if last == 0 {
		return "", nil, false
	}
	b.WriteString(query[last:])
	return b.String(), units, true
}

// unquoteUnitNames takes quoteIntervalUnits' quotes out of the select
// items' names: a column is named as the statement wrote it.
func unquoteUnitNames(st ast.Statement, units []string) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if ae, ok := node.(*ast.AliasedExpr); ok {
			for _, u := range units {
				ae.InputExpression = strings.ReplaceAll(ae.InputExpression, "`"+u+"`", u)
			}
		}
		return true, nil
	}, st)
}

// tsiUnits are the units MySQL also reads as SQL_TSI_<unit> (ODBC's
// names, which JDBC's and ODBC's {fn TIMESTAMPADD(SQL_TSI_DAY, ...)}
// escapes pass on); the parser knows only the plain words.
var tsiUnits = map[string]bool{"MICROSECOND": true, "SECOND": true, "MINUTE": true, "HOUR": true, "DAY": true,
	"WEEK": true, "MONTH": true, "QUARTER": true, "YEAR": true}

// plainTSIUnits writes each SQL_TSI_<unit> as its unit, padded with
// spaces to the same length so that every position in the statement
// stays where it was (tsiUnitNames names columns from them); the spans
// are the rewritten words'.
func plainTSIUnits(query string, toks []token) (string, [][2]int, bool) {
	b := []byte(query)
	var spans [][2]int
	for i, t := range toks {
		if t.kind != 'w' || len(t.text) <= len("SQL_TSI_") || !strings.EqualFold(t.text[:len("SQL_TSI_")], "SQL_TSI_") ||
			!tsiUnits[strings.ToUpper(t.text[len("SQL_TSI_"):])] || i > 0 && toks[i-1].kind == '.' {
			continue
		}
		unit := t.text[len("SQL_TSI_"):]
		// The spaces go first: the parser ends a select item at its last
		// token's end and starts the next one from there.
		copy(b[t.start:t.end], strings.Repeat(" ", len("SQL_TSI_"))+unit)
		spans = append(spans, [2]int{t.start, t.end})
	}
	return string(b), spans, spans != nil
}

// tsiUnitNames names the select items that hold a word plainTSIUnits
// rewrote by the statement's own text, as the parser names the others.
func tsiUnitNames(st ast.Statement, query string, spans [][2]int) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		ae, ok := node.(*ast.AliasedExpr)
		if !ok || ae.InputExpression == "" || ae.EndParsePos <= ae.StartParsePos || ae.EndParsePos > len(query) {
			return true, nil
		}
		for _, sp := range spans {
			if sp[0] >= ae.StartParsePos && sp[1] <= ae.EndParsePos {
				ae.InputExpression = strings.Trim(query[ae.StartParsePos:ae.EndParsePos], " \n\t")
				break
			}
		}
		return true, nil
	}, st)
}

// notNames gives a select item that starts with NOT its whole text as
// its column name: the parser records where an item starts only after
// reading its first token when that token is NOT, so the first item
// `NOT x` was named `x` (MariaDB names it `NOT x`). The word before the
// recorded start can only be the item's own NOT: a select list's items
// follow SELECT, its options or a comma.
func notNames(query string, stmt ast.Statement) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		ae, ok := node.(*ast.AliasedExpr)
		if !ok || ae.EndParsePos <= ae.StartParsePos || ae.EndParsePos > len(query) {
			return true, nil
		}
		start := ae.StartParsePos
		for {
			i := start
			for i > 0 && strings.IndexByte(" \t\r\n", query[i-1]) >= 0 {
				i--
			}
			if i < 3 || !strings.EqualFold(query[i-3:i], "not") || (i > 3 && isWordByte(query[i-4])) {
				break
			}
			start = i - 3
		}
		if start != ae.StartParsePos {
			ae.StartParsePos = start
			ae.InputExpression = strings.Trim(query[start:ae.EndParsePos], " \n\t")
		}
		return true, nil
	}, stmt)
}
