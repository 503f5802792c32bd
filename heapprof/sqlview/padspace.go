package sqlview

// Trailing spaces compare as MariaDB's PAD SPACE collations do. The
// schema's text is utf8mb4_bin to clients (MariaDB's utf8mb4_bin, PAD
// SPACE: 'jemalloc ' = 'jemalloc') and utf8mb4_0900_bin inside
// go-mysql-server, which declares every collation's pad attribute but
// implements none: its StringType.Compare and its hashes compare strings
// whole. MariaDB 10.11 has PAD SPACE collations only (its _nopad_ ones
// are unknown here), so every comparison of non-binary text pads.
//
// padSpaceRule runs last, on the analyzed plan, so index and join
// planning saw the plain expressions (the point indexes match padded keys
// themselves, index.go). It gives text operands of comparisons, BETWEEN,
// IN, CASE x WHEN, NULLIF, ORDER BY keys, window PARTITION BY and ORDER
// BY keys and MIN/MAX a type whose Compare pads (padText: the values
// themselves are untouched, so MIN and ORDER BY show them as stored), and
// hash keys (GROUP BY, COUNT(DISTINCT), hash joins) the value without
// trailing spaces (padKey). DISTINCT, UNION DISTINCT, INTERSECT and
// EXCEPT are the exec builder's (padDistinctIter, padSetIter). LIKE does
// not pad in MariaDB either ('a ' LIKE 'a' is 0) and is left alone.

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// rulePadSpace is padSpaceRule's id.
const rulePadSpace analyzer.RuleId = 100113

// padType is a text type whose Compare is PAD SPACE in coll. One value
// is shared by all operands of a comparison, so go-mysql-server sees
// equal types and calls its Compare.
type padType struct {
	sql.StringType
	coll sql.CollationID
}

func (p *padType) Promote() sql.Type { return p }

func (p *padType) Equals(other sql.Type) bool { return other == sql.Type(p) }

func (p *padType) Compare(ctx context.Context, a, b any) (int, error) {
	if hasNulls, res := types.CompareNulls(a, b); hasNulls {
		return res, nil
	}
	as, err := p.text(ctx, a)
	if err != nil {
		return 0, err
	}
	bs, err := p.text(ctx, b)
	if err != nil {
		return 0, err
	}
	return padCompare(p.coll, as, bs), nil
}

func (p *padType) text(ctx context.Context, v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	c, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return "", fmt.Errorf("compare %T as text: %w", v, err)
	}
	c, err = sql.UnwrapAny(ctx, c)
	if err != nil {
		return "", err
	}
	s, ok := c.(string)
	if !ok {
		return "", fmt.Errorf("compare %T as text", c)
	}
	return s, nil
}

// padCompare compares a and b in coll as if the shorter were padded with
// spaces (MariaDB's strnncollsp): past the common length, the longer
// one's first character that does not weigh as a space decides.
func padCompare(coll sql.CollationID, a, b string) int {
	weight := coll.Sorter()
	if weight == nil {
		weight = func(r rune) int32 { return r }
	}
	for len(a) > 0 && len(b) > 0 {
		ar, an := utf8.DecodeRuneInString(a)
		br, bn := utf8.DecodeRuneInString(b)
		if aw, bw := weight(ar), weight(br); aw != bw {
			if aw < bw {
				return -1
			}
			return 1
		}
		a, b = a[an:], b[bn:]
	}
	sign, rest := 1, a
	if len(b) > 0 {
		sign, rest = -1, b
	}
	space := weight(' ')
	for len(rest) > 0 {
		r, n := utf8.DecodeRuneInString(rest)
		if w := weight(r); w != space {
			if w > space {
				return sign
			}
			return -sign
		}
		rest = rest[n:]
	}
	return 0
}

// padText is its child with a padType: the same values, compared padded.
type padText struct {
	wrapped
	typ *padType
}

var _ sql.Expression = (*padText)(nil)
var _ sql.CollationCoercible = (*padText)(nil)

func (p *padText) Type() sql.Type                                  { return p.typ }
func (p *padText) Eval(ctx *sql.Context, row sql.Row) (any, error) { return p.child.Eval(ctx, row) }

func (p *padText) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.child)
}

func (p *padText) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(p, c, func(c sql.Expression) sql.Expression { return &padText{wrapped: wrapped{c}, typ: p.typ} })
}

// padKey is its child without trailing spaces: a hash key that puts
// values equal under PAD SPACE together.
type padKey struct{ wrapped }

var _ sql.Expression = (*padKey)(nil)
var _ sql.CollationCoercible = (*padKey)(nil)

func (p *padKey) Type() sql.Type { return p.child.Type() }

func (p *padKey) CollationCoercibility(ctx *sql.Context) (sql.CollationID, byte) {
	return sql.GetCoercibility(ctx, p.child)
}

func (p *padKey) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := p.child.Eval(ctx, row)
	if s, ok := v.(string); ok {
		return strings.TrimRight(s, " "), err
	}
	return v, err
}

func (p *padKey) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return withChild(p, c, func(c sql.Expression) sql.Expression { return &padKey{wrapped{c}} })
}

// typedAs is an expression answering under another type: NULLIF and
// MIN/MAX of padded operands keep their column's type.
type typedAs struct {
	sql.Expression
	typ sql.Type
}

func (t *typedAs) Type() sql.Type { return t.typ }

func (t *typedAs) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	e, err := t.Expression.WithChildren(c...)
	if err != nil {
		return nil, err
	}
	return &typedAs{Expression: e, typ: t.typ}, nil
}

// typedAgg is typedAs for an aggregate (GroupBy needs sql.Aggregation).
type typedAgg struct {
	sql.Aggregation
	typ sql.Type
}

func (t *typedAgg) Type() sql.Type { return t.typ }

func (t *typedAgg) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	e, err := t.Aggregation.WithChildren(c...)
	if err != nil {
		return nil, err
	}
	agg, ok := e.(sql.Aggregation)
	if !ok {
		return nil, fmt.Errorf("padded aggregate %T", e)
	}
	return &typedAgg{Aggregation: agg, typ: t.typ}, nil
}

// padded is whether t is text that compares PAD SPACE: non-binary text.
func padded(t sql.Type) bool {
	st, ok := t.(sql.StringType)
	if !ok || !types.IsTextOnly(t) {
		return false
	}
	return st.Collation() != sql.Collation_binary
}

func allPadded(es ...sql.Expression) bool {
	for _, e := range es {
		if !padded(e.Type()) {
			return false
		}
	}
	return len(es) > 0
}

// padAll wraps es in one padType of the collation the operation uses.
// The collation is the operands' as go-mysql-server resolves it (a
// comparison's own CollationCoercibility is its boolean result's).
func padAll(ctx *sql.Context, es ...sql.Expression) []sql.Expression {
	coll, co := sql.GetCoercibility(ctx, es[0])
	for _, e := range es[1:] {
		c, cc := sql.GetCoercibility(ctx, e)
		coll, co = sql.ResolveCoercibility(coll, co, c, cc)
	}
	if coll == sql.Collation_Unspecified || coll == sql.Collation_binary {
		coll = es[0].Type().(sql.StringType).Collation()
	}
	typ := &padType{StringType: es[0].Type().(sql.StringType), coll: coll}
	out := make([]sql.Expression, len(es))
	for i, e := range es {
		out[i] = &padText{wrapped: wrapped{e}, typ: typ}
	}
	return out
}

func padSpaceRule(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return padNode(ctx, n)
}

func padNode(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		same := transform.SameTree
		var err error
		if _, ok := n.(sql.Expressioner); ok {
			// OneNodeExpressions walks each expression's tree itself:
			// padOne is given one expression node at a time. (It was given
			// padExpr, a walk of its own: every node was walked again
			// from each ancestor and wrapped once per ancestor, cubic in
			// a condition's depth; 400 ORs planned in 8 s, 64 ms now.)
			n, same, err = transform.OneNodeExpressions(n, func(e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
				return padOne(ctx, e)
			})
			if err != nil {
				return nil, transform.SameTree, err
			}
		}
		out, changed, err := padKeys(ctx, n)
		if err != nil || changed == transform.NewTree {
			return out, transform.NewTree, err
		}
		return n, same, nil
	})
}

// padKeys pads the keys that nodes hash or sort by.
func padKeys(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	switch x := n.(type) {
	case *plan.GroupBy:
		keys, changed := keysOf(x.GroupByExprs)
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewGroupBy(x.SelectedExprs, keys, x.Child), transform.NewTree, nil
	case *plan.HashLookup:
		r, rc := keyOf(x.RightEntryKey)
		l, lc := keyOf(x.LeftProbeKey)
		if !rc && !lc {
			return n, transform.SameTree, nil
		}
		h := *x
		h.RightEntryKey, h.LeftProbeKey = r, l
		return &h, transform.NewTree, nil
	case *plan.Sort:
		fs, changed := sortFields(ctx, x.SortFields)
		if !changed {
			return n, transform.SameTree, nil
		}
		return plan.NewSort(fs, x.Child), transform.NewTree, nil
	case *plan.SetOp:
		return padSetOp(ctx, x)
	case *plan.TopN:
		fs, changed := sortFields(ctx, x.Fields)
		if !changed {
			return n, transform.SameTree, nil
		}
		t := plan.NewTopN(fs, x.Limit, x.Child)
		t.CalcFoundRows = x.CalcFoundRows
		return t, transform.NewTree, nil
	}
	return n, transform.SameTree, nil
}

func keysOf(es []sql.Expression) ([]sql.Expression, bool) {
	out, changed := make([]sql.Expression, len(es)), false
	for i, e := range es {
		var c bool
		out[i], c = keyOf(e)
		changed = changed || c
	}
	return out, changed
}

func keyOf(e sql.Expression) (sql.Expression, bool) {
	if t, ok := e.(expression.Tuple); ok {
		ks, changed := keysOf(t)
		return expression.NewTuple(ks...), changed
	}
	if e == nil || !padded(e.Type()) {
		return e, false
	}
	return &padKey{wrapped{e}}, true
}

func sortFields(ctx *sql.Context, fs sql.SortFields) (sql.SortFields, bool) {
	out, changed := make(sql.SortFields, len(fs)), false
	for i, f := range fs {
		out[i] = f
		if padded(f.Column.Type()) {
			out[i].Column = padAll(ctx, f.Column)[0]
			changed = true
		}
	}
	return out, changed
}

// padOne pads the text operands of e when it is a comparison (or a
// window, an aggregate that compares): one node of an expression tree.
func padOne(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	e, windowed := padWindow(ctx, e)
	out, same, err := padOp(ctx, e)
	if same == transform.SameTree {
		same = windowed
	}
	return out, same, err
}

// padWindow pads a window's PARTITION BY keys and ORDER BY fields: the
// window iterator sorts, splits partitions and finds peers by their
// types' Compare.
func padWindow(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity) {
	w, ok := e.(sql.WindowAdaptableExpression)
	if !ok || w.Window() == nil {
		return e, transform.SameTree
	}
	def := w.Window()
	parts, changed := make([]sql.Expression, len(def.PartitionBy)), false
	for i, p := range def.PartitionBy {
		parts[i] = p
		if padded(p.Type()) {
			parts[i], changed = padAll(ctx, p)[0], true
		}
	}
	fs, sorted := make(sql.SortFields, len(def.OrderBy)), false
	for i, f := range def.OrderBy {
		fs[i] = f
		if padded(f.Column.Type()) {
			// Peers (RANK, frames) compare values with !=, so the
			// key is also the value without trailing spaces.
			fs[i].Column, sorted = padAll(ctx, &padKey{wrapped{f.Column}})[0], true
		}
	}
	if !changed && !sorted {
		return e, transform.SameTree
	}
	return w.WithWindow(sql.NewWindowDefinition(parts, fs, def.Frame, def.Ref, def.Name)), transform.NewTree
}

// padOp pads the text operands of e when it is a comparison.
func padOp(ctx *sql.Context, e sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	switch x := e.(type) {
	case *plan.Subquery:
		q, same, err := padNode(ctx, x.Query)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		return x.WithQuery(q), transform.NewTree, nil
	case *expression.Equals, *expression.NullSafeEquals, *expression.LessThan, *expression.LessThanOrEqual,
		*expression.GreaterThan, *expression.GreaterThanOrEqual, *expression.Between:
		return padChildren(ctx, e, e.Children()...)
	case *expression.InTuple:
		return padIn(ctx, e, x.Left(), x.Right())
	case *expression.HashInTuple:
		return padIn(ctx, e, x.Left(), x.Right())
	case *expression.Case:
		if x.Expr == nil {
			return e, transform.SameTree, nil
		}
		ops := []sql.Expression{x.Expr}
		for _, b := range x.Branches {
			ops = append(ops, b.Cond)
		}
		if !allPadded(ops...) {
			return e, transform.SameTree, nil
		}
		ps := padAll(ctx, ops...)
		c := &expression.Case{Expr: ps[0], Else: x.Else}
		for i, b := range x.Branches {
			c.Branches = append(c.Branches, expression.CaseBranch{Cond: ps[i+1], Value: b.Value})
		}
		return c, transform.NewTree, nil
	case *function.NullIf:
		out, same, err := padChildren(ctx, e, x.LeftChild, x.RightChild)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		return &typedAs{Expression: out, typ: x.Type()}, transform.NewTree, nil
	case *function.StrCmp:
		return &padStrCmp{StrCmp: x}, transform.NewTree, nil
	case *framedAgg:
		out, same, err := padOp(ctx, x.Aggregation)
		if err != nil || same == transform.SameTree {
			return e, transform.SameTree, err
		}
		agg, ok := out.(sql.Aggregation)
		if !ok {
			return nil, transform.SameTree, fmt.Errorf("padded window aggregate %T", out)
		}
		return &framedAgg{Aggregation: agg}, transform.NewTree, nil
	case *aggregation.Min, *aggregation.Max:
		child := e.Children()[0]
		if !padded(child.Type()) {
			return e, transform.SameTree, nil
		}
		out, err := e.WithChildren(padAll(ctx, child)...)
		if err != nil {
			return nil, transform.SameTree, err
		}
		return &typedAgg{Aggregation: out.(sql.Aggregation), typ: e.Type()}, transform.NewTree, nil
	case *aggregation.CountDistinct:
		if x.Window() != nil {
			return e, transform.SameTree, nil
		}
		ks, changed := keysOf(x.Children())
		if !changed {
			return e, transform.SameTree, nil
		}
		out, err := x.WithChildren(ks...)
		return out, transform.NewTree, err
	}
	return e, transform.SameTree, nil
}

// padChildren rebuilds op with its operands padded when all are text.
func padChildren(ctx *sql.Context, op sql.Expression, ops ...sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	if !allPadded(ops...) {
		return op, transform.SameTree, nil
	}
	out, err := op.WithChildren(padAll(ctx, ops...)...)
	if err != nil {
		return nil, transform.SameTree, fmt.Errorf("pad %T: %w", op, err)
	}
	return out, transform.NewTree, nil
}

// padIn is x IN (list) of text, compared padded element by element (the
// hashed form compares whole strings).
func padIn(ctx *sql.Context, op, left, right sql.Expression) (sql.Expression, transform.TreeIdentity, error) {
	list, ok := right.(expression.Tuple)
	if !ok || !allPadded(append([]sql.Expression{left}, list...)...) {
		return op, transform.SameTree, nil
	}
	ps := padAll(ctx, append([]sql.Expression{left}, list...)...)
	return expression.NewInTuple(ps[0], expression.NewTuple(ps[1:]...)), transform.NewTree, nil
}

// padSetOp makes UNION DISTINCT of text a padded DISTINCT over UNION ALL,
// INTERSECT and EXCEPT of text a bare one the exec builder answers padded
// (padSetIter): INTERSECT DISTINCT under a padded DISTINCT, EXCEPT DISTINCT
// over padded DISTINCT sides (as go-mysql-server's). The set operation's
// ORDER BY, OFFSET and LIMIT go above it.
func padSetOp(ctx *sql.Context, x *plan.SetOp) (sql.Node, transform.TreeIdentity, error) {
	if !anyPadded(x.Schema()) || (x.SetOpType == plan.UnionType && !x.Distinct) || bareSetOp(x) {
		return x, transform.SameTree, nil
	}
	all := *x
	all.Distinct, all.Limit, all.Offset, all.SortFields = false, nil, nil, nil
	var n sql.Node = &all
	switch {
	case x.Distinct && x.SetOpType == plan.ExceptType:
		sides, err := all.WithChildren(plan.NewDistinct(x.Left()), plan.NewDistinct(x.Right()))
		if err != nil {
			return nil, transform.SameTree, fmt.Errorf("pad EXCEPT: %w", err)
		}
		n = sides
	case x.Distinct:
		n = plan.NewDistinct(&all)
	}
	if len(x.SortFields) > 0 {
		fs, _ := sortFields(ctx, x.SortFields)
		n = plan.NewSort(fs, n)
	}
	if x.Offset != nil {
		n = plan.NewOffset(x.Offset, n)
	}
	if x.Limit != nil {
		n = plan.NewLimit(x.Limit, n)
	}
	return n, transform.NewTree, nil
}

// bareSetOp is whether x is INTERSECT or EXCEPT ALL without ORDER BY,
// OFFSET or LIMIT: what padSetIter answers.
func bareSetOp(x *plan.SetOp) bool {
	return (x.SetOpType == plan.IntersectType || x.SetOpType == plan.ExceptType) &&
		!x.Distinct && x.Limit == nil && x.Offset == nil && len(x.SortFields) == 0
}

func anyPadded(s sql.Schema) bool {
	for _, c := range s {
		if padded(c.Type) {
			return true
		}
	}
	return false
}

// padDistinctIter is DISTINCT with text columns compared padded: a row's
// key has their values without trailing spaces; the first row of a key
// is the one shown, as in MariaDB.
type padDistinctIter struct {
	child sql.RowIter
	keys  padHasher
	// seen is go-mysql-server's cache for DISTINCT, which charges each
	// entry to the statement (budget.go).
	seen    sql.KeyValueCache
	dispose sql.DisposeFunc
}

func newPadDistinctIter(ctx *sql.Context, child sql.RowIter, s sql.Schema) *padDistinctIter {
	seen, dispose := ctx.Memory.NewHistoryCache()
	return &padDistinctIter{child: child, keys: newPadHasher(s), seen: seen, dispose: dispose}
}

// padHasher hashes rows with their text columns' trailing spaces cut, so
// rows equal under PAD SPACE hash alike.
type padHasher struct {
	pad []bool
	key sql.Row
}

func newPadHasher(s sql.Schema) padHasher {
	pad := make([]bool, len(s))
	for i, c := range s {
		pad[i] = padded(c.Type)
	}
	return padHasher{pad: pad}
}

func (h *padHasher) hash(ctx *sql.Context, row sql.Row) (uint64, error) {
	h.key = append(h.key[:0], row...)
	for i, v := range h.key {
		if s, ok := v.(string); ok && i < len(h.pad) && h.pad[i] {
			h.key[i] = strings.TrimRight(s, " ")
		}
	}
	return sql.HashOf(ctx, h.key)
}

// next is iter's next row and its hash.
func (h *padHasher) next(ctx *sql.Context, iter sql.RowIter) (sql.Row, uint64, error) {
	row, err := iter.Next(ctx)
	if err != nil {
		return nil, 0, err
	}
	k, err := h.hash(ctx, row)
	if err != nil {
		return nil, 0, fmt.Errorf("padded row key: %w", err)
	}
	return row, k, nil
}

func (d *padDistinctIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		row, h, err := d.keys.next(ctx, d.child)
		if err != nil {
			return nil, err
		}
		if _, err := d.seen.Get(h); err == nil {
			continue
		}
		if err := d.seen.Put(h, struct{}{}); err != nil {
			return nil, err
		}
		return row, nil
	}
}

func (d *padDistinctIter) Close(ctx *sql.Context) error {
	if d.dispose != nil {
		d.dispose()
		d.dispose = nil
	}
	return d.child.Close(ctx)
}

// padSetIter is INTERSECT ALL or EXCEPT ALL with text columns compared
// padded: each right row, counted by its padded key, matches one left row
// (go-mysql-server's IntersectIter and ExceptIter hash whole values).
type padSetIter struct {
	left, right sql.RowIter
	except      bool
	keys        padHasher
	counts      map[uint64]int
}

func newPadSetIter(left, right sql.RowIter, except bool, s sql.Schema) *padSetIter {
	return &padSetIter{left: left, right: right, except: except, keys: newPadHasher(s)}
}

func (p *padSetIter) Next(ctx *sql.Context) (sql.Row, error) {
	if p.counts == nil {
		p.counts = map[uint64]int{}
		for {
			_, h, err := p.keys.next(ctx, p.right)
			if err == io.EOF {
				break
			}
			if err != nil {
				return nil, err
			}
			p.counts[h]++
		}
	}
	for {
		row, h, err := p.keys.next(ctx, p.left)
		if err != nil {
			return nil, err
		}
		matched := p.counts[h] > 0
		if matched {
			p.counts[h]--
		}
		if matched != p.except {
			return row, nil
		}
	}
}

func (p *padSetIter) Close(ctx *sql.Context) error {
	lerr := p.left.Close(ctx)
	if err := p.right.Close(ctx); err != nil {
		return err
	}
	return lerr
}

// padStrCmp is STRCMP compared PAD SPACE (STRCMP('a', 'a ') is 0) unless
// its collation is binary.
type padStrCmp struct{ *function.StrCmp }

func (p *padStrCmp) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return rewrap(p.StrCmp, c, func(x *function.StrCmp) sql.Expression { return &padStrCmp{StrCmp: x} })
}

func (p *padStrCmp) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	coll, _ := p.CollationCoercibility(ctx)
	if coll == sql.Collation_binary {
		return p.StrCmp.Eval(ctx, row)
	}
	var vs [2]any
	for i, e := range []sql.Expression{p.LeftChild, p.RightChild} {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		vs[i] = v
	}
	return (&padType{StringType: types.LongText, coll: coll}).Compare(ctx, vs[0], vs[1])
}
