package sqlview

// MAKETIME(hour, minute, second) as MariaDB's Item_func_maketime answers it
// (it was ERROR 1305): NULL for a minute outside 0-59 or a second outside
// 0-59.999999 (above 59 with warning 1292), the hours past 838 cut to
// 838:59:59 with the second's fraction digits and warning 1292, a TIME
// with the second's fraction digits (6 for text and DOUBLE, as MariaDB
// types them), cut to them.

import (
	"fmt"
	"math"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// maketimeDigits is MAKETIME's fraction digits: its second's decimals.
func maketimeDigits(second sql.Expression) int {
	t := second.Type()
	switch {
	case types.IsText(t) || types.IsFloat(t):
		return maxFractionDigits
	case types.IsDecimal(t):
		return min(int(t.(sql.DecimalType).Scale()), maxFractionDigits)
	}
	return 0
}

// maketime evaluates MAKETIME of vals, the TIME having digits fraction
// digits.
func maketime(ctx *sql.Context, vals []any, digits int) (any, error) {
	hour, err := toInt64(ctx, vals[0])
	if err != nil {
		return nil, err
	}
	minute, err := toInt64(ctx, vals[1])
	if err != nil {
		return nil, err
	}
	d, _, err := types.InternalDecimalType.Convert(ctx, vals[2])
	if err != nil {
		return nil, fmt.Errorf("MAKETIME seconds: %w", err)
	}
	sec := d.(decimal.Decimal)
	if sec.IsNegative() || minute < 0 || minute > 59 {
		return nil, nil
	}
	whole := sec.Truncate(0)
	if whole.GreaterThan(decimal.NewFromInt(59)) {
		ctx.Warn(erWarnDatetime, "Truncated incorrect seconds value: '%s'", whole.String())
		return nil, nil
	}
	micros := sec.Sub(whole).Shift(6).IntPart() / pow10(maxFractionDigits-digits) * pow10(maxFractionDigits-digits)
	abs := hour
	if abs < 0 {
		abs = -abs
	}
	us := ((abs*60+minute)*60+whole.IntPart())*1_000_000 + micros
	if abs > maxTimeHour || hour == math.MinInt64 {
		ctx.Warn(erWarnDatetime, "Truncated incorrect time value: '%d:%02d:%02d'", hour, minute, whole.IntPart())
		us = maxTimeMicros + (999_999/pow10(maxFractionDigits-digits))*pow10(maxFractionDigits-digits)
	}
	if hour < 0 {
		us = -us
	}
	return types.Timespan(us), nil
}
