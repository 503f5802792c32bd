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
