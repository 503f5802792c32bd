package sqlview

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// table is what a statement answered: column names and text rows, "NULL"
// standing for NULL (the fixture has no "NULL" strings).
type answer struct {
	cols []string
	rows [][]string
}

func (a answer) String() string {
	var b strings.Builder
	fmt.Fprintln(&b, strings.Join(a.cols, " | "))
	for _, r := range a.rows {
		fmt.Fprintln(&b, strings.Join(r, " | "))
	}
	return b.String()
}

func engineAnswer(ctx context.Context, e *Engine, s *Session, q string) (answer, error) {
	r, err := e.Query(ctx, s, q)
	if err != nil {
		return answer{}, err
	}
	defer r.Close()
	var a answer
	for _, c := range r.Columns {
		a.cols = append(a.cols, c.Name)
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			return a, r.Close()
		}
		if err != nil {
			return answer{}, err
		}
		var vals []string
		for _, v := range row {
			if v == nil {
				vals = append(vals, "NULL")
			} else {
				vals = append(vals, cliEscape.Replace(string(v)))
			}
		}
		a.rows = append(a.rows, vals)
	}
}

// refAnswer asks MariaDB through its own command line client in batch mode
// (the driver would re-format DOUBLE text). Batch mode escapes tab,
// newline, backslash and NUL in values; cliEscape does the same to the
// engine's answer.
func refAnswer(ctx context.Context, q string) (answer, error) {
	out, err := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-ubi", "-pbi", "-S", ref.socket,
		"--default-character-set=utf8mb4", "-B", "-e", q, "heapprof").CombinedOutput()
	if err != nil {
		return answer{}, fmt.Errorf("%v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var a answer
	if len(out) == 0 {
		return a, nil
	}
	a.cols = strings.Split(lines[0], "\t")
	for _, l := range lines[1:] {
		a.rows = append(a.rows, strings.Split(l, "\t"))
	}
	return a, nil
}

var cliEscape = strings.NewReplacer("\\", "\\\\", "\t", "\\t", "\n", "\\n", "\x00", "\\0")

// newFixtureEngine is newTestEngine over fixture(), its session in the
// heapprof database.
func newFixtureEngine(t testing.TB) (*Engine, *Session) {
	t.Helper()
	e, s := newTestEngine(t, fixture())
	if _, err := e.Query(context.Background(), s, "USE heapprof"); err != nil {
		t.Fatal(err)
	}
	return e, s
}

func newTestEngine(t testing.TB, src Source) (*Engine, *Session) {
	t.Helper()
	e, err := New(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.NewSession(context.Background(), "bi", "127.0.0.1:50000", 7)
	if err != nil {
		t.Fatal(err)
	}
	return e, s
}

// intWidth drops MariaDB's display widths (bigint(20)); MySQL 8 and
// go-mysql-server print none.
var intWidth = regexp.MustCompile(`(?i)\b(bigint|int|smallint|tinyint)\(\d+\)`)

// Statements real clients send, each answered by the engine and by MariaDB
// holding the same rows; the answers must be equal. Captured verbatim with
// MariaDB's general log: Connector/J 2.7.6 (Debian libmariadb-java) on
// connect and in DatabaseMetaData getCatalogs/getSchemas/getTables/
// getColumns; Grafana's MySQL data source macros expanded as Grafana does.
func TestQueriesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	tests := []struct {
		name  string
		query string
		// unordered compares row sets: the query has no ORDER BY.
		unordered bool
		// subset: MariaDB has more (its own schemas); the engine's rows
		// must all be among them.
		subset bool
		// shape: values are server settings; compare columns only.
		shape bool
	}{
		{name: "connectorj connect set", query: "set autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')"},
		{name: "connectorj connect vars", query: "SELECT @@max_allowed_packet,@@system_time_zone,@@time_zone,@@auto_increment_increment", shape: true},
		{name: "pymysql connect", query: "SET AUTOCOMMIT = 0"},
		{name: "database", query: "SELECT DATABASE()"},
		{name: "comment only", query: "-- nothing"},
		{name: "connectorj getCatalogs", query: "SELECT SCHEMA_NAME TABLE_CAT FROM INFORMATION_SCHEMA.SCHEMATA ORDER BY 1"},
		{name: "connectorj getSchemas", query: "SELECT '' TABLE_SCHEM, '' TABLE_catalog  FROM DUAL WHERE 1=0"},
		{name: "connectorj getTables", query: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, IF(TABLE_TYPE='BASE TABLE' or TABLE_TYPE='SYSTEM VERSIONED', 'TABLE', TABLE_TYPE) as TABLE_TYPE, TABLE_COMMENT REMARKS, NULL TYPE_CAT, NULL TYPE_SCHEM, NULL TYPE_NAME, NULL SELF_REFERENCING_COL_NAME, NULL REF_GENERATION FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA='heapprof' ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME"},
		{name: "connectorj getTables types", query: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, IF(TABLE_TYPE='BASE TABLE' or TABLE_TYPE='SYSTEM VERSIONED', 'TABLE', TABLE_TYPE) as TABLE_TYPE, TABLE_COMMENT REMARKS, NULL TYPE_CAT, NULL TYPE_SCHEM, NULL TYPE_NAME, NULL SELF_REFERENCING_COL_NAME, NULL REF_GENERATION FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA='heapprof' AND  TABLE_TYPE IN ('BASE TABLE','SYSTEM VERSIONED','VIEW') ORDER BY TABLE_TYPE, TABLE_SCHEMA, TABLE_NAME"},
		{name: "connectorj getColumns", query: getColumnsQuery("TABLE_SCHEMA='heapprof' AND TABLE_NAME='snapshots'")},
		{name: "connectorj getColumns pattern", query: getColumnsQuery("TABLE_SCHEMA = database() AND TABLE_NAME LIKE 'snap%'")},
		// TEXT's and LONGTEXT's CHARACTER_MAXIMUM_LENGTH in bytes (65535,
		// 4294967295), as MariaDB gives them (infoschema.go): COLUMN_SIZE of
		// functions.name and stacks.frames.
		{name: "connectorj getColumns functions", query: getColumnsQuery("TABLE_SCHEMA='heapprof' AND TABLE_NAME='functions'")},
		{name: "connectorj getColumns stacks", query: getColumnsQuery("TABLE_SCHEMA='heapprof' AND TABLE_NAME='stacks'")},
		{name: "connectorj getPrimaryKeys", query: "SELECT A.TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, A.TABLE_NAME, A.COLUMN_NAME, B.SEQ_IN_INDEX KEY_SEQ, B.INDEX_NAME PK_NAME  FROM INFORMATION_SCHEMA.COLUMNS A, INFORMATION_SCHEMA.STATISTICS B WHERE A.COLUMN_KEY in ('PRI','pri') AND B.INDEX_NAME='PRIMARY'  AND A.TABLE_SCHEMA='heapprof' AND B.TABLE_SCHEMA='heapprof' AND A.TABLE_NAME='snapshots' AND B.TABLE_NAME='snapshots' AND A.TABLE_SCHEMA = B.TABLE_SCHEMA AND A.TABLE_NAME = B.TABLE_NAME AND A.COLUMN_NAME = B.COLUMN_NAME ORDER BY A.COLUMN_NAME"},
		{name: "connectorj time range", query: "SELECT taken_at AS time, node_id, COUNT(*) FROM heapprof.snapshots WHERE taken_at BETWEEN '2026-11-20 08:00:00' AND '2026-11-20 20:00:00' GROUP BY taken_at, node_id ORDER BY taken_at"},
		{name: "show databases", query: "SHOW DATABASES"},
		{name: "double text", query: "SELECT CAST(9437184 AS DOUBLE), CAST(1e15 AS DOUBLE), CAST(1e14 AS DOUBLE), CAST(123456789012345678 AS DOUBLE), 1/3e0, CAST(0.00001 AS DOUBLE), CAST(1e-15 AS DOUBLE), CAST(1.5e-16 AS DOUBLE), CAST(-2.5e20 AS DOUBLE), CAST(0.1 AS DOUBLE)+CAST(0.2 AS DOUBLE), CAST(0 AS DOUBLE)"},
		{name: "show tables from", query: "SHOW TABLES FROM heapprof"},
		{name: "show tables", query: "SHOW TABLES"},
		{name: "show full tables", query: "SHOW FULL TABLES FROM heapprof"},
		{name: "show columns like", query: "SHOW COLUMNS FROM diffs LIKE '%delta'"},
		// The primary key's NON_UNIQUE is 0, as declared to clients (the
		// planner is told otherwise: index.go, infoschema.go).
		{name: "statistics", query: "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, NON_UNIQUE, SEQ_IN_INDEX FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'heapprof' AND INDEX_NAME <> 'PRIMARY' ORDER BY 1, 2"},
		{name: "statistics primary", query: "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX, NON_UNIQUE FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'heapprof' AND INDEX_NAME = 'PRIMARY'"},
		{name: "key column usage", query: "SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'heapprof' ORDER BY 1, 2"},
		{name: "referential constraints", query: "SELECT CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME, UNIQUE_CONSTRAINT_NAME, UPDATE_RULE, DELETE_RULE FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'heapprof' ORDER BY 1"},
		{name: "describe snapshots", query: "DESCRIBE heapprof.snapshots"},
		{name: "describe functions", query: "DESCRIBE functions"},
		{name: "describe diffs", query: "DESCRIBE diffs"},
		{name: "select all snapshots", query: "SELECT * FROM snapshots ORDER BY taken_at, id"},
		{name: "select all functions", query: "SELECT * FROM functions", unordered: true},
		{name: "select all stacks", query: "SELECT * FROM stacks", unordered: true},
		{name: "select all diffs", query: "SELECT * FROM diffs", unordered: true},
		{name: "grafana time series", query: "SELECT UNIX_TIMESTAMP(taken_at) DIV 60 * 60 AS \"time\", CONCAT('node ', node_id) AS metric, total_bytes AS value FROM heapprof.snapshots WHERE taken_at BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795248000) ORDER BY 1, 2"},
		{name: "grafana time series grouped", query: "SELECT UNIX_TIMESTAMP(taken_at) DIV 3600 * 3600 AS \"time\", node_id, MAX(total_bytes) AS value FROM heapprof.snapshots WHERE taken_at BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795334400) GROUP BY 1, 2 ORDER BY 1, 2"},
		{name: "top functions of latest snapshot", query: "SELECT f.name, f.flat_bytes, f.cum_bytes FROM functions f JOIN (SELECT node_id, MAX(taken_at) AS t FROM snapshots GROUP BY node_id) l ON f.node_id = l.node_id AND f.taken_at = l.t WHERE f.node_id = 10001 ORDER BY f.flat_bytes DESC, f.name LIMIT 2"},
		{name: "top growing since", query: "SELECT name, SUM(flat_bytes_delta) AS growth, COUNT(*) AS steps FROM diffs WHERE node_id = 10001 AND to_taken_at >= '2026-11-20 10:00:00' GROUP BY name HAVING SUM(flat_bytes_delta) > 0 ORDER BY growth DESC, name"},
		{name: "growing in every step", query: "SELECT node_id, name, MIN(flat_bytes_delta) AS min_step FROM diffs GROUP BY node_id, name HAVING MIN(flat_bytes_delta) > 0 ORDER BY node_id, name"},
		{name: "join snapshots functions", query: "SELECT s.node_kind, s.node_addr, f.name, f.cum_bytes FROM snapshots s JOIN functions f ON f.snapshot_id = s.id WHERE s.node_kind = 'doris' ORDER BY s.taken_at, f.name"},
		{name: "left join stacks", query: "SELECT s.id, COUNT(st.stack_id) AS n, COALESCE(SUM(st.bytes), 0) AS b FROM snapshots s LEFT JOIN stacks st ON st.snapshot_id = s.id GROUP BY s.id ORDER BY s.id"},
		{name: "limit offset", query: "SELECT id FROM snapshots ORDER BY taken_at DESC, id LIMIT 2 OFFSET 1"},
		{name: "like and in", query: "SELECT DISTINCT name FROM functions WHERE name LIKE 'doris::%' OR node_id IN (10003) ORDER BY name"},
		{name: "time functions", query: "SELECT id, DATE(taken_at), HOUR(taken_at), DATE_FORMAT(taken_at, '%Y-%m-%d %H:%i'), TIMESTAMPDIFF(HOUR, '2026-11-20 00:00:00', taken_at) FROM snapshots ORDER BY id"},
		{name: "quoted names", query: "SELECT snapshot_id, frames FROM stacks WHERE frames = 'doris::Agg''s \"hash\" table' ORDER BY snapshot_id"},
		{name: "snapshot_id point", query: "SELECT name, flat_bytes FROM functions WHERE snapshot_id = 'heap_profile.10001.2' ORDER BY flat_bytes DESC, name"},
		{name: "snapshot_id in", query: "SELECT snapshot_id, stack_id, bytes FROM stacks WHERE snapshot_id IN ('heap_profile.10002.1', 'heap_profile.10003.0', 'nope') ORDER BY 1, 2"},
		{name: "snapshot_id range", query: "SELECT snapshot_id, COUNT(*) FROM functions WHERE snapshot_id > 'heap_profile.10001.2' GROUP BY snapshot_id ORDER BY 1"},
		{name: "snapshot_id or other", query: "SELECT snapshot_id, name FROM functions WHERE snapshot_id = 'heap_profile.10002.0' OR name = 'main' ORDER BY 1, 2"},
		// The README's examples, NOW() replaced by a time inside the fixture.
		{name: "readme grafana", query: "SELECT taken_at AS time, CONCAT('node ', node_id) AS metric, total_bytes AS value FROM heapprof.snapshots WHERE taken_at BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795291200) ORDER BY taken_at"},
		{name: "readme top growing", query: "SELECT name, SUM(flat_bytes_delta) AS grown_bytes, SUM(flat_objects_delta) AS grown_objects, COUNT(*) AS steps, MIN(flat_bytes_delta) > 0 AS grew_every_step FROM heapprof.diffs WHERE node_id = 10001 AND to_taken_at >= TIMESTAMP('2026-11-21 08:00:00') - INTERVAL 1 DAY GROUP BY name ORDER BY grown_bytes DESC, name LIMIT 20"},
		{name: "readme first vs latest", query: "SELECT l.name, l.flat_bytes - COALESCE(f.flat_bytes, 0) AS grown_bytes FROM heapprof.functions l LEFT JOIN heapprof.functions f ON f.name = l.name AND f.snapshot_id = (SELECT id FROM heapprof.snapshots WHERE node_id = 10001 AND taken_at >= TIMESTAMP('2026-11-20 12:00:00') - INTERVAL 1 DAY ORDER BY taken_at LIMIT 1) WHERE l.snapshot_id = (SELECT id FROM heapprof.snapshots WHERE node_id = 10001 ORDER BY taken_at DESC LIMIT 1) ORDER BY grown_bytes DESC, l.name LIMIT 20"},
		{name: "readme latest top", query: "SELECT name, flat_bytes, ROUND(flat_pct, 1) AS pct, cum_bytes FROM heapprof.functions WHERE snapshot_id = (SELECT id FROM heapprof.snapshots WHERE node_id = 10001 ORDER BY taken_at DESC LIMIT 1) ORDER BY flat_bytes DESC, name LIMIT 20"},
		{name: "node_id point", query: "SELECT snapshot_id, name, cum_bytes FROM functions WHERE node_id = 10002 ORDER BY 1, 2"},
		{name: "node_id in on diffs", query: "SELECT node_id, name, to_snapshot_id, cum_bytes_delta FROM diffs WHERE node_id IN (10002, 10003, 99) ORDER BY 1, 2, 3"},
		{name: "node_id and snapshot_id", query: "SELECT stack_id, frames FROM stacks WHERE node_id = 10001 AND snapshot_id = 'heap_profile.10001.1' ORDER BY 1"},
		{name: "node_id string literal", query: "SELECT COUNT(*) FROM functions WHERE node_id = '10001'"},
		// The REGEXP functions run heapprof/sqlview/goregex (see go.mod's replace).
		{name: "regexp", query: "SELECT DISTINCT name, REGEXP_REPLACE(name, ':{2}.*', '') AS ns FROM functions WHERE name REGEXP ':{2}' ORDER BY name"},
		// MariaDB answers a REGEXP_SUBSTR without a match with '', MySQL 8 and the engine with NULL.
		{name: "regexp instr substr", query: "SELECT DISTINCT name, REGEXP_INSTR(name, '::'), COALESCE(REGEXP_SUBSTR(name, '[A-Za-z_]+$'), '') AS last_word, REGEXP_REPLACE(name, '[a-z]+::', '') FROM functions ORDER BY name"},
		{name: "regexp anchors", query: "SELECT DISTINCT name FROM functions WHERE name REGEXP '^[a-z_]+$' OR name REGEXP '[(]' ORDER BY name"},
		{name: "count per table", query: "SELECT (SELECT COUNT(*) FROM snapshots), (SELECT COUNT(*) FROM functions), (SELECT COUNT(*) FROM stacks), (SELECT COUNT(*) FROM diffs)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := engineAnswer(ctx, e, s, tt.query)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			want, err := refAnswer(ctx, tt.query)
			if err != nil {
				t.Fatalf("MariaDB: %v", err)
			}
			if want.cols == nil && len(got.rows) == 0 {
				return // batch mode prints nothing, not even names, for no rows
			}
			if !slices.Equal(got.cols, want.cols) {
				t.Fatalf("columns: engine %q, MariaDB %q", got.cols, want.cols)
			}
			if tt.shape {
				if len(got.rows) != len(want.rows) {
					t.Fatalf("engine %d rows, MariaDB %d", len(got.rows), len(want.rows))
				}
				return
			}
			for _, a := range []*answer{&got, &want} {
				for _, r := range a.rows {
					for i := range r {
						r[i] = intWidth.ReplaceAllString(r[i], "$1")
					}
				}
				if tt.unordered || tt.subset {
					slices.SortFunc(a.rows, func(x, y []string) int { return slices.Compare(x, y) })
				}
			}
			if tt.subset {
				for _, r := range got.rows {
					if !slices.ContainsFunc(want.rows, func(w []string) bool { return slices.Equal(w, r) }) {
						t.Errorf("engine row %q not in MariaDB's answer:\n%v", r, want)
					}
				}
				return
			}
			if got.String() != want.String() {
				t.Errorf("engine:\n%v\nMariaDB:\n%v", got, want)
			}
		})
	}
}

// getColumnsQuery is Connector/J 2.7.6's DatabaseMetaData.getColumns text
// around its WHERE condition.
func getColumnsQuery(where string) string {
	return "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, COLUMN_NAME, CASE data_type WHEN 'bit' THEN -7 WHEN 'tinyblob' THEN -3 WHEN 'mediumblob' THEN -4 WHEN 'longblob' THEN -4 WHEN 'blob' THEN -4 WHEN 'tinytext' THEN 12 WHEN 'mediumtext' THEN -1 WHEN 'longtext' THEN -1 WHEN 'text' THEN -1 WHEN 'date' THEN 91 WHEN 'datetime' THEN 93 WHEN 'decimal' THEN 3 WHEN 'double' THEN 8 WHEN 'enum' THEN 12 WHEN 'float' THEN 7 WHEN 'int' THEN IF( COLUMN_TYPE like '%unsigned%', 4,4) WHEN 'bigint' THEN -5 WHEN 'mediumint' THEN 4 WHEN 'null' THEN 0 WHEN 'set' THEN 12 WHEN 'smallint' THEN IF( COLUMN_TYPE like '%unsigned%', 5,5) WHEN 'varchar' THEN 12 WHEN 'varbinary' THEN -3 WHEN 'char' THEN 1 WHEN 'binary' THEN -2 WHEN 'time' THEN 92 WHEN 'timestamp' THEN 93 WHEN 'tinyint' THEN IF(COLUMN_TYPE like 'tinyint(1)%',-7,-6)  WHEN 'year' THEN 91 ELSE 1111 END  DATA_TYPE, IF(COLUMN_TYPE like 'tinyint(1)%', 'BIT',  UCASE(IF( COLUMN_TYPE LIKE '%(%)%', CONCAT(SUBSTRING( COLUMN_TYPE,1, LOCATE('(',COLUMN_TYPE) - 1 ), SUBSTRING(COLUMN_TYPE ,1+locate(')', COLUMN_TYPE))), COLUMN_TYPE))) TYPE_NAME,  CASE DATA_TYPE  WHEN 'time' THEN IF(DATETIME_PRECISION = 0, 10, CAST(11 + DATETIME_PRECISION as signed integer))  WHEN 'date' THEN 10  WHEN 'datetime' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION as signed integer))  WHEN 'timestamp' THEN IF(DATETIME_PRECISION = 0, 19, CAST(20 + DATETIME_PRECISION as signed integer))  ELSE   IF(NUMERIC_PRECISION IS NULL, LEAST(CHARACTER_MAXIMUM_LENGTH,2147483647), NUMERIC_PRECISION)  END COLUMN_SIZE, 65535 BUFFER_LENGTH,  CONVERT (CASE DATA_TYPE WHEN 'year' THEN NUMERIC_SCALE WHEN 'tinyint' THEN 0 ELSE NUMERIC_SCALE END, UNSIGNED INTEGER) DECIMAL_DIGITS, 10 NUM_PREC_RADIX, IF(IS_NULLABLE = 'yes',1,0) NULLABLE,COLUMN_COMMENT REMARKS, COLUMN_DEFAULT COLUMN_DEF, 0 SQL_DATA_TYPE, 0 SQL_DATETIME_SUB,   LEAST(CHARACTER_OCTET_LENGTH,2147483647) CHAR_OCTET_LENGTH, ORDINAL_POSITION, IS_NULLABLE, NULL SCOPE_CATALOG, NULL SCOPE_SCHEMA, NULL SCOPE_TABLE, NULL SOURCE_DATA_TYPE, IF(EXTRA = 'auto_increment','YES','NO') IS_AUTOINCREMENT,  IF(EXTRA in ('VIRTUAL', 'PERSISTENT', 'VIRTUAL GENERATED', 'STORED GENERATED') ,'YES','NO') IS_GENERATEDCOLUMN  FROM INFORMATION_SCHEMA.COLUMNS  WHERE " + where + " ORDER BY TABLE_CAT, TABLE_SCHEM, TABLE_NAME, ORDINAL_POSITION"
}

// Errors carry the code and SQLSTATE MariaDB answers for the same statement
// (read-only statements: MariaDB started read_only answers 1290).
func TestErrorsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	root, err := gosql.Open("mysql", "root@unix("+ref.socket+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	tests := []struct {
		name, query string
		// asRoot: bi would get 1044 (no grant on the database) before
		// MariaDB looks the database up.
		asRoot bool
	}{
		{"no such table", "SELECT * FROM heapprof.nope", false},
		{"syntax", "SELEKT 1", false},
		{"unknown column", "SELECT nope FROM heapprof.snapshots", false},
		{"unknown database", "USE nope", true},
		{"insert", "INSERT INTO heapprof.snapshots (id) VALUES ('x')", false},
		{"update", "UPDATE heapprof.functions SET flat_bytes = 0", false},
		{"delete", "DELETE FROM heapprof.stacks", false},
		{"create table", "CREATE TABLE heapprof.t (a INT)", false},
		{"create database", "CREATE DATABASE x", false},
		{"drop table", "DROP TABLE heapprof.snapshots", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, gotErr := engineAnswer(ctx, e, s, tt.query)
			db := ref.db
			if tt.asRoot {
				db = root
			}
			_, wantErr := db.ExecContext(ctx, tt.query)
			var want *mysql.MySQLError
			if !errors.As(wantErr, &want) {
				t.Fatalf("MariaDB answered %v, want a MySQL error", wantErr)
			}
			var got *Error
			if !errors.As(gotErr, &got) {
				t.Fatalf("engine answered %v, want an *Error (MariaDB: %v)", gotErr, want)
			}
			if got.Code != want.Number || got.State != string(want.SQLState[:]) {
				t.Errorf("engine %d (%s) %q, MariaDB %d (%s) %q", got.Code, got.State, got.Message, want.Number, want.SQLState, want.Message)
			}
		})
	}
}

// bothColumns runs q on the engine and on MariaDB and returns the engine's
// result (closed: only its columns are read) and MariaDB's column types.
func bothColumns(t *testing.T, ctx context.Context, e *Engine, s *Session, q string) (*Result, []*gosql.ColumnType) {
	t.Helper()
	r, err := e.Query(ctx, s, q)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	rows, err := ref.db.QueryContext(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	return r, cts
}

// Column types the engine announces are those MariaDB announces for the
// same tables, as the Go driver names them (it maps the protocol type code
// and charset the same way for both).
func TestColumnTypesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	for _, name := range []string{TableSnapshots, TableFunctions, TableStacks, TableDiffs} {
		t.Run(name, func(t *testing.T) {
			q := "SELECT * FROM heapprof." + name + " LIMIT 1"
			r, cts := bothColumns(t, ctx, e, s, q)
			if len(cts) != len(r.Columns) {
				t.Fatalf("engine %d columns, MariaDB %d", len(r.Columns), len(cts))
			}
			for i, c := range r.Columns {
				if got, want := driverTypeName(c), cts[i].DatabaseTypeName(); got != want {
					t.Errorf("%s: engine type %d (%s), MariaDB %s", c.Name, c.Type, got, want)
				}
				if c.Table != name || c.Database != SchemaName {
					t.Errorf("%s: table %s.%s, want %s.%s", c.Name, c.Database, c.Table, SchemaName, name)
				}
			}
		})
	}
}

// driverTypeName names a column as go-sql-driver/mysql's
// mysqlField.typeDatabaseName (v1.10.1, fields.go) does.
func driverTypeName(c Column) string {
	unsigned := ""
	if c.Flags&32 != 0 {
		unsigned = "UNSIGNED "
	}
	text := c.Charset != 63
	pick := func(textName, binaryName string) string {
		if text {
			return textName
		}
		return binaryName
	}
	switch c.Type {
	case 0, 246:
		return "DECIMAL"
	case 1:
		return unsigned + "TINYINT"
	case 2:
		return unsigned + "SMALLINT"
	case 3:
		return unsigned + "INT"
	case 4:
		return "FLOAT"
	case 5:
		return "DOUBLE"
	case 6:
		return "NULL"
	case 7:
		return "TIMESTAMP"
	case 8:
		return unsigned + "BIGINT"
	case 9:
		return unsigned + "MEDIUMINT"
	case 10, 14:
		return "DATE"
	case 11:
		return "TIME"
	case 12:
		return "DATETIME"
	case 13:
		return "YEAR"
	case 15, 253:
		return pick("VARCHAR", "VARBINARY")
	case 16:
		return "BIT"
	case 245:
		return "JSON"
	case 247:
		return "ENUM"
	case 248:
		return "SET"
	case 249:
		return pick("TINYTEXT", "TINYBLOB")
	case 250:
		return pick("MEDIUMTEXT", "MEDIUMBLOB")
	case 251:
		return pick("LONGTEXT", "LONGBLOB")
	case 252:
		return pick("TEXT", "BLOB")
	case 254:
		switch {
		case c.Flags&256 != 0:
			return "ENUM"
		case c.Flags&2048 != 0:
			return "SET"
		}
		return pick("CHAR", "BINARY")
	case 255:
		return "GEOMETRY"
	}
	return ""
}

func TestNullAndEmpty(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	r, err := e.Query(context.Background(), s, "SELECT NULL, '', 'x'")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	row, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if row[0] != nil || row[1] == nil || len(row[1]) != 0 || string(row[2]) != "x" {
		t.Errorf("row %q: want NULL (nil), empty (non-nil), x", row)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the last row: %v, want io.EOF", err)
	}
}

func TestSessionDatabase(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	if got := s.Database(); got != "" {
		t.Errorf("new session database %q, want none", got)
	}
	r, err := e.Query(ctx, s, "USE heapprof")
	if err != nil {
		t.Fatal(err)
	}
	if r.Columns != nil {
		t.Errorf("USE answered columns %v, want an OK", r.Columns)
	}
	if got := s.Database(); got != "heapprof" {
		t.Errorf("after USE: %q", got)
	}
	// Another session is not affected.
	s2, err := e.NewSession(ctx, "other", "127.0.0.1:2", 8)
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.Database(); got != "" {
		t.Errorf("second session database %q, want none", got)
	}
	var me *Error
	if err := e.SetDatabase(ctx, s2, "nope"); !errors.As(err, &me) || me.Code != 1049 {
		t.Errorf("SetDatabase(nope) = %v, want error 1049", err)
	}
	if err := e.SetDatabase(ctx, s2, "information_schema"); err != nil || s2.Database() != "information_schema" {
		t.Errorf("SetDatabase(information_schema) = %v, database %q", err, s2.Database())
	}
	a, err := engineAnswer(ctx, e, s2, "SELECT DATABASE(), @@version_comment, @@time_zone, USER(), CONNECTION_ID()")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"information_schema", VersionComment, "+00:00", "other@127.0.0.1", "8"}; !slices.Equal(a.rows[0], want) {
		t.Errorf("got %q, want %q", a.rows[0], want)
	}
}

// failingSource fails the way a store on a full or broken disk would.
type failingSource struct{ *memSource }

var errDisk = errors.New("read /var/lib/heapproxy/store: input/output error")

func (failingSource) Functions(context.Context, string) ([]snapshot.Function, error) {
	return nil, errDisk
}

func TestSourceErrors(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, failingSource{fixture()})
	if _, err := engineAnswer(ctx, e, s, "SELECT COUNT(*) FROM heapprof.snapshots"); err != nil {
		t.Errorf("snapshots do not read functions: %v", err)
	}
	for _, q := range []string{"SELECT * FROM heapprof.functions", "SELECT SUM(flat_bytes_delta) FROM heapprof.diffs"} {
		_, err := engineAnswer(ctx, e, s, q)
		var me *Error
		if !errors.As(err, &me) || !strings.Contains(me.Message, errDisk.Error()) {
			t.Errorf("%s: %v, want an *Error naming %q", q, err, errDisk)
		}
	}
}

// droppingStore is a real snapshot store whose first listing is followed
// by a dump that retention makes room for: the oldest listed snapshot is
// gone before the statement reads its rows, as when a scheduled dump lands
// during a long query.
type droppingStore struct {
	*snapshot.Memory
	once sync.Once
	save func(context.Context) error
}

func (d *droppingStore) List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error) {
	l, err := d.Memory.List(ctx, f)
	if err != nil {
		return nil, err
	}
	d.once.Do(func() { err = d.save(ctx) })
	return l, err
}

// A snapshot retention drops between the statement's listing and the
// reading of its rows has no rows, and the statement no error.
func TestRetentionDuringStatement(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)
	snap := func(id string, minutes int) *snapshot.Snapshot {
		return &snapshot.Snapshot{ID: id, NodeID: 1, NodeKind: "go", NodeAddr: "10.0.0.1:6060",
			TakenAt: base.Add(time.Duration(minutes) * time.Minute), Format: "pprof", TotalBytes: 300}
	}
	rows := func(short string, bytes int64) ([]snapshot.Function, []snapshot.Stack) {
		return []snapshot.Function{{Name: "full " + short + "(int)", ShortName: short, FlatBytes: bytes, CumBytes: bytes}},
			[]snapshot.Stack{{StackID: 1, Frames: "main;" + short, Depth: 2, Bytes: bytes}}
	}
	tests := []struct {
		name, query string
		want        [][]string
	}{
		{"snapshots as listed", "SELECT id FROM heapprof.snapshots ORDER BY id",
			[][]string{{"heap_profile.1.a"}, {"heap_profile.1.b"}}},
		{"functions", "SELECT snapshot_id, short_name, flat_bytes FROM heapprof.functions ORDER BY snapshot_id",
			[][]string{{"heap_profile.1.b", "grow", "200"}}},
		{"functions lookup", "SELECT short_name FROM heapprof.functions WHERE snapshot_id = 'heap_profile.1.a'", nil},
		{"stacks", "SELECT snapshot_id, frames FROM heapprof.stacks ORDER BY snapshot_id",
			[][]string{{"heap_profile.1.b", "main;grow"}}},
		{"diffs", "SELECT from_snapshot_id, to_snapshot_id, short_name, flat_bytes_before, flat_bytes_after FROM heapprof.diffs",
			[][]string{{"heap_profile.1.a", "heap_profile.1.b", "grow", "0", "200"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := &droppingStore{Memory: snapshot.NewMemory(snapshot.Retention{PerNode: 2})}
			for i, id := range []string{"heap_profile.1.a", "heap_profile.1.b"} {
				fns, stacks := rows("grow", int64(100*(i+1)))
				if err := st.Save(ctx, snap(id, i), fns, stacks); err != nil {
					t.Fatal(err)
				}
			}
			st.save = func(ctx context.Context) error {
				fns, stacks := rows("grow", 300)
				return st.Save(ctx, snap("heap_profile.1.c", 2), fns, stacks)
			}
			e, s := newTestEngine(t, st)
			a, err := engineAnswer(ctx, e, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Functions(ctx, "heap_profile.1.a"); err == nil {
				t.Fatal("retention kept heap_profile.1.a: the test raced nothing")
			}
			if !slices.EqualFunc(a.rows, tt.want, slices.Equal) {
				t.Errorf("got %q, want %q", a.rows, tt.want)
			}
		})
	}
}

func TestCanceled(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := engineAnswer(ctx, e, s, "SELECT * FROM heapprof.functions")
	var me *Error
	if !errors.As(err, &me) || me.Code != 1317 {
		t.Errorf("canceled query: %v, want error 1317", err)
	}
}

func TestNewNilSource(t *testing.T) {
	if _, err := New(nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// countingSource records which snapshots' functions and stacks were read.
type countingSource struct {
	*memSource
	mu   sync.Mutex
	read []string
}

func (c *countingSource) note(s string) {
	c.mu.Lock()
	c.read = append(c.read, s)
	c.mu.Unlock()
}

func (c *countingSource) List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error) {
	c.note("snapshots")
	return c.memSource.List(ctx, f)
}

func (c *countingSource) Functions(ctx context.Context, id string) ([]snapshot.Function, error) {
	c.note("functions " + id)
	return c.memSource.Functions(ctx, id)
}

func (c *countingSource) Stacks(ctx context.Context, id string) ([]snapshot.Stack, error) {
	c.note("stacks " + id)
	return c.memSource.Stacks(ctx, id)
}

// A query naming snapshots reads only those from the Source (the rows
// themselves are checked against MariaDB in TestQueriesMatchMariaDB).
func TestIndexReadsOnlyNamedSnapshots(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		query string
		want  []string
	}{
		{"SELECT * FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.2'", []string{"functions heap_profile.10001.2", "snapshots"}},
		{"SELECT * FROM heapprof.stacks WHERE snapshot_id IN ('heap_profile.10003.0', 'heap_profile.10002.1', 'nope')",
			[]string{"snapshots", "stacks heap_profile.10002.1", "stacks heap_profile.10003.0"}},
		// The join looks functions up once per doris snapshot; the
		// listing is still read once per statement.
		{"SELECT f.name FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id WHERE s.node_kind = 'doris'",
			[]string{"functions heap_profile.10002.0", "functions heap_profile.10002.1", "snapshots"}},
		{"SELECT * FROM heapprof.functions WHERE node_id = 10002", []string{"functions heap_profile.10002.0", "functions heap_profile.10002.1", "snapshots"}},
		// A quoted number compares as MariaDB's DOUBLE and still looks up.
		{"SELECT * FROM heapprof.functions WHERE node_id = '10002'", []string{"functions heap_profile.10002.0", "functions heap_profile.10002.1", "snapshots"}},
		{"SELECT * FROM heapprof.diffs WHERE node_id = 10002", []string{"functions heap_profile.10002.0", "functions heap_profile.10002.1", "snapshots"}},
		{"SELECT (SELECT COUNT(*) FROM heapprof.snapshots), (SELECT COUNT(*) FROM heapprof.snapshots)", []string{"snapshots"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			src := &countingSource{memSource: fixture()}
			e, s := newTestEngine(t, src)
			if _, err := engineAnswer(ctx, e, s, tt.query); err != nil {
				t.Fatal(err)
			}
			slices.Sort(src.read)
			if !slices.Equal(src.read, tt.want) {
				t.Errorf("read %q, want %q", src.read, tt.want)
			}
		})
	}
}

// Sessions query one engine at once (one per connection) and each gets
// what a lone session gets.
func TestConcurrentSessions(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	queries := []string{
		"SELECT name, SUM(flat_bytes_delta) FROM heapprof.diffs GROUP BY name ORDER BY 2 DESC, 1",
		"SELECT s.id, COUNT(*) FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id GROUP BY s.id ORDER BY 1",
		"SELECT * FROM heapprof.stacks WHERE node_id = 10001 ORDER BY snapshot_id, stack_id",
	}
	want := make([]string, len(queries))
	for i, q := range queries {
		a, err := engineAnswer(ctx, e, s, q)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = a.String()
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*20)
	for g := range 8 {
		wg.Go(func() {
			s, err := e.NewSession(ctx, "bi", "127.0.0.1:1", uint32(100+g))
			if err != nil {
				errs <- err
				return
			}
			for i := range 20 {
				q := (g + i) % len(queries)
				a, err := engineAnswer(ctx, e, s, queries[q])
				if err != nil {
					errs <- err
					return
				}
				if a.String() != want[q] {
					errs <- fmt.Errorf("session %d, %s:\n%v\nwant\n%s", g, queries[q], a, want[q])
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
