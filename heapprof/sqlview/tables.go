package sqlview

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// SchemaName is the database the tables live in.
const SchemaName = "heapprof"

// Table names.
const (
	TableSnapshots = "snapshots"
	TableFunctions = "functions"
	TableStacks    = "stacks"
	TableDiffs     = "diffs"
)

// Types of the schema's columns; the external store's views have the same
// (snapshot.MySQL; TestExternalStoreSameSchema compares them). Text
// compares binary (go-mysql-server's default utf8mb4_0900_bin; SHOW CREATE
// TABLE names it utf8mb4_bin, which MariaDB knows too, see mariaDBDDL).
var (
	idType   = types.MustCreateStringWithDefaults(sqltypes.VarChar, 255)
	kindType = types.MustCreateStringWithDefaults(sqltypes.VarChar, 64)
	// A function's full name, its identity: C++ names with their argument
	// and template lists pass 4096 characters, and cutting them would merge
	// functions again. TEXT, as the external store keeps it.
	nameType = types.Text
	// A short name (the graph's node name), cut at 4096 characters in the
	// external store.
	shortNameType = types.MustCreateStringWithDefaults(sqltypes.VarChar, 4096)
	framesType    = types.LongText
	timeType      = types.DatetimeMaxPrecision
)

// col declares a column. go-mysql-server prints column comments into SHOW
// CREATE TABLE unescaped; mariaDBDDL escapes them.
// col is a column of the schema, with its one comment (shared with the
// MySQL store's tables: snapshot.ColumnComment).
func col(table, name string, typ sql.Type) *sql.Column {
	return &sql.Column{Name: name, Type: typ, Source: table, DatabaseSource: SchemaName,
		Comment: snapshot.ColumnComment(table, name)}
}

// The keys: snapshots.id is the primary key, functions.snapshot_id and
// stacks.snapshot_id reference it (BI tools draw and join by them).
const (
	primaryKey  = "PRIMARY"
	fkFunctions = "functions_snapshot"
	fkStacks    = "stacks_snapshot"
)

func foreignKey(name, table string) sql.ForeignKeyConstraint {
	return sql.ForeignKeyConstraint{Name: name, Database: SchemaName, Table: table, Columns: []string{"snapshot_id"},
		ParentDatabase: SchemaName, ParentTable: TableSnapshots, ParentColumns: []string{"id"},
		OnUpdate: sql.ForeignKeyReferentialAction_Restrict, OnDelete: sql.ForeignKeyReferentialAction_Cascade, IsResolved: true}
}

// table is one read-only heapprof table. Its rows come from scan, one
// partition at a time, so a query over many snapshots never holds more than
// one snapshot's rows (two for diffs) before the engine's own operators.
type table struct {
	name   string
	schema sql.Schema
	scan   scanner
}

// scanner reads one table's rows from a Source.
type scanner interface {
	// partitions lists the units read separately: a snapshot, a node, ...
	partitions(ctx *sql.Context) ([]sql.Partition, error)
	// rows reads one partition.
	rows(ctx *sql.Context, p sql.Partition) ([]sql.Row, error)
}

var _ sql.Table = (*table)(nil)

func (t *table) Name() string               { return t.name }
func (t *table) String() string             { return t.name }
func (t *table) Schema() sql.Schema         { return t.schema }
func (t *table) Collation() sql.CollationID { return sql.Collation_Default }
func (t *table) Comment() string            { return tableComments[t.name] }
func (t *table) Partitions(ctx *sql.Context) (sql.PartitionIter, error) {
	ps, err := t.scan.partitions(ctx)
	if err != nil {
		return nil, fmt.Errorf("heapprof.%s: %w", t.name, err)
	}
	return sql.PartitionsToPartitionIter(ps...), nil
}

func (t *table) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	rows, err := t.scan.rows(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("heapprof.%s: %w", t.name, err)
	}
	return sql.RowsToRowIter(rows...), nil
}

var tableComments = map[string]string{
	TableSnapshots: "one row per heap profile dump",
	TableFunctions: "per snapshot and function: flat and cumulative in-use bytes and objects",
	TableStacks:    "per snapshot and sampled call stack: in-use bytes and objects",
	TableDiffs:     "per pair of consecutive snapshots of a node and function: before, after, delta",
}

// snapshotPartition is one snapshot, read by functions and stacks.
type snapshotPartition struct{ snap snapshot.Snapshot }

func (p snapshotPartition) Key() []byte { return []byte(p.snap.ID) }

// nodePartition is one node's snapshots, oldest first, read by diffs.
type nodePartition struct {
	nodeID int64
	snaps  []snapshot.Snapshot
}

func (p nodePartition) Key() []byte { return strconv.AppendInt(nil, p.nodeID, 10) }

func pk(c *sql.Column) *sql.Column {
	c.PrimaryKey = true
	return c
}

func newTables(src Source) map[string]*table {
	ts := []*table{
		{
			name: TableSnapshots,
			schema: sql.Schema{
				// The primary key: every store keys snapshots by id.
				pk(col(TableSnapshots, "id", idType)),
				col(TableSnapshots, "node_id", types.Int64),
				col(TableSnapshots, "node_kind", kindType),
				col(TableSnapshots, "node_addr", idType),
				col(TableSnapshots, "taken_at", timeType),
				col(TableSnapshots, "total_bytes", types.Int64),
				col(TableSnapshots, "total_objects", types.Int64),
				col(TableSnapshots, "sample_period", types.Int64),
				col(TableSnapshots, "format", kindType),
			},
			scan: snapshotScan{src},
		},
		{
			name: TableFunctions,
			schema: sql.Schema{
				col(TableFunctions, "snapshot_id", idType),
				col(TableFunctions, "node_id", types.Int64),
				col(TableFunctions, "taken_at", timeType),
				col(TableFunctions, "name", nameType),
				col(TableFunctions, "short_name", shortNameType),
				col(TableFunctions, "flat_bytes", types.Int64),
				col(TableFunctions, "flat_objects", types.Int64),
				col(TableFunctions, "cum_bytes", types.Int64),
				col(TableFunctions, "cum_objects", types.Int64),
				col(TableFunctions, "flat_pct", types.Float64),
				col(TableFunctions, "cum_pct", types.Float64),
			},
			scan: functionScan{src},
		},
		{
			name: TableStacks,
			schema: sql.Schema{
				col(TableStacks, "snapshot_id", idType),
				col(TableStacks, "node_id", types.Int64),
				col(TableStacks, "taken_at", timeType),
				col(TableStacks, "stack_id", types.Int64),
				col(TableStacks, "frames", framesType),
				col(TableStacks, "bytes", types.Int64),
				col(TableStacks, "objects", types.Int64),
			},
			scan: stackScan{src},
		},
		{
			name: TableDiffs,
			schema: sql.Schema{
				col(TableDiffs, "node_id", types.Int64),
				col(TableDiffs, "name", nameType),
				col(TableDiffs, "short_name", shortNameType),
				col(TableDiffs, "from_snapshot_id", idType),
				col(TableDiffs, "to_snapshot_id", idType),
				col(TableDiffs, "from_taken_at", timeType),
				col(TableDiffs, "to_taken_at", timeType),
				col(TableDiffs, "seconds", types.Float64),
				col(TableDiffs, "flat_bytes_before", types.Int64),
				col(TableDiffs, "flat_bytes_after", types.Int64),
				col(TableDiffs, "flat_bytes_delta", types.Int64),
				col(TableDiffs, "cum_bytes_before", types.Int64),
				col(TableDiffs, "cum_bytes_after", types.Int64),
				col(TableDiffs, "cum_bytes_delta", types.Int64),
				col(TableDiffs, "flat_objects_delta", types.Int64),
				col(TableDiffs, "cum_objects_delta", types.Int64),
			},
			scan: diffScan{src},
		},
	}
	m := make(map[string]*table, len(ts))
	for _, t := range ts {
		m[t.name] = t
	}
	return m
}

type snapshotScan struct{ src Source }

// partitions: one per snapshot, so that the primary key looks one up.
func (s snapshotScan) partitions(ctx *sql.Context) ([]sql.Partition, error) {
	return snapshotPartitions(ctx, s.src)
}

func (s snapshotScan) rows(_ *sql.Context, p sql.Partition) ([]sql.Row, error) {
	sn := p.(snapshotPartition).snap
	return []sql.Row{{sn.ID, sn.NodeID, sn.NodeKind, sn.NodeAddr, sn.TakenAt.UTC(),
		sn.TotalBytes, sn.TotalObjects, sn.SamplePeriod, sn.Format}}, nil
}

// snapshotPartitions gives one partition per snapshot, oldest first so that
// an unordered SELECT reads like a history.
func snapshotPartitions(ctx *sql.Context, src Source) ([]sql.Partition, error) {
	snaps, err := sortedSnapshots(ctx, src)
	if err != nil {
		return nil, err
	}
	ps := make([]sql.Partition, len(snaps))
	for i, sn := range snaps {
		ps[i] = snapshotPartition{sn}
	}
	return ps, nil
}

// sortedSnapshots lists the snapshots oldest first. Within one statement
// the list is read once (see snapshotList): a join looks partitions up once
// per outer row, and every table of the statement sees the same snapshots.
func sortedSnapshots(ctx *sql.Context, src Source) ([]snapshot.Snapshot, error) {
	if l, ok := ctx.Value(snapshotListKey{}).(*snapshotList); ok {
		l.once.Do(func() {
			l.snaps, l.err = listSorted(ctx, src)
			l.read.Store(true)
		})
		return l.snaps, l.err
	}
	return listSorted(ctx, src)
}

func listSorted(ctx *sql.Context, src Source) ([]snapshot.Snapshot, error) {
	snaps, err := src.List(ctx, snapshot.Filter{})
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	snaps = slices.Clone(snaps)
	slices.SortFunc(snaps, func(a, b snapshot.Snapshot) int {
		return cmp.Or(a.TakenAt.Compare(b.TakenAt), cmp.Compare(a.NodeID, b.NodeID), cmp.Compare(a.ID, b.ID))
	})
	return snaps, nil
}

// snapshotList is one statement's snapshot listing, carried in its context.
type snapshotList struct {
	once  sync.Once
	snaps []snapshot.Snapshot
	err   error
	// read tells that the statement read a heapprof table (Result.ReadTables).
	read atomic.Bool
}

type snapshotListKey struct{}

type functionScan struct{ src Source }

func (s functionScan) partitions(ctx *sql.Context) ([]sql.Partition, error) {
	return snapshotPartitions(ctx, s.src)
}

func (s functionScan) rows(ctx *sql.Context, p sql.Partition) ([]sql.Row, error) {
	sn := p.(snapshotPartition).snap
	fns, err := readFunctions(ctx, s.src, sn.ID)
	if err != nil {
		return nil, err
	}
	at := sn.TakenAt.UTC()
	rows := make([]sql.Row, len(fns))
	for i, f := range fns {
		rows[i] = sql.Row{sn.ID, sn.NodeID, at, f.Name, f.ShortName, f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects, f.FlatPercent, f.CumPercent}
	}
	return rows, nil
}

// readFunctions reads one snapshot's functions; a snapshot dropped since
// the statement listed it has none.
func readFunctions(ctx context.Context, src Source, id string) ([]snapshot.Function, error) {
	fns, err := src.Functions(ctx, id)
	if gone(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("functions of snapshot %s: %w", id, err)
	}
	return fns, nil
}

type stackScan struct{ src Source }

func (s stackScan) partitions(ctx *sql.Context) ([]sql.Partition, error) {
	return snapshotPartitions(ctx, s.src)
}

func (s stackScan) rows(ctx *sql.Context, p sql.Partition) ([]sql.Row, error) {
	sn := p.(snapshotPartition).snap
	sts, err := s.src.Stacks(ctx, sn.ID)
	if gone(err) {
		return nil, nil // dropped since the statement listed it
	}
	if err != nil {
		return nil, fmt.Errorf("stacks of snapshot %s: %w", sn.ID, err)
	}
	at := sn.TakenAt.UTC()
	rows := make([]sql.Row, len(sts))
	for i, st := range sts {
		rows[i] = sql.Row{sn.ID, sn.NodeID, at, st.StackID, st.Frames, st.Bytes, st.Objects}
	}
	return rows, nil
}

type diffScan struct{ src Source }

func (s diffScan) partitions(ctx *sql.Context) ([]sql.Partition, error) {
	snaps, err := sortedSnapshots(ctx, s.src)
	if err != nil {
		return nil, err
	}
	byNode := map[int64][]snapshot.Snapshot{}
	var nodes []int64
	for _, sn := range snaps {
		if _, ok := byNode[sn.NodeID]; !ok {
			nodes = append(nodes, sn.NodeID)
		}
		byNode[sn.NodeID] = append(byNode[sn.NodeID], sn)
	}
	slices.Sort(nodes)
	var ps []sql.Partition
	for _, n := range nodes {
		// A node with a single snapshot has nothing to compare.
		if len(byNode[n]) > 1 {
			ps = append(ps, nodePartition{nodeID: n, snaps: byNode[n]})
		}
	}
	return ps, nil
}

// rows walks the node's snapshots in time order keeping only the previous
// snapshot's functions, so a node with many snapshots is read once.
func (s diffScan) rows(ctx *sql.Context, p sql.Partition) ([]sql.Row, error) {
	np := p.(nodePartition)
	var rows []sql.Row
	var prev map[string]snapshot.Function
	for i, sn := range np.snaps {
		fns, err := readFunctions(ctx, s.src, sn.ID)
		if err != nil {
			return nil, err
		}
		cur := byName(fns)
		if i > 0 {
			rows = appendDiff(rows, np.snaps[i-1], sn, prev, cur, fns)
		}
		prev = cur
	}
	return rows, nil
}

// byName keys a snapshot's rows by full name, so that overloads, which
// share a short name, stay apart. A store holds one row per full name
// (Summarize tells functions apart by it; the external store's view relies
// on that); rows that repeat one would be summed, with the first short name.
func byName(fns []snapshot.Function) map[string]snapshot.Function {
	m := make(map[string]snapshot.Function, len(fns))
	for _, f := range fns {
		s, ok := m[f.Name]
		if !ok {
			s.ShortName = f.ShortName
		}
		s.FlatBytes += f.FlatBytes
		s.FlatObjects += f.FlatObjects
		s.CumBytes += f.CumBytes
		s.CumObjects += f.CumObjects
		m[f.Name] = s
	}
	return m
}

// appendDiff adds one row per function present in either snapshot: in the
// later snapshot's order, then the functions that disappeared, by name.
// short_name is the later snapshot's where the function is in it (a Go
// profile's short names depend on the other functions of the snapshot).
func appendDiff(rows []sql.Row, from, to snapshot.Snapshot, before, after map[string]snapshot.Function, afterOrder []snapshot.Function) []sql.Row {
	secs := to.TakenAt.Sub(from.TakenAt).Seconds()
	add := func(name, short string, b, a snapshot.Function) {
		rows = append(rows, sql.Row{from.NodeID, name, short, from.ID, to.ID, from.TakenAt.UTC(), to.TakenAt.UTC(), secs,
			b.FlatBytes, a.FlatBytes, a.FlatBytes - b.FlatBytes,
			b.CumBytes, a.CumBytes, a.CumBytes - b.CumBytes,
			a.FlatObjects - b.FlatObjects, a.CumObjects - b.CumObjects})
	}
	seen := make(map[string]bool, len(afterOrder))
	for _, f := range afterOrder {
		if seen[f.Name] {
			continue
		}
		seen[f.Name] = true
		a := after[f.Name]
		add(f.Name, a.ShortName, before[f.Name], a)
	}
	var gone []string
	for name := range before {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	slices.Sort(gone)
	for _, name := range gone {
		b := before[name]
		add(name, b.ShortName, b, snapshot.Function{})
	}
	return rows
}
