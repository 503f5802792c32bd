package sqlview

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Unqualified columns that name a column of more than one table.
//
// The heapprof tables repeat columns so that charts need no join
// (node_id, taken_at, snapshot_id, name, short_name), so a join of two of
// them has several columns of one name. MariaDB refuses an unqualified one
// with ERROR 1052 (23000) "Column 'node_id' in SELECT is ambiguous".
// go-mysql-server v0.20.0 refuses it too, with 1105, except in a query
// with aggregates, where its planner takes the first table's column
// without a word (planbuilder/scope.go, resolveColumn): COUNT(node_id) of
// snapshots LEFT JOIN functions counted the snapshots, where the reader may
// have meant the matched functions. checkAmbiguousColumns refuses them all
// before planning, as MariaDB words it.

// tableColumns are the lower-cased column names of the heapprof tables,
// by lower-cased table name.
type tableColumns map[string][]string

func newTableColumns(tables map[string]sql.Table) tableColumns {
	out := tableColumns{}
	for name, t := range tables {
		for _, c := range t.Schema() {
			out[strings.ToLower(name)] = append(out[strings.ToLower(name)], strings.ToLower(c.Name))
		}
	}
	return out
}

// isColumn says some heapprof table has a column of that (lower-case)
// name.
func (cols tableColumns) isColumn(name string) bool {
	for _, names := range cols {
		if slices.Contains(names, name) {
			return true
		}
	}
	return false
}

// errAmbiguous is MariaDB's ERROR 1052 for column name in clause.
func errAmbiguous(name, clause string) *Error {
	return &Error{Code: mysql.ERNonUniq, State: mysql.SSConstraintViolation,
		Message: fmt.Sprintf("Column '%s' in %s is ambiguous", name, clause)}
}

// checkAmbiguousColumns refuses a SELECT whose select list, WHERE, ON,
// GROUP BY, HAVING or ORDER BY names, unqualified, a column that two of
// the tables in its FROM have. It looks only at SELECTs whose FROM holds
// heapprof tables alone (a derived table, a CTE or another schema's table
// leaves that SELECT to the planner), and, as MariaDB does, lets ORDER
// BY, GROUP BY and HAVING name a select item by its name.
func (cols tableColumns) checkAmbiguousColumns(stmt ast.Statement, currentDB string) error {
	if hasWith(stmt) {
		return nil // a FROM name may be a CTE's
	}
	var found error
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		sel, ok := n.(*ast.Select)
		if !ok || found != nil {
			return found == nil, nil
		}
		found = cols.checkSelect(sel, currentDB)
		return found == nil, nil
	}, stmt)
	return found
}

// checkSelect is checkAmbiguousColumns for one SELECT, its subqueries
// left to their own turn.
func (cols tableColumns) checkSelect(sel *ast.Select, currentDB string) error {
	from, ok := cols.fromTables(sel.From, currentDB)
	if !ok || len(from.tables) < 2 {
		return nil
	}
	ambiguous := from.ambiguous()
	if len(ambiguous) == 0 {
		return nil
	}
	if from.onErr != nil {
		return from.onErr
	}
	items := map[string]bool{} // select items' names, for ORDER BY, GROUP BY, HAVING
	for _, se := range sel.SelectExprs {
		ae, ok := se.(*ast.AliasedExpr)
		if !ok {
			continue
		}
		if !ae.As.IsEmpty() {
			items[ae.As.Lowered()] = true
		} else if c, ok := ae.Expr.(*ast.ColName); ok {
			items[c.Name.Lowered()] = true
		}
	}
	type clause struct {
		name string
		// byItem: a bare column may name a select item (ORDER BY, GROUP BY,
		// HAVING); aggregatesOnly: only columns inside an aggregate count
		// (in HAVING a bare column must be a select item or a GROUP BY key,
		// MariaDB's 1054 otherwise, the planner's to give).
		byItem, aggregatesOnly bool
		nodes                  []ast.SQLNode
	}
	// Checked in clause order; the first ambiguity is the one named.
	clauses := []clause{{name: "SELECT", nodes: asNodes(sel.SelectExprs)}}
	if sel.Where != nil {
		clauses = append(clauses, clause{name: "WHERE", nodes: []ast.SQLNode{sel.Where.Expr}})
	}
	clauses = append(clauses, clause{name: "GROUP BY", byItem: true, nodes: asNodes(sel.GroupBy)})
	if sel.Having != nil {
		clauses = append(clauses, clause{name: "HAVING", byItem: true, aggregatesOnly: true, nodes: []ast.SQLNode{sel.Having.Expr}})
	}
	for _, o := range sel.OrderBy {
		clauses = append(clauses, clause{name: "ORDER BY", byItem: true, nodes: []ast.SQLNode{o.Expr}})
	}
	for _, cl := range clauses {
		for _, node := range cl.nodes {
			if c, ok := node.(*ast.ColName); ok && cl.byItem && items[c.Name.Lowered()] {
				continue // a select item named so
			}
			if err := unqualifiedIn(node, ambiguous, cl.name, cl.aggregatesOnly); err != nil {
				return err
			}
		}
	}
	return nil
}

// asNodes is xs as SQL nodes.
func asNodes[T ast.SQLNode](xs []T) []ast.SQLNode {
	out := make([]ast.SQLNode, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// unqualifiedIn is errAmbiguous for the first unqualified column of node
// named in ambiguous, not looking into subqueries (their own FROM comes
// first); with aggregatesOnly, only columns inside an aggregate count.
func unqualifiedIn(node ast.SQLNode, ambiguous map[string]bool, clause string, aggregatesOnly bool) error {
	var found error
	var visit func(node ast.SQLNode, inAgg bool)
	visit = func(node ast.SQLNode, inAgg bool) {
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if found != nil {
				return false, nil
			}
			switch x := n.(type) {
			case *ast.Subquery:
				return false, nil
			case *ast.FuncExpr:
				if x.IsAggregate() && !inAgg && n != node {
					visit(x, true)
					return false, nil
				}
			case *ast.GroupConcatExpr:
				if !inAgg && n != node {
					visit(x, true)
					return false, nil
				}
			case *ast.ColName:
				if x.Qualifier.IsEmpty() && ambiguous[x.Name.Lowered()] && (inAgg || !aggregatesOnly) {
					found = errAmbiguous(x.Name.String(), clause)
					return false, nil
				}
			}
			return true, nil
		}, node)
	}
	_, isAgg := node.(*ast.GroupConcatExpr)
	if f, ok := node.(*ast.FuncExpr); ok && f.IsAggregate() {
		isAgg = true
	}
	visit(node, isAgg)
	return found
}

// fromScope is what a FROM clause makes visible: each table's columns by
// the name it goes by, and the columns joined by USING or NATURAL, which
// are one column, not two.
type fromScope struct {
	tables map[string][]string
	merged map[string]bool
	// onErr is the first ambiguous column of an ON condition, against
	// the tables its join joins.
	onErr error
}

// ambiguous are the column names more than one table has.
func (f *fromScope) ambiguous() map[string]bool {
	seen := map[string]int{}
	for _, cs := range f.tables {
		for _, c := range cs {
			seen[c]++
		}
	}
	out := map[string]bool{}
	for c, n := range seen {
		if n > 1 && !f.merged[c] {
			out[c] = true
		}
	}
	return out
}

// fromTables is the scope of a FROM clause; ok is false unless it is
// made of heapprof tables only.
func (cols tableColumns) fromTables(exprs ast.TableExprs, currentDB string) (*fromScope, bool) {
	f := &fromScope{tables: map[string][]string{}, merged: map[string]bool{}}
	for _, te := range exprs {
		if !cols.addTable(f, te, currentDB) {
			return nil, false
		}
	}
	return f, true
}

func (cols tableColumns) addTable(f *fromScope, te ast.TableExpr, currentDB string) bool {
	switch x := te.(type) {
	case *ast.AliasedTableExpr:
		tn, ok := x.Expr.(ast.TableName)
		if !ok {
			return false // a derived table, VALUES, a table function
		}
		db := tn.DbQualifier.String()
		if db == "" {
			db = currentDB
		}
		if !strings.EqualFold(db, SchemaName) {
			return false
		}
		cs, ok := cols[strings.ToLower(tn.Name.String())]
		if !ok {
			return false
		}
		name := strings.ToLower(tn.Name.String())
		if !x.As.IsEmpty() {
			name = strings.ToLower(x.As.String())
		}
		f.tables[name] = cs
		return true
	case *ast.ParenTableExpr:
		for _, e := range x.Exprs {
			if !cols.addTable(f, e, currentDB) {
				return false
			}
		}
		return true
	case *ast.JoinTableExpr:
		if !cols.addTable(f, x.LeftExpr, currentDB) {
			return false
		}
		// The ON condition sees the tables joined so far and the right
		// one, not those joined later.
		left := len(f.tables)
		if !cols.addTable(f, x.RightExpr, currentDB) {
			return false
		}
		for _, c := range x.Condition.Using {
			f.merged[c.Lowered()] = true
		}
		if strings.HasPrefix(strings.ToLower(x.Join), "natural") {
			// Every common column is one: leave such a join to the
			// planner's own rules.
			return false
		}
		if x.Condition.On != nil && f.onErr == nil && left > 0 {
			f.onErr = unqualifiedIn(x.Condition.On, f.ambiguous(), "ON", false)
		}
		return true
	}
	return false
}

// hasWith: stmt has a WITH clause anywhere.
func hasWith(stmt ast.Statement) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if w, ok := n.(*ast.With); ok && w != nil && len(w.Ctes) > 0 {
			found = true
		}
		return !found, nil
	}, stmt)
	return found
}
