package sqlview

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// invalidGroupFuncUse is MariaDB's ER_INVALID_GROUP_FUNC_USE.
func invalidGroupFuncUse() error {
	return &Error{Code: 1111, State: "HY000", Message: "Invalid use of group function"}
}

// checkWhereAggregates refuses an aggregate in a WHERE or ON condition as
// MariaDB does (ERROR 1111 (HY000) Invalid use of group function);
// go-mysql-server planned it and failed reading a column that is not
// there (1105 "unable to find field"). Subqueries are not looked into:
// there an aggregate may be the outer query's (WHERE y < SUM(outer.x));
// derived tables are.
func checkWhereAggregates(stmt ast.Statement) error {
	var found error
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		switch x := n.(type) {
		case *ast.AliasedTableExpr:
			// A derived table has no outer query to refer to.
			if sq, ok := x.Expr.(*ast.Subquery); ok {
				found = checkWhereAggregates(sq.Select)
				return false, found
			}
		case *ast.Subquery:
			return false, nil
		case *ast.Select:
			if x.Where != nil && hasAggregate(x.Where.Expr) {
				found = invalidGroupFuncUse()
			}
		case *ast.JoinTableExpr:
			if hasAggregate(x.Condition.On) {
				found = invalidGroupFuncUse()
			}
		}
		return found == nil, found
	}, stmt)
	return found
}

// hasAggregate: e calls an aggregate outside its subqueries (window
// functions are not aggregates here).
func hasAggregate(e ast.Expr) bool {
	return exprHas(e, func(n ast.SQLNode) bool {
		switch x := n.(type) {
		case *ast.FuncExpr:
			return x.IsAggregate() && x.Over == nil
		case *ast.GroupConcatExpr:
			return true
		}
		return false
	})
}

// exprHas says a node of e outside its subqueries matches.
func exprHas(e ast.Expr, match func(ast.SQLNode) bool) bool {
	if e == nil {
		return false
	}
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if _, sub := n.(*ast.Subquery); sub {
			return false, nil
		}
		found = found || match(n)
		return !found, nil
	}, e)
	return found
}
