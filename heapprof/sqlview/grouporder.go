package sqlview

// MariaDB answers a GROUP BY without ORDER BY in the order of its groups:
// it finds the groups by sorting on the GROUP BY list, or by reading an
// index in that order (JOIN::optimize_inner, sql/sql_select.cc, 10.11.18:
// group_list is the order unless ORDER BY NULL, or the SELECT is a
// subquery without LIMIT). MySQL 5.7 did the same; clients typing
// SELECT node_id, SUM(x) ... GROUP BY node_id expect the nodes in order.
// go-mysql-server answers the groups in the order it met them.
// groupOrder gives the statement's own SELECTs (not its subqueries or
// derived tables, whose order nobody sees) that ORDER BY, and notes in
// the statement's meta that it did: the sort is the grouping's own, not
// one through a temporary table (usesTempTable).

import (
	"context"
	"strconv"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func groupOrder(ctx context.Context, stmt ast.Statement) {
	var visit func(s ast.SelectStatement)
	visit = func(s ast.SelectStatement) {
		switch s := s.(type) {
		case *ast.ParenSelect:
			visit(s.Select)
		case *ast.SetOp:
			visit(s.Left)
			visit(s.Right)
		case *ast.Select:
			if len(s.GroupBy) == 0 || len(s.OrderBy) > 0 || s.Into != nil {
				return
			}
			for _, e := range s.SelectExprs {
				if a, ok := e.(*ast.AliasedExpr); ok && hasWindow(a.Expr) {
					return // the windows' order
				}
			}
			for _, g := range s.GroupBy {
				// An alias is ordered by as its item's position:
				// resultmeta follows a sort on a grouped alias to no
				// expression.
				if c, ok := g.(*ast.ColName); ok && c.Qualifier.IsEmpty() {
					for i, e := range s.SelectExprs {
						if a, ok := e.(*ast.AliasedExpr); ok && a.As.Equal(c.Name) {
							g = ast.NewIntVal([]byte(strconv.Itoa(i + 1)))
							break
						}
					}
				}
				o, ok := copyExpr(g)
				if !ok {
					s.OrderBy = nil
					return
				}
				s.OrderBy = append(s.OrderBy, &ast.Order{Expr: o, Direction: ast.AscScr})
			}
			if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
				m.groupOrdered = true
			}
		}
	}
	if s, ok := stmt.(ast.SelectStatement); ok {
		visit(s)
	}
}
