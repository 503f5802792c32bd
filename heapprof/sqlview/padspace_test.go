package sqlview

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// padded is format with 0 to 3 trailing spaces (the snapshot id's last
// digit), tabbed format followed by a tab for node 10002: text that
// MariaDB's utf8mb4_bin (PAD SPACE) compares as 'jemalloc' or below it.
const (
	padFmt = "CONCAT(format, REPEAT(' ', RIGHT(id, 1)))"
	tabFmt = "CONCAT(format, IF(node_id = 10002, '\\t', IF(node_id = 10003, ' ', '')))"
)

// TestPadSpaceMatchesMariaDB: trailing spaces compare as MariaDB's PAD
// SPACE collations do, wherever MariaDB compares text (padspace.go), and
// nowhere else (LIKE, binary strings).
func TestPadSpaceMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, tt := range []struct {
		name, query string
		// untyped: the column definitions differ apart from padding
		// (MariaDB's TEXT/LONGTEXT/VARCHAR choice for CONCAT with
		// REPEAT, STRCMP's INT); the rows are compared.
		untyped bool
	}{
		{"equals", "SELECT COUNT(*) FROM snapshots WHERE format = 'jemalloc '", false},
		{"equals column left", "SELECT COUNT(*) FROM snapshots WHERE 'jemalloc   ' = format", false},
		{"not equals", "SELECT COUNT(*), SUM(format <> 'jemalloc  '), SUM(format != 'jemalloc') FROM snapshots", false},
		{"orderings", "SELECT SUM(format < 'jemalloc '), SUM(format <= 'jemalloc '), SUM(format > 'jemalloc '), SUM(format >= 'jemalloc '), SUM(format > 'jemalloc' ), SUM(format < 'jemalloc\\t') FROM snapshots", false},
		{"null-safe equals", "SELECT SUM(format <=> 'jemalloc '), SUM(" + padFmt + " <=> format) FROM snapshots", false},
		{"in", "SELECT COUNT(*), SUM(format IN ('x', 'jemalloc  ')), SUM(format NOT IN ('jemalloc ')), SUM(" + padFmt + " IN (format, 'y')) FROM snapshots", false},
		{"between", "SELECT SUM(format BETWEEN 'jemalloc ' AND 'jemalloc '), SUM(" + padFmt + " BETWEEN 'jemalloc' AND 'jemalloc'), SUM(format NOT BETWEEN 'a' AND 'jemalloc ') FROM snapshots", false},
		{"case when", "SELECT id, CASE format WHEN 'jemalloc ' THEN 'padded' ELSE 'other' END, CASE " + padFmt + " WHEN format THEN 1 ELSE 0 END FROM snapshots ORDER BY id", false},
		{"nullif", "SELECT id, NULLIF(format, 'jemalloc  '), NULLIF(" + padFmt + ", format), LENGTH(NULLIF(" + padFmt + ", 'x')) FROM snapshots ORDER BY id", true},
		{"two columns", "SELECT COUNT(*) FROM snapshots WHERE " + padFmt + " = format AND " + tabFmt + " <> format", false},
		{"index snapshot_id", "SELECT COUNT(*), SUM(flat_bytes) FROM functions WHERE snapshot_id = 'heap_profile.10001.0 '", false},
		{"index primary key", "SELECT id, node_id FROM snapshots WHERE id = 'heap_profile.10002.1   '", false},
		{"index in", "SELECT snapshot_id, COUNT(*) FROM stacks WHERE snapshot_id IN ('heap_profile.10001.0 ', 'heap_profile.10002.1  ') GROUP BY snapshot_id ORDER BY snapshot_id", false},
		{"group by", "SELECT HEX(k), COUNT(*) FROM (SELECT " + padFmt + " AS k FROM snapshots) t GROUP BY k", false},
		{"group by shows first", "SELECT " + padFmt + " AS k, LENGTH(" + padFmt + "), COUNT(*), MIN(id) FROM snapshots GROUP BY k", false},
		{"group by two keys", "SELECT node_id, LENGTH(MIN(k)), COUNT(*) FROM (SELECT node_id, " + padFmt + " AS k FROM snapshots) t GROUP BY node_id, k ORDER BY node_id", false},
		{"distinct", "SELECT HEX(k) FROM (SELECT DISTINCT " + padFmt + " AS k FROM snapshots) t", true},
		{"distinct two columns", "SELECT DISTINCT node_kind, " + padFmt + " FROM snapshots ORDER BY node_kind", false},
		{"count distinct", "SELECT COUNT(DISTINCT " + padFmt + "), COUNT(DISTINCT " + tabFmt + "), COUNT(DISTINCT node_kind, " + padFmt + ") FROM snapshots", false},
		{"union distinct", "SELECT HEX(f) FROM (SELECT format AS f FROM snapshots UNION SELECT 'jemalloc  ') t", true},
		{"union distinct order limit", "SELECT format FROM snapshots UNION SELECT 'jemalloc ' UNION SELECT 'a' ORDER BY 1 LIMIT 2", true},
		{"union all", "SELECT COUNT(*) FROM (SELECT format FROM snapshots UNION ALL SELECT 'jemalloc ') t", false},
		{"join", "SELECT COUNT(*) FROM snapshots a JOIN snapshots b ON CONCAT(a.id, ' ') = b.id", false},
		{"join indexed", "SELECT s.id, COUNT(*) FROM snapshots s JOIN functions f ON f.snapshot_id = CONCAT(s.id, '  ') GROUP BY s.id ORDER BY s.id", false},
		{"join on padded text", "SELECT a.id, b.id FROM snapshots a JOIN snapshots b ON CONCAT(a.format, REPEAT(' ', RIGHT(a.id, 1))) = b.format AND a.node_id = b.node_id AND a.id < b.id ORDER BY a.id, b.id", false},
		{"min max", "SELECT HEX(MIN(" + padFmt + ")), HEX(MAX(" + padFmt + ")), HEX(MIN(" + tabFmt + ")), HEX(MAX(" + tabFmt + ")) FROM snapshots", true},
		{"min max grouped", "SELECT node_id, HEX(MIN(" + tabFmt + ")), HEX(MAX(" + padFmt + ")) FROM snapshots GROUP BY node_id ORDER BY node_id", true},
		{"order by", "SELECT id FROM snapshots ORDER BY " + tabFmt + ", id", false},
		{"order by desc limit", "SELECT id FROM snapshots ORDER BY " + tabFmt + " DESC, id DESC LIMIT 3", false},
		{"window min max", "SELECT id, HEX(MIN(" + tabFmt + ") OVER (PARTITION BY node_kind)), HEX(MAX(" + padFmt + ") OVER ()), HEX(MAX(" + tabFmt + ") OVER (PARTITION BY node_id)) FROM snapshots ORDER BY id", true},
		{"window partition by", "SELECT id, COUNT(*) OVER (PARTITION BY " + padFmt + "), COUNT(*) OVER (PARTITION BY node_kind, " + tabFmt + ") FROM snapshots ORDER BY id", false},
		{"window order by", "SELECT id, RANK() OVER (ORDER BY " + padFmt + "), DENSE_RANK() OVER (PARTITION BY node_kind ORDER BY " + tabFmt + ") FROM snapshots ORDER BY id", true},
		{"intersect", "SELECT HEX(f) FROM (SELECT format AS f FROM snapshots INTERSECT SELECT 'jemalloc  ') t", true},
		{"intersect padded", "SELECT COUNT(*) FROM (SELECT " + padFmt + " FROM snapshots INTERSECT SELECT format FROM snapshots) t", false},
		{"except", "SELECT HEX(f) FROM (SELECT format AS f FROM snapshots EXCEPT SELECT 'jemalloc  ') t ORDER BY f", true},
		{"except padded", "SELECT COUNT(*) FROM (SELECT " + padFmt + " FROM snapshots EXCEPT SELECT format FROM snapshots) t", false},
		{"intersect all", "SELECT COUNT(*) FROM (SELECT " + padFmt + " FROM snapshots INTERSECT ALL SELECT format FROM snapshots WHERE node_id = 10001) t", false},
		{"except all", "SELECT COUNT(*) FROM (SELECT " + padFmt + " FROM snapshots EXCEPT ALL SELECT format FROM snapshots WHERE node_id = 10001) t", false},
		{"intersect order limit", "SELECT " + tabFmt + " AS f FROM snapshots INTERSECT SELECT 'jemalloc ' UNION ALL SELECT 'a' ORDER BY 1 LIMIT 2", true},
		{"except order", "SELECT HEX(" + tabFmt + ") AS f FROM snapshots EXCEPT SELECT HEX('jemalloc') ORDER BY 1", true},
		{"except text order", "SELECT " + tabFmt + " AS f FROM snapshots EXCEPT SELECT 'jemalloc ' ORDER BY 1 DESC", true},
		{"like does not pad", "SELECT 'a ' LIKE 'a', 'a' LIKE 'a ', SUM(format LIKE 'jemalloc '), SUM(" + padFmt + " LIKE 'jemalloc') FROM snapshots", false},
		{"literals", "SELECT 'a' = 'a ', 'a ' = 'a', 'a' < 'a ', 'a' > 'a\\t', '' = ' ', 'a' <=> 'a  ', 'a' IN ('a '), 'a ' BETWEEN 'a' AND 'a', NULLIF('a', 'a '), CASE 'a' WHEN 'a ' THEN 1 ELSE 0 END, STRCMP('a', 'a ')", true},
		{"literals collated", "SELECT 'a' = 'a ' COLLATE utf8mb4_bin, 'A' = 'a ' COLLATE utf8mb4_general_ci, 'a' COLLATE utf8mb4_bin < 'a '", false},
		{"binary does not pad", "SELECT BINARY 'a' = 'a ', CAST('a' AS BINARY) = 'a ', _binary'a' = _binary'a '", false},
		{"in subquery", "SELECT COUNT(*) FROM snapshots WHERE format IN (SELECT 'jemalloc ')", false},
		{"scalar subquery", "SELECT COUNT(*) FROM snapshots WHERE format = (SELECT 'jemalloc ')", false},
		{"having", "SELECT node_kind, COUNT(*) FROM snapshots GROUP BY node_kind HAVING MIN(format) = 'jemalloc ' ORDER BY node_kind", false},
		{"prepare", "PREPARE p FROM 'SELECT COUNT(*) FROM snapshots WHERE format = ?'", false},
		{"set parameter", "SET @f = 'jemalloc '", false},
		{"execute", "EXECUTE p USING @f", false},
		{"set names latin1", "SET NAMES latin1", false},
		{"literals latin1", "SELECT 'a' = 'a ', 'a' < 'a ', 'a' IN ('a '), NULLIF('a', 'a '), 'A' = 'a '", false},
		{"set names utf8mb4", "SET NAMES utf8mb4", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, tt.query, false, !tt.untyped)
		})
	}
}

// A condition of a thousand ORs is padded once per comparison: the rule
// walked every subexpression again from each of its ancestors and wrapped
// it once per ancestor (cubic in the depth: 400 ORs planned in 8 s). The
// answer is MariaDB's, PAD SPACE included (the one term that matches has
// trailing spaces).
func TestDeepConditionsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	var or []string
	for i := range 1000 {
		or = append(or, fmt.Sprintf("(snapshot_id = 'a%d' AND name = 'b%d')", i, i))
	}
	or = append(or, "short_name = CONCAT((SELECT MIN(short_name) FROM heapprof.functions), '  ')")
	q := "SELECT COUNT(*) FROM heapprof.functions WHERE " + strings.Join(or, " OR ")
	matchMariaDB(t, ctx, e, s, r, q, false, true)
	if a, err := engineAnswer(ctx, e, s, q); err != nil || len(a.rows) != 1 || a.rows[0][0] == "0" {
		t.Errorf("%v %v: want the padded term's rows counted", a.rows, err)
	}
}
