package sqlview

import (
	"fmt"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Joins of 11 to 15 tables are refused before planning.
//
// go-mysql-server v0.20.0 orders a join of up to 15 tables by trying
// every split of every subset of them (memo.joinOrderBuilder.dbSube, about
// 4^n steps; useFastReorder takes a greedy path above 15): on a 2-core VM
// 10 tables plan in 0.5 s, 11 in 2 s, 12 in 6 s and 14 in more than
// 100 s, and nothing, neither KILL QUERY nor the statement timeout nor the
// client hanging up, stops a statement while it is planned (sqlview's
// interruptRule is never reached there). IN and EXISTS subqueries join the
// same tree when the planner turns them into semi joins, so their tables
// count too; a derived table counts once in its SELECT and is planned on
// its own.

// Join sizes planned by trying every order slowly enough to refuse.
const (
	slowJoinTables    = 11
	greedyJoinTables  = 16 // and more: planned greedily, quickly
	slowJoinPlanNote  = "go-mysql-server v0.20.0 plans a join of 11 to 15 tables by trying every order, which takes from seconds to hours and cannot be interrupted"
	slowJoinFixAdvice = "join at most 10 per SELECT, moving the rest into a derived table (FROM (SELECT ...) AS t), which is planned on its own"
)

// checkJoinSizes refuses a SELECT whose planner join tree would hold
// 11 to 15 tables.
func checkJoinSizes(stmt ast.Statement) error {
	var found error
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		sel, ok := node.(*ast.Select)
		if !ok {
			return true, nil
		}
		if n := joinTables(sel); n >= slowJoinTables && n < greedyJoinTables {
			found = errUnsupported(fmt.Sprintf("a SELECT joining %d tables (subqueries in its conditions included): %s; %s",
				n, slowJoinPlanNote, slowJoinFixAdvice))
			return false, found
		}
		return true, nil
	}, stmt)
	return found
}

// joinTables counts the tables of sel's FROM clause and of the subqueries
// in its expressions, which the planner may join to them.
func joinTables(sel *ast.Select) int {
	n := 0
	var from func(ast.TableExpr)
	from = func(te ast.TableExpr) {
		switch t := te.(type) {
		case *ast.JoinTableExpr:
			from(t.LeftExpr)
			from(t.RightExpr)
			if t.Condition.On != nil {
				n += subqueryTables(t.Condition.On)
			}
		case *ast.ParenTableExpr:
			for _, e := range t.Exprs {
				from(e)
			}
		default:
			n++
		}
	}
	for _, te := range sel.From {
		from(te)
	}
	for _, expr := range sel.SelectExprs {
		n += subqueryTables(expr)
	}
	if sel.Where != nil {
		n += subqueryTables(sel.Where.Expr)
	}
	if sel.Having != nil {
		n += subqueryTables(sel.Having.Expr)
	}
	return n
}

// subqueryTables counts the tables of node's IN and EXISTS subqueries,
// which the planner may turn into semi joins of the SELECT's tree (a
// scalar subquery stays a subquery).
func subqueryTables(node ast.SQLNode) int {
	n := 0
	count := func(s *ast.Subquery) {
		for _, sel := range selectsOf(s.Select) {
			n += joinTables(sel)
		}
	}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch x := node.(type) {
		case *ast.ExistsExpr:
			count(x.Subquery)
			return false, nil
		case *ast.ComparisonExpr:
			if s, ok := x.Right.(*ast.Subquery); ok && (x.Operator == ast.InStr || x.Operator == ast.NotInStr) {
				count(s)
				return false, nil
			}
		}
		return true, nil
	}, node)
	return n
}

// selectsOf lists the SELECTs of a select statement (each side of a
// UNION is planned apart).
func selectsOf(s ast.SelectStatement) []*ast.Select {
	switch x := s.(type) {
	case *ast.Select:
		return []*ast.Select{x}
	case *ast.ParenSelect:
		return selectsOf(x.Select)
	case *ast.SetOp:
		// The sides of a UNION are separate join trees: the largest one
		// counts.
		l, r := selectsOf(x.Left), selectsOf(x.Right)
		best := append(l, r...)
		most, pick := -1, []*ast.Select(nil)
		for _, b := range best {
			if t := joinTables(b); t > most {
				most, pick = t, []*ast.Select{b}
			}
		}
		return pick
	}
	return nil
}
