package sqlview

// go-mysql-server v0.20.0 plans HAVING with an aggregate of a joined
// table's column wrongly when the select list has an aggregate too and a
// table before it in FROM has a column of the same name: it looks the
// column up by its bare name, finds the other table's, and answers
// ERROR 1146 "table not found: f" (SELECT s.node_id, SUM(f.cum_bytes) ...
// HAVING MAX(f.node_id) > 0; dolthub/go-mysql-server#3739, fixed after
// v0.20.0). It plans HAVING right when HAVING names a select item's alias,
// so in the parsed statement each HAVING aggregate of a qualified column
// becomes a hidden select item that HAVING reads by its alias, and an
// analyzer rule drops the hidden items from the result before anything
// else runs.

import (
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// ruleHiddenHaving is stripHiddenRule's id, apart from guard.go's ids.
const ruleHiddenHaving analyzer.RuleId = 100102

// hiddenPrefix names the hidden select items.
const hiddenPrefix = "__heapprof_having_"

// aggregateNames are the aggregate functions the planner knows.
var aggregateNames = map[string]bool{
	"avg": true, "bit_and": true, "bit_or": true, "bit_xor": true, "count": true, "json_arrayagg": true,
	"json_objectagg": true, "max": true, "min": true, "std": true, "stddev_pop": true, "stddev_samp": true,
	"stddev": true, "sum": true, "var_pop": true, "var_samp": true, "variance": true, "any_value": true,
}

// addHavingAggregates moves, in a top-level SELECT over a join, each
// aggregate of a qualified column in HAVING to a hidden select item, and
// HAVING reads the item by its alias (which the planner resolves right).
func addHavingAggregates(stmt ast.Statement) {
	sel, ok := stmt.(*ast.Select)
	if !ok || sel.Having == nil || sel.QueryOpts.Distinct || sel.Into != nil || !joins(sel.From) {
		return
	}
	var found []*ast.FuncExpr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery:
			return false, nil
		case *ast.FuncExpr:
			if aggregateNames[n.Name.Lowered()] && n.Over == nil && qualifiedColumn(n) {
				found = append(found, n)
				return false, nil
			}
		}
		return true, nil
	}, sel.Having.Expr)
	alias := map[string]string{}
	hidden := 0
	for _, f := range found {
		text := strings.ToLower(ast.String(f))
		name, ok := alias[text]
		if !ok {
			name, ok = selectAlias(sel, text)
		}
		if !ok {
			hidden++
			name = fmt.Sprintf("%s%d", hiddenPrefix, hidden)
			sel.SelectExprs = append(sel.SelectExprs, &ast.AliasedExpr{Expr: f, As: ast.NewColIdent(name), InputExpression: ast.String(f)})
		}
		alias[text] = name
		sel.Having.Expr = ast.ReplaceExpr(sel.Having.Expr, f, &ast.ColName{Name: ast.NewColIdent(name)})
	}
}

// selectAlias is the name HAVING can read the select item computing
// text by: its alias, or for an unaliased item the name it shows anyway
// (then made its alias, which changes nothing the client sees).
func selectAlias(sel *ast.Select, text string) (string, bool) {
	for _, e := range sel.SelectExprs {
		a, ok := e.(*ast.AliasedExpr)
		if !ok || !strings.EqualFold(ast.String(a.Expr), text) {
			continue
		}
		if a.As.IsEmpty() {
			if a.InputExpression == "" {
				return "", false
			}
			a.As = ast.NewColIdent(a.InputExpression)
		}
		return a.As.String(), true
	}
	return "", false
}

// joins says the FROM clause reads more than one table.
func joins(from ast.TableExprs) bool {
	if len(from) > 1 {
		return true
	}
	for _, t := range from {
		if _, ok := t.(*ast.JoinTableExpr); ok {
			return true
		}
	}
	return false
}

func qualifiedColumn(n ast.SQLNode) bool {
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if c, ok := node.(*ast.ColName); ok && !c.Qualifier.Name.IsEmpty() {
			found = true
		}
		return !found, nil
	}, n)
	return found
}

// stripHiddenRule drops the hidden select items from the top-level
// result: the outermost projection loses them. A statement whose result
// would still show one fails rather than answer an extra column.
func stripHiddenRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, scope *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !scope.IsEmpty() || !hasHidden(n.Schema()) {
		return n, transform.SameTree, nil
	}
	out, same, err := stripOutermost(n)
	if err != nil {
		return nil, transform.SameTree, err
	}
	if hasHidden(out.Schema()) {
		return nil, transform.SameTree, fmt.Errorf("sqlview: internal error: the HAVING workaround left a column in %s", sql.DebugString(out))
	}
	return out, same, nil
}

func hasHidden(s sql.Schema) bool {
	for _, c := range s {
		if strings.HasPrefix(c.Name, hiddenPrefix) {
			return true
		}
	}
	return false
}

// stripOutermost removes the hidden items from the first projection below
// n's row-preserving nodes.
func stripOutermost(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if p, ok := n.(*plan.Project); ok {
		var keep []sql.Expression
		for _, e := range p.Projections {
			if a, ok := e.(*expression.Alias); ok && strings.HasPrefix(a.Name(), hiddenPrefix) {
				continue
			}
			keep = append(keep, e)
		}
		return plan.NewProject(keep, p.Child), transform.NewTree, nil
	}
	child, ok := passThrough(n)
	if _, derived := n.(*plan.SubqueryAlias); !ok || derived {
		return n, transform.SameTree, nil
	}
	c, same, err := stripOutermost(child)
	if err != nil || same == transform.SameTree {
		return n, transform.SameTree, err
	}
	out, err := n.WithChildren(c)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return out, transform.NewTree, nil
}
