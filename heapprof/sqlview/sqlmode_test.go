package sqlview

import (
	"context"
	"testing"
)

// sql_mode as MariaDB keeps it: its default (a grouped expression with a
// LIMIT was go-mysql-server's ERROR 1105 under its ONLY_FULL_GROUP_BY),
// SET with names, numbers, compound modes, DEFAULT and expressions, read
// back in MariaDB's order, MariaDB's errors for bad values; and the
// statements whose meaning a mode changes in a way the engine does not
// implement refused (1235) where MariaDB answers, the others answered as
// MariaDB answers them. In order, on one session of each.
func TestSQLModeMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	tests := []struct {
		name, query        string
		unsupported, types bool
	}{
		// Superset's time grains (superset/db_engine_specs/mysql.py,
		// apache/superset@b33c7943) with its row limit.
		{"superset day", "SELECT DATE(taken_at) AS `__timestamp`, MAX(total_bytes) AS `MAX(total_bytes)` FROM heapprof.snapshots GROUP BY DATE(taken_at) LIMIT 10000", false, true},
		{"superset month", "SELECT DATE(DATE_SUB(taken_at, INTERVAL DAYOFMONTH(taken_at) - 1 DAY)) AS `__timestamp`, COUNT(*) AS count FROM heapprof.snapshots GROUP BY DATE(DATE_SUB(taken_at, INTERVAL DAYOFMONTH(taken_at) - 1 DAY)) LIMIT 10000", false, true},
		{"superset quarter", "SELECT MAKEDATE(YEAR(taken_at), 1) + INTERVAL QUARTER(taken_at) QUARTER - INTERVAL 1 QUARTER AS `__timestamp`, COUNT(*) AS count FROM heapprof.snapshots GROUP BY MAKEDATE(YEAR(taken_at), 1) + INTERVAL QUARTER(taken_at) QUARTER - INTERVAL 1 QUARTER LIMIT 10000", false, true},
		{"superset over a virtual table", "SELECT DATE_ADD(DATE(taken_at), INTERVAL HOUR(taken_at) HOUR) AS `__timestamp`, SUM(total_bytes) AS `SUM(total_bytes)` FROM (SELECT * FROM heapprof.snapshots) AS virtual_table GROUP BY DATE_ADD(DATE(taken_at), INTERVAL HOUR(taken_at) HOUR) LIMIT 10000", false, true},
		{"grouped expression, order and limit", "SELECT LOWER(node_kind) AS k, COUNT(*) AS c FROM heapprof.snapshots GROUP BY LOWER(node_kind) ORDER BY LOWER(node_kind) LIMIT 2", false, true},
		{"column outside the group", "SELECT node_kind, node_id FROM heapprof.snapshots GROUP BY node_kind LIMIT 5", false, true},
		{"default", "SELECT @@sql_mode, @@GLOBAL.sql_mode, @@SESSION.sql_mode", false, true},
		{"show variables", "SHOW VARIABLES LIKE 'sql_mode'", false, false},
		// SET and read back.
		{"set ansi", "SET sql_mode = 'ANSI'", false, false},
		{"ansi expanded", "SELECT @@sql_mode", false, false},
		{"ansi quotes", `SELECT "node_kind" FROM heapprof.snapshots ORDER BY 1 LIMIT 1`, false, true},
		{"or", "SELECT 1 OR 0, 'a||b', 0 OR 0", false, true},
		{"pipes", "SELECT 'a' || 'b', node_kind || ':' || node_id FROM heapprof.snapshots ORDER BY id LIMIT 2", true, false},
		{"set traditional", "SET SESSION sql_mode = 'traditional'", false, false},
		{"traditional expanded", "SELECT @@SESSION.sql_mode", false, false},
		{"set number", "SET sql_mode = 3", false, false},
		{"number read", "SELECT @@sql_mode", false, false},
		{"set mysql40", "SET @@sql_mode = 'MYSQL40'", false, false},
		{"high not precedence", "SELECT @@sql_mode, 1 IS NOT NULL, 1 NOT IN (2), 'a' NOT LIKE 'b', 2 NOT BETWEEN 1 AND 3, NOT (1 = 2), NOT 0, NOT EXISTS (SELECT 1)", false, false},
		{"not between", "SELECT NOT 1 BETWEEN -5 AND 5", true, false},
		{"not equal", "SELECT COUNT(*) FROM heapprof.snapshots WHERE NOT node_id = 10001", true, false},
		{"set mssql", "SET sql_mode = 'MSSQL'", false, false},
		{"mssql expanded", "SELECT @@sql_mode", false, false},
		{"set default", "SET sql_mode = DEFAULT", false, false},
		{"default again", "SELECT @@sql_mode", false, false},
		{"set expression", "SET sql_mode = CONCAT(@@sql_mode, ',ANSI_QUOTES')", false, false},
		{"expression read", "SELECT @@sql_mode", false, false},
		{"set bare name", "SET sql_mode = ansi_quotes", false, false},
		{"bare name read", "SELECT @@sql_mode", false, false},
		{"set empty elements", "SET sql_mode = ',STRICT_TRANS_TABLES,,ANSI_QUOTES'", false, false},
		{"empty elements read", "SELECT @@sql_mode", false, false},
		{"set with another variable", "SET time_zone = '+01:00', sql_mode = 'NO_BACKSLASH_ESCAPES'", false, false},
		{"backslash", `SELECT 'a\nb', LENGTH('a\nb')`, true, false},
		{"no backslash", "SELECT @@sql_mode, @@time_zone, 'it''s'", false, false},
		// MariaDB's errors; the mode stays.
		{"unknown name", "SET sql_mode = 'nonsense'", false, false},
		{"unknown second name", "SET sql_mode = 'ANSI,NONSENSE'", false, false},
		{"spaces are part of a name", "SET sql_mode = 'strict_trans_tables , ansi_quotes'", false, false},
		{"null", "SET sql_mode = NULL", false, false},
		{"decimal", "SET sql_mode = 1.5", false, false},
		{"too many bits", "SET sql_mode = 1 << 40", false, false},
		{"after errors", "SELECT @@sql_mode", false, false},
		{"set empty string is null", "SET sql_mode = 'EMPTY_STRING_IS_NULL'", false, false},
		{"empty string", "SELECT ''", true, false},
		{"not empty", "SELECT 'x', @@sql_mode", false, false},
		{"leave empty string is null", "SET sql_mode = DEFAULT", false, false},
		// Modes refused at the SET.
		{"oracle", "SET sql_mode = 'ORACLE'", true, false},
		{"time round fractional", "SET sql_mode = 'TIME_ROUND_FRACTIONAL'", true, false},
		{"set empty", "SET sql_mode = ''", false, false},
		{"empty read", "SELECT @@sql_mode, @@GLOBAL.sql_mode", false, false},
		{"set default back", "SET sql_mode = DEFAULT, time_zone = '+00:00'", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A refused statement runs on MariaDB's session too: the
			// sessions stay in step.
			matchMariaDB(t, ctx, e, s, r, tt.query, tt.unsupported, tt.types)
		})
	}
}
