package sqlview

// Window functions over a grouped SELECT: MariaDB computes them after
// GROUP BY and HAVING, over the groups (Metabase's cumulative sum is
// SUM(SUM(x)) OVER (ORDER BY g ROWS UNBOUNDED PRECEDING); a share of the
// total SUM(x) / SUM(SUM(x)) OVER (); a top-N RANK() OVER (ORDER BY
// SUM(x) DESC)). go-mysql-server v0.20.0 fails on them: ERROR 1140 with a
// broken message, or 1105 "unable to find field". groupedWindows writes
// such a SELECT as MariaDB evaluates it: the grouping in a derived table
// whose columns are the group-level values the select list needs (every
// largest part of an item, or of a window's arguments, PARTITION BY and
// ORDER BY, that holds no window function), the window functions, ORDER
// BY, LIMIT and DISTINCT over it. Each column keeps its name.

import (
	"fmt"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// groupsTable is the derived table of the grouping.
const groupsTable = "__heapprof_groups"

// groupedWindows rewrites every grouped SELECT of stmt that has window
// functions.
func groupedWindows(stmt ast.Statement) {
	var sels []*ast.Select
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if s, ok := node.(*ast.Select); ok {
			sels = append(sels, s)
		}
		return true, nil
	}, stmt)
	for _, s := range sels {
		if windowsOverGroups(s) {
			splitGroups(s)
		}
	}
}

// windowsOverGroups says s groups and has window functions in its select
// list or ORDER BY, in a form splitGroups writes (no *, no WINDOW clause,
// no INTO).
func windowsOverGroups(s *ast.Select) bool {
	if len(s.Window) > 0 || s.Into != nil || s.Having != nil && hasWindow(s.Having.Expr) {
		return false
	}
	windows, groups := false, len(s.GroupBy) > 0
	for _, e := range s.SelectExprs {
		a, ok := e.(*ast.AliasedExpr)
		if !ok {
			return false
		}
		windows = windows || hasWindow(a.Expr)
		groups = groups || hasAggregate(a.Expr)
	}
	for _, o := range s.OrderBy {
		windows = windows || hasWindow(o.Expr)
		groups = groups || hasAggregate(o.Expr)
	}
	return windows && (groups || s.Having != nil)
}

// hasWindow says e holds a window function (outside subqueries).
func hasWindow(e ast.Expr) bool {
	return exprHas(e, func(n ast.SQLNode) bool {
		f, ok := n.(*ast.FuncExpr)
		return ok && f.Over != nil
	})
}

// splitGroups makes s read its grouping from a derived table.
func splitGroups(s *ast.Select) {
	// GROUP BY 2 names the second select item, which the derived table
	// need not have in second place: it groups by the item's expression.
	for i, g := range s.GroupBy {
		v, ok := g.(*ast.SQLVal)
		if !ok || v.Type != ast.IntVal {
			continue
		}
		k, err := strconv.Atoi(string(v.Val))
		if err != nil || k < 1 || k > len(s.SelectExprs) {
			continue
		}
		if a := s.SelectExprs[k-1].(*ast.AliasedExpr); !hasWindow(a.Expr) {
			s.GroupBy[i] = a.Expr
		}
	}
	inner := &ast.Select{From: s.From, Where: s.Where, GroupBy: s.GroupBy, Having: s.Having}
	names := map[string]string{} // a group-level value's text -> its column
	column := func(e ast.Expr, name string) ast.Expr {
		text := strings.ToLower(ast.String(e))
		if have, ok := names[text]; ok {
			name = have
		} else {
			if name == "" {
				name = fmt.Sprintf("%s%d", groupsTable, len(inner.SelectExprs)+1)
			}
			names[text] = name
			inner.SelectExprs = append(inner.SelectExprs, &ast.AliasedExpr{Expr: e, As: ast.NewColIdent(name)})
		}
		return &ast.ColName{Name: ast.NewColIdent(name), Qualifier: ast.TableName{Name: ast.NewTableIdent(groupsTable)}}
	}
	var outer ast.SelectExprs
	aliases := map[string]bool{}
	for _, e := range s.SelectExprs {
		a := e.(*ast.AliasedExpr)
		name := a.As.String()
		if name == "" {
			name = a.InputExpression
		}
		if c, ok := a.Expr.(*ast.ColName); ok && name == "" {
			name = c.Name.String()
		}
		aliases[strings.ToLower(name)] = true
		var x ast.Expr
		if hasWindow(a.Expr) {
			x = groupLevel(a.Expr, column)
		} else {
			// HAVING may read the item by its alias: the derived table's
			// column keeps it.
			x = column(a.Expr, a.As.String())
		}
		outer = append(outer, &ast.AliasedExpr{Expr: x, As: ast.NewColIdent(name), InputExpression: name})
	}
	for _, o := range s.OrderBy {
		if c, ok := o.Expr.(*ast.ColName); ok && c.Qualifier.IsEmpty() && aliases[c.Name.Lowered()] {
			continue // a select item's alias
		}
		if v, ok := o.Expr.(*ast.SQLVal); ok && v.Type == ast.IntVal {
			continue // a select item's position
		}
		o.Expr = groupLevel(o.Expr, column)
	}
	s.SelectExprs = outer
	s.From = ast.TableExprs{&ast.AliasedTableExpr{Expr: &ast.Subquery{Select: inner}, As: ast.NewTableIdent(groupsTable)}}
	s.Where, s.GroupBy, s.Having = nil, nil, nil
}

// groupLevel replaces in e every largest part that holds no window
// function (but literals) by the derived table's column of it.
func groupLevel(e ast.Expr, column func(ast.Expr, string) ast.Expr) ast.Expr {
	if !hasWindow(e) {
		if writtenConstant(e) {
			return e
		}
		return column(e, "")
	}
	var parts []ast.Expr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if _, sub := node.(*ast.Subquery); sub {
			return false, nil
		}
		x, ok := node.(ast.Expr)
		if !ok || hasWindow(x) {
			return true, nil
		}
		if !writtenConstant(x) {
			parts = append(parts, x)
		}
		return false, nil
	}, e)
	for _, p := range parts {
		to := column(p, "")
		// ReplaceExpr does not look into OVER (...).
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if f, ok := node.(*ast.FuncExpr); ok && f.Over != nil {
				for i := range f.Over.PartitionBy {
					if f.Over.PartitionBy[i] == p {
						f.Over.PartitionBy[i] = to
					}
				}
				for _, o := range f.Over.OrderBy {
					if o.Expr == p {
						o.Expr = to
					}
				}
			}
			return true, nil
		}, e)
		e = ast.ReplaceExpr(e, p, to)
	}
	return e
}

// writtenConstant says e is a constant written as such.
func writtenConstant(e ast.Expr) bool {
	switch e.(type) {
	case *ast.SQLVal, ast.BoolVal, *ast.NullVal:
		return true
	}
	return false
}
