package sqlview

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
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
	// The statement's WITH: its SELECTs are planned with it (a totals
	// row over a CTE). A recursive CTE's body is typed by its anchor.
	var with *ast.With
	switch st := stmt.(type) {
	case *ast.Select:
		with = st.With
	case *ast.SetOp:
		with = st.With
	}
	recursive := map[*ast.SetOp]*recursiveCTE{}
	if with != nil && with.Recursive {
		for _, c := range with.Ctes {
			if q, ok := c.Expr.(*ast.Subquery); ok {
				if op, ok := q.Select.(*ast.SetOp); ok {
					recursive[op] = &recursiveCTE{cte: c}
				}
			}
		}
	}
	for i := len(chains) - 1; i >= 0; i-- {
		c, err := e.lineUpChain(sctx, chains[i], chainContext{top: ast.Statement(chains[i]) == stmt, with: with, recursive: recursive[chains[i]]})
		if err != nil {
			return false, err
		}
		changed = changed || c
	}
	for _, r := range recursive {
		changed = r.keepAnchorTypes(with) || changed
	}
	return changed, nil
}

// recursiveCTE is a recursive CTE of the statement and the columns its
// anchor gives it (lineUpChain fills them in).
type recursiveCTE struct {
	cte    *ast.CommonTableExpr
	joined []Column
	colls  []sql.CollationID
	names  []string
}

// keepAnchorTypes makes the CTE's readers see its anchor's types, as
// MariaDB's do: go-mysql-server widens them for the recursion
// (planbuilder/cte.go: Type.Promote(), a DATE to DATETIME(6), an INT to
// BIGINT), so WITH RECURSIVE d AS (SELECT DATE('2026-11-19') x UNION ALL
// SELECT x + INTERVAL 1 DAY ...) printed 2026-11-19 00:00:00.000000. The
// CTE is renamed, its own references read the new name under the old
// one, and a CTE of the old name converts its rows back.
func (r *recursiveCTE) keepAnchorTypes(with *ast.With) bool {
	if r.joined == nil {
		return false
	}
	widened := false
	for i, c := range r.joined {
		if v, ok := unionConvOf(c, r.colls[i]); ok {
			if t, err := v.typ(); err == nil && !types.TypesEqual(t, t.Promote()) {
				widened = true
			}
		}
	}
	if !widened {
		return false
	}
	name := r.cte.As.String()
	inner := name + "__heapprof_rec"
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if t, ok := node.(*ast.AliasedTableExpr); ok {
			if n, ok := t.Expr.(ast.TableName); ok && n.DbQualifier.IsEmpty() && strings.EqualFold(n.Name.String(), name) {
				if t.As.IsEmpty() {
					t.As = ast.NewTableIdent(name)
				}
				t.Expr = ast.TableName{Name: ast.NewTableIdent(inner)}
			}
		}
		return true, nil
	}, r.cte.Expr)
	names := r.names
	if len(r.cte.Columns) == len(r.joined) {
		names = nil
		for _, c := range r.cte.Columns {
			names = append(names, c.String())
		}
	}
	back := &ast.Select{From: ast.TableExprs{&ast.AliasedTableExpr{Expr: ast.TableName{Name: ast.NewTableIdent(inner)}}}}
	for i, c := range r.joined {
		col := ast.Expr(&ast.ColName{Name: ast.NewColIdent(names[i])})
		if u := unionValue(col, c, r.colls[i]); u != nil {
			col = u
		}
		back.SelectExprs = append(back.SelectExprs, &ast.AliasedExpr{Expr: col, As: ast.NewColIdent(names[i])})
	}
	r.cte.As = ast.NewTableIdent(inner)
	for i, c := range with.Ctes {
		if c == r.cte {
			wrapper := &ast.CommonTableExpr{AliasedTableExpr: &ast.AliasedTableExpr{Expr: &ast.Subquery{Select: back}, As: ast.NewTableIdent(name)}}
			with.Ctes = append(with.Ctes[:i+1], append([]*ast.CommonTableExpr{wrapper}, with.Ctes[i+1:]...)...)
			break
		}
	}
	return true
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

// chainContext is where a chain stands in its statement: the statement
// itself (top), under a WITH, the body of a recursive CTE (its name).
type chainContext struct {
	top       bool
	with      *ast.With
	recursive *recursiveCTE
}

func (e *Engine) lineUpChain(sctx *sql.Context, op *ast.SetOp, at chainContext) (bool, error) {
	selects := chainSelects(op)
	levels := len(selects) - 1
	bound := make([]sql.Schema, len(selects))
	items := make([][]unionItem, len(selects))
	// A recursive CTE's columns are its anchor's (the SELECTs that do not
	// read it), as MariaDB types them; the recursive SELECTs are
	// converted to them.
	recursiveAt := map[int]bool{}
	if at.recursive != nil {
		for i, s := range selects {
			if readsTable(s, at.recursive.cte.As.String()) {
				recursiveAt[i] = true
			}
		}
		if len(recursiveAt) == 0 || recursiveAt[0] {
			return false, nil // the anchor first, as go-mysql-server reads it
		}
	}
	for i, s := range selects {
		if recursiveAt[i] {
			continue
		}
		its, sch, ok := e.branchColumns(sctx, s, at.with)
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
		var col []unionItem
		for i := range items {
			if recursiveAt[i] {
				continue
			}
			col = append(col, items[i][c])
			if sel := plainOrGrouped(selects[i]); sel != nil && rolled[sel] {
				// A rollup's added rows keep the grouped rows' types
				// (rollup.go): only NULL is theirs.
				it := items[0][c]
				if items[i][c].col.Flags&flagNotNull == 0 {
					it.col.Flags &^= flagNotNull
				}
				col[len(col)-1] = it
			}
		}
		joined[c] = joinUnionColumns(col, tmp)
	}
	noteChainColumns(sctx, selects, items, joined, at.top)
	if at.recursive != nil {
		at.recursive.joined, at.recursive.colls = joined, unionCollations(items, len(joined))
		for _, c := range bound[0] {
			at.recursive.names = append(at.recursive.names, c.Name)
		}
	}
	need, anyCast := unionNeedsCast(bound, items, joined, at.top)
	if len(recursiveAt) > 0 {
		// Every column of a recursive SELECT becomes the anchor's type.
		for c := range need {
			need[c] = kindOf(joined[c]) != kindNull
			anyCast = anyCast || need[c]
		}
	}
	if !anyCast {
		return at.recursive == nil && balanceChain(op, selects), nil
	}
	var sels []*ast.Select
	for i, s := range selects {
		sel := plainOrGrouped(s)
		if sel != nil && !castable(sel) && bound[i] != nil {
			expandStar(sel, bound[i])
		}
		if sel == nil || !castable(sel) {
			if _, steps := unionConversions(bound); levels > 1 && steps > unionStepLimit && len(recursiveAt) == 0 {
				return false, errUnsupported(fmt.Sprintf("a chain of %d UNION/INTERSECT/EXCEPT whose SELECTs differ in column types, "+
					"one of them with * or INTO: its planning time grows exponentially with the chain; "+
					"give every SELECT the same column types (CAST) or split the chain", levels))
			}
			return false, nil
		}
		sels = append(sels, sel)
	}
	colls := unionCollations(items, len(joined))
	for i, sel := range sels {
		castUnionColumns(sel, bound[i], joined, colls, need, i > 0)
	}
	if at.recursive == nil {
		// A recursive CTE's recursive SELECT stays the last UNION's right
		// side, where go-mysql-server looks for it.
		balanceChain(op, selects)
	}
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

// noteChainColumns notes the result's columns in the statement's meta
// when the chain is the statement, or the levels of the rollup that is.
func noteChainColumns(sctx *sql.Context, selects []ast.SelectStatement, items [][]unionItem, joined []Column, top bool) {
	m, ok := sctx.Value(metaKey{}).(*stmtMeta)
	switch {
	case !ok:
	case top:
		m.union = joined
	case m.rollupTop != nil && plainOrGrouped(selects[0]) == m.rollupTop && m.rollupWidth <= len(joined):
		// MariaDB sends a rollup's columns as the grouped SELECT's, NULL
		// where an added row may be.
		cols := make([]Column, m.rollupWidth)
		for c := range cols {
			cols[c] = items[0][c].col
			for _, its := range items {
				if its != nil && its[c].col.Flags&flagNotNull == 0 {
					cols[c].Flags &^= flagNotNull
				}
			}
		}
		m.union = cols
	}
}

// readsTable says s reads a table named name (a recursive CTE's own).
func readsTable(s ast.SelectStatement, name string) bool {
	found := false
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if t, ok := node.(*ast.AliasedTableExpr); ok {
			if n, ok := t.Expr.(ast.TableName); ok && n.DbQualifier.IsEmpty() && strings.EqualFold(n.Name.String(), name) {
				found = true
			}
		}
		return !found, nil
	}, s)
	return found
}

// expandStar writes sel's * (and t.*) as the columns it stands for,
// named as they were, when sel's schema says each column's table (a
// WITH's totals row, SELECT * FROM t UNION ALL SELECT 'total', SUM(s)
// FROM t, was ERROR 1105: go-mysql-server's own conversion of the
// UNION failed).
func expandStar(sel *ast.Select, bound sql.Schema) {
	var out ast.SelectExprs
	for _, c := range bound {
		if c.Source == "" {
			return
		}
		out = append(out, &ast.AliasedExpr{Expr: &ast.ColName{Name: ast.NewColIdent(c.Name),
			Qualifier: ast.TableName{Name: ast.NewTableIdent(c.Source)}}, As: ast.NewColIdent(c.Name)})
	}
	stars := 0
	for _, e := range sel.SelectExprs {
		if _, ok := e.(*ast.StarExpr); ok {
			stars++
		}
	}
	if stars != 1 || len(sel.SelectExprs) != 1 {
		return // * among other items: which columns are its is not kept
	}
	sel.SelectExprs = out
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
