package sqlview

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
)

// pointIndex lets the planner read only the partitions a query names
// (WHERE snapshot_id = '...', node_id IN (...), or a join on snapshots.id)
// instead of asking the Source for every snapshot: with a real store each
// Functions call decodes a stored profile.
//
// Every partition has one value of the indexed column (a snapshot has one
// id and one node, a diffs partition one node), so a point lookup selects
// whole partitions. It answers point lookups only and is not precise: the
// engine still applies the query's filter to the rows, so a lookup can
// only skip partitions whose rows could not match, never add rows.
type pointIndex struct {
	table string
	// name is the index's name: the column's, or PRIMARY for the primary
	// key. IsUnique stays false even there: told that snapshots.id is
	// unique, the planner drives a join from functions (reading every
	// snapshot's rows) into snapshots by id, instead of reading only the
	// functions of the snapshots a filter on snapshots kept.
	name string
	// unique: the key is unique as declared to clients (the primary key):
	// information_schema.STATISTICS and SHOW INDEX say so (infoschema.go),
	// the planner is not told (see name).
	unique bool
	col    *sql.Column
	// key gives a partition's value of col, in col's Go type.
	key func(sql.Partition) any
}

var _ sql.Index = (*pointIndex)(nil)

// ID is the index's name in SHOW INDEX and information_schema.
func (x *pointIndex) ID() string              { return x.name }
func (x *pointIndex) Database() string        { return SchemaName }
func (x *pointIndex) Table() string           { return x.table }
func (x *pointIndex) Expressions() []string   { return []string{x.table + "." + x.col.Name} }
func (x *pointIndex) IsUnique() bool          { return false }
func (x *pointIndex) IsSpatial() bool         { return false }
func (x *pointIndex) IsFullText() bool        { return false }
func (x *pointIndex) IsVector() bool          { return false }
func (x *pointIndex) Comment() string         { return "" }
func (x *pointIndex) IndexType() string       { return "BTREE" }
func (x *pointIndex) IsGenerated() bool       { return false }
func (x *pointIndex) PrefixLengths() []uint16 { return nil }

func (x *pointIndex) ColumnExpressionTypes() []sql.ColumnExpressionType {
	return []sql.ColumnExpressionType{{Expression: x.Expressions()[0], Type: x.col.Type}}
}

func (x *pointIndex) CanSupportOrderBy(sql.Expression) bool { return false }

// CanSupport accepts a lookup only when every range is one exact value.
func (x *pointIndex) CanSupport(ctx *sql.Context, ranges ...sql.Range) bool {
	for _, r := range ranges {
		if _, ok := x.point(ctx, r); !ok {
			return false
		}
	}
	return len(ranges) > 0
}

// point returns the value of a range that is exactly one value, converted
// to the column's Go type (string, int64) so it compares with key's.
func (x *pointIndex) point(ctx context.Context, r sql.Range) (any, bool) {
	mr, ok := r.(sql.MySQLRange)
	if !ok || len(mr) != 1 {
		return nil, false
	}
	lo, okLo := mr[0].LowerBound.(sql.Below)
	hi, okHi := mr[0].UpperBound.(sql.Above)
	if !okLo || !okHi || lo.Key == nil || hi.Key == nil {
		return nil, false
	}
	l, inRange, err := x.col.Type.Convert(ctx, lo.Key)
	if err != nil || inRange != sql.InRange {
		return nil, false
	}
	h, inRange, err := x.col.Type.Convert(ctx, hi.Key)
	if err != nil || inRange != sql.InRange {
		return nil, false
	}
	if c, err := x.col.Type.Compare(ctx, l, h); err != nil || c != 0 {
		return nil, false
	}
	switch l.(type) {
	case string, int64:
		return l, true
	}
	return nil, false
}

// indexedTable is a table whose partitions each hold one value of some
// columns: functions and stacks (snapshot_id, node_id), diffs (node_id).
type indexedTable struct {
	*table
	indexes []*pointIndex
	// fks are the foreign keys the table declares, referenced those that
	// name it as the parent.
	fks, referenced []sql.ForeignKeyConstraint
}

var (
	_ sql.IndexAddressable = (*indexedTable)(nil)
	_ sql.IndexedTable     = (*indexedTable)(nil)
	_ sql.ForeignKeyTable  = (*indexedTable)(nil)
)

// The keys are declared for clients (information_schema, SHOW CREATE TABLE,
// JDBC getImportedKeys); the tables are read-only, so nothing changes them.
func (t *indexedTable) GetDeclaredForeignKeys(*sql.Context) ([]sql.ForeignKeyConstraint, error) {
	return t.fks, nil
}

func (t *indexedTable) GetReferencedForeignKeys(*sql.Context) ([]sql.ForeignKeyConstraint, error) {
	return t.referenced, nil
}

func (t *indexedTable) CreateIndexForForeignKey(*sql.Context, sql.IndexDef) error {
	return t.readOnly()
}
func (t *indexedTable) AddForeignKey(*sql.Context, sql.ForeignKeyConstraint) error {
	return t.readOnly()
}
func (t *indexedTable) DropForeignKey(*sql.Context, string) error { return t.readOnly() }
func (t *indexedTable) UpdateForeignKey(*sql.Context, string, sql.ForeignKeyConstraint) error {
	return t.readOnly()
}
func (t *indexedTable) GetForeignKeyEditor(*sql.Context) sql.ForeignKeyEditor { return nil }

func (t *indexedTable) readOnly() error {
	return fmt.Errorf("heapprof.%s is read-only", t.name)
}

func (t *indexedTable) GetIndexes(*sql.Context) ([]sql.Index, error) {
	xs := make([]sql.Index, len(t.indexes))
	for i, x := range t.indexes {
		xs[i] = x
	}
	return xs, nil
}

// PreciseMatch is false so the engine keeps filtering rows itself.
func (t *indexedTable) PreciseMatch() bool { return false }

func (t *indexedTable) index(lookup sql.IndexLookup) *pointIndex {
	if lookup.Index == nil || lookup.Index.Table() != t.name {
		return nil
	}
	for _, x := range t.indexes {
		if x.ID() == lookup.Index.ID() {
			return x
		}
	}
	return nil
}

func (t *indexedTable) IndexedAccess(_ *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	if t.index(lookup) == nil {
		return nil
	}
	return t
}

// LookupPartitions gives the partitions the lookup names, in the order of a
// full scan; values no partition has give nothing.
func (t *indexedTable) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	x := t.index(lookup)
	if x == nil {
		return nil, fmt.Errorf("heapprof.%s: lookup on unknown index %v", t.name, lookup.Index)
	}
	ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("heapprof.%s: unsupported index lookup %T", t.name, lookup.Ranges)
	}
	want := make(map[any]bool, len(ranges))
	for _, r := range ranges {
		v, ok := x.point(ctx, r)
		if !ok {
			return nil, fmt.Errorf("heapprof.%s: index lookup %s is not one %s", t.name, r, x.col.Name)
		}
		want[padPoint(v)] = true
	}
	all, err := t.scan.partitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("heapprof.%s: %w", t.name, err)
	}
	var ps []sql.Partition
	for _, p := range all {
		if want[padPoint(x.key(p))] {
			ps = append(ps, p)
		}
	}
	return sql.PartitionsToPartitionIter(ps...), nil
}

// withIndexes wraps the tables in their indexes (each partition carries a
// snapshot id or a node id) and keys.
func withIndexes(tables map[string]*table) map[string]sql.Table {
	snapID := func(p sql.Partition) any { return p.(snapshotPartition).snap.ID }
	snapNode := func(p sql.Partition) any { return p.(snapshotPartition).snap.NodeID }
	diffNode := func(p sql.Partition) any { return p.(nodePartition).nodeID }
	keys := map[string]map[string]func(sql.Partition) any{
		TableSnapshots: {"id": snapID},
		TableFunctions: {"snapshot_id": snapID, "node_id": snapNode},
		TableStacks:    {"snapshot_id": snapID, "node_id": snapNode},
		TableDiffs:     {"node_id": diffNode},
	}
	fks := map[string][]sql.ForeignKeyConstraint{
		TableFunctions: {foreignKey(fkFunctions, TableFunctions)},
		TableStacks:    {foreignKey(fkStacks, TableStacks)},
	}
	out := make(map[string]sql.Table, len(tables))
	for name, t := range tables {
		it := &indexedTable{table: t, fks: fks[name]}
		if name == TableSnapshots {
			it.referenced = append(slices.Clone(fks[TableFunctions]), fks[TableStacks]...)
		}
		// In schema order, so SHOW INDEX lists them as DESCRIBE does.
		for _, c := range t.schema {
			if key, ok := keys[name][c.Name]; ok {
				x := &pointIndex{table: name, name: c.Name, col: c, key: key}
				if c.PrimaryKey {
					x.name, x.unique = primaryKey, true
				}
				it.indexes = append(it.indexes, x)
			}
		}
		out[name] = it
	}
	return out
}

// padPoint is a key as PAD SPACE text compares it (padspace.go): the
// lookup 'heap_profile.10001.0 ' reads the snapshot 'heap_profile.10001.0'.
func padPoint(v any) any {
	if s, ok := v.(string); ok {
		return strings.TrimRight(s, " ")
	}
	return v
}
