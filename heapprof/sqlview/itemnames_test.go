package sqlview

import (
	"context"
	"testing"
)

// A select item without an alias is named by its text from its first
// token to its last, as MariaDB names it: the comma before it (SELECT a
// , b; the leading-comma style of hand-written SQL) and comments after it
// are not part of the name; comments inside it are. (A string literal
// keeps go-mysql-server's name, README.)
func TestItemNamesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT node_kind\n     , SUM(total_bytes)\n     , COUNT(*)\nFROM heapprof.snapshots GROUP BY node_kind",
		"SELECT 1 , 2 , -2.5 , 1e3",
		"SELECT 1+1 /* c */, 2+2",
		"SELECT /* c */ 1+1, 3",
		"SELECT 1 + /* inside */ 2",
		"SELECT node_id + 1 /* why */, COUNT(*) /* n */ FROM heapprof.snapshots GROUP BY node_id ORDER BY 1",
		"SELECT UPPER(node_kind) # to compare\nFROM heapprof.snapshots ORDER BY 1 LIMIT 2",
		"SELECT LENGTH(id) -- the id's length\nFROM heapprof.snapshots ORDER BY 1 LIMIT 2",
		"SELECT (1+1) /* c */ AS two, 3 * 2 -- end",
		"SELECT * FROM (SELECT 1 , 2 /* x */) t",
		"SELECT {fn UCASE(node_kind)} /* odbc */ , {fn LENGTH(id)} FROM heapprof.snapshots ORDER BY id LIMIT 1",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
		})
	}
}
