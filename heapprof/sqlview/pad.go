package sqlview

// LPAD, RPAD and INSERT as MariaDB's Item_func_lpad and Item_func_rpad answer
// them: lengths in characters (go-mysql-server counted bytes, so
// LPAD('ünï', 5, '*') was 'ünï', '**ünï' on MariaDB, and a pad or a cut
// through a multibyte character was ERROR 1105 "invalid string"), NULL
// for a negative length or an empty pad that must pad, the pad a space
// when it is not given (MariaDB 10.3.1+; it was ERROR 1582).

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// charPad is LPAD or RPAD counting characters; valueGuard bounds it as
// it bounds REPEAT.
type charPad struct {
	answersFor // go-mysql-server's LPAD or RPAD: name, children, type
	left       bool
}

var _ sql.FunctionExpression = (*charPad)(nil)

// newPad is LPAD (left) or RPAD of args, the pad a space when only two
// are given.
func newPad(left bool) func(args ...sql.Expression) (sql.Expression, error) {
	return func(args ...sql.Expression) (sql.Expression, error) {
		if len(args) == 2 {
			args = append(args, expression.NewLiteral(" ", types.LongText))
		}
		newFn := function.NewRightPad
		if left {
			newFn = function.NewLeftPad
		}
		fn, err := newFn(args...)
		if err != nil {
			return nil, err
		}
		return &charPad{answersFor{fn}, left}, nil
	}
}

func (p *charPad) FunctionName() string { return p.fn.(sql.FunctionExpression).FunctionName() }
func (p *charPad) Description() string {
	return "MariaDB's " + strings.ToUpper(p.FunctionName()) + " (heapprof/sqlview)"
}

func (p *charPad) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.fn)
}

func (p *charPad) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	fn, err := p.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &charPad{answersFor{fn}, p.left}, nil
}

func (p *charPad) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	kids := p.Children()
	vals := make([]any, len(kids))
	for i, k := range kids {
		v, err := k.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vals[i] = v
	}
	return padChars(ctx, vals, p.left)
}

// padChars is LPAD(s, n, pad) (left) or RPAD of the evaluated vals (none
// NULL), in characters; nil (NULL) as MariaDB answers NULL.
func padChars(ctx *sql.Context, vals []any, left bool) (any, error) {
	s, err := toText(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	pad, err := toText(ctx, vals[2])
	if err != nil {
		return nil, err
	}
	count, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, fmt.Errorf("PAD length: %w", err)
	}
	if count < 0 {
		return nil, nil
	}
	have := int64(utf8.RuneCountInString(s))
	if count <= have {
		return cutChars(s, int(count)), nil
	}
	padLen := int64(utf8.RuneCountInString(pad))
	if padLen == 0 {
		return nil, nil
	}
	need := count - have
	fill := strings.Repeat(pad, int(need/padLen)) + cutChars(pad, int(need%padLen))
	if left {
		return fill + s, nil
	}
	return s + fill, nil
}

// insertChars is INSERT(s, pos, n, with) as MariaDB's Item_func_insert
// answers it (it was ERROR 1305): n characters of s from the pos-th
// replaced by with; s as it is for a pos outside it.
func insertChars(ctx *sql.Context, vals []any) (any, error) {
	s, err := toText(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	with, err := toText(ctx, vals[3])
	if err != nil {
		return nil, err
	}
	pos, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	n, err := toInt64(ctx, vals[2])
	if err != nil {
		return nil, err
	}
	if pos <= 0 || pos > int64(len(s)) {
		return s, nil
	}
	if n < 0 || n > int64(len(s)) {
		n = int64(len(s))
	}
	head := cutChars(s, int(pos-1))
	rest := s[len(head):]
	cut := cutChars(rest, int(n))
	return head + with + rest[len(cut):], nil
}

// toText is v as text.
func toText(ctx *sql.Context, v any) (string, error) {
	s, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return "", fmt.Errorf("text argument %v: %w", v, err)
	}
	str, _ := s.(string)
	return str, nil
}

// cutChars is s's first n characters.
func cutChars(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}
