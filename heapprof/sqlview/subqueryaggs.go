package sqlview

// A subquery's aggregate written like one of the outer query's.
//
// go-mysql-server v0.20.0 keys a SELECT's aggregates by their text
// (planbuilder/aggregates.go: getAggRef(strings.ToLower(agg.String()))),
// and a subquery's SUM(snapshots.total_bytes) has the same text as the
// outer query's when both read the table by its name: the share of the
// total, SELECT node_kind, SUM(total_bytes) * 100 / (SELECT
// SUM(total_bytes) FROM snapshots) FROM snapshots GROUP BY node_kind,
// answered ERROR 1242 "subquery returned more than 1 row" (MariaDB:
// 15.9420, 84.0580, 0.0000). subqueryTableNames gives such a subquery's
// table an alias of its own, and its references to the table that name:
// inside the subquery the name meant that table anyway, the innermost one.

import (
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// subqueryTablePrefix starts the aliases subqueryTableNames gives.
const subqueryTablePrefix = "__heapprof_sq"

// subqueryTableNames renames, in every subquery of stmt that aggregates,
// the tables read by a name an enclosing SELECT also reads.
func subqueryTableNames(stmt ast.Statement) {
	n := 0
	var visit func(s ast.SelectStatement, outer map[string]bool)
	visit = func(s ast.SelectStatement, outer map[string]bool) {
		switch s := s.(type) {
		case *ast.ParenSelect:
			visit(s.Select, outer)
			return
		case *ast.SetOp:
			visit(s.Left, outer)
			visit(s.Right, outer)
			return
		case *ast.Select:
			if len(outer) > 0 && selectAggregates(s) {
				for _, t := range fromTables(s.From) {
					name := strings.ToLower(t.Expr.(ast.TableName).Name.String())
					if !t.As.IsEmpty() || !outer[name] {
						continue
					}
					n++
					alias := subqueryTablePrefix + strconv.Itoa(n)
					t.As = ast.NewTableIdent(alias)
					renameQualifier(s, name, alias)
				}
			}
			names := map[string]bool{}
			for k := range outer {
				names[k] = true
			}
			for _, t := range fromTables(s.From) {
				if t.As.IsEmpty() {
					names[strings.ToLower(t.Expr.(ast.TableName).Name.String())] = true
				} else {
					names[strings.ToLower(t.As.String())] = true
				}
			}
			for _, q := range subqueriesOf(s) {
				visit(q.Select, names)
			}
		}
	}
	if s, ok := stmt.(ast.SelectStatement); ok {
		visit(s, nil)
	}
}

// selectAggregates says s computes an aggregate (in its select list,
// HAVING or ORDER BY).
func selectAggregates(s *ast.Select) bool {
	for _, e := range s.SelectExprs {
		if a, ok := e.(*ast.AliasedExpr); ok && hasAggregate(a.Expr) {
			return true
		}
	}
	if s.Having != nil && hasAggregate(s.Having.Expr) {
		return true
	}
	for _, o := range s.OrderBy {
		if hasAggregate(o.Expr) {
			return true
		}
	}
	return false
}

// fromTables are the tables of a FROM clause read by name (through
// joins; not derived tables).
func fromTables(from ast.TableExprs) []*ast.AliasedTableExpr {
	var out []*ast.AliasedTableExpr
	var walk func(t ast.TableExpr)
	walk = func(t ast.TableExpr) {
		switch t := t.(type) {
		case *ast.AliasedTableExpr:
			if _, ok := t.Expr.(ast.TableName); ok {
				out = append(out, t)
			}
		case *ast.JoinTableExpr:
			walk(t.LeftExpr)
			walk(t.RightExpr)
		case *ast.ParenTableExpr:
			for _, x := range t.Exprs {
				walk(x)
			}
		}
	}
	for _, t := range from {
		walk(t)
	}
	return out
}

// subqueriesOf are the subqueries in s's expressions (not its derived
// tables, whose scope is their own), outermost only.
func subqueriesOf(s *ast.Select) []*ast.Subquery {
	var out []*ast.Subquery
	collect := func(n ast.SQLNode) {
		if n == nil {
			return
		}
		_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
			if q, ok := node.(*ast.Subquery); ok {
				out = append(out, q)
				return false, nil
			}
			return true, nil
		}, n)
	}
	collect(s.SelectExprs)
	if s.Where != nil {
		collect(s.Where.Expr)
	}
	if s.Having != nil {
		collect(s.Having.Expr)
	}
	collect(s.GroupBy)
	collect(s.OrderBy)
	for _, t := range s.From {
		if j, ok := t.(*ast.JoinTableExpr); ok && j.Condition.On != nil {
			collect(j.Condition.On)
		}
	}
	return out
}

// renameQualifier makes s's references to table name (column
// qualifiers) read alias, in s and in its subqueries that do not read a
// table of that name themselves.
func renameQualifier(s *ast.Select, name, alias string) {
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			if inner, ok := n.Select.(*ast.Select); ok {
				for _, t := range fromTables(inner.From) {
					if t.As.IsEmpty() && strings.EqualFold(t.Expr.(ast.TableName).Name.String(), name) ||
						strings.EqualFold(t.As.String(), name) {
						return false, nil // the name is that SELECT's own table
					}
				}
			}
		case *ast.ColName:
			if n.Qualifier.Name.String() != "" && strings.EqualFold(n.Qualifier.Name.String(), name) {
				n.Qualifier = ast.TableName{Name: ast.NewTableIdent(alias)}
			}
		}
		return true, nil
	}, s)
}
