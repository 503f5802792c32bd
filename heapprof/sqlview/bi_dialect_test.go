package sqlview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-sql-driver/mysql"
)

// refSession answers statements on one MariaDB connection (session state
// carries across them) through go-mysql's client, whose rows are the text
// MariaDB sent: go-sql-driver/mysql (v1.10) parses DOUBLE and FLOAT text
// into float64, which database/sql prints back in Go's shortest form
// ("30" where MariaDB sends ROUND(x, 1)'s "30.0", "5.96e-05" where it
// sends "0.0000596..."), so it cannot show what a mysql client shows.
// answer gives the column names, their types as go-sql-driver names them
// (driverTypeName), text rows ("NULL" for NULL), or the error.
type refSession struct{ conn *client.Conn }

func (r refSession) answer(_ context.Context, q string) (cols, typs []string, rows [][]string, err error) {
	res, err := r.conn.Execute(q)
	if err != nil {
		return nil, nil, nil, err
	}
	defer res.Close()
	if res.Resultset == nil {
		return nil, nil, nil, nil
	}
	for _, f := range res.Fields {
		cols = append(cols, string(f.Name))
		typs = append(typs, driverTypeName(Column{Type: f.Type, Flags: f.Flag, Charset: f.Charset}))
	}
	for _, data := range res.RowDatas {
		row := make([]string, 0, len(res.Fields))
		for pos := 0; len(row) < len(res.Fields); {
			v, isNull, n, err := gomysql.LengthEncodedString(data[pos:])
			if err != nil {
				return nil, nil, nil, fmt.Errorf("MariaDB's row %q: %w", data, err)
			}
			pos += n
			if isNull {
				row = append(row, "NULL")
			} else {
				row = append(row, string(v))
			}
		}
		rows = append(rows, row)
	}
	return cols, typs, rows, nil
}

// exec runs a statement on r's session for its effect.
func (r refSession) exec(q string) error {
	res, err := r.conn.Execute(q)
	if err == nil {
		res.Close()
	}
	return err
}

// engineTyped is the engine's answer in refSession's terms.
func engineTyped(ctx context.Context, e *Engine, s *Session, q string) (cols, typs []string, rows [][]string, err error) {
	r, err := e.Query(ctx, s, q)
	if err != nil {
		return nil, nil, nil, err
	}
	return resultTyped(r)
}

// resultTyped reads r in refSession's terms.
func resultTyped(r *Result) (cols, typs []string, rows [][]string, err error) {
	defer r.Close()
	for _, c := range r.Columns {
		cols = append(cols, c.Name)
		typs = append(typs, driverTypeName(c))
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return cols, typs, nil, err
		}
		vals := make([]string, len(row))
		for i, v := range row {
			vals[i] = "NULL"
			if v != nil {
				vals[i] = string(v)
			}
		}
		rows = append(rows, vals)
	}
	return cols, typs, rows, nil
}

// matchMariaDB runs query on the engine and on MariaDB and fails t unless
// both give the same columns, rows and error code (and, with types, the
// same column types); with unsupported, MariaDB must answer and the engine
// name what it lacks with 1235.
func matchMariaDB(t *testing.T, ctx context.Context, e *Engine, s *Session, r refSession, query string, unsupported, types bool) {
	t.Helper()
	gc, gt, gr, gerr := engineTyped(ctx, e, s, query)
	wc, wt, wr, werr := r.answer(ctx, query)
	if werr != nil && errorCode(werr) == 0 {
		t.Fatalf("MariaDB: %v", werr)
	}
	if unsupported {
		var ge *Error
		if werr != nil || !errors.As(gerr, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "does not support") {
			t.Fatalf("want MariaDB to answer and the engine to name what it lacks (1235): MariaDB %v %q, engine %v", werr, wr, gerr)
		}
		return
	}
	if errorCode(gerr) != errorCode(werr) || (gerr != nil && errorCode(gerr) == 0) {
		t.Fatalf("engine error %v, MariaDB %v", gerr, werr)
	}
	if gerr != nil {
		return
	}
	// Display widths compare on both sides: the engine's DESCRIBE prints
	// MariaDB's (bigint(20), infoschema.go), SHOW CREATE TABLE MySQL 8's
	// none.
	for _, rows := range [][][]string{gr, wr} {
		for _, row := range rows {
			for i := range row {
				row[i] = intWidth.ReplaceAllString(row[i], "$1")
			}
		}
	}
	if !slices.Equal(gc, wc) || !slices.EqualFunc(gr, wr, slices.Equal) {
		t.Errorf("engine:\n%q\n%q\nMariaDB:\n%q\n%q", gc, gr, wc, wr)
	}
	if types && !slices.Equal(gt, wt) {
		t.Errorf("types: engine %q, MariaDB %q", gt, wt)
	}
}

func errorCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	var ge *gomysql.MyError
	if errors.As(err, &ge) {
		return ge.Code
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func refConn(t *testing.T) refSession {
	t.Helper()
	c, err := client.Connect(ref.socket, "bi", "bi", "heapprof", func(c *client.Conn) error {
		return c.SetCollation("utf8mb4_general_ci")
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return refSession{conn: c}
}

// BI tools' statements, in order on one session of each, answer the same
// columns, types, rows and error codes on the engine and on MariaDB;
// unsupported names the statements MariaDB runs and the engine refuses
// with ERROR 1235 naming what it lacks.
func TestBIStatementsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	tests := []struct {
		name, query string
		unsupported bool
		// types: compare the column types too (not for expressions whose
		// type MariaDB and go-mysql-server derive differently).
		types bool
	}{
		// 1. user variables
		{"set user variable", "SET @n = 10001", false, false},
		{"where user variable", "SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id = @n", false, false},
		{"read user variable", "SELECT @n", false, false},
		{"prepare", "PREPARE s FROM 'SELECT id FROM heapprof.snapshots WHERE node_id = ? ORDER BY id'", false, false},
		{"execute using", "EXECUTE s USING @n", false, true},
		{"deallocate", "DEALLOCATE PREPARE s", false, false},
		{"assignment in expression", "SELECT @n := 1", false, true},
		{"assignment read in the row", "SELECT @n, @n := @n + 1 AS k, @n * 10 AS m", false, false},
		{"assignment declares", "SELECT @fresh_var := 5 AS a, @fresh_var + 1 AS b, CAST(@fresh_var AS CHAR) AS c", false, false},
		{"assignment per row", "SELECT id, @n := @n + 1 AS rn FROM heapprof.snapshots ORDER BY id", false, false},
		{"assignment in function", "SELECT IF(node_id > 0, @k := node_id, @k := -1) AS a, @k AS b FROM heapprof.snapshots ORDER BY id LIMIT 3", false, false},
		{"assignment nested", "SELECT @p := @q := 7 AS a, @p + @q AS b", false, false},
		{"prepare assignment", "PREPARE s2 FROM 'SELECT @p := ? AS v, @p + 1 AS w'", false, false},
		{"execute assignment", "EXECUTE s2 USING @n", false, false},
		{"deallocate assignment", "DEALLOCATE PREPARE s2", false, false},
		// GROUP_CONCAT's arguments read as MariaDB reads them in the text
		// PREPARE plans, too (groupconcat.go).
		{"prepare group_concat", "PREPARE s3 FROM 'SELECT GROUP_CONCAT(a, b ORDER BY 2 DESC, 1) v FROM (SELECT 1 a, 2 b UNION ALL SELECT 3, 1) t'", false, false},
		{"execute group_concat", "EXECUTE s3", false, false},
		{"deallocate group_concat", "DEALLOCATE PREPARE s3", false, false},
		// 2. session variables clients and tools set
		{"sql_quote_show_create", "SET sql_quote_show_create = 1", false, false},
		{"session_track_system_variables", "SET session_track_system_variables = 'autocommit'", false, false},
		{"net_read_timeout etc", "SET net_read_timeout = 30, group_concat_max_len = 1000000, sql_safe_updates = 1, foreign_key_checks = 0", false, false},
		{"echo", "SELECT @@sql_quote_show_create, @@session_track_system_variables, @@net_read_timeout, @@group_concat_max_len, @@sql_safe_updates, @@foreign_key_checks", false, false},
		{"unknown variable", "SET no_such_variable = 1", false, false},
		{"sql_select_limit", "SET SQL_SELECT_LIMIT = 2", false, false},
		{"limited", "SELECT id FROM heapprof.snapshots ORDER BY id", false, true},
		{"explicit limit wins", "SELECT id FROM heapprof.snapshots ORDER BY id LIMIT 3", false, true},
		{"sql_select_limit default", "SET SQL_SELECT_LIMIT = DEFAULT", false, false},
		{"time_zone", "SET time_zone = '+02:00'", false, false},
		{"now in time zone", "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW()) AS d, @@time_zone", false, false},
		{"now is datetime", "SELECT NOW() IS NOT NULL AS x, CAST(NOW() AS DATETIME) = NOW() AS y", false, false},
		{"time_zone back", "SET time_zone = '+00:00'", false, false},
		// 4. metadata statements
		{"describe wild", "DESCRIBE snapshots 'no%'", false, false},
		{"describe column", "DESC heapprof.snapshots `id`", false, false},
		{"three-part keyword column", "SELECT heapprof.snapshots.format, heapprof.snapshots.id FROM heapprof.snapshots ORDER BY 2", false, true},
		{"mysql.user", "SELECT user, host FROM mysql.user", false, false},
		{"use mysql", "USE mysql", false, false},
		{"use back", "USE heapprof", false, false},
		// 5. functions
		{"makedate sec_to_time", "SELECT MAKEDATE(2024, 40), MAKEDATE(24, 366), MAKEDATE(2024, 0), SEC_TO_TIME(3661), SEC_TO_TIME(0), SEC_TO_TIME(-90061)", false, true},
		{"utc_timestamp", "SELECT UTC_TIMESTAMP() = NOW(), LENGTH(UTC_TIMESTAMP()), LENGTH(UTC_TIMESTAMP(3))", false, false},
		{"rollup", "SELECT node_id, COUNT(*) FROM heapprof.snapshots GROUP BY node_id WITH ROLLUP", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, tt.query, tt.unsupported, tt.types)
		})
	}
}

// information_schema's text columns are text (utf8), not binary, as on
// MariaDB: PyMySQL and mysql2 hand binary-labelled values over as bytes.
func TestInformationSchemaCharsetsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	binary := func(typ string) bool { return typ == "BINARY" || typ == "VARBINARY" || typ == "BLOB" }
	for _, table := range []string{"TABLES", "COLUMNS", "SCHEMATA", "STATISTICS", "KEY_COLUMN_USAGE",
		"REFERENTIAL_CONSTRAINTS", "TABLE_CONSTRAINTS", "VIEWS", "ROUTINES", "COLLATIONS", "CHARACTER_SETS",
		"TRIGGERS", "PARAMETERS", "EVENTS", "PARTITIONS", "USER_PRIVILEGES", "SCHEMA_PRIVILEGES", "TABLE_PRIVILEGES"} {
		t.Run(table, func(t *testing.T) {
			q := "SELECT * FROM information_schema." + table + " LIMIT 0"
			r, cts := bothColumns(t, ctx, e, s, q)
			want := map[string]string{}
			for _, c := range cts {
				want[strings.ToUpper(c.Name())] = c.DatabaseTypeName()
			}
			compared := 0
			for _, c := range r.Columns {
				wt, ok := want[strings.ToUpper(c.Name)]
				if !ok {
					continue // MySQL 8's column, not MariaDB's
				}
				compared++
				if got := driverTypeName(c); binary(got) != binary(wt) && (c.Type >= 15) {
					t.Errorf("%s: engine %s (type %d, charset %d), MariaDB %s", c.Name, got, c.Type, c.Charset, wt)
				}
			}
			if compared == 0 {
				t.Fatal("no column in common")
			}
		})
	}
}

// The global values of the variables a session starts with (the front's
// version, max_allowed_packet, ...) are those values in @@GLOBAL.x and
// SHOW GLOBAL VARIABLES, as on MariaDB, where a session starts with the
// globals; go-mysql-server's own globals (version_comment Dolt, version
// 8.0.31) never show.
func TestGlobalVariablesMatchSession(t *testing.T) {
	ctx := context.Background()
	e, err := New(fixture())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	vars := map[string]any{"version": "10.11.19-heapproxy", "max_allowed_packet": int64(16777216), "license": "Apache-2.0", "version_compile_os": "Linux"}
	s, err := e.NewSessionWith(ctx, "bi", "127.0.0.1:50000", 7, SessionOptions{Variables: vars})
	if err != nil {
		t.Fatal(err)
	}
	r := refConn(t)
	// Each side's globals equal its session's starting values.
	for _, q := range []string{
		"SELECT @@GLOBAL.version = @@version, @@GLOBAL.version_comment = @@version_comment, @@GLOBAL.max_allowed_packet = @@max_allowed_packet, " +
			"@@GLOBAL.sql_mode = @@sql_mode, @@GLOBAL.license = @@license, @@GLOBAL.time_zone = @@time_zone, @@GLOBAL.version_compile_os = @@version_compile_os",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE @@GLOBAL.version = @@version AND (SELECT @@GLOBAL.max_allowed_packet) = @@SESSION.max_allowed_packet",
		"SET time_zone = '+01:00'",
		"SELECT @@GLOBAL.time_zone, @@time_zone, @@SESSION.time_zone",
		"SET time_zone = '+00:00'",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, false) })
	}
	for _, tt := range []struct{ query, want string }{
		{"SELECT @@GLOBAL.version, @@GLOBAL.version_comment, @@GLOBAL.max_allowed_packet, @@GLOBAL.license FROM heapprof.snapshots LIMIT 1",
			"10.11.19-heapproxy|" + VersionComment + "|16777216|Apache-2.0"},
		{"SHOW GLOBAL VARIABLES WHERE Variable_name IN ('version', 'version_comment', 'max_allowed_packet', 'license', 'time_zone')",
			"license|Apache-2.0|max_allowed_packet|16777216|time_zone|+00:00|version|10.11.19-heapproxy|version_comment|" + VersionComment},
	} {
		t.Run(tt.query, func(t *testing.T) {
			a, err := engineAnswer(ctx, e, s, tt.query)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, row := range a.rows {
				got = append(got, row...)
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("got %q, want %q", g, tt.want)
			}
		})
	}
}

// A reported session value (the front's connection character sets) is
// what every read of the variable answers, with or without FROM, in
// subqueries and SHOW VARIABLES, as on a MariaDB session after SET NAMES
// latin1; the engine still sends UTF-8 for the front to convert.
func TestReportedVariablesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	r := refConn(t)
	if err := r.exec("SET NAMES latin1"); err != nil {
		t.Fatal(err)
	}
	for name, v := range map[string]any{"character_set_client": "latin1", "character_set_connection": "latin1",
		"character_set_results": "latin1", "collation_connection": "latin1_swedish_ci"} {
		s.Report(name, v)
	}
	const vars = "@@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"
	for _, q := range []string{
		"SELECT " + vars,
		"SELECT id, " + vars + " FROM heapprof.snapshots ORDER BY id LIMIT 2",
		"SELECT (SELECT @@character_set_results), @@SESSION.character_set_results, @@SESSION.collation_connection FROM heapprof.snapshots LIMIT 1",
		"SELECT COUNT(*) FROM heapprof.snapshots WHERE @@character_set_results = 'latin1'",
		"SHOW VARIABLES WHERE Variable_name IN ('character_set_client', 'character_set_connection', 'character_set_results', 'collation_connection')",
	} {
		t.Run(q, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
	t.Run("results stay UTF-8", func(t *testing.T) {
		a, err := engineAnswer(ctx, e, s, "SELECT short_name FROM heapprof.functions WHERE short_name LIKE 'tikv%'")
		if err != nil {
			t.Fatal(err)
		}
		if len(a.rows) != 1 || !strings.HasSuffix(a.rows[0][0], "ünïcode") {
			t.Errorf("rows %q, want the UTF-8 name", a.rows)
		}
	})
	t.Run("NULL", func(t *testing.T) {
		s.Report("character_set_results", nil)
		a, err := engineAnswer(ctx, e, s, "SELECT @@character_set_results IS NULL FROM heapprof.snapshots LIMIT 1")
		if err != nil {
			t.Fatal(err)
		}
		if len(a.rows) != 1 || a.rows[0][0] != "1" {
			t.Errorf("rows %q, want NULL", a.rows)
		}
	})
}

// MariaDB Connector/ODBC's catalog statements (3.1.15, as it sent them to
// heapproxy, captured under testdata/odbc/): SQLColumns and
// SQLSpecialColumns assign @dt, @ColSize and @tol inside the select list
// and read them back in the same row; SQLGetTypeInfo is a UNION of 43
// literal rows, which the engine's planner took exponential time on. Each
// answers MariaDB's columns, types and rows, twice in a row (the
// variables then exist, with the types the first run gave them). Values
// only: the driver replaces the result's column types with ODBC's own
// (MADB_FixColumnDataTypes after each catalog statement, ma_catalog.c),
// so the server's never reach a program.
func TestODBCCatalogStatementsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, name := range []string{"columns", "specialcolumns", "gettypeinfo"} {
		q, err := os.ReadFile(filepath.Join("testdata", "odbc", name+".sql"))
		if err != nil {
			t.Fatal(err)
		}
		for run := 1; run <= 2; run++ {
			t.Run(fmt.Sprintf("%s/%d", name, run), func(t *testing.T) {
				matchMariaDB(t, ctx, e, s, r, strings.TrimSpace(string(q)), false, false)
			})
		}
	}
}
