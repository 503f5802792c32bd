package sqlview

// GROUP BY ... WITH ROLLUP, as MariaDB answers it (JOIN::rollup_init,
// rollup_make_fields and rollup_send_data, sql/sql_select.cc, 10.11.18):
// after each group's rows, a row for each level of the GROUP BY list
// whose value changed, with that level's and the deeper levels' group
// values NULL (in the select list and in HAVING, wherever they appear
// outside an aggregate) and the aggregates over the wider group; last,
// the total over all rows (none when there are no rows). ORDER BY is
// ERROR 1221; LIMIT counts the added rows too.
//
// go-mysql-server v0.20.0's parser does not read WITH ROLLUP. reparse
// writes it as a marker, one last GROUP BY item; rollups writes each
// marked SELECT as a UNION ALL of one grouped SELECT per level, in a
// derived table sorted as MariaDB sends the rows.

import (
	"context"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// rollupMarker is the GROUP BY item reparse writes for WITH ROLLUP.
const rollupMarker = "__heapprof_rollup"

// rollupTable is the derived table of a rollup's levels.
const rollupTable = "__heapprof_rollup"

// rollupEdits are the edits that write query's WITH ROLLUP as markers
// (none when it has none).
func rollupEdits(toks []token) []textEdit {
	var edits []textEdit
	for i := 0; i+1 < len(toks); i++ {
		if toks[i].is("WITH") && toks[i+1].is("ROLLUP") {
			edits = append(edits, textEdit{start: toks[i].start, end: toks[i+1].end, with: ", " + rollupMarker})
		}
	}
	return edits
}

// rollups rewrites every SELECT of stmt that reparse marked, and notes
// in the statement's meta which SELECTs answer the added rows.
func rollups(ctx context.Context, stmt ast.Statement) error {
	var marked []*ast.Select
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if s, ok := node.(*ast.Select); ok && len(s.GroupBy) > 0 {
			if c, ok := s.GroupBy[len(s.GroupBy)-1].(*ast.ColName); ok && c.Qualifier.IsEmpty() && c.Name.EqualString(rollupMarker) {
				marked = append(marked, s)
			}
		}
		return true, nil
	}, stmt)
	m, _ := ctx.Value(metaKey{}).(*stmtMeta)
	for _, s := range marked {
		s.GroupBy = s.GroupBy[:len(s.GroupBy)-1]
		levels, err := rollup(s)
		if err != nil {
			return err
		}
		if m != nil {
			if m.rolledUp == nil {
				m.rolledUp = map[*ast.Select]bool{}
			}
			for _, l := range levels[1:] {
				m.rolledUp[l] = true
			}
			if ast.Statement(s) == stmt {
				// The statement's columns are the grouped SELECT's, as
				// MariaDB sends them (lineUpChain).
				m.rollupTop, m.rollupWidth = levels[0], len(s.SelectExprs)
			}
		}
	}
	return nil
}

// rollup writes s, grouped WITH ROLLUP, as the UNION ALL of its levels,
// which it returns, the whole grouping first.
func rollup(s *ast.Select) ([]*ast.Select, error) {
	if len(s.OrderBy) > 0 {
		return nil, &Error{Code: mysql.ERWrongUsage, State: mysql.SSUnknownSQLState, Message: "Incorrect usage of CUBE/ROLLUP and ORDER BY"}
	}
	switch {
	case s.Into != nil:
		return nil, errUnsupported("WITH ROLLUP with INTO")
	case len(s.Window) > 0:
		return nil, errUnsupported("WITH ROLLUP with a WINDOW clause")
	}
	names := make([]string, len(s.SelectExprs))
	seen := map[string]bool{}
	for i, e := range s.SelectExprs {
		a, ok := e.(*ast.AliasedExpr)
		if !ok {
			return nil, errUnsupported("WITH ROLLUP with SELECT *; name the columns")
		}
		if hasWindow(a.Expr) {
			return nil, errUnsupported("WITH ROLLUP with window functions")
		}
		names[i] = a.As.String()
		if names[i] == "" {
			names[i] = a.InputExpression
		}
		if c, ok := a.Expr.(*ast.ColName); ok && names[i] == "" {
			names[i] = c.Name.String()
		}
		if names[i] == "" {
			names[i] = ast.String(a.Expr)
		}
		if !a.As.IsEmpty() {
			if seen[a.As.Lowered()] {
				return nil, errUnsupported("WITH ROLLUP with two columns named " + a.As.String() + "; give them distinct names")
			}
			seen[a.As.Lowered()] = true
		}
	}
	// The GROUP BY list as expressions: a position or an alias is its
	// select item's.
	groups := make([]ast.Expr, len(s.GroupBy))
	for i, g := range s.GroupBy {
		groups[i] = g
		switch g := g.(type) {
		case *ast.SQLVal:
			if k, err := strconv.Atoi(string(g.Val)); g.Type == ast.IntVal && err == nil && k >= 1 && k <= len(s.SelectExprs) {
				groups[i] = s.SelectExprs[k-1].(*ast.AliasedExpr).Expr
			}
		case *ast.ColName:
			if g.Qualifier.IsEmpty() {
				for _, e := range s.SelectExprs {
					if a := e.(*ast.AliasedExpr); a.As.Equal(g.Name) {
						groups[i] = a.Expr
					}
				}
			}
		}
	}
	text := ast.String(&ast.Select{SelectExprs: s.SelectExprs, From: s.From, Where: s.Where, Having: s.Having})
	var union ast.SelectStatement
	var levels []*ast.Select
	for level := len(groups); level >= 0; level-- {
		b, err := rollupLevel(text, groups, level)
		if err != nil {
			return nil, err
		}
		levels = append(levels, b)
		if union == nil {
			union = b
		} else {
			union = &ast.SetOp{Type: ast.UnionAllStr, Left: union, Right: b}
		}
	}
	// DISTINCT keeps each row's first occurrence in that order.
	outer := &ast.Select{Limit: s.Limit, QueryOpts: ast.QueryOpts{Distinct: s.QueryOpts.Distinct},
		From: ast.TableExprs{&ast.AliasedTableExpr{Expr: &ast.Subquery{Select: union}, As: ast.NewTableIdent(rollupTable)}}}
	for i, n := range names {
		outer.SelectExprs = append(outer.SelectExprs, &ast.AliasedExpr{Expr: rollupColumn(rollupItemName(i, s.SelectExprs[i])),
			As: ast.NewColIdent(n), InputExpression: n})
	}
	for i := range groups {
		// Each group's rows in order, its total after them.
		outer.OrderBy = append(outer.OrderBy,
			&ast.Order{Expr: rollupColumn(rollupKey("r", i)), Direction: ast.AscScr},
			&ast.Order{Expr: rollupColumn(rollupKey("g", i)), Direction: ast.AscScr})
	}
	*s = *outer
	return levels, nil
}

// rollupLevel is the SELECT of one level of a rollup: grouped by the
// first level groups, the others NULL; text is the SELECT without GROUP
// BY, each level's a copy of its own.
func rollupLevel(text string, groups []ast.Expr, level int) (*ast.Select, error) {
	st, err := ast.Parse(text)
	if err != nil {
		return nil, errUnsupported("WITH ROLLUP of this SELECT (" + err.Error() + ")")
	}
	b := st.(*ast.Select)
	rolled := groups[level:]
	for i, e := range b.SelectExprs {
		a := e.(*ast.AliasedExpr)
		a.Expr = nullGroups(a.Expr, rolled)
		if a.As.IsEmpty() {
			a.As = ast.NewColIdent(rollupItemName(i, a))
		}
	}
	if b.Having != nil {
		b.Having.Expr = nullGroups(b.Having.Expr, rolled)
	}
	for i, g := range groups {
		key, flag := ast.Expr(&ast.NullVal{}), "1"
		if i < level {
			c, ok := copyExpr(g)
			if !ok {
				return nil, errUnsupported("WITH ROLLUP of GROUP BY " + ast.String(g))
			}
			key, flag = c, "0"
			b.GroupBy = append(b.GroupBy, mustCopy(g))
		}
		b.SelectExprs = append(b.SelectExprs,
			&ast.AliasedExpr{Expr: ast.NewIntVal([]byte(flag)), As: ast.NewColIdent(rollupKey("r", i))},
			&ast.AliasedExpr{Expr: key, As: ast.NewColIdent(rollupKey("g", i))})
	}
	if level == 0 && len(groups) > 0 {
		// The total of no rows is no row.
		nonEmpty := &ast.ComparisonExpr{Operator: ast.GreaterThanStr,
			Left:  &ast.FuncExpr{Name: ast.NewColIdent("count"), Exprs: ast.SelectExprs{&ast.StarExpr{}}},
			Right: ast.NewIntVal([]byte("0"))}
		if b.Having == nil {
			b.Having = &ast.Where{Type: ast.HavingStr, Expr: nonEmpty}
		} else {
			b.Having.Expr = &ast.AndExpr{Left: b.Having.Expr, Right: nonEmpty}
		}
	}
	return b, nil
}

func mustCopy(e ast.Expr) ast.Expr {
	if c, ok := copyExpr(e); ok {
		return c
	}
	return e
}

// rollupItemName is the derived table's column of select item i: its
// alias, else a name of the rewrite's own.
func rollupItemName(i int, e ast.SelectExpr) string {
	if a, ok := e.(*ast.AliasedExpr); ok && !a.As.IsEmpty() {
		return a.As.String()
	}
	return rollupTable + "_c" + strconv.Itoa(i+1)
}

func rollupKey(kind string, i int) string {
	return rollupTable + "_" + kind + strconv.Itoa(i+1)
}

func rollupColumn(name string) *ast.ColName {
	return &ast.ColName{Name: ast.NewColIdent(name), Qualifier: ast.TableName{Name: ast.NewTableIdent(rollupTable)}}
}

// nullGroups is e with every part (outside aggregates and subqueries)
// that is one of rolled a NULL.
func nullGroups(e ast.Expr, rolled []ast.Expr) ast.Expr {
	if len(rolled) == 0 {
		return e
	}
	isRolled := func(x ast.Expr) bool {
		for _, g := range rolled {
			if sameGroupExpr(x, g) {
				return true
			}
		}
		return false
	}
	if isRolled(e) {
		return &ast.NullVal{}
	}
	var found []ast.Expr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		switch n := node.(type) {
		case *ast.Subquery, *ast.GroupConcatExpr:
			return false, nil
		case *ast.FuncExpr:
			if n.IsAggregate() {
				return false, nil
			}
		}
		if x, ok := node.(ast.Expr); ok && isRolled(x) {
			found = append(found, x)
			return false, nil
		}
		return true, nil
	}, e)
	for _, f := range found {
		e = ast.ReplaceExpr(e, f, &ast.NullVal{})
	}
	return e
}

// sameGroupExpr says x is the group expression g: the same text, a
// column named alike when either is unqualified.
func sameGroupExpr(x, g ast.Expr) bool {
	xc, ok1 := x.(*ast.ColName)
	gc, ok2 := g.(*ast.ColName)
	if ok1 && ok2 {
		if !xc.Name.Equal(gc.Name) {
			return false
		}
		return xc.Qualifier.IsEmpty() || gc.Qualifier.IsEmpty() || strings.EqualFold(xc.Qualifier.Name.String(), gc.Qualifier.Name.String())
	}
	if ok1 || ok2 {
		return false
	}
	return strings.EqualFold(ast.String(x), ast.String(g))
}
