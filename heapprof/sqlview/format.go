package sqlview

import (
	"math"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// mariaFormat is FORMAT(x, d) as MariaDB's Item_func_format computes it:
// integers and DECIMALs rounded exactly (half away from zero), DOUBLE and
// text rounded as ROUND of a DOUBLE (half to even: FORMAT(56.25e0, 1) is
// 56.2) and printed with d exact digits, d at most 38.
// go-mysql-server went through float64 (FORMAT(bigint, 30) printed
// binary noise), wrapped integers beyond BIGINT into negative numbers
// (FORMAT(12345678901234567890, 2) was -6,101,...) and allowed 30
// digits. With a locale argument and for dates go-mysql-server answers.
type mariaFormat struct{ *function.Format }

func newFormat(args ...sql.Expression) (sql.Expression, error) {
	if len(args) == 3 {
		// The locale as text: go-mysql-server's FORMAT takes it for a
		// string and panicked on FORMAT(x, 2, 1); MariaDB reads '1', an
		// unknown locale, as en_US.
		args = []sql.Expression{args[0], args[1], expression.NewConvert(args[2], expression.ConvertToChar)}
	}
	f, err := function.NewFormat(args...)
	if err != nil {
		return nil, err
	}
	return &mariaFormat{Format: f.(*function.Format)}, nil
}

func (f *mariaFormat) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(f.Format, c, func(x *function.Format) sql.Expression { return &mariaFormat{Format: x} })
}

func (f *mariaFormat) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	t := f.NumValue.Type()
	if f.Locale != nil || isTemporal(t) || types.IsTime(t) {
		return f.Format.Eval(ctx, row)
	}
	v, err := f.NumValue.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	dv, err := f.NumDecimalPlaces.Eval(ctx, row)
	if err != nil || dv == nil {
		return nil, err
	}
	d, err := toInt64(ctx, dv)
	if err != nil {
		return nil, err
	}
	d = max(0, min(d, formatMaxDecimals))
	var s string
	if types.IsInteger(t) || types.IsDecimal(t) {
		x, err := exactValue(ctx, t, v)
		if err != nil {
			return nil, err
		}
		s = x.Round(int32(d)).StringFixed(int32(d))
	} else {
		x := roundHalfEven(doubleValue(v), d)
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, nil
		}
		s = strconv.FormatFloat(x, 'f', int(d), 64)
	}
	return groupThousands(s), nil
}

// groupThousands puts en_US's ',' between each three integer digits of
// the number s.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac := s, ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		intPart, frac = s[:i], s[i:]
	}
	var b strings.Builder
	b.WriteString(sign)
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteString(frac)
	return b.String()
}
