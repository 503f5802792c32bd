package sqlview

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// itemNames names the unaliased select items of st, parsed from query, by
// their text as MariaDB does: from the item's first token to its last.
// The parser's span of an item reaches from the end of what came before
// (the comma of SELECT a , b; the name was ", b") to the next token
// (SELECT x + 1 -- why: "x + 1 -- why").
func itemNames(st ast.Statement, query string) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		ae, ok := node.(*ast.AliasedExpr)
		if !ok || ae.InputExpression == "" || ae.EndParsePos <= ae.StartParsePos || ae.EndParsePos > len(query) {
			return true, nil
		}
		span := query[ae.StartParsePos:ae.EndParsePos]
		if v, lit := ae.Expr.(*ast.SQLVal); lit && v.Type != ast.IntVal && v.Type != ast.FloatVal {
			// A string keeps the parser's name: its value. (Two equal
			// names of literals in one SELECT of a UNION lose a column
			// in go-mysql-server's planning.)
			return true, nil
		}
		if name := spanText(span); name != "" {
			ae.InputExpression = name
		}
		return true, nil
	}, st)
}

// spanText is the text of the select item in span: from its first token
// (commas before it are the list's) to its last, comments around it left
// out, comments inside kept.
func spanText(span string) string {
	toks := tokens(span)
	for len(toks) > 0 && toks[0].kind == ',' {
		toks = toks[1:]
	}
	if len(toks) == 0 || strings.Contains(span, "/*!") || strings.Contains(span, "/*M!") {
		return "" // an executable comment's tokens are the statement's
	}
	return span[toks[0].start:toks[len(toks)-1].end]
}
