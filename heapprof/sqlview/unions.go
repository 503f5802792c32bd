package sqlview

import (
	"fmt"
	"reflect"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// UNION chains, planned in linear time.
//
// go-mysql-server v0.20.0 plans A UNION B UNION C ... left-deep: each
// UNION whose two sides differ in a column's type puts a projection over
// its left side that converts, and a projection's schema asks its child's
// schema once per unconverted column, uncached (plan.Project.Schema and
// findDefault; upstream caches it since f9276850c, August 2025, a version
// the module proxy does not serve). Planning therefore takes about k^d
// steps for d such levels of k columns: MariaDB Connector/ODBC's
// SQLGetTypeInfo, a UNION of 43 literal rows, never finished, and no
// timeout or KILL reaches a statement still being planned.
//
// lineUpUnions gives every SELECT of a chain its column types up front:
// the types MariaDB joins the SELECTs' columns to (uniontypes.go), each
// column that go-mysql-server would type otherwise converted in every
// SELECT. With equal types on both sides no UNION needs a projection,
// and the answer is the one MariaDB gives. A chain it cannot line up (a
// SELECT that is not planned alone: a ? marker, a column of an outer
// query; one of *, whose columns cannot be converted one by one) is
// planned as written if the planner's steps, counted from the SELECTs'
// types, stay small, and refused with ERROR 1235 otherwise.
//
// Even with equal types a left-deep chain of n SELECTs plans in about n^3
// steps: every level's rules ask the SetOp for its schema, which asks
// every SELECT below it for theirs, formatting each column's expression
// (SetOp.Schema, Project.Schema, uncached). 200 literal rows of 10
// columns took 17 s. Once its SELECTs have equal types, a chain of one
// kind of UNION is regrouped as a balanced tree, (A UNION B) UNION
// (C UNION D): the same rows in the same order, since UNION ALL
// concatenates left to right and UNION DISTINCT keeps each row's first
// occurrence, and the same columns, named by the leftmost SELECT.

// unionStepLimit bounds the projection schemas a chain that cannot be
// lined up may make the planner build (about a second of planning).
const unionStepLimit = 200_000

// unionGuessLevels is how many UNIONs of SELECTs whose types are unknown
// are planned as written.
const unionGuessLevels = 6

// lineUpUnions rewrites every UNION/INTERSECT/EXCEPT chain of stmt, the
// innermost first (an outer chain's SELECTs are planned alone to learn
// their types, and that planning meets the inner chains).
func (e *Engine) lineUpUnions(sctx *sql.Context, stmt ast.Statement) (changed bool, err error) {
	var chains []*ast.SetOp
	inner := map[*ast.SetOp]bool{}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		op, ok := node.(*ast.SetOp)
		if !ok {
			return true, nil
		}
		if l, ok := op.Left.(*ast.SetOp); ok {
			inner[l] = true
		}
		if !inner[op] {
			chains = append(chains, op)
		}
		return true, nil
	}, stmt)
	for i := len(chains) - 1; i >= 0; i-- {
		c, err := e.lineUpChain(sctx, chains[i], chains[i] == stmt)
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	return changed, nil
}

// chainSelects lists a left-deep chain's SELECTs, leftmost first.
func chainSelects(op *ast.SetOp) []ast.SelectStatement {
	var right []ast.SelectStatement
	var left ast.SelectStatement = op
	for {
		o, ok := left.(*ast.SetOp)
		if !ok {
			break
		}
		right = append(right, o.Right)
		left = o.Left
	}
	out := []ast.SelectStatement{left}
	for i := len(right) - 1; i >= 0; i-- {
		out = append(out, right[i])
	}
	return out
}

func (e *Engine) lineUpChain(sctx *sql.Context, op *ast.SetOp, top bool) (bool, error) {
	selects := chainSelects(op)
	levels := len(selects) - 1
	bound := make([]sql.Schema, len(selects))
	items := make([][]unionItem, len(selects))
	for i, s := range selects {
		its, sch, ok := e.branchColumns(sctx, s)
		if !ok {
			if levels > unionGuessLevels {
				return false, errUnsupported(fmt.Sprintf("a chain of %d UNION/INTERSECT/EXCEPT whose SELECT %d cannot be planned alone "+
					"(a ? marker or a column of an outer query): its planning time grows exponentially with the chain; "+
					"split it into at most %d", levels, i+1, unionGuessLevels))
			}
			return false, nil
		}
		if i > 0 && len(sch) != len(bound[0]) {
			return false, nil // the planner's own error
		}
		bound[i], items[i] = sch, its
	}
	// MariaDB streams a UNION ALL; it writes a UNION DISTINCT, or one
	// it sorts, to a temporary table.
	tmp := len(op.OrderBy) > 0
	for o := op; o != nil; {
		tmp = tmp || unionKind(o.Type) == "distinct"
		o, _ = o.Left.(*ast.SetOp)
	}
	var rolled map[*ast.Select]bool
	if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok {
		rolled = m.rolledUp
	}
	joined := make([]Column, len(bound[0]))
	for c := range joined {
		col := make([]unionItem, len(items))
		for i := range items {
			col[i] = items[i][c]
			if sel := plainOrGrouped(selects[i]); sel != nil && rolled[sel] {
				// A rollup's added rows keep the grouped rows' types
				// (rollup.go): only NULL is theirs.
				col[i] = items[0][c]
				if items[i][c].col.Flags&flagNotNull == 0 {
					col[i].col.Flags &^= flagNotNull
				}
			}
		}
		joined[c] = joinUnionColumns(col, tmp)
	}
	if top {
		if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok {
			m.union = joined
		}
	}
	need, anyCast := unionNeedsCast(bound, items, joined)
	if !anyCast {
		return balanceChain(op, selects), nil
	}
	var sels []*ast.Select
	for _, s := range selects {
		sel := plainOrGrouped(s)
		if sel == nil || !castable(sel) {
			if _, steps := unionConversions(bound); levels > 1 && steps > unionStepLimit {
				return false, errUnsupported(fmt.Sprintf("a chain of %d UNION/INTERSECT/EXCEPT whose SELECTs differ in column types, "+
					"one of them with * or INTO: its planning time grows exponentially with the chain; "+
					"give every SELECT the same column types (CAST) or split the chain", levels))
			}
			return false, nil
		}
		sels = append(sels, sel)
	}
	for i, sel := range sels {
		castUnionColumns(sel, bound[i], joined, need)
	}
	balanceChain(op, selects)
	return true, nil
}

// balanceChain regroups a left-deep chain whose SELECTs (leftmost first)
// all have the same column types as a balanced tree, when every operator
// of the chain is the same kind of UNION: INTERSECT and EXCEPT do not
// regroup, and a UNION DISTINCT deduplicates every UNION ALL to its left.
// The root keeps the chain's WITH, ORDER BY, LIMIT and INTO. Right-hand
// subtrees are parenthesized so that the statement written back as text
// (PREPARE) parses to the same tree.
func balanceChain(op *ast.SetOp, selects []ast.SelectStatement) bool {
	kind := unionKind(op.Type)
	if kind == "" || len(selects) < 4 {
		return false
	}
	for o := op; ; {
		l, ok := o.Left.(*ast.SetOp)
		if !ok {
			break
		}
		if unionKind(l.Type) != kind || l.With != nil || len(l.OrderBy) > 0 || l.Limit != nil || l.Lock != "" || l.Into != nil {
			return false
		}
		o = l
	}
	var tree func(s []ast.SelectStatement) ast.SelectStatement
	tree = func(s []ast.SelectStatement) ast.SelectStatement {
		if len(s) == 1 {
			return s[0]
		}
		m := len(s) / 2
		right := tree(s[m:])
		if _, ok := right.(*ast.SetOp); ok {
			right = &ast.ParenSelect{Select: right}
		}
		return &ast.SetOp{Type: op.Type, Left: tree(s[:m]), Right: right}
	}
	t := tree(selects).(*ast.SetOp)
	op.Left, op.Right = t.Left, t.Right
	return true
}

// unionKind is "distinct" or "all" for the UNION operators, "" for the
// others.
func unionKind(typ string) string {
	switch typ {
	case ast.UnionStr, ast.UnionDistinctStr:
		return "distinct"
	case ast.UnionAllStr:
		return "all"
	}
	return ""
}

// castable says castUnionColumns can convert sel's columns: no *, no
// INTO.
func castable(sel *ast.Select) bool {
	if sel.Into != nil {
		return false
	}
	for _, expr := range sel.SelectExprs {
		if _, ok := expr.(*ast.AliasedExpr); !ok {
			return false
		}
	}
	return true
}

// unionConversions folds the planner's conversions over a chain's
// schemas: for each column, the CAST target its SELECTs end up converted
// to ("" when no UNION converts it; targets nil when none does), and the
// number of projection schemas planning the chain as written builds.
func unionConversions(schemas []sql.Schema) (targets []string, steps int) {
	cur := make([]sql.Type, len(schemas[0]))
	for c, col := range schemas[0] {
		cur[c] = col.Type
	}
	targets = make([]string, len(cur))
	converted := false
	steps = 1
	for _, sch := range schemas[1:] {
		same, differ := 0, false
		for c, col := range sch {
			if reflect.DeepEqual(cur[c], col.Type) {
				same++
				continue
			}
			differ = true
			to := expression.GetConvertToType(cur[c], col.Type)
			targets[c] = to
			// The planner drops a conversion to the type a value has.
			if t := expression.NewConvertWithLengthAndScale(expression.NewLiteral(nil, cur[c]), to, 0, 0).Type(); !cur[c].Equals(t) {
				cur[c] = t
			}
			converted = true
		}
		if differ && same > 1 {
			// A projection asks its child's schema once per unconverted
			// column.
			steps = min(steps*same, unionStepLimit+1)
		}
	}
	if !converted {
		return nil, steps
	}
	return targets, steps
}
