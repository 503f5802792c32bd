package sqlview

import "github.com/dolthub/go-mysql-server/sql"

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

// withChild is WithChildren for the one-child wrapper e: rebuild wraps
// the new child.
func withChild(e sql.Expression, c []sql.Expression, rebuild func(sql.Expression) sql.Expression) (sql.Expression, error) {
	if len(c) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(e, len(c), 1)
	}
	return rebuild(c[0]), nil
}
