package sqlview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
)

// SUM and AVG (aggregates.go) answer MariaDB's types and digits: exact
// DECIMAL for integers, decimals and dates, AVG with four more fraction
// digits, DOUBLE for floats and text, windows framed as MySQL frames them.
func TestAggregatesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	for _, q := range []string{
		"SELECT SUM(total_bytes), AVG(total_bytes), SUM(total_objects), AVG(sample_period), COUNT(*) FROM heapprof.snapshots",
		// GROUP_CONCAT cut at MariaDB's group_concat_max_len (1M), not
		// MySQL's 1024.
		"SELECT LENGTH(GROUP_CONCAT(REPEAT(name, 20))), LENGTH(GROUP_CONCAT(name, name, name)), @@group_concat_max_len, @@GLOBAL.group_concat_max_len FROM heapprof.functions",
		"SELECT node_id, SUM(total_bytes) s, AVG(total_bytes) a, AVG(DISTINCT total_objects) d, SUM(DISTINCT sample_period) p FROM heapprof.snapshots GROUP BY node_id ORDER BY node_id",
		// Dates are numbers YYYYMMDDhhmmss.ffffff; text its leading number.
		"SELECT SUM(taken_at), AVG(taken_at), SUM(DATE(taken_at)), AVG(DATE(taken_at)), SUM(node_addr), AVG(node_addr) FROM heapprof.snapshots",
		// No rows, NULLs.
		"SELECT SUM(total_bytes), AVG(total_bytes), SUM(NULL), AVG(NULL) FROM heapprof.snapshots WHERE node_id = 0",
		// Beyond 2^53 a DOUBLE sum loses the last digit.
		"SELECT SUM(x), AVG(x) FROM (SELECT 9007199254740993 AS x UNION ALL SELECT 9007199254740993 UNION ALL SELECT 1) t",
		// Beyond BIGINT.
		"SELECT SUM(x), AVG(x) FROM (SELECT 9223372036854775807 AS x UNION ALL SELECT 9223372036854775807 UNION ALL SELECT -5) t",
		"SELECT SUM(x) FROM (SELECT -9223372036854775807 AS x UNION ALL SELECT -9223372036854775807 UNION ALL SELECT 9223372036854775807) t",
		// Rounded half away from zero, at the argument's scale + 4.
		"SELECT AVG(x) FROM (SELECT -1 AS x UNION ALL SELECT -2 UNION ALL SELECT -2) t",
		"SELECT AVG(x), SUM(x) FROM (SELECT 0.00005 AS x UNION ALL SELECT 0.00010) t",
		"SELECT SUM(total_bytes * 2), AVG(total_bytes DIV 3), SUM(node_id = 10001) FROM heapprof.snapshots",
		// Columns reading a SUM or AVG: derived tables, CTEs, HAVING,
		// arithmetic, subqueries.
		"SELECT d.s * 2, d.a / 3, d.s FROM (SELECT node_id, SUM(total_bytes) s, AVG(total_objects) a FROM heapprof.snapshots GROUP BY node_id) d ORDER BY d.node_id",
		"WITH t AS (SELECT node_kind, AVG(total_bytes) a FROM heapprof.snapshots GROUP BY node_kind) SELECT * FROM t WHERE a > 1 ORDER BY a",
		"SELECT node_id, SUM(total_bytes) FROM heapprof.snapshots GROUP BY node_id HAVING AVG(total_bytes) > 5000000 ORDER BY 2 DESC",
		"SELECT id, (SELECT SUM(flat_bytes) FROM heapprof.functions f WHERE f.snapshot_id = s.id) x FROM heapprof.snapshots s ORDER BY id",
		// Windows: partitions, the default frame with ORDER BY (to the
		// last peer), explicit frames.
		"SELECT id, SUM(total_bytes) OVER (PARTITION BY node_id ORDER BY taken_at) a, AVG(total_bytes) OVER () b FROM heapprof.snapshots ORDER BY id",
		"SELECT id, SUM(node_id) OVER (ORDER BY node_kind) c, AVG(total_objects) OVER (ORDER BY node_kind, node_id) d FROM heapprof.snapshots ORDER BY id",
		"SELECT id, SUM(total_bytes) OVER (PARTITION BY node_id ORDER BY taken_at ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) e, SUM(total_bytes) OVER w f FROM heapprof.snapshots WINDOW w AS (PARTITION BY node_kind) ORDER BY id",
		// go-mysql-server's MIN, MAX and COUNT over windows, framed as
		// MySQL frames them (windowFrames).
		"SELECT id, MAX(total_bytes) OVER (PARTITION BY node_id ORDER BY taken_at) a, MIN(total_bytes) OVER (ORDER BY taken_at) b, " +
			"COUNT(*) OVER (ORDER BY node_kind, node_id) c, COUNT(total_bytes) OVER (ORDER BY node_kind, id) d, MAX(total_bytes) OVER () e FROM heapprof.snapshots ORDER BY id",
		"SELECT id, MAX(total_bytes) OVER (ORDER BY taken_at ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) m FROM heapprof.snapshots ORDER BY id",
		// GROUP_CONCAT's ORDER BY 1 names its first argument (it was
		// not ordered); its arguments are concatenated (only the first
		// was kept: GROUP_CONCAT(name, ':', bytes) was the names).
		"SELECT node_id, GROUP_CONCAT(flat_bytes ORDER BY 1) v, GROUP_CONCAT(DISTINCT flat_pct ORDER BY 1 DESC SEPARATOR '|') w FROM heapprof.functions GROUP BY node_id ORDER BY node_id",
		"SELECT node_id, GROUP_CONCAT(name, ':', flat_bytes ORDER BY 3 DESC, 1) v FROM heapprof.functions GROUP BY node_id ORDER BY node_id",
		"SELECT GROUP_CONCAT(a, b ORDER BY 2 DESC, 1) v, GROUP_CONCAT(b, a) w FROM (SELECT 1 a, 2 b UNION ALL SELECT 3, 1 UNION ALL SELECT 5, NULL) t",
		"SELECT (SELECT GROUP_CONCAT(node_id ORDER BY 1 DESC) FROM heapprof.functions WHERE flat_bytes > 0) v",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
	// A position beyond GROUP_CONCAT's arguments is MariaDB's 1054.
	for _, q := range []string{"SELECT GROUP_CONCAT(flat_bytes ORDER BY 2) FROM heapprof.functions", "SELECT GROUP_CONCAT(flat_bytes ORDER BY 0) FROM heapprof.functions"} {
		t.Run(q, func(t *testing.T) { matchState(t, ctx, e, s, r, q) })
	}
	// Types whose numbers would be guessed are refused, naming what to
	// write; what it names answers MariaDB's number.
	for _, tt := range []struct{ query, instead string }{
		{"SELECT SUM(CAST('01:02:03' AS TIME)) FROM heapprof.snapshots", "SELECT SUM(TIME_TO_SEC(CAST('01:02:03' AS TIME))) FROM heapprof.snapshots"},
		{"SELECT AVG(TABLE_TYPE) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'heapprof'", "SELECT AVG(CAST(TABLE_TYPE AS CHAR)) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'heapprof'"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			_, err := engineAnswer(ctx, e, s, tt.query)
			var ge *Error
			if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "instead") {
				t.Fatalf("engine: %v, want ERROR 1235 saying what to write instead", err)
			}
			matchMariaDB(t, ctx, e, s, r, tt.instead, false, false)
		})
	}
}

// Text compared with, or computed as, a number is its leading number
// (numbers.go); dates compared with numbers are YYYYMMDDhhmmss.
func TestNumberContextMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	for _, q := range []string{
		"SELECT '10.0.0.1:8040' > 0, 'abc' = 0, '5x' = 5, ' 7' = 7, '1e2' = 100, '0x10' = 0, 'abc' < 1, '0.1' = 0.1, 0.1 = '0.1x'",
		"SELECT '1e3x' + 0, -'3abc', ABS('7x'), '5x' * 2, ' 12' + 0, 'abc' + 1, '7' DIV 2",
		"SELECT id, node_addr > 0, node_addr = 10, 10 = node_addr, node_addr <=> 10, node_addr <> 10, node_kind = 0, node_addr < 10.5 FROM heapprof.snapshots ORDER BY id",
		"SELECT id, node_addr BETWEEN 5 AND 20, node_addr IN (10, 3), node_addr + 0, node_addr % 3, -node_addr, node_addr / 4 FROM heapprof.snapshots ORDER BY id",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id = '10001x'",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id IN ('10001', '10002abc')",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE '1x'",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE node_kind OR node_addr",
		"SELECT id FROM heapprof.snapshots WHERE node_kind = 0 AND node_addr < 10.5 ORDER BY id",
		// The generated queries' HAVING on MIN of a text column.
		"SELECT DAYOFWEEK(taken_at) AS c1, MIN(node_addr) AS c2, COUNT(*) AS c3 FROM heapprof.snapshots GROUP BY c1 HAVING c2 > 0 ORDER BY 1",
		"SELECT s.node_id, MAX(f.name) m FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id GROUP BY s.node_id HAVING m = 0 ORDER BY 1",
		"SELECT id, taken_at = 20261120080000.123456, DATE(taken_at) = 20261120, DATE(taken_at) BETWEEN 20261120 AND 20261121, DATE(taken_at) IN (20261121) FROM heapprof.snapshots ORDER BY id",
		"SELECT id, GREATEST(node_addr, 5), LEAST('3x', 4), GREATEST('a', 'b'), LEAST(node_addr, 1.5) FROM heapprof.snapshots ORDER BY id",
		// ENUM as text (go-mysql-server panicked on information_schema's).
		"SELECT TABLE_NAME, CAST(TABLE_TYPE AS CHAR), CONCAT(TABLE_TYPE, '') FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'heapprof' ORDER BY 1",
		// Dates read as text keep all their fraction digits.
		"SELECT CONCAT(FROM_UNIXTIME(1.5), ''), LENGTH(FROM_UNIXTIME(1700000000.120)), CONCAT(FROM_UNIXTIME(1700000000.120), ''), CAST(FROM_UNIXTIME(1.50) AS CHAR), " +
			"FROM_UNIXTIME(1.5) LIKE '%.5', UPPER(DATE_ADD(taken_at, INTERVAL 0.376544 SECOND)), LEFT(DATE(taken_at), 7), CONCAT(taken_at, '#') FROM heapprof.snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
}

// Text read as a condition (IF, CASE WHEN, IS TRUE, WHERE, HAVING, ON,
// AND/OR/XOR/NOT) is its leading number, true unless 0, and text
// compared with numbers in CASE x WHEN and NULLIF is a DOUBLE, as on
// MariaDB (numbers.go); go-mysql-server took 'x1' and '1abc' alike for
// false. types: the column types are compared too (IF and CASE of
// integer literals are BIGINT here, INT on MariaDB).
func TestTextConditionsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	for _, tt := range []struct {
		query string
		types bool
	}{
		{"SELECT IF('1abc',1,0), IF('abc',1,0), IF('0.0',1,0), IF(' 2',1,0), IF('',1,0), IF('0.5x', 'a', 'b')", false},
		{"SELECT CASE WHEN 'x' THEN 1 ELSE 2 END, CASE WHEN '3x' THEN 1 ELSE 2 END, CASE WHEN '0' THEN 'a' WHEN '0.1' THEN 'b' END", false},
		{"SELECT 1 AND NOT 'abc', NOT '1x', '2' AND 1, 'a' OR 0, '1' XOR 0, 'abc' IS TRUE, '1x' IS TRUE, '0' IS FALSE", true},
		{"SELECT id, IF(node_kind, 1, 0), IF(node_addr, 'y', 'n'), CASE WHEN node_addr THEN 'a' WHEN node_kind THEN 'b' ELSE 'c' END, node_addr IS TRUE, node_kind IS NOT TRUE FROM heapprof.snapshots ORDER BY id", false},
		{"SELECT id, CASE node_addr WHEN 10 THEN 'ten' ELSE 'other' END, CASE node_kind WHEN 0 THEN 'zero' END, CASE node_id WHEN '10001x' THEN 1 ELSE 0 END FROM heapprof.snapshots ORDER BY id", false},
		{"SELECT id, NULLIF('1x', 1), NULLIF(node_addr, 10), NULLIF(node_addr, 11), NULLIF('a', 'a') FROM heapprof.snapshots ORDER BY id", false},
		{"SELECT SUM(IF(node_addr, total_bytes, 0)), COUNT(CASE WHEN node_kind THEN 1 END), COUNT(IF('7 days', 1, NULL)) FROM heapprof.snapshots", true},
		{"SELECT COUNT(*) FROM heapprof.snapshots WHERE 'abc'", true},
		{"SELECT COUNT(*) FROM heapprof.snapshots WHERE node_addr IS TRUE", true},
		{"SELECT id FROM heapprof.snapshots WHERE IF(node_addr, node_id > 10001, 0) ORDER BY id", true},
		{"SELECT id FROM heapprof.snapshots WHERE CASE WHEN '1x' THEN node_id = 10002 END ORDER BY id", true},
		{"SELECT node_id FROM heapprof.snapshots GROUP BY node_id HAVING IF(MIN(node_addr), 1, 0) AND MIN(node_kind) IS NOT TRUE ORDER BY 1", true},
		{"SELECT COUNT(*) FROM heapprof.snapshots s JOIN heapprof.functions f ON 'x'", true},
		{"SELECT COUNT(*) FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id AND IF(s.node_addr, 1, 0)", true},
	} {
		t.Run(tt.query, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, tt.query, false, tt.types) })
	}
}

// ROUND and TRUNCATE of a DOUBLE (or text, its leading number) answer a
// DOUBLE; ROUND rounds half to even; both print all d digits (0.0,
// 56.250), as MariaDB does; of a DECIMAL, d digits too (2.56700).
// Compared as text with MariaDB's command line client (the Go driver
// re-formats DOUBLE values: it prints 0 for MariaDB's 0.0).
func TestRoundDoubleMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	for _, q := range []string{
		"SELECT short_name, ROUND(flat_pct, 1), ROUND(cum_pct, 3), ROUND(flat_pct) FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.2' ORDER BY short_name",
		"SELECT short_name, ROUND(flat_pct * 0 + 56.25, 1), ROUND(cum_pct / 40, 2), ROUND(flat_pct - 2.5), ROUND(flat_pct * 1e2, -2) FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.2' ORDER BY short_name",
		"SELECT ROUND(2.5e0), ROUND(1.25e0,1), ROUND(-0.4e0), ROUND(0.04e0,1), ROUND(0.04e0, 3), ROUND('2.5'), ROUND('1.25', 1)",
		"SELECT TRUNCATE(2.5e0, 0), TRUNCATE(1.25e0,1), TRUNCATE(-0.4e0, 0), TRUNCATE(0.04e0,1), TRUNCATE(123.456e0, -1), TRUNCATE(-1.99e0, 1), TRUNCATE('1.99', 1)",
		"SELECT short_name, TRUNCATE(flat_pct, 1), TRUNCATE(cum_pct, 0), TRUNCATE(flat_pct, -1), TRUNCATE(cum_pct / 3, 4), TRUNCATE(flat_pct, node_id - 10000) FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.2' ORDER BY short_name",
		"SELECT TRUNCATE(2.567, 2), TRUNCATE(19, -1), TRUNCATE(-19, -1), TRUNCATE(-2.567, 1), TRUNCATE(2.567, 5), ROUND(2.567, 5), TRUNCATE(2.567, -1), TRUNCATE(123, 2), TRUNCATE(NULL, 1)",
		"SELECT short_name, TRUNCATE(flat_bytes, -3), TRUNCATE(flat_bytes / 1048576, 2), TRUNCATE(flat_bytes / 1048576, 0), TRUNCATE(node_id, -2) FROM heapprof.functions ORDER BY snapshot_id, short_name",
		"SELECT id, ROUND(node_addr), TRUNCATE(node_addr, 0) FROM heapprof.snapshots ORDER BY id",
	} {
		t.Run(q, func(t *testing.T) {
			got, err := engineAnswer(ctx, e, s, q)
			if err != nil {
				t.Fatal(err)
			}
			want, err := refAnswer(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("engine:\n%sMariaDB:\n%s", got, want)
			}
		})
	}
}

// HAVING with an aggregate of a joined table's column answers as on
// MariaDB (having.go works around go-mysql-server's planner), in plain
// and prepared statements.
func TestHavingOverJoinMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	const from = " FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id "
	queries := []string{
		"SELECT s.node_id AS c1, SUM(f.cum_bytes)" + from + "GROUP BY c1 HAVING MAX(f.node_id) >= 1 ORDER BY 1",
		"SELECT s.node_id AS c1, MIN(s.node_kind) AS c2, SUM(f.cum_bytes) AS c3" + from + "WHERE f.taken_at BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795248000) GROUP BY c1 HAVING MAX(f.node_id) >= 1048576",
		"SELECT s.node_id AS c1, SUM(f.cum_bytes)" + from + "GROUP BY c1 HAVING MAX(f.node_id) >= 1 AND COUNT(f.short_name) > 3 AND MAX(f.node_id) < 10003 ORDER BY 2 DESC LIMIT 1",
		"SELECT s.id, f.short_name, MAX(f.node_id)" + from + "GROUP BY s.id, f.short_name HAVING MAX(f.node_id) > 10001 ORDER BY s.id, f.short_name LIMIT 2",
		"SELECT s.node_id, SUM(f.cum_bytes), max(f.node_id)" + from + "GROUP BY s.node_id HAVING MAX(f.node_id) >= 1 ORDER BY 1",
		"SELECT s.node_id, SUM(f.cum_bytes), MAX(f.node_id) + 1" + from + "GROUP BY s.node_id HAVING MAX(f.node_id) > 1 ORDER BY 1",
		"SELECT MIN(f.cum_bytes) FROM heapprof.functions f JOIN heapprof.snapshots s ON f.snapshot_id = s.id HAVING MAX(s.node_id) >= 1",
		"SELECT s.node_kind, SUM(f.flat_bytes) t" + from + "GROUP BY s.node_kind HAVING SUM(f.flat_bytes) > (SELECT AVG(total_bytes) FROM heapprof.snapshots) ORDER BY t",
	}
	for _, q := range queries {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
	t.Run("prepared", func(t *testing.T) {
		q := "SELECT s.node_id AS c1, SUM(f.cum_bytes)" + from + "GROUP BY c1 HAVING MAX(f.node_id) >= ? ORDER BY 1"
		p, err := e.Prepare(ctx, s, q)
		if err != nil {
			t.Fatal(err)
		}
		defer e.ClosePrepared(s, p)
		if len(p.Columns) != 2 {
			t.Fatalf("prepared columns %v, want 2", p.Columns)
		}
		res, err := e.Execute(ctx, s, p, []any{int64(10002)})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Close()
		var rows []string
		for {
			row, err := res.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(row) != 2 {
				t.Fatalf("row %q, want 2 columns", row)
			}
			rows = append(rows, string(row[0])+" "+string(row[1]))
		}
		if want := []string{"10002 11534336", "10003 1"}; !slices.Equal(rows, want) {
			t.Errorf("rows %q, want %q", rows, want)
		}
	})
}

// refFields are MariaDB's column definitions for q as it sends them to a
// client in utf8mb4 (go-mysql's client: the raw type, length, decimals).
type refFields struct{ conn *client.Conn }

func newRefFields(t *testing.T) refFields {
	t.Helper()
	c, err := client.Connect(ref.socket, "bi", "bi", "heapprof", func(c *client.Conn) error {
		return c.SetCollation("utf8mb4_general_ci")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return refFields{conn: c}
}

func (r refFields) fields(q string) ([]*gomysql.Field, error) {
	res, err := r.conn.Execute(q)
	if err != nil {
		return nil, err
	}
	defer res.Close()
	return res.Fields, nil
}

// colDef is what the metadata comparisons compare.
type colDef struct {
	Type     byte
	Length   uint32
	Decimals uint8
	Charset  uint16
}

func (d colDef) String() string {
	return fmt.Sprintf("type %d length %d decimals %d charset %d", d.Type, d.Length, d.Decimals, d.Charset)
}

func engineDefs(ctx context.Context, e *Engine, s *Session, q string) ([]colDef, error) {
	r, err := e.Query(ctx, s, q)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []colDef
	for _, c := range r.Columns {
		out = append(out, colDef{c.Type, c.Length, c.Decimals, c.Charset})
	}
	return out, nil
}

func refDefs(fs []*gomysql.Field) []colDef {
	var out []colDef
	for _, f := range fs {
		out = append(out, colDef{f.Type, f.ColumnLength, f.Decimal, f.Charset})
	}
	return out
}

// Result columns carry MariaDB's type code, length, decimals and charset
// (resultmeta.go): string functions VARCHAR of the length MariaDB
// derives (TEXT/LONGTEXT beyond it, BLOB in its temporary tables),
// comparisons INT(1), integer literals INT, DATETIME(p) 19+p long.
func TestColumnMetadataMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	ref := newRefFields(t)
	const join3 = " FROM snapshots s JOIN functions f ON f.snapshot_id = s.id JOIN stacks k ON k.snapshot_id = s.id"
	for _, q := range []string{
		"SELECT UPPER(s.id), UPPER(f.name), UPPER(k.frames), LOWER(f.name), CONCAT(s.id, '#'), CONCAT(f.name, '#'), CONCAT(k.frames, '#')" + join3 + " LIMIT 1",
		"SELECT LEFT(s.id, 4), LEFT(k.frames, 4), SUBSTRING(s.id, 1, 6), SUBSTRING(k.frames, 1, 6), SUBSTRING(s.id, 3), SUBSTRING(s.id, -3), LEFT(s.id, s.node_id)" + join3 + " LIMIT 1",
		"SELECT REPLACE(s.id, ':', '_'), REPLACE(f.name, ':', '_'), REPLACE(k.frames, ':', '_'), REPLACE(s.id, '.', '--'), CONCAT(f.name, f.name, f.name, f.name)" + join3 + " LIMIT 1",
		"SELECT LPAD(s.id, 30, '*'), TRIM(s.id), CONCAT_WS('-', s.id, s.node_kind), SUBSTRING_INDEX(s.id, '.', 2), RIGHT(s.id, 3), REVERSE(s.id), IF(s.node_id > 1, s.id, s.node_kind)" + join3 + " LIMIT 1",
		"SELECT DATE_FORMAT(taken_at, '%Y-%m'), DATE_FORMAT(taken_at, '%Y-%m-%d %H:00:00'), TIME_FORMAT(taken_at, '%H:%i'), FROM_UNIXTIME(1700000000, '%Y %f'), " +
			"DATE_FORMAT(taken_at, '%M %W %D %a %b %j %U %u %V %v %x %X %y %r %T %f %w %% %p %k %e %c %l %S %s %i %h %I') FROM snapshots",
		"SELECT 'abc', 'ünï', 1, -12, 1.5, NULL, node_id = 1, node_id IN (1, 2), node_kind LIKE 'x%', NOT (node_id > 1), node_id IS NULL, CONCAT(node_id, '#'), CONCAT(taken_at, '') FROM snapshots",
		"SELECT node_id, node_id + 1, node_id * 2, node_id - 1000, node_id DIV 1024, node_id % 7, ABS(node_id - 5000000), taken_at, DATE(taken_at), YEARWEEK(taken_at), " +
			"FROM_UNIXTIME(UNIX_TIMESTAMP(taken_at) DIV 3600 * 3600), TIMESTAMPDIFF(HOUR, taken_at, '2026-11-22 00:00:00'), HOUR(taken_at), DAYOFWEEK(taken_at), LENGTH(id) FROM snapshots",
		// Functions of a date go-mysql-server types BIGINT, unsigned or
		// TEXT; CURDATE() was TEXT.
		"SELECT DATEDIFF(taken_at, '2026-01-01'), TO_DAYS(taken_at), DAYNAME(taken_at), MONTHNAME(taken_at), WEEKOFYEAR(taken_at), MICROSECOND(taken_at), " +
			"CONCAT(DAYNAME(taken_at), '#'), CURDATE(), CURRENT_DATE, UTC_DATE() FROM snapshots",
		"SELECT EXTRACT(YEAR FROM taken_at), EXTRACT(YEAR_MONTH FROM taken_at), EXTRACT(QUARTER FROM taken_at), EXTRACT(WEEK FROM taken_at), EXTRACT(DAY FROM taken_at), " +
			"EXTRACT(DAY_HOUR FROM taken_at), EXTRACT(DAY_SECOND FROM taken_at), EXTRACT(HOUR FROM taken_at), EXTRACT(MINUTE_SECOND FROM taken_at), EXTRACT(MICROSECOND FROM taken_at), " +
			"EXTRACT(DAY_MICROSECOND FROM taken_at), EXTRACT(HOUR_MICROSECOND FROM taken_at), EXTRACT(SECOND_MICROSECOND FROM taken_at), EXTRACT(DAY FROM '2026-11-20') FROM snapshots",
		"SELECT COUNT(*), SUM(total_bytes), MIN(total_bytes), MAX(node_kind), MIN(taken_at), AVG(total_bytes), COUNT(DISTINCT node_kind), SUM(taken_at), AVG(taken_at), SUM(node_addr) FROM snapshots",
		// MariaDB's temporary tables: strings over 512 characters become
		// BLOB (a GROUP BY, DISTINCT, an ORDER BY over a join); MIN/MAX of
		// a column stay that column.
		"SELECT UPPER(f.name) a, f.name b, CONCAT(s.id, '#') c, UPPER(k.frames) d" + join3 + " ORDER BY 1 LIMIT 1",
		"SELECT UPPER(f.name) a, COUNT(*), f.name FROM functions f GROUP BY 1",
		"SELECT UPPER(f.name) a, COUNT(DISTINCT f.flat_bytes) FROM functions f GROUP BY 1",
		"SELECT LEFT(f.snapshot_id, 4) AS c1, MIN(f.name) AS c2, MAX(f.name) AS c3, MIN(UPPER(f.name)) c4 FROM functions f GROUP BY c1",
		"SELECT DISTINCT CONCAT(f.name, '#'), LEFT(f.name, 3) FROM functions f",
		// ROUND and TRUNCATE: DOUBLE with d decimals, DECIMAL of d digits.
		"SELECT ROUND(2.5e0), ROUND(1.25e0,1), ROUND(0.04e0, 3), TRUNCATE(flat_pct, 1), TRUNCATE(flat_pct, node_id), TRUNCATE('1.99', 1), ROUND('2.5'), " +
			"TRUNCATE(2.567, 5), ROUND(2.567, 5), TRUNCATE(2.567, 0), TRUNCATE(flat_bytes / 1048576, 2), ROUND(flat_bytes / 1048576, 6), TRUNCATE(flat_bytes, -3) FROM functions f",
	} {
		t.Run(q, func(t *testing.T) { matchDefs(t, ctx, e, s, ref, q) })
	}
}

// A grouped result closed before its first row (a client gone before
// the rows) ends cleanly: go-mysql-server's GROUP BY iterator panics there.
func TestCloseUnread(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	for _, q := range []string{
		"SELECT node_id, COUNT(*) FROM heapprof.snapshots GROUP BY node_id",
		"SELECT COUNT(*) FROM heapprof.snapshots",
		"SELECT id FROM heapprof.snapshots",
	} {
		r, err := e.Query(ctx, s, q)
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		if err := r.Close(); err != nil {
			t.Errorf("%s: second Close: %v", q, err)
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("%s: Next after Close: %v", q, err)
		}
	}
	// The engine still answers.
	if _, err := engineAnswer(ctx, e, s, "SELECT COUNT(*) FROM heapprof.snapshots"); err != nil {
		t.Fatal(err)
	}
}

// What the engine's parser cannot run is refused with ERROR 1235 naming
// it and what to write instead; what it says to write gives the rows
// MariaDB gives the refused statement.
func TestUnsupportedSaysWhatToWrite(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	tests := []struct {
		query string
		// names are what the message must say: the construct and its
		// replacement.
		names []string
		// instead is the replacement, run on the engine in order (the
		// last statement's rows count); empty: the message only.
		instead []string
	}{
		// A rollup of *, whose columns outside the GROUP BY MariaDB
		// fills from some row of each group: the named columns.
		{"SELECT *, COUNT(*) FROM heapprof.snapshots GROUP BY node_kind WITH ROLLUP", []string{"WITH ROLLUP", "SELECT *", "name the columns"},
			nil},
		{"SELECT node_kind, COUNT(*) OVER () FROM heapprof.snapshots GROUP BY node_kind WITH ROLLUP", []string{"WITH ROLLUP", "window functions"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			want, err := refAnswer(ctx, tt.query)
			if err != nil {
				t.Fatalf("MariaDB: %v", err)
			}
			_, err = engineAnswer(ctx, e, s, tt.query)
			var ge *Error
			if !errors.As(err, &ge) || ge.Code != 1235 {
				t.Fatalf("engine: %v, want ERROR 1235", err)
			}
			for _, n := range tt.names {
				if !strings.Contains(ge.Message, n) {
					t.Errorf("message %q does not name %q", ge.Message, n)
				}
			}
			var got answer
			for _, q := range tt.instead {
				if got, err = engineAnswer(ctx, e, s, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if tt.instead != nil && !slices.EqualFunc(got.rows, want.rows, slices.Equal) {
				t.Errorf("instead: engine\n%sMariaDB\n%s", got, want)
			}
		})
	}
}

// The columns a statement planned but not analyzed shows (what Prepare
// has) are, through preparedColumns, those its execution answers.
func TestPreparedColumnsAreExecuteColumns(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	tests := []struct {
		query string
		args  []any
	}{
		{"SELECT node_id, SUM(total_bytes), AVG(total_bytes), COUNT(*) FROM heapprof.snapshots WHERE node_id > ? GROUP BY node_id", []any{int64(1)}},
		{"SELECT CONCAT(id, '#'), DATE_FORMAT(taken_at, '%Y-%m'), taken_at + INTERVAL 1.5 SECOND, node_id = ? FROM heapprof.snapshots", []any{int64(10001)}},
		{"SELECT s.node_id AS c1, SUM(f.cum_bytes) FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id GROUP BY c1 HAVING MAX(f.node_id) >= ?", []any{int64(1)}},
		{"SELECT short_name, ROUND(flat_pct, 1), UPPER(name) FROM heapprof.functions WHERE snapshot_id = ? ORDER BY 1", []any{"heap_profile.10001.2"}},
		// A UNION's joined columns (uniontypes.go), known at Prepare.
		{"SELECT node_kind, SUM(total_bytes) FROM heapprof.snapshots GROUP BY node_kind UNION ALL SELECT 'total', SUM(total_bytes) FROM heapprof.snapshots", nil},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			sctx, b := e.newContext(ctx, s, tt.query)
			defer b.release()
			stmt, err := e.parse(sctx, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			node, err := e.gms.PrepareParsedQuery(sctx, "columns test", "columns test", stmt)
			if err != nil {
				t.Fatal(err)
			}
			defer e.gms.PreparedDataCache.UncacheStmt(s.base.ID(), "columns test")
			got, err := e.preparedColumns(sctx, node)
			if err != nil {
				t.Fatal(err)
			}
			p, err := e.Prepare(ctx, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			defer e.ClosePrepared(s, p)
			res, err := e.Execute(ctx, s, p, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			// Flags aside: a ? marker's NULL-ness is known at execution.
			noFlags := func(cs []Column) []Column {
				out := slices.Clone(cs)
				for i := range out {
					out[i].Flags = 0
				}
				return out
			}
			if !slices.Equal(noFlags(got), noFlags(res.Columns)) {
				t.Errorf("prepared %v\nexecuted %v", got, res.Columns)
			}
		})
	}
}

// Decimal division keeps MariaDB's internal digits (division.go): the
// quotient shows 4 more digits than the dividend but ROUND, TRUNCATE,
// + - *, CAST, FORMAT, SUM, AVG, DIV and further divisions read its
// 9-digit words (ROUND(1000/1048576, 6) is 0.000954, not 0.001000);
// comparisons (=, <, IN of one value), text and GROUP BY keys read the
// shown value; BETWEEN, CASE x WHEN and IN of several compare every
// digit. Rows, types and column definitions as MariaDB's.
func TestDecimalDivisionMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	// types: compare the driver's column types; defs: MariaDB's column
	// definitions too (false where FORMAT's type, CONCAT's length, a
	// UNION's columns, DOUBLE functions' lengths, ABS/IF/-x, % or scalar
	// subqueries of a DECIMAL differ, apart from division).
	queries := []struct {
		query       string
		types, defs bool
	}{
		{"SELECT 1000/1048576, ROUND(1000/1048576, 6), 1000/1048576*1000, (1000/1048576)*1048576, CAST(1000/1048576 AS DECIMAL(30,20))", true, true},
		{"SELECT ROUND(1000/1048576, 10), ROUND(1000/1048576, 4), ROUND(1/3, 20), TRUNCATE(1/3, 12), ROUND(-1000/1048576, 6), TRUNCATE(1000/1048576, 7), FORMAT(1000/1048576, 6)", false, false},
		{"SELECT 1/3, 1/3*3, 1/3/3, 1/3/3*9, 1.5/3.25, (1/3)*1.000, 2/3 + 2/3, CAST(1/3 AS DECIMAL(30,20)), CAST(1.5/7 AS DECIMAL(40,30))", true, true},
		{"SELECT 1.123456789012/7, CAST(1.123456789012/7 AS DECIMAL(40,30)), 10/0.3, CAST(10/0.3 AS DECIMAL(40,30)), 1/0.333333333333, CAST(1/0.333333333333 AS DECIMAL(40,30))", true, true},
		{"SELECT (1/3 + 1)/3, (1/3 + 1)*3, 1/3 - 1/3, (1/7)/(1/7), 1/(1/3), 1.000000000001/3, 22/7/7/7/7/7/7/7", true, true},
		{"SELECT SQRT(1/3), FLOOR(1000/1048576*1000), CEIL(1000/1048576*1000), 1/3 * 1.0e0, CAST(1/3 AS DOUBLE), ABS(-1/3) * 3, -(1/3) * 3, IF(1, 1/3, 0) * 3, GREATEST(1000/1048576, 0.0009536), LEAST(1/3, 0.3333333)", true, false},
		{"SELECT short_name, flat_bytes/1048576, ROUND(flat_bytes/1048576, 6), ROUND(flat_bytes/1048576, 2), flat_bytes/1048576*1000, CAST(flat_bytes/1048576 AS DECIMAL(20,8)), FORMAT(flat_bytes/1048576, 6) FROM functions ORDER BY snapshot_id, short_name", false, false},
		{"SELECT id, total_bytes/1024/1024, ROUND(total_bytes/1024/1024, 6), ROUND(total_bytes/total_objects, 6), CAST(total_bytes/1024/1024 AS DECIMAL(30,20)), taken_at/2, ROUND(taken_at/7, 12) FROM snapshots ORDER BY id", true, true},
		// SUM and AVG add every digit; AVG divides as / does.
		{"SELECT snapshot_id, SUM(flat_bytes/3), AVG(flat_bytes/7), SUM(flat_bytes)/1048576, ROUND(SUM(flat_bytes)/1048576, 6), ROUND(SUM(flat_bytes/1048576), 6) FROM functions GROUP BY snapshot_id ORDER BY snapshot_id", true, true},
		{"SELECT SUM(x/3), AVG(x/7), SUM(x)/7, AVG(x)/7, ROUND(AVG(x), 9) FROM (SELECT 1 AS x UNION ALL SELECT 2 UNION ALL SELECT 1000) t", true, false},
		// Comparisons read the shown value.
		{"SELECT 1000/1048576 = 0.0010, 1000/1048576 = 0.000953674, 1/3 = 0.3333, 1/3 = 0.333333333, 1/3 > 0.33333, 1/3 < 0.333333334, (1/3)*3 = 1, 1/3 <=> 0.3333, 1/3 <> 0.3333", true, true},
		{"SELECT 1/3 IN (0.3333), 1/3 IN (0.333333333), 1/3 IN (0.3333, 5), 1/3 IN (0.333333333, 5), 0.3333 IN (1/3, 5), 1000/1048576 IN (0.000953674)", true, true},
		{"SELECT 1/3 BETWEEN 0.33331 AND 0.4, 0.3333 BETWEEN 1/3 AND 1, 1/100000 AND 1, IF(1/100000, 'y', 'n'), 1/3 LIKE '0.3333', CONCAT(1/3), CONCAT(1000/1048576)", true, false},
		{"SELECT flat_bytes, flat_bytes/1048576 = 0.000953674, flat_bytes/1048576 = 0.0010, flat_bytes/1048576 < 0.000953675 FROM functions WHERE flat_bytes = 1000", true, true},
		{"SELECT COUNT(*) FROM functions WHERE flat_bytes/1048576 < 0.001", true, true},
		{"SELECT id, ROUND(total_bytes/total_objects, 6) FROM snapshots WHERE total_bytes/total_objects > 104857.6 ORDER BY total_bytes/total_objects DESC, id", true, true},
		{"SELECT snapshot_id, ROUND(SUM(flat_bytes)/SUM(cum_bytes), 9) FROM functions GROUP BY snapshot_id HAVING SUM(flat_bytes)/SUM(cum_bytes) > 0.4 ORDER BY 1", true, true},
		// GROUP BY keys are the shown values; derived tables MariaDB merges
		// keep every digit, those it materializes the shown ones.
		{"SELECT flat_bytes/1048576 g, COUNT(*) FROM functions GROUP BY g ORDER BY g", true, true},
		{"SELECT a*3, CONCAT(a), a = 0.3333, ROUND(a, 9) FROM (SELECT flat_bytes/3 a FROM functions) t ORDER BY a LIMIT 3", true, false},
		{"WITH t AS (SELECT flat_bytes/3 a FROM functions WHERE flat_bytes = 1) SELECT a*3, ROUND(a, 9) FROM t", true, true},
		{"SELECT a*3, ROUND(a, 9) FROM (SELECT SUM(flat_bytes)/3 a FROM functions WHERE flat_bytes = 1) t", true, true},
		{"SELECT a*3, ROUND(a, 9) FROM (SELECT 1/3 a) t", true, true},
		{"SELECT (SELECT 1/3)*3, ROUND((SELECT flat_bytes/3 FROM functions WHERE flat_bytes = 1), 9)", true, false},
		// DIV truncates the exact quotient; % of decimals and of a DOUBLE.
		{"SELECT 7 DIV 2, -7 DIV 2, 7.5 DIV 2, -7.5 DIV 2, 0.999 DIV 1, -0.999 DIV 1, 2.995 DIV 1, 1000/1048576*1048.576 DIV 1, 1000/1048576*1000000 DIV 1, 9.9999 DIV 0.1, 10 DIV 0.3", true, true},
		{"SELECT 7.5 % 2, -7.5 % 2, 7.5 % -2, 7.25 % 0.5, MOD(10.123, 3), 10 % 3.3, 1000/1048576 % 0.0001, 7.5e0 % 2", true, false},
		{"SELECT 99999999999999999999.5 DIV 1", true, true},
		// x/0 is NULL with warning 1365.
		{"SELECT 1/0, 1.5/0, 7 DIV 0, 7.5 DIV 0, 7.5 % 0, MOD(7.5, 0)", true, true},
	}
	for _, tt := range queries {
		t.Run(tt.query, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, tt.query, false, tt.types) })
	}
	t.Run("warning 1365", func(t *testing.T) {
		for _, q := range []string{"SELECT 1000/0, 1.5/0", "SHOW WARNINGS"} {
			matchMariaDB(t, ctx, e, s, r, q, false, false)
		}
	})
	t.Run("column definitions", func(t *testing.T) {
		ref := newRefFields(t)
		for _, tt := range queries {
			q := tt.query
			if !tt.defs || strings.Contains(q, "99999999999999999999.5") {
				continue
			}
			got, err := engineDefs(ctx, e, s, q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			fs, err := ref.fields(q)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			if want := refDefs(fs); !slices.Equal(got, want) {
				t.Errorf("%s:\nengine  %v\nMariaDB %v", q, got, want)
			}
		}
	})
}

// TestGroupFunctionInWhereMatchesMariaDB: an aggregate in WHERE or ON is
// MariaDB's ERROR 1111 (HY000) Invalid use of group function (it was
// 1105 "unable to find field with index 12"); HAVING and subqueries keep
// theirs.
func TestGroupFunctionInWhereMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, q := range []string{
		"SELECT COUNT(*) FROM functions WHERE SUM(flat_bytes) > 1",
		"SELECT name FROM functions WHERE MAX(flat_pct) = 1 GROUP BY name",
		"SELECT COUNT(*) FROM functions WHERE GROUP_CONCAT(name) = 'a'",
		"SELECT COUNT(*) FROM functions a JOIN functions b ON a.node_id = b.node_id AND COUNT(*) > 1",
		"SELECT COUNT(*) FROM (SELECT node_id FROM functions WHERE SUM(flat_bytes) > 0) t",
		"SELECT COUNT(*) FROM functions WHERE flat_bytes > (SELECT AVG(flat_bytes) FROM functions)",
		"SELECT node_id FROM functions GROUP BY node_id HAVING SUM(flat_bytes) > 1 ORDER BY node_id",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			_, _, _, gerr := engineTyped(ctx, e, s, q)
			var ge *Error
			if errors.As(gerr, &ge) && (ge.State != "HY000" || ge.Message != "Invalid use of group function") {
				t.Errorf("engine: %v, want MariaDB's HY000 Invalid use of group function", gerr)
			}
		})
	}
}

// TestGroupConcatMatchesMariaDB: GROUP_CONCAT(DISTINCT ...) without ORDER
// BY comes sorted by its arguments, and its column is defined by
// group_concat_max_len (a VARCHAR up to 512 characters, a BLOB beyond),
// as on MariaDB.
func TestGroupConcatMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	ref := newRefFields(t)
	queries := []string{
		"SELECT node_id, GROUP_CONCAT(DISTINCT name), GROUP_CONCAT(DISTINCT flat_bytes SEPARATOR '|') FROM functions GROUP BY node_id ORDER BY node_id",
		"SELECT GROUP_CONCAT(DISTINCT y), GROUP_CONCAT(DISTINCT x, y), GROUP_CONCAT(DISTINCT y ORDER BY y DESC) FROM (SELECT 'b' x, 10 y UNION ALL SELECT 'a', 9 UNION ALL SELECT 'a', 100 UNION ALL SELECT 'a', 9) t",
		"SELECT GROUP_CONCAT(name), GROUP_CONCAT(flat_bytes ORDER BY 1) FROM functions",
	}
	for _, limit := range []string{"1048576", "100", "513", "20000000"} {
		set := "SET group_concat_max_len = " + limit
		if _, _, _, err := engineTyped(ctx, e, s, set); err != nil {
			t.Fatal(err)
		}
		for _, c := range []*client.Conn{r.conn, ref.conn} {
			if _, err := c.Execute(set); err != nil {
				t.Fatal(err)
			}
		}
		for _, q := range queries {
			t.Run(limit+" "+q, func(t *testing.T) {
				matchMariaDB(t, ctx, e, s, r, q, false, true)
				matchDefs(t, ctx, e, s, ref, q)
			})
		}
	}
}
