package sqlview

// CUME_DIST() OVER (PARTITION BY p ORDER BY o): go-mysql-server v0.20.0's
// planner has a fixed list of window functions without it (ERROR 1305).
// MariaDB's Item_sum_cume_dist (sql/item_windowfunc.h, 10.11.18) is the
// rows up to the current row's last peer over the partition's rows, a
// DOUBLE(17,10). cumeDists writes it as the two counts, COUNT(*) OVER
// (PARTITION BY p ORDER BY o) (whose default frame ends at the last
// peer) and COUNT(*) OVER (PARTITION BY p), divided by cumeDistFunc.

import (
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// cumeDistFunc divides the two counts cumeDists writes.
const cumeDistFunc = "__heapprof_cume_dist"

// cumeDists rewrites stmt's CUME_DIST() over a window written in its
// OVER clause (a named window is left to the planner's error).
func cumeDists(stmt ast.Statement) {
	var found []*ast.FuncExpr
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if f, ok := node.(*ast.FuncExpr); ok && f.Name.EqualString("cume_dist") && f.Over != nil &&
			len(f.Exprs) == 0 && f.Over.NameRef.IsEmpty() && f.Over.Frame == nil {
			found = append(found, f)
		}
		return true, nil
	}, stmt)
	for _, f := range found {
		count := func(over *ast.Over) ast.Expr {
			return &ast.FuncExpr{Name: ast.NewColIdent("count"), Exprs: ast.SelectExprs{&ast.StarExpr{}}, Over: over}
		}
		upTo := count(&ast.Over{PartitionBy: f.Over.PartitionBy, OrderBy: f.Over.OrderBy})
		all := count(&ast.Over{PartitionBy: f.Over.PartitionBy})
		*f = ast.FuncExpr{Name: ast.NewColIdent(cumeDistFunc), Exprs: ast.SelectExprs{&ast.AliasedExpr{Expr: upTo}, &ast.AliasedExpr{Expr: all}}}
	}
}

// newCumeDist is cumeDistFunc's node: a DOUBLE, resultmeta's DOUBLE(17,10).
func newCumeDist(upTo, all sql.Expression) sql.Expression {
	return &fnExpr{name: strings.ToUpper(cumeDistFunc), args: []sql.Expression{upTo, all}, typ: types.Float64,
		eval: func(ctx *sql.Context, vals []any) (any, error) {
			n, _, err := types.Float64.Convert(ctx, vals[0])
			if err != nil {
				return nil, err
			}
			d, _, err := types.Float64.Convert(ctx, vals[1])
			if err != nil || d.(float64) == 0 {
				return nil, err
			}
			return n.(float64) / d.(float64), nil
		}}
}
