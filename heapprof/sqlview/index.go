package sqlview

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
)

// snapshotIndex lets the planner read only the snapshots a query names
// (WHERE snapshot_id = '...', IN (...), or a join on snapshots.id) instead
// of asking the Source for every snapshot's functions or stacks: with a
// real store each Functions call decodes a stored profile.
//
// It answers point lookups only and is not precise: the engine still
// applies the query's filter to the rows, so a lookup can never add rows,
// only skip snapshots whose rows could not match.
type snapshotIndex struct {
	table string
	col   *sql.Column
}

// indexName is the index's name in SHOW INDEX and information_schema.
const indexName = "snapshot_id"

var _ sql.Index = (*snapshotIndex)(nil)

func (x *snapshotIndex) ID() string              { return indexName }
func (x *snapshotIndex) Database() string        { return SchemaName }
func (x *snapshotIndex) Table() string           { return x.table }
func (x *snapshotIndex) Expressions() []string   { return []string{x.table + "." + x.col.Name} }
func (x *snapshotIndex) IsUnique() bool          { return false }
func (x *snapshotIndex) IsSpatial() bool         { return false }
func (x *snapshotIndex) IsFullText() bool        { return false }
func (x *snapshotIndex) IsVector() bool          { return false }
func (x *snapshotIndex) Comment() string         { return "lookups read only the named snapshots" }
func (x *snapshotIndex) IndexType() string       { return "BTREE" }
func (x *snapshotIndex) IsGenerated() bool       { return false }
func (x *snapshotIndex) PrefixLengths() []uint16 { return nil }

func (x *snapshotIndex) ColumnExpressionTypes() []sql.ColumnExpressionType {
	return []sql.ColumnExpressionType{{Expression: x.Expressions()[0], Type: x.col.Type}}
}

func (x *snapshotIndex) CanSupportOrderBy(sql.Expression) bool { return false }

// CanSupport accepts a lookup only when every range is one exact id.
func (x *snapshotIndex) CanSupport(_ *sql.Context, ranges ...sql.Range) bool {
	for _, r := range ranges {
		if _, ok := pointID(r); !ok {
			return false
		}
	}
	return len(ranges) > 0
}

// pointID returns the id of a range that is exactly one string value.
func pointID(r sql.Range) (string, bool) {
	mr, ok := r.(sql.MySQLRange)
	if !ok || len(mr) != 1 {
		return "", false
	}
	lo, okLo := mr[0].LowerBound.(sql.Below)
	hi, okHi := mr[0].UpperBound.(sql.Above)
	if !okLo || !okHi {
		return "", false
	}
	l, okL := lo.Key.(string)
	h, okH := hi.Key.(string)
	if !okL || !okH || l != h {
		return "", false
	}
	return l, true
}

// indexedTable is a table with a snapshot_id column: functions and stacks.
type indexedTable struct {
	*table
	idx *snapshotIndex
}

var (
	_ sql.IndexAddressable = (*indexedTable)(nil)
	_ sql.IndexedTable     = (*indexedTable)(nil)
)

func (t *indexedTable) GetIndexes(*sql.Context) ([]sql.Index, error) { return []sql.Index{t.idx}, nil }

// PreciseMatch is false so the engine keeps filtering rows itself.
func (t *indexedTable) PreciseMatch() bool { return false }

func (t *indexedTable) IndexedAccess(_ *sql.Context, lookup sql.IndexLookup) sql.IndexedTable {
	if lookup.Index == nil || lookup.Index.ID() != indexName || lookup.Index.Table() != t.name {
		return nil
	}
	return t
}

// LookupPartitions gives the partitions (snapshots) the lookup names, in
// the order of a full scan; ids the Source does not hold give nothing.
func (t *indexedTable) LookupPartitions(ctx *sql.Context, lookup sql.IndexLookup) (sql.PartitionIter, error) {
	ranges, ok := lookup.Ranges.(sql.MySQLRangeCollection)
	if !ok {
		return nil, fmt.Errorf("heapprof.%s: unsupported index lookup %T", t.name, lookup.Ranges)
	}
	want := make(map[string]bool, len(ranges))
	for _, r := range ranges {
		id, ok := pointID(r)
		if !ok {
			return nil, fmt.Errorf("heapprof.%s: index lookup %s is not one snapshot id", t.name, r)
		}
		want[id] = true
	}
	all, err := t.scan.partitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("heapprof.%s: %w", t.name, err)
	}
	var ps []sql.Partition
	for _, p := range all {
		if sp, ok := p.(snapshotPartition); ok && want[sp.snap.ID] {
			ps = append(ps, p)
		}
	}
	return sql.PartitionsToPartitionIter(ps...), nil
}
