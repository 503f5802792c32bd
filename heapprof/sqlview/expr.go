package sqlview

import (
	"slices"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// rewrap is WithChildren for a wrapper around a go-mysql-server expression
// of type T: the analyzer rebuilds expressions through WithChildren, so the
// inner one is rebuilt and wrapped again while it is still a T (anything
// else it turns into is returned as is).
func rewrap[T sql.Expression](inner T, kids []sql.Expression, wrap func(T) sql.Expression) (sql.Expression, error) {
	e, err := inner.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	if x, ok := e.(T); ok {
		return wrap(x), nil
	}
	return e, nil
}

// wrapped is what this package's one-child wrappers share: they stand
// where their child stood, under its name and with its nullability.
type wrapped struct{ child sql.Expression }

func (w wrapped) Resolved() bool             { return w.child.Resolved() }
func (w wrapped) IsNullable() bool           { return w.child.IsNullable() }
func (w wrapped) Children() []sql.Expression { return []sql.Expression{w.child} }
func (w wrapped) String() string             { return w.child.String() }

// answersFor is embedded by the nodes that answer in MariaDB's way for a
// go-mysql-server function fn: they show fn's text (the name of an
// unaliased select item's column), and have its children and type.
type answersFor struct{ fn sql.Expression }

func (a answersFor) String() string             { return a.fn.String() }
func (a answersFor) Resolved() bool             { return a.fn.Resolved() }
func (a answersFor) IsNullable() bool           { return true }
func (a answersFor) Children() []sql.Expression { return a.fn.Children() }
func (a answersFor) Type() sql.Type             { return a.fn.Type() }

// withChild is WithChildren for the one-child wrapper e: rebuild wraps
// the new child.
func withChild(e sql.Expression, c []sql.Expression, rebuild func(sql.Expression) sql.Expression) (sql.Expression, error) {
	if len(c) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(c), 1)
	}
	return rebuild(c[0]), nil
}

// nodeExprs is transform.NodeExprsWithNodeWithOpaque keeping the column
// ids of the select items' aliases: go-mysql-server's Alias.WithChildren
// makes an alias without one, and what refers to the item by id (HAVING
// m = 1 of an item named m, a derived table's column) then no longer
// finds it (findColumn).
func nodeExprs(n sql.Node, f transform.ExprWithNodeFunc) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		return oneNodeExprs(n, f)
	})
}

// planExprs is nodeExprs over n and over the plans of its subqueries:
// f is given every expression of both (a subquery's own expression is
// rebuilt from its plan, not given to f).
func planExprs(n sql.Node, f transform.ExprWithNodeFunc) (sql.Node, transform.TreeIdentity, error) {
	return nodeExprs(n, func(n sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
		if sq, ok := e.(*plan.Subquery); ok {
			q, same, err := planExprs(sq.Query, f)
			if err != nil || same == transform.SameTree {
				return e, transform.SameTree, err
			}
			return sq.WithQuery(q), transform.NewTree, nil
		}
		return f(n, e)
	})
}

// oneNodeExprs is transform.OneNodeExprsWithNode keeping the column ids
// of the select items' aliases (nodeExprs).
func oneNodeExprs(n sql.Node, f transform.ExprWithNodeFunc) (sql.Node, transform.TreeIdentity, error) {
	ne, ok := n.(sql.Expressioner)
	if !ok {
		return n, transform.SameTree, nil
	}
	exprs := ne.Expressions()
	var out []sql.Expression
	for i, e := range exprs {
		x, same, err := transform.ExprWithNode(n, e, f)
		if err != nil {
			return nil, transform.SameTree, err
		}
		if same == transform.SameTree {
			continue
		}
		if was, ok := e.(*expression.Alias); ok && was.Id() != 0 {
			if now, ok := x.(*expression.Alias); ok && now.Id() == 0 && now.Name() == was.Name() {
				x = now.WithId(was.Id()).(sql.Expression)
			}
		}
		if out == nil {
			out = slices.Clone(exprs)
		}
		out[i] = x
	}
	if out == nil {
		return n, transform.SameTree, nil
	}
	n, err := ne.WithExpressions(out...)
	if err != nil {
		return nil, transform.SameTree, err
	}
	return n, transform.NewTree, nil
}
