package sqlview

// Memory and cancellation of running statements.
//
// go-mysql-server's iterators do not look at the context: a cross join over
// in-memory rows, or a sort fed by one, runs to its end after the client is
// gone, and sorts, window partitions, GROUP BY groups and DISTINCT hold
// rows without bound (its own memory manager only compares the process's
// heap with the MAX_MEMORY environment variable, and only for some
// operators). The engine therefore builds every plan through its own
// NodeExecBuilder (execBuilder), which
//
//   - wraps every row source (table scans, index lookups, JSON_TABLE, the
//     working table of a recursive CTE) in meteredIter: it checks the
//     statement's context every 64 rows, so every operator above it stops
//     within 64 source rows of a cancel, and records the size of the rows;
//   - puts a meteredNode under every operator that holds all its input:
//     Sort, Window, TopN (charged for at most LIMIT rows: ORDER BY ...
//     LIMIT keeps only that many) and charges the estimated size of each
//     row that operator consumes to the statement's budget;
//   - charges every row a subquery answers (go-mysql-server collects an
//     IN (SELECT ...) subquery's rows in a slice): guardValues puts a
//     meteredNode on top of every subquery plan;
//   - gives the statement its own go-mysql-server MemoryManager whose
//     Reporter charges one entry (the last row size seen plus overhead) for
//     each GROUP BY group, DISTINCT row, IN-subquery hash entry and cached
//     subquery row, which go-mysql-server reports before storing them.
//
// A statement's charges count against Options.MaxStatementMemory and, summed
// over all running statements, against Options.MaxTotalMemory; they are
// returned when the statement's Result is closed. The estimate is of the
// rows' Go values (interface, string and slice headers included), not of
// the allocator's view, and it is cumulative within a statement: a sort
// inside a correlated subquery is charged at every execution.

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/iters"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/rowexec"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"go.uber.org/zap"
)

// MySQL's errors for exhausted memory.
const (
	erOutOfSortMemory = 1038 // ER_OUT_OF_SORTMEMORY, SQLSTATE HY001
	erOutOfMemory     = 1041 // ER_OUT_OF_RESOURCES ("Out of memory"), SQLSTATE HY000
)

// entryOverhead is what a cached group or row costs beyond its values
// (map entry, aggregation buffers).
const entryOverhead = 64

// stmtBudget is one statement's share of the engine's SQL memory.
type stmtBudget struct {
	eng  *Engine
	used atomic.Int64
	// rowSize is the estimated size of the last row read from a source,
	// the unit charged for an entry go-mysql-server caches.
	rowSize atomic.Int64
	err     atomic.Pointer[Error]
}

type budgetKey struct{}

func budgetOf(ctx *sql.Context) *stmtBudget {
	b, _ := ctx.Value(budgetKey{}).(*stmtBudget)
	return b
}

// charge adds n bytes; it fails, for good, once a limit is passed.
func (b *stmtBudget) charge(ctx *sql.Context, n int64) error {
	if e := b.err.Load(); e != nil {
		return e
	}
	used := b.used.Add(n)
	total := b.eng.sqlMemory.Add(n)
	var e *Error
	switch o := b.eng.opts; {
	case used > o.MaxStatementMemory:
		e = &Error{Code: erOutOfSortMemory, State: "HY001", Message: fmt.Sprintf(
			"Out of sort memory: the statement holds more than %d bytes of rows (sql.max_statement_memory) in ORDER BY, GROUP BY, DISTINCT, window or subquery buffers; narrow it with WHERE or LIMIT, or raise sql.max_statement_memory in heapproxy's configuration",
			o.MaxStatementMemory)}
	case total > o.MaxTotalMemory:
		e = &Error{Code: erOutOfMemory, State: "HY000", Message: fmt.Sprintf(
			"Out of memory: the running SQL statements together hold more than %d bytes of rows (sql.max_total_memory); retry when other statements have finished, or raise sql.max_total_memory in heapproxy's configuration",
			o.MaxTotalMemory)}
	default:
		return nil
	}
	if b.err.CompareAndSwap(nil, e) {
		b.eng.opts.Logger.Warn("sql statement over its memory budget",
			zap.Uint32("conn", ctx.Session.ID()), zap.String("query", ctx.Query()), zap.Int64("statement_bytes", used),
			zap.Int64("total_bytes", total), zap.Uint16("code", e.Code))
	}
	return b.err.Load()
}

// release returns the statement's charges to the engine.
func (b *stmtBudget) release() {
	b.eng.sqlMemory.Add(-b.used.Swap(0))
}

// reporter is the statement's go-mysql-server memory Reporter: each time an
// operator asks before caching an entry, the entry is charged.
type reporter struct {
	ctx *sql.Context
	b   *stmtBudget
}

var _ sql.Reporter = (*reporter)(nil)

// MaxMemory is 1 and UsedMemory 0 while the budget holds, 1 once it is
// exhausted: go-mysql-server then fails the operator, and the statement's
// error is the budget's.
func (r *reporter) MaxMemory() uint64 { return 1 }

func (r *reporter) UsedMemory() uint64 {
	if r.b.charge(r.ctx, max(r.b.rowSize.Load(), 16)+entryOverhead) != nil {
		return 1
	}
	return 0
}

// execBuilder is the engine's NodeExecBuilder: go-mysql-server's, with the
// wrapping described above. base is the rowexec builder that calls it
// first for every node.
type execBuilder struct {
	base sql.NodeExecBuilder
	// keys are the heapprof tables' unique keys, for SHOW INDEX
	// (infoschema.go).
	keys schemaKeys
}

var _ sql.NodeExecBuilder = (*execBuilder)(nil)

func newExecBuilder() *execBuilder {
	eb := &execBuilder{}
	eb.base = rowexec.NewOverrideBuilder(eb)
	return eb
}

// topNUnderProject is an analyzer rule: go-mysql-server turns Limit(Sort)
// into a TopN, which keeps only LIMIT rows, but not Limit(Project(Sort)),
// the plan of ORDER BY on an expression that is not selected, which would
// sort every row. Offsets on the way add to the rows kept.
func topNUnderProject(_ *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	return transform.Node(n, func(n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		l, ok := n.(*plan.Limit)
		if !ok || l.CalcFoundRows {
			return n, transform.SameTree, nil
		}
		keep := l.Limit
		var path []sql.Node
		cur := l.Child
		for {
			switch c := cur.(type) {
			case *plan.Project:
				path = append(path, c)
				cur = c.Child
				continue
			case *plan.Offset:
				path = append(path, c)
				keep = expression.NewPlus(keep, c.Offset)
				cur = c.Child
				continue
			case *plan.Sort:
				if len(path) == 0 {
					return n, transform.SameTree, nil // go-mysql-server's own rule
				}
				var rebuilt sql.Node = plan.NewTopN(c.SortFields, keep, c.Child)
				for i := len(path) - 1; i >= 0; i-- {
					var err error
					if rebuilt, err = path[i].WithChildren(rebuilt); err != nil {
						return nil, transform.SameTree, fmt.Errorf("top-N under %T: %w", path[i], err)
					}
				}
				out, err := l.WithChildren(rebuilt)
				return out, transform.NewTree, err
			}
			return n, transform.SameTree, nil
		}
	})
}

// Build returns nil, nil for the nodes go-mysql-server builds unchanged.
func (eb *execBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	switch n := n.(type) {
	case *plan.ResolvedTable, *plan.IndexedTableAccess, *plan.JSONTable, *plan.RecursiveTable:
		// Leaves: the plain builder builds them (no children to wrap).
		iter, err := rowexec.DefaultBuilder.Build(ctx, n, row)
		if err != nil {
			return nil, err
		}
		_, recursive := n.(*plan.RecursiveTable)
		return &meteredIter{RowIter: iter, b: budgetOf(ctx), charge: recursive, limit: -1}, nil
	case *plan.Sort, *plan.Window:
		return eb.wrapChild(ctx, n, row, -1)
	case *plan.TopN:
		limit, err := iters.GetInt64Value(ctx, n.Limit)
		if err != nil {
			return nil, fmt.Errorf("top-N limit: %w", err)
		}
		return eb.wrapChild(ctx, n, row, limit)
	case *plan.Distinct:
		// Text compares PAD SPACE (padspace.go).
		if !anyPadded(n.Schema()) {
			return nil, nil
		}
		iter, err := eb.base.Build(ctx, n.Child, row)
		if err != nil {
			return nil, err
		}
		return newPadDistinctIter(ctx, iter, n.Schema()), nil
	case *plan.SetOp:
		// INTERSECT and EXCEPT of text compare PAD SPACE (padSetOp).
		if !bareSetOp(n) || !anyPadded(n.Schema()) {
			return nil, nil
		}
		left, err := eb.base.Build(ctx, n.Left(), row)
		if err != nil {
			return nil, err
		}
		right, err := eb.base.Build(ctx, n.Right(), row)
		if err != nil {
			left.Close(ctx)
			return nil, err
		}
		return newPadSetIter(left, right, n.SetOpType == plan.ExceptType, n.Schema()), nil
	case plan.ShowWarnings:
		// In the order they were raised, as MariaDB lists them:
		// go-mysql-server's session gives them newest first.
		rows := make([]sql.Row, 0, len(n))
		for i := len(n) - 1; i >= 0; i-- {
			rows = append(rows, sql.NewRow(n[i].Level, n[i].Code, n[i].Message))
		}
		return sql.RowsToRowIter(rows...), nil
	}
	// SHOW statements that describe tables answer as MariaDB's do.
	return showIter(ctx, n, row, eb.keys)
}

// wrapChild builds n with a meteredNode between it and its only child.
func (eb *execBuilder) wrapChild(ctx *sql.Context, n sql.Node, row sql.Row, limit int64) (sql.RowIter, error) {
	kids := n.Children()
	if len(kids) != 1 {
		return nil, nil
	}
	if _, done := kids[0].(*meteredNode); done {
		return nil, nil // the second pass: go-mysql-server builds n itself
	}
	wrapped, err := n.WithChildren(&meteredNode{child: kids[0], eb: eb, limit: limit})
	if err != nil {
		return nil, fmt.Errorf("meter %T: %w", n, err)
	}
	return eb.base.Build(ctx, wrapped, row)
}

// meteredNode stands between a buffering operator and its input; it is a
// custom row source (sql.ExecSourceRel) to go-mysql-server.
type meteredNode struct {
	child sql.Node
	eb    *execBuilder
	limit int64 // rows charged at most; -1: all
}

var _ sql.ExecSourceRel = (*meteredNode)(nil)

func (m *meteredNode) Resolved() bool       { return m.child.Resolved() }
func (m *meteredNode) String() string       { return m.child.String() }
func (m *meteredNode) Schema() sql.Schema   { return m.child.Schema() }
func (m *meteredNode) Children() []sql.Node { return []sql.Node{m.child} }
func (m *meteredNode) IsReadOnly() bool     { return m.child.IsReadOnly() }

func (m *meteredNode) WithChildren(children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(m, len(children), 1)
	}
	return &meteredNode{child: children[0], eb: m.eb, limit: m.limit}, nil
}

func (m *meteredNode) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	iter, err := m.eb.base.Build(ctx, m.child, row)
	if err != nil {
		return nil, err
	}
	return &meteredIter{RowIter: iter, b: budgetOf(ctx), charge: true, limit: m.limit}, nil
}

// meteredIter checks the context and charges rows.
type meteredIter struct {
	sql.RowIter
	b      *stmtBudget // nil outside Query/Execute (go-mysql-server's own background work)
	charge bool
	limit  int64 // rows charged at most; -1: all
	n      int64
}

func (it *meteredIter) Next(ctx *sql.Context) (sql.Row, error) {
	if it.n&63 == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	row, err := it.RowIter.Next(ctx)
	if err != nil {
		return nil, err
	}
	if it.b != nil {
		size := rowBytes(row)
		it.b.rowSize.Store(size)
		if it.charge && (it.limit < 0 || it.n < it.limit) {
			if err := it.b.charge(ctx, size); err != nil {
				return nil, err
			}
		}
	}
	it.n++
	return row, nil
}

// rowBytes estimates what a row holds: the slice and one interface per
// value, plus the value's own bytes.
func rowBytes(row sql.Row) int64 {
	n := int64(24 + 16*len(row))
	for _, v := range row {
		switch v := v.(type) {
		case nil:
		case string:
			n += 16 + int64(len(v))
		case []byte:
			n += 24 + int64(len(v))
		case int64, uint64, float64, int32, uint32, float32, int8, uint8, int16, uint16, int, bool:
			n += 8
		case time.Time:
			n += 24
		default:
			n += 64
		}
	}
	return n
}
