package sqlview

import (
	"fmt"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Statements go-mysql-server v0.20.0 cannot plan in bounded time, refused
// before planning: joins of 11 to 15 tables, subqueries nested more than
// maxSubqueryDepth deep, and arithmetic nested more than maxArithmeticDepth
// deep.
//
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
	count := func(s *ast.Subquery) { n += selectJoinTables(s.Select) }
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

// selectJoinTables is joinTables of a select statement: each side of a
// UNION is a join tree of its own, so the larger one counts.
func selectJoinTables(s ast.SelectStatement) int {
	switch x := s.(type) {
	case *ast.Select:
		return joinTables(x)
	case *ast.ParenSelect:
		return selectJoinTables(x.Select)
	case *ast.SetOp:
		return max(selectJoinTables(x.Left), selectJoinTables(x.Right))
	}
	return 0
}

// maxArithmeticDepth bounds chains of arithmetic and bit operators
// (1 + 2 + ... is a chain as deep as it is long): an Arithmetic node
// computes its type from its children's every time it is asked, uncached
// (expression.Arithmetic.Type), and the planner asks at every level, so
// planning takes the square of the depth: 1,000 operators 1.5 s on a
// 2-core VM, 5,000 more than 30 s, within single analyzer rules that no
// KILL reaches. MariaDB 10.11 at its default thread_stack refuses more
// than 593 terms itself (ERROR 1436, thread stack overrun).
const maxArithmeticDepth = 1000

// checkArithmeticDepth refuses a statement with a longer chain.
func checkArithmeticDepth(stmt ast.Statement) error {
	var found error
	var visit func(ast.SQLNode)
	// chain is the depth of the arithmetic rooted at e; the operands
	// that are not arithmetic are visited for chains of their own.
	var chain func(ast.Expr) int
	chain = func(e ast.Expr) int {
		b, ok := e.(*ast.BinaryExpr)
		if !ok {
			visit(e)
			return 0
		}
		return 1 + max(chain(b.Left), chain(b.Right))
	}
	visit = func(node ast.SQLNode) {
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if found != nil {
				return false, found
			}
			b, ok := n.(*ast.BinaryExpr)
			if !ok {
				return true, nil
			}
			if d := chain(b); d > maxArithmeticDepth && found == nil {
				found = errUnsupported(fmt.Sprintf("arithmetic nested %d operators deep (at most %d): go-mysql-server v0.20.0 "+
					"takes time growing with the square of that depth to plan it; add the terms up in parts, e.g. with SUM() "+
					"over rows or in a derived table", d, maxArithmeticDepth))
			}
			return false, nil
		}, node)
	}
	visit(stmt)
	return found
}

// maxSubqueryDepth bounds how deep subqueries nest (derived tables, scalar,
// IN and EXISTS subqueries alike). The analyzer finalizes every level's
// subqueries again for each level above (finalizeSubqueries): nested
// derived tables with a WHERE each took 1.2 s at 16 levels, 4.8 s at 18,
// 21 s at 20, doubling per level, for the most part in stretches that
// interruptRule is not reached in (22 levels stopped 11 s after their
// context ended); nested scalar subqueries took 5 s at 12 and 30 s at 14
// (those stop within a second of KILL). 16 levels is deeper than BI tools
// nest.
const maxSubqueryDepth = 16

// checkSubqueryDepth refuses a statement with subqueries nested deeper.
func checkSubqueryDepth(stmt ast.Statement) error {
	deepest := 0
	var visit func(ast.SQLNode, int)
	visit = func(node ast.SQLNode, depth int) {
		deepest = max(deepest, depth)
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if sq, ok := n.(*ast.Subquery); ok {
				visit(sq.Select, depth+1)
				return false, nil
			}
			return true, nil
		}, node)
	}
	visit(stmt, 0)
	if deepest > maxSubqueryDepth {
		return errUnsupported(fmt.Sprintf("subqueries nested %d deep (at most %d): go-mysql-server v0.20.0 takes twice as "+
			"long to plan each level deeper; flatten some levels (a derived table of a derived table can often be one "+
			"SELECT, or a WITH clause)", deepest, maxSubqueryDepth))
	}
	return nil
}
