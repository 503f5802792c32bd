package sqlview

import (
	"fmt"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// groupConcatArgs gives GROUP_CONCAT MariaDB's reading of its arguments:
//   - an integer in its ORDER BY is the argument it names, counted from
//     1: GROUP_CONCAT(x ORDER BY 1) is ordered by x there, and
//     go-mysql-server ordered by the constant 1, that is, not at all; a
//     position beyond the arguments is MariaDB's ERROR 1054;
//   - several arguments are concatenated: go-mysql-server kept the first
//     (GROUP_CONCAT(name, ':', bytes) was the names alone). CONCAT is NULL
//     where any argument is, and MariaDB skips those rows too; DISTINCT
//     compares the concatenation here, the arguments there;
//   - DISTINCT without ORDER BY is ordered by the arguments: MariaDB
//     keeps the distinct values in a tree and reads them back sorted
//     (GROUP_CONCAT(DISTINCT y) of 10, 9, 100 is 9,10,100 there; it was
//     in the order the rows came).
//
// changed tells whether stmt was rewritten.
func groupConcatArgs(stmt ast.SQLNode) (changed bool, err error) {
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		g, ok := n.(*ast.GroupConcatExpr)
		if !ok || err != nil {
			return err == nil, nil
		}
		for _, o := range g.OrderBy {
			v, ok := o.Expr.(*ast.SQLVal)
			if !ok || v.Type != ast.IntVal {
				continue
			}
			pos, perr := strconv.Atoi(string(v.Val))
			if perr != nil || pos < 1 || pos > len(g.Exprs) {
				err = &Error{Code: mysql.ERBadFieldError, State: mysql.SSBadFieldError,
					Message: fmt.Sprintf("Unknown column '%s' in 'ORDER BY'", v.Val)}
				return false, nil
			}
			if arg, ok := g.Exprs[pos-1].(*ast.AliasedExpr); ok {
				o.Expr, changed = arg.Expr, true
			}
		}
		if g.Distinct != "" && len(g.OrderBy) == 0 {
			for _, e := range g.Exprs {
				if arg, ok := e.(*ast.AliasedExpr); ok {
					g.OrderBy = append(g.OrderBy, &ast.Order{Expr: arg.Expr, Direction: ast.AscScr})
					changed = true
				}
			}
		}
		if len(g.Exprs) > 1 {
			g.Exprs = ast.SelectExprs{&ast.AliasedExpr{Expr: &ast.FuncExpr{Name: ast.NewColIdent("concat"), Exprs: g.Exprs}}}
			changed = true
		}
		return true, nil
	}, stmt)
	return changed, err
}
