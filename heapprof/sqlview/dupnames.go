package sqlview

// Select items written alike.
//
// go-mysql-server v0.20.0 names a select item without an alias by its
// text and then reads a later aggregate of the same text as a reference
// to that name: SELECT SUM(s.total_bytes), SUM(s.total_bytes) FROM
// snapshots s (the same measure twice, as a BI tool may send it) was
// ERROR 1105 "column ... does not exist in scope, but there is an alias
// defined in this projection with that name". MariaDB answers both.
// duplicateItemNames gives such items aliases of the engine's own; the
// statement's result keeps their text as the columns' names.

import (
	"context"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// duplicateItemPrefix starts the aliases duplicateItemNames gives.
const duplicateItemPrefix = "__heapprof_item"

func duplicateItemNames(ctx context.Context, stmt ast.Statement) {
	m, _ := ctx.Value(metaKey{}).(*stmtMeta)
	// The SELECT that names the result's columns: the statement's, or
	// its UNION's leftmost.
	var naming *ast.Select
	for s := ast.SQLNode(stmt); naming == nil && s != nil; {
		switch x := s.(type) {
		case *ast.Select:
			naming = x
		case *ast.SetOp:
			s = x.Left
		case *ast.ParenSelect:
			s = x.Select
		default:
			s = nil
		}
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		sel, ok := node.(*ast.Select)
		if !ok {
			return true, nil
		}
		named := sel == naming
		texts := map[string]int{}
		for _, e := range sel.SelectExprs {
			if a, ok := e.(*ast.AliasedExpr); ok && a.As.IsEmpty() && hasAggregate(a.Expr) {
				texts[strings.ToLower(itemText(a))]++
			}
		}
		for i, e := range sel.SelectExprs {
			a, ok := e.(*ast.AliasedExpr)
			if !ok || !a.As.IsEmpty() || !hasAggregate(a.Expr) || texts[strings.ToLower(itemText(a))] < 2 {
				continue
			}
			if named && m != nil {
				if m.names == nil {
					m.names = map[int]string{}
				}
				m.names[i] = itemText(a)
			}
			a.As = ast.NewColIdent(duplicateItemPrefix + strconv.Itoa(i+1))
		}
		return true, nil
	}, stmt)
}

// itemText is a select item's text as written, its name without an
// alias.
func itemText(a *ast.AliasedExpr) string {
	if a.InputExpression != "" {
		return a.InputExpression
	}
	return ast.String(a.Expr)
}
