package sqlview

// SUM and AVG as MariaDB computes and types them. go-mysql-server v0.20.0
// sums every number as float64 and types both DOUBLE (its planner forces
// the result column to DOUBLE whatever the function says): BIGINT sums
// beyond 2^53 lose digits, AVG prints 2.5 where MariaDB prints 2.5000,
// SUM of a DATETIME adds Unix seconds and SUM of '10.0.0.1:8040' is 0.
// MariaDB (Item_sum_sum, Item_sum_avg) answers:
//
//   - integers, DECIMAL, DATE/DATETIME/TIMESTAMP/YEAR (as numbers,
//     20261120080000.123456): exact DECIMAL, SUM with precision p+22 and the
//     argument's scale, AVG with precision p+4 and scale s+4
//     (div_precision_increment, 4), rounded half away from zero;
//   - floats, text and NULL: DOUBLE, text read by its leading number;
//   - anything else (TIME, BIT, JSON, ENUM): refused with ERROR 1235 rather
//     than guessed.
//
// The provider serves newSum/newAvg for sum/avg (aggregates and window
// functions); aggTypesRule then gives the columns that read them their type.

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation/window"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// divPrecisionIncrement is MariaDB's default div_precision_increment: the
// fraction digits AVG (and /) add.
const divPrecisionIncrement = 4

// Limits of go-mysql-server's DECIMAL (MariaDB allows scale 38).
const (
	maxDecimalPrecision = 65
	maxDecimalScale     = 30
)

// ruleAggTypes is aggTypesRule's id, apart from guard.go's ids.
const ruleAggTypes analyzer.RuleId = 100100

// exactAgg is SUM or AVG.
type exactAgg struct {
	avg    bool
	child  sql.Expression
	window *sql.WindowDefinition
	id     sql.ColumnId
}

var (
	_ sql.Aggregation        = (*exactAgg)(nil)
	_ sql.FunctionExpression = (*exactAgg)(nil)
)

func newSum(e sql.Expression) sql.Expression { return &exactAgg{child: e} }
func newAvg(e sql.Expression) sql.Expression { return &exactAgg{avg: true, child: e} }

func (a *exactAgg) name() string {
	if a.avg {
		return "AVG"
	}
	return "SUM"
}

func (a *exactAgg) FunctionName() string { return strings.ToLower(a.name()) }
func (a *exactAgg) Description() string  { return "MariaDB's " + a.name() + " (heapprof/sqlview)" }

// Resolved, Children and WithChildren include the window's PARTITION BY
// and ORDER BY expressions, so the analyzer resolves and indexes them.
func (a *exactAgg) Resolved() bool {
	if a.window == nil {
		return a.child.Resolved()
	}
	return expression.ExpressionsResolved(a.Children()...)
}

func (a *exactAgg) Children() []sql.Expression {
	if a.window == nil {
		return []sql.Expression{a.child}
	}
	return append([]sql.Expression{a.child}, a.window.ToExpressions()...)
}

func (a *exactAgg) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) < 1 || (a.window == nil && len(c) != 1) {
		return nil, sql.ErrInvalidChildrenNumber.New(a, len(c), 1)
	}
	n := *a
	n.child = c[0]
	if a.window != nil {
		w, err := a.window.FromExpressions(c[1:])
		if err != nil {
			return nil, err
		}
		n.window = w
	}
	return &n, nil
}

// IsNullable: SUM and AVG of no rows (or only NULLs) are NULL
// (go-mysql-server's SUM says never).
func (a *exactAgg) IsNullable() bool              { return true }
func (a *exactAgg) Id() sql.ColumnId              { return a.id }
func (a *exactAgg) Window() *sql.WindowDefinition { return a.window }

// String is go-mysql-server's own (the planner matches aggregates by it).
func (a *exactAgg) String() string {
	if a.window != nil {
		pr := sql.NewTreePrinter()
		_ = pr.WriteNode("%s", a.name())
		_ = pr.WriteChildren(a.window.String(), a.child.String())
		return pr.String()
	}
	return fmt.Sprintf("%s(%s)", a.name(), a.child)
}

func (a *exactAgg) WithId(id sql.ColumnId) sql.IdExpression {
	n := *a
	n.id = id
	return &n
}

func (a *exactAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	n := *a
	n.window = w
	return &n
}

func (a *exactAgg) Eval(*sql.Context, sql.Row) (any, error) {
	return nil, aggregation.ErrEvalUnsupportedOnAggregation.New(a.FunctionName())
}

func (a *exactAgg) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}

// numKind is how an argument type is summed: exactly (DECIMAL) or as
// DOUBLE; unsupported types are refused rather than guessed.
type numKind byte

const (
	numExact numKind = iota
	numDouble
	numUnsupported
)

// argKind is how MariaDB sums values of type t, with the decimal
// precision and scale of t when exact.
func argKind(t sql.Type) (k numKind, precision, scale int) {
	switch {
	case t == types.Null:
		return numDouble, 0, 0
	case types.IsDecimal(t):
		dt := t.(sql.DecimalType)
		return numExact, int(dt.Precision()), int(dt.Scale())
	case types.IsInteger(t):
		return numExact, intDigits(t), 0
	case types.IsYear(t):
		return numExact, 4, 0
	case types.IsFloat(t), types.IsText(t), types.IsBinaryType(t) && !types.IsBit(t):
		return numDouble, 0, 0
	case t.Type() == types.Date.Type():
		return numExact, 8, 0
	case types.IsDatetimeType(t) || types.IsTimestampType(t):
		p := 0
		if dt, ok := t.(sql.DatetimeType); ok {
			p = dt.Precision()
		}
		return numExact, 14 + p, p
	}
	return numUnsupported, 0, 0
}

// intDigits is the decimal digits of an integer type, as MariaDB counts
// them for SUM's precision.
func intDigits(t sql.Type) int {
	unsigned := types.IsUnsigned(t)
	switch t.Type() {
	case types.Int8.Type(), types.Uint8.Type():
		return 3
	case types.Int16.Type(), types.Uint16.Type():
		return 5
	case types.Int24.Type():
		return 7
	case types.Uint24.Type():
		return 8
	case types.Int32.Type(), types.Uint32.Type():
		return 10
	}
	if unsigned {
		return 20
	}
	return 19
}

// Type is MariaDB's: DECIMAL for exact arguments, else DOUBLE.
func (a *exactAgg) Type() sql.Type {
	k, p, s := argKind(a.child.Type())
	if k != numExact {
		return types.Float64
	}
	if a.avg {
		p, s = p+divPrecisionIncrement, s+divPrecisionIncrement
	} else {
		p += 22 // DECIMAL_LONGLONG_DIGITS
	}
	s = min(s, maxDecimalScale)
	return types.MustCreateDecimalType(uint8(min(p, maxDecimalPrecision)), uint8(s))
}

// kind is the argument's numKind, or an error naming the type.
func (a *exactAgg) kind() (numKind, error) {
	t := a.child.Type()
	k, _, _ := argKind(t)
	if k != numUnsupported {
		return k, nil
	}
	instead := "CAST(x AS CHAR)" // ENUM, SET, JSON: their text
	switch {
	case types.IsTime(t):
		instead = "TIME_TO_SEC(x)"
	case types.IsBit(t):
		instead = "CAST(x AS UNSIGNED)"
	}
	return k, errUnsupported(fmt.Sprintf("%s of a %s value (%s); write %s(%s) instead",
		a.name(), t, a.child, a.name(), instead))
}

// state is what each buffer or window function of a starts from: the kind
// of sum and its own copy of the argument.
func (a *exactAgg) state() (numKind, sql.Expression, error) {
	k, err := a.kind()
	if err != nil {
		return k, nil, err
	}
	child, err := transform.Clone(a.child)
	return k, child, err
}

func (a *exactAgg) NewBuffer() (sql.AggregationBuffer, error) {
	k, child, err := a.state()
	if err != nil {
		return nil, err
	}
	return &exactBuffer{agg: a, kind: k, expr: child, sum: decimal.Zero}, nil
}

// exactBuffer accumulates one group.
type exactBuffer struct {
	agg  *exactAgg
	kind numKind
	expr sql.Expression
	n    int64 // values that were not NULL
	// isum adds BIGINT values while it does not overflow (decimal
	// arithmetic costs a third more per row); sum holds the rest.
	isum int64
	sum  decimal.Decimal
	fsum float64
}

func (b *exactBuffer) Update(ctx *sql.Context, row sql.Row) error {
	v, err := b.expr.Eval(ctx, row)
	if err != nil || v == nil {
		return err
	}
	b.n++
	if b.kind != numExact {
		b.fsum += doubleValue(v)
		return nil
	}
	if i, ok := v.(int64); ok {
		if s := b.isum + i; (i >= 0) == (s >= b.isum) {
			b.isum = s
			return nil
		}
	}
	d, err := exactValue(ctx, b.expr.Type(), v)
	if err != nil {
		return err
	}
	b.sum = b.sum.Add(d)
	return nil
}

func (b *exactBuffer) Eval(*sql.Context) (any, error) {
	return b.agg.result(b.kind, b.n, b.sum.Add(decimal.NewFromInt(b.isum)), b.fsum), nil
}

func (b *exactBuffer) Dispose() { expression.Dispose(b.expr) }

// result is SUM or AVG of n values adding up to sum (exact) or fsum.
func (a *exactAgg) result(k numKind, n int64, sum decimal.Decimal, fsum float64) any {
	switch {
	case n == 0:
		return nil
	case k == numDouble && a.avg:
		return fsum / float64(n)
	case k == numDouble:
		return fsum
	case a.avg:
		// MariaDB's decimal_div of the sum by the count, every digit kept
		// (the shown scale rounds at the end, as for x / y).
		q, _ := mariaDiv(sum, decimal.NewFromInt(n), fracDigitsOf(sum, a.child.Type()), 0, divPrecisionIncrement)
		return q
	}
	return sum
}

// exactValue is v as a number of type t: integers and decimals as they
// are, dates and times as MariaDB reads them as numbers
// (YYYYMMDDhhmmss.ffffff).
func exactValue(ctx *sql.Context, t sql.Type, v any) (decimal.Decimal, error) {
	switch x := v.(type) {
	case decimal.Decimal:
		return x, nil
	case decimal.NullDecimal:
		return x.Decimal, nil
	case int:
		return decimal.NewFromInt(int64(x)), nil
	case int8:
		return decimal.NewFromInt(int64(x)), nil
	case int16:
		return decimal.NewFromInt(int64(x)), nil
	case int32:
		return decimal.NewFromInt(int64(x)), nil
	case int64:
		return decimal.NewFromInt(x), nil
	case uint8:
		return decimal.NewFromInt(int64(x)), nil
	case uint16:
		return decimal.NewFromInt(int64(x)), nil
	case uint32:
		return decimal.NewFromInt(int64(x)), nil
	case uint:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(uint64(x)), 0), nil
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(x), 0), nil
	case bool:
		if x {
			return decimal.NewFromInt(1), nil
		}
		return decimal.Zero, nil
	case time.Time:
		return temporalNumber(t, x), nil
	}
	c, _, err := t.Convert(ctx, v)
	if err != nil {
		return decimal.Zero, fmt.Errorf("sqlview: %v as %s: %w", v, t, err)
	}
	switch c := c.(type) {
	case decimal.Decimal:
		return c, nil
	case time.Time:
		return temporalNumber(t, c), nil
	}
	if n, ok := types.CoalesceInt(c); ok {
		return decimal.NewFromInt(int64(n)), nil
	}
	return decimal.Zero, fmt.Errorf("sqlview: %v (%T) is not a number of type %s", v, v, t)
}

// temporalNumber is a DATE or DATETIME(p) as MariaDB's number: YYYYMMDD
// or YYYYMMDDhhmmss with p fraction digits.
func temporalNumber(t sql.Type, v time.Time) decimal.Decimal {
	if t.Type() == types.Date.Type() {
		return decimal.NewFromInt(int64(v.Year()*10000 + int(v.Month())*100 + v.Day()))
	}
	p := 0
	if dt, ok := t.(sql.DatetimeType); ok {
		p = dt.Precision()
	}
	whole := int64(v.Year())*10000000000 + int64(v.Month())*100000000 + int64(v.Day())*1000000 +
		int64(v.Hour())*10000 + int64(v.Minute())*100 + int64(v.Second())
	frac := int64(v.Nanosecond()/1000) / pow10(6-p)
	return decimal.NewFromInt(whole).Add(decimal.New(frac, -int32(p)))
}

// doubleValue is v as MariaDB's DOUBLE: text by its leading number
// ('10.0.0.1:8040' is 10, 'abc' 0), dates as numbers.
func doubleValue(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case float32:
		return float64(x)
	case string:
		return leadingDouble(x)
	case []byte:
		return leadingDouble(string(x))
	case decimal.Decimal:
		return x.InexactFloat64()
	case time.Time:
		return temporalNumber(types.DatetimeMaxPrecision, x).InexactFloat64()
	case uint64: // before CoalesceInt, which wraps it around
		return float64(x)
	case uint:
		return float64(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	if n, ok := types.CoalesceInt(v); ok {
		return float64(n)
	}
	f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
	if err != nil {
		return 0
	}
	return f
}

// leadingDouble reads the number a string starts with, as MariaDB does
// when it needs a DOUBLE: spaces, a sign, digits, a fraction, an exponent;
// nothing numeric is 0 (MariaDB warns 1292 and uses 0 too).
func leadingDouble(s string) float64 {
	num := leadingNumber(s)
	if num == "" {
		return 0
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		// Out of range: ParseFloat gives ±Inf, MariaDB the largest DOUBLE.
		if math.IsInf(f, 0) {
			return math.Copysign(math.MaxFloat64, f)
		}
		return 0
	}
	return f
}

// leadingDecimal is the number a string starts with as MariaDB reads it
// as a DECIMAL (nothing numeric is 0).
func leadingDecimal(s string) decimal.Decimal {
	d, err := decimal.NewFromString(leadingNumber(s))
	if err != nil {
		return decimal.Zero
	}
	return d
}

// leadingNumber is the number s starts with: spaces, a sign, digits, a
// fraction, an exponent ("" when there is none).
func leadingNumber(s string) string {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f' || s[i] == '\v') {
		i++
	}
	start := i
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return ""
	}
	end := i
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			end = j
		}
	}
	return s[start:end]
}

// --- window functions ---------------------------------------------------

func (a *exactAgg) NewWindowFunction() (sql.WindowFunction, error) {
	k, child, err := a.state()
	if err != nil {
		return nil, err
	}
	framer, err := windowFramer(a.window)
	if err != nil {
		return nil, err
	}
	return &exactWindow{agg: a, kind: k, expr: child, framer: framer}, nil
}

// windowFramer is the frame MySQL gives an aggregate over window w: the
// whole partition without ORDER BY; with ORDER BY and no frame (or RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) the partition's start to
// the current row's last peer, peers being rows equal on every ORDER BY
// key (go-mysql-server's SUM stops at the current row, its RANGE framer
// compares the first key only); other explicit frames are
// go-mysql-server's.
func windowFramer(w *sql.WindowDefinition) (sql.WindowFramer, error) {
	if w == nil {
		return aggregation.NewPartitionFramer(), nil
	}
	if _, ok := w.Frame.(*plan.RangeUnboundedPrecedingToCurrentRowFrame); ok || w.Frame == nil {
		if len(w.OrderBy) == 0 {
			return aggregation.NewPartitionFramer(), nil
		}
		return &peerFramer{peers: aggregation.NewPeerGroupFramer(w.OrderBy.ToExpressions())}, nil
	}
	return w.Frame.NewFramer(w)
}

// peerFramer frames a partition's start through the current row's peers.
type peerFramer struct {
	start int
	peers sql.WindowFramer
}

func (f *peerFramer) NewFramer(iv sql.WindowInterval) (sql.WindowFramer, error) {
	p, err := f.peers.NewFramer(iv)
	if err != nil {
		return nil, err
	}
	return &peerFramer{start: iv.Start, peers: p}, nil
}

func (f *peerFramer) Next(ctx *sql.Context, buf sql.WindowBuffer) (sql.WindowInterval, error) {
	iv, err := f.peers.Next(ctx, buf)
	if err != nil {
		return iv, err
	}
	return sql.WindowInterval{Start: f.start, End: iv.End}, nil
}

func (f *peerFramer) FirstIdx() int { return f.start }
func (f *peerFramer) LastIdx() int  { return f.peers.LastIdx() }

func (f *peerFramer) Interval() (sql.WindowInterval, error) {
	iv, err := f.peers.Interval()
	return sql.WindowInterval{Start: f.start, End: iv.End}, err
}

// exactWindow is SUM/AVG over a window frame from prefix sums of the
// partition.
type exactWindow struct {
	agg    *exactAgg
	kind   numKind
	expr   sql.Expression
	framer sql.WindowFramer
	start  int
	sums   []decimal.Decimal
	fsums  []float64
	counts []int64
}

func (w *exactWindow) DefaultFramer() sql.WindowFramer { return w.framer }
func (w *exactWindow) Dispose()                        { expression.Dispose(w.expr) }

func (w *exactWindow) StartPartition(ctx *sql.Context, iv sql.WindowInterval, buf sql.WindowBuffer) error {
	w.Dispose()
	w.start = iv.Start
	n := iv.End - iv.Start
	w.sums, w.fsums, w.counts = make([]decimal.Decimal, n+1), make([]float64, n+1), make([]int64, n+1)
	w.sums[0] = decimal.Zero
	for i := range n {
		w.sums[i+1], w.fsums[i+1], w.counts[i+1] = w.sums[i], w.fsums[i], w.counts[i]
		v, err := w.expr.Eval(ctx, buf[iv.Start+i])
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		if w.kind == numExact {
			d, err := exactValue(ctx, w.expr.Type(), v)
			if err != nil {
				return err
			}
			w.sums[i+1] = w.sums[i+1].Add(d)
		} else {
			w.fsums[i+1] += doubleValue(v)
		}
		w.counts[i+1]++
	}
	return nil
}

func (w *exactWindow) Compute(_ *sql.Context, iv sql.WindowInterval, _ sql.WindowBuffer) any {
	lo, hi := iv.Start-w.start, iv.End-w.start
	if lo < 0 || hi >= len(w.counts) || hi <= lo {
		return nil
	}
	return w.agg.result(w.kind, w.counts[hi]-w.counts[lo], w.sums[hi].Sub(w.sums[lo]), w.fsums[hi]-w.fsums[lo])
}

// --- column types -------------------------------------------------------

// aggTypesRule gives every column that reads a SUM or AVG the
// aggregate's type: go-mysql-server's planner types those columns DOUBLE
// whatever the function's type, and columns of derived tables copy the
// type of the column they read. It walks the plan bottom-up, subqueries
// included, fixing references as it learns the producing columns' types.
func aggTypesRule(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	n, sameFrames, err := windowFrames(n)
	if err != nil {
		return nil, transform.SameTree, err
	}
	n, same, err := fixColumnTypes(n, map[sql.ColumnId]sql.Type{})
	return n, same && sameFrames, err
}

// windowFrames gives go-mysql-server's other aggregates over a window
// (MIN, MAX, COUNT, ...) MySQL's frame: its MIN and MAX see the whole
// partition whatever the ORDER BY, its COUNT takes the first ORDER BY key
// alone for peers.
func windowFrames(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		w, ok := n.(*plan.Window)
		if !ok {
			return n, transform.SameTree, nil
		}
		exprs := slices.Clone(w.SelectExprs)
		same := transform.SameTree
		for i, e := range exprs {
			alias, aliased := e.(*expression.Alias)
			if aliased {
				e = alias.Child
			}
			switch e.(type) {
			case *exactAgg, *framedAgg:
				continue
			}
			a, ok := e.(sql.Aggregation)
			if !ok || a.Window() == nil {
				continue
			}
			var wrapped sql.Expression = &framedAgg{Aggregation: a}
			if aliased {
				c, err := alias.WithChildren(wrapped)
				if err != nil {
					return nil, transform.SameTree, err
				}
				wrapped = c
			}
			exprs[i], same = wrapped, transform.NewTree
		}
		if same == transform.SameTree {
			return n, same, nil
		}
		out, err := w.WithExpressions(exprs...)
		return out, transform.NewTree, err
	})
}

// framedAgg is a go-mysql-server aggregate over a window framed by
// windowFramer; it computes as before.
type framedAgg struct{ sql.Aggregation }

func (f *framedAgg) NewWindowFunction() (sql.WindowFunction, error) {
	fn, err := f.Aggregation.NewWindowFunction()
	if err != nil {
		return nil, err
	}
	framer, err := windowFramer(f.Window())
	if err != nil {
		return nil, err
	}
	return &framedFunction{WindowFunction: fn, framer: framer}, nil
}

func (f *framedAgg) FunctionName() string {
	if fe, ok := f.Aggregation.(sql.FunctionExpression); ok {
		return fe.FunctionName()
	}
	return ""
}

func (f *framedAgg) Description() string {
	if fe, ok := f.Aggregation.(sql.FunctionExpression); ok {
		return fe.Description()
	}
	return ""
}

func (f *framedAgg) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(f.Aggregation, c, func(a sql.Aggregation) sql.Expression { return &framedAgg{Aggregation: a} })
}

func (f *framedAgg) WithId(id sql.ColumnId) sql.IdExpression {
	e := f.Aggregation.WithId(id)
	if a, ok := e.(sql.Aggregation); ok {
		return &framedAgg{Aggregation: a}
	}
	return e
}

func (f *framedAgg) WithWindow(w *sql.WindowDefinition) sql.WindowAdaptableExpression {
	e := f.Aggregation.WithWindow(w)
	if a, ok := e.(sql.Aggregation); ok {
		return &framedAgg{Aggregation: a}
	}
	return e
}

// framedFunction is a window function with another default framer.
type framedFunction struct {
	sql.WindowFunction
	framer sql.WindowFramer
}

func (f *framedFunction) DefaultFramer() sql.WindowFramer { return f.framer }

func fixColumnTypes(n sql.Node, known map[sql.ColumnId]sql.Type) (sql.Node, transform.TreeIdentity, error) {
	return transform.NodeWithOpaque(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		n, same, err := oneNodeExprs(n, func(_ sql.Node, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
			switch e := e.(type) {
			case *plan.Subquery:
				q, same, err := fixColumnTypes(e.Query, known)
				if err != nil || same == transform.SameTree {
					return e, transform.SameTree, err
				}
				return e.WithQuery(q), transform.NewTree, nil
			case *expression.GetField:
				t, ok := known[e.Id()]
				if !ok || t == e.Type() {
					return e, transform.SameTree, nil
				}
				gf := expression.NewGetFieldWithTable(e.Index(), int(e.TableId()), t, e.Database(), e.Table(), e.Name(), e.IsNullable())
				return gf.WithId(e.Id()).(sql.Expression), transform.NewTree, nil
			}
			return e, transform.SameTree, nil
		})
		if err != nil {
			return nil, transform.SameTree, err
		}
		// What this node produces: its aggregates, and the columns of a
		// derived table (in id order, as the planner numbers them).
		if ne, ok := n.(sql.Expressioner); ok {
			for _, e := range ne.Expressions() {
				transform.InspectExpr(e, func(e sql.Expression) bool {
					switch a := e.(type) {
					case *exactAgg:
						if a.id != 0 {
							known[a.id] = a.Type()
						}
					case *aggregation.Min, *aggregation.Max, *window.Lag, *window.Lead, *window.FirstValue, *window.LastValue:
						// Typed by their argument, which the dialect
						// rule may have retyped (MOD of a DECIMAL), or
						// this one (LAG(s) of a derived table's SUM: it
						// was a DOUBLE, printed 4.8234497e+07).
						if id := a.(sql.IdExpression).Id(); id != 0 {
							known[id] = a.Type()
						}
					}
					return false
				})
			}
		}
		if sa, ok := n.(*plan.SubqueryAlias); ok {
			if schema := sa.Schema(); sa.Columns().Len() == len(schema) {
				i := 0
				sa.Columns().ForEach(func(id sql.ColumnId) {
					known[id] = schema[i].Type
					i++
				})
			}
		}
		return n, same, nil
	})
}
