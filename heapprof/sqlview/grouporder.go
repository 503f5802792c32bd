package sqlview

// MariaDB answers a GROUP BY without ORDER BY in the order of its groups:
// it finds the groups by sorting on the GROUP BY list, or by reading an
// index in that order (JOIN::optimize_inner, sql/sql_select.cc, 10.11.18:
// group_list is the order unless ORDER BY NULL, or the SELECT is a
// subquery without LIMIT). MySQL 5.7 did the same; clients typing
// SELECT node_id, SUM(x) ... GROUP BY node_id expect the nodes in order.
// go-mysql-server answers the groups in the order it met them.
// groupOrder gives the statement's own SELECTs, its derived tables' and
// its WITH's (which MariaDB fills in that order; not its expressions'
// subqueries, whose order nobody sees) that ORDER BY, and notes in
// the statement's meta that it did: the sort is the grouping's own, not
// one through a temporary table (usesTempTable).

import (
	"context"
	"strconv"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

func groupOrder(ctx context.Context, stmt ast.Statement, cols tableColumns) {
	var visit func(s ast.SelectStatement)
	visitWith := func(w *ast.With) {
		if w == nil {
			return
		}
		for _, c := range w.Ctes {
			if q, ok := c.Expr.(*ast.Subquery); ok {
				visit(q.Select)
			}
		}
	}
	var visitDerived func(t ast.TableExpr)
	visitDerived = func(t ast.TableExpr) {
		switch t := t.(type) {
		case *ast.AliasedTableExpr:
			if q, ok := t.Expr.(*ast.Subquery); ok {
				visit(q.Select)
			}
		case *ast.JoinTableExpr:
			visitDerived(t.LeftExpr)
			visitDerived(t.RightExpr)
		case *ast.ParenTableExpr:
			for _, x := range t.Exprs {
				visitDerived(x)
			}
		}
	}
	visit = func(s ast.SelectStatement) {
		switch s := s.(type) {
		case *ast.ParenSelect:
			visit(s.Select)
		case *ast.SetOp:
			visitWith(s.With)
			visit(s.Left)
			visit(s.Right)
		case *ast.Select:
			visitWith(s.With)
			for _, t := range s.From {
				visitDerived(t)
			}
			if len(s.GroupBy) == 0 || len(s.OrderBy) > 0 || s.Into != nil {
				return
			}
			for _, e := range s.SelectExprs {
				if a, ok := e.(*ast.AliasedExpr); ok && hasWindow(a.Expr) {
					return // the windows' order
				}
			}
			var order ast.OrderBy
			for _, g := range s.GroupBy {
				if v, ok := g.(*ast.SQLVal); writtenConstant(g) && !(ok && v.Type == ast.IntVal) {
					continue // GROUP BY 'x': one group, no order
				}
				// An alias is ordered by as its item's position:
				// resultmeta follows a sort on a grouped alias to no
				// expression. An alias that is also a column's name
				// (node_kind AS node_id) MariaDB groups by the column,
				// which ORDER BY would not name: no order is added.
				if c, ok := g.(*ast.ColName); ok && c.Qualifier.IsEmpty() {
					for i, e := range s.SelectExprs {
						if a, ok := e.(*ast.AliasedExpr); ok && a.As.Equal(c.Name) {
							if item, ok := a.Expr.(*ast.ColName); cols.isColumn(c.Name.Lowered()) && !(ok && item.Name.Equal(c.Name)) {
								return
							}
							g = ast.NewIntVal([]byte(strconv.Itoa(i + 1)))
							break
						}
					}
				}
				o, ok := copyExpr(g)
				if !ok {
					return
				}
				order = append(order, &ast.Order{Expr: o, Direction: ast.AscScr})
			}
			if len(order) == 0 {
				return
			}
			s.OrderBy = order
			if m, ok := ctx.Value(metaKey{}).(*stmtMeta); ok {
				m.groupOrdered = true
			}
		}
	}
	if s, ok := stmt.(ast.SelectStatement); ok {
		visit(s)
	}
}
