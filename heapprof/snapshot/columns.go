package snapshot

// What each column of the heapprof schema means, written once. The
// embedded default's tables (heapprof/sqlview) take their comments from
// here, and so do the MySQL store's tables, whose comments MariaDB and
// MySQL show for the view columns that pass a table's column through
// (functions.node_id is store_snapshots.node_id): a BI tool reads the same
// description in either mode (ODBC's SQLColumns REMARKS, JDBC's
// getColumns, information_schema.COLUMNS). A view column computed by an
// expression (diffs.seconds) has no comment on MariaDB; only the embedded
// default shows it.
var columnComments = map[string]map[string]string{
	"snapshots": {
		"id":            "what snapshot() prints and to_dot_format() takes",
		"node_id":       "the id in ADMIN EXECUTE ON <id> and SHOW BACKENDS",
		"node_kind":     "starrocks, doris, tikv, greptimedb, databend, go, ...",
		"node_addr":     "host:port the dump came from",
		"taken_at":      "when the dump was taken, UTC",
		"total_bytes":   "in-use bytes, estimated from the samples as jeprof does",
		"total_objects": "in-use objects, estimated from the samples",
		"sample_period": "bytes between samples",
		"format":        "encoding of the raw dump",
	},
	"functions": {
		"snapshot_id":  "snapshots.id",
		"name":         "full function name, arguments and templates included: one row per function",
		"short_name":   "name in jeprof's graph (no arguments, no templates): overloads share it",
		"flat_bytes":   "in-use bytes allocated by the function itself",
		"flat_objects": "in-use objects allocated by the function itself",
		"cum_bytes":    "in-use bytes allocated by the function and its callees",
		"cum_objects":  "in-use objects allocated by the function and its callees",
		"flat_pct":     "flat_bytes in percent of snapshots.total_bytes",
		"cum_pct":      "cum_bytes in percent of snapshots.total_bytes",
	},
	"stacks": {
		"snapshot_id": "snapshots.id",
		"stack_id":    "hash of the frames: the same stack has the same id in every snapshot",
		"frames":      "call stack, root first, frames separated by ';'",
		"bytes":       "in-use bytes",
		"objects":     "in-use objects",
	},
	"diffs": {
		"from_snapshot_id":   "the earlier snapshot",
		"from_taken_at":      "taken_at of the earlier snapshot",
		"seconds":            "seconds between the two snapshots",
		"flat_bytes_delta":   "after - before",
		"cum_bytes_delta":    "after - before",
		"flat_objects_delta": "after - before",
		"cum_objects_delta":  "after - before",
	},
}

// passedThrough names, for view columns that show another table's column
// unchanged, the column whose comment they carry.
var passedThrough = map[string][2]string{
	"functions.node_id":    {"snapshots", "node_id"},
	"functions.taken_at":   {"snapshots", "taken_at"},
	"stacks.node_id":       {"snapshots", "node_id"},
	"stacks.taken_at":      {"snapshots", "taken_at"},
	"diffs.node_id":        {"snapshots", "node_id"},
	"diffs.name":           {"functions", "name"},
	"diffs.short_name":     {"functions", "short_name"},
	"diffs.to_snapshot_id": {"snapshots", "id"},
	"diffs.to_taken_at":    {"snapshots", "taken_at"},
}

// ColumnComment is the comment of column of the heapprof schema's table
// ("" for a column without one).
func ColumnComment(table, column string) string {
	if from, ok := passedThrough[table+"."+column]; ok {
		table, column = from[0], from[1]
	}
	return columnComments[table][column]
}
