package sqlview

// ReadTables tells whether the statement read one of the heapprof tables
// so far (call it after the last row). MariaDB sets SERVER_STATUS_IN_TRANS
// when a statement under autocommit=0 reads a transactional table, and
// drivers (PDO, Connector/J) read that flag; FROM-less SELECTs, SHOW and
// information_schema leave it alone, as here.
func (r *Result) ReadTables() bool {
	if r == nil || r.ctx == nil {
		return false
	}
	l, ok := r.ctx.Value(snapshotListKey{}).(*snapshotList)
	return ok && l.read.Load()
}
