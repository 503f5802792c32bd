package server

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// The per-driver matrix (issue 14): every driver BI users reach heapproxy
// through, beyond go-sql-driver, PyMySQL, MySQLdb, the mariadb CLI and
// Connector/J, runs a probe under testdata/clients/ against both modes. A
// probe connects, lists tables and columns its tool's way, runs the
// heapprof/sqlview/README.md queries as text and (where the driver has them)
// as server-side prepared statements, and prints JSON; the test compares
// every value and column type with the same query through go-sql-driver in
// the same mode, and checks what the driver made of each value (a string
// must reach the program as a string, not bytes). Then each driver must
// hand a program the same types from the embedded default as from MariaDB,
// ODBC's catalog functions the same rows (compareCatalogs), and a latin1
// connection must get its text back. Needs the Debian packages
// and the npm install .ci/run makes; nothing is fetched at test time.

// driverProbe is one driver's probe program.
type driverProbe struct {
	name string
	argv []string // program and script, relative to server/
	env  []string // more of the probe's environment
	// How the tool lists columns: "information_schema" (the DATA_TYPE
	// column), "result" (the metadata of SELECT * ... LIMIT 0) or
	// "column_info" (Perl DBI's column_info and ODBC's SQLColumns:
	// TYPE_NAME, upper case).
	columns string
	// What a value of each column class becomes, as the probe tags it,
	// for text queries and for prepared statements (nil: the driver has
	// none). Classes: text, int, float, decimal, datetime (see
	// columnClass; float/fixed and decimal/0 fall back to float and
	// decimal).
	text, prepared map[string]string
}

// driverProbes lists the drivers and what each documents it hands over.
func driverProbes() []driverProbe {
	node := map[string]string{"text": "string", "int": "number", "float": "number", "decimal": "string", "datetime": "date"}
	native := map[string]string{"text": "string", "int": "int", "float": "float", "decimal": "string", "datetime": "string"}
	// DBD::MariaDB keeps a DOUBLE with a declared scale as a string (its
	// digits are the server's); mysql2 for Ruby makes a DECIMAL without
	// fraction digits an Integer in query() results, a BigDecimal in a
	// prepared statement's.
	perl := map[string]string{"text": "string", "int": "int", "float": "float", "float/fixed": "string", "decimal": "string", "datetime": "string"}
	odbcKinds := map[string]string{"text": "string", "int": "int", "float": "float", "decimal": "decimal", "datetime": "date"}
	ruby := map[string]string{"text": "string", "int": "int", "float": "float", "decimal": "decimal", "decimal/0": "int", "datetime": "date"}
	rubyPrepared := map[string]string{"text": "string", "int": "int", "float": "float", "decimal": "decimal", "datetime": "date"}
	return []driverProbe{
		{name: "node-mysql2", argv: []string{"node", "../testdata/clients/node/mysql2.js"}, columns: "information_schema",
			text: node, prepared: node},
		// npm mysql converts DECIMAL to a number by default
		// (supportBigNumbers off) and has no server-side statements.
		{name: "node-mysql", argv: []string{"node", "../testdata/clients/node/mysql.js"}, columns: "information_schema",
			text: map[string]string{"text": "string", "int": "number", "float": "number", "decimal": "number", "datetime": "date"}},
		{name: "php-pdo", argv: []string{"php", "../testdata/clients/pdo.php"}, columns: "result",
			text: native, prepared: native},
		// mysqli's query() hands over every value as a string; a prepared
		// statement's get_result() converts numbers.
		{name: "php-mysqli", argv: []string{"php", "../testdata/clients/mysqli.php"}, columns: "result",
			text:     map[string]string{"text": "string", "int": "string", "float": "string", "decimal": "string", "datetime": "string"},
			prepared: native},
		{name: "perl-dbi", argv: []string{"perl", "../testdata/clients/dbi.pl"}, columns: "column_info",
			text: perl, prepared: perl},
		{name: "ruby-mysql2", argv: []string{"ruby", "../testdata/clients/mysql2.rb"}, columns: "result",
			text: ruby, prepared: rubyPrepared},
		// pyodbc hands over Python types: Decimal for DECIMAL, datetime
		// for DATETIME, with or without server-side statements.
		{name: "odbc", argv: []string{"/usr/bin/python3", "../testdata/clients/odbc.py"}, columns: "column_info",
			text: odbcKinds, prepared: odbcKinds},
	}
}

// The probe's JSON (see testdata/clients/node/common.js).
type probeColumn struct {
	Name    string `json:"name"`
	Type    string `json:"type"` // MYSQL_TYPE_* code, PDO's native_type, or "" when the driver tells none
	Charset *int   `json:"charset"`
}

type probeResult struct {
	Columns []probeColumn `json:"columns"`
	Rows    [][][2]string `json:"rows"` // each value: [kind, text]
	Error   string        `json:"error"`
}

type probeOutput struct {
	Driver      string                 `json:"driver"`
	Tables      [][2]string            `json:"tables"`  // name, type ("" when the tool tells none)
	Columns     [][4]any               `json:"columns"` // table, column, type, charset
	Results     map[string]probeResult `json:"results"`
	Transaction *string                `json:"transaction"`
	// ODBC's catalog functions, each call's rows.
	Catalog map[string][][][2]string `json:"catalog"`
}

// driverMode is heapproxy serving the heapprof schema one way.
type driverMode struct {
	addr, user, password, schema string
	from, to                     time.Time
}

// TestDriversMatrix runs every driver probe against the embedded default
// (heapproxy's own heapprof schema) and in front of a real MariaDB whose
// heapprof schema is the external snapshot store's; then a program must get
// the same from the embedded default as from MariaDB: the same column types
// and the same kind of value (a number, a string, a date) in each column.
func TestDriversMatrix(t *testing.T) {
	if _, err := os.Stat("../testdata/clients/node/node_modules/mysql2"); err != nil {
		t.Fatalf("the Node drivers are not installed: run `npm ci --prefix testdata/clients/node` (.ci/run does): %v", err)
	}
	modes := []struct {
		name  string
		start func(t *testing.T) driverMode
	}{
		{"embedded", func(t *testing.T) driverMode {
			srv, from, to := startSchemaProxy(t, 3)
			return driverMode{addr: srv.Addr().String(), user: "root", schema: "heapprof", from: from, to: to}
		}},
		{"upstream", startStoreProxy},
	}
	runs := map[string]*modeRun{}
	for _, mode := range modes {
		t.Run(mode.name, func(t *testing.T) {
			m := mode.start(t)
			queries := driverQueries(m)
			want := loadDriverBaseline(t, m, queries)
			run := &modeRun{base: want, outs: map[string]probeOutput{}, schema: m.schema}
			runs[mode.name] = run
			for _, d := range driverProbes() {
				t.Run(d.name, func(t *testing.T) {
					out := runProbe(t, d, m, queries)
					run.outs[d.name] = out
					checkProbe(t, d, queries, want, out)
				})
			}
			t.Run("ruby-mysql2-latin1", func(t *testing.T) { checkLatin1Client(t, m) })
		})
	}
	t.Run("embedded-as-mariadb", func(t *testing.T) {
		e, u := runs["embedded"], runs["upstream"]
		if e == nil || u == nil {
			t.Fatal("a mode did not run")
		}
		for _, d := range driverProbes() {
			compareModes(t, d.name, e, u)
		}
		compareCatalogs(t, e.outs["odbc"], u.outs["odbc"], u.schema)
	})
}

// compareCatalogs: ODBC's catalog functions (SQLColumns, SQLStatistics,
// SQLPrimaryKeys, SQLForeignKeys, SQLSpecialColumns, SQLGetTypeInfo; the
// MariaDB driver answers each with one SELECT on information_schema) give
// a program the same rows from the embedded default as from MariaDB, the
// schema's name aside, except where MariaDB's views cannot say what the
// embedded tables say (catalogDifferences).
func compareCatalogs(t *testing.T, e, u probeOutput, upstreamSchema string) {
	t.Helper()
	if len(e.Catalog) == 0 {
		t.Fatal("ODBC ran no catalog function on the embedded default")
	}
	// MariaDB's database also holds the store's tables (store_*): the
	// calls on the four heapprof tables are compared.
	for _, call := range slices.Sorted(maps.Keys(e.Catalog)) {
		er, ur := e.Catalog[call], u.Catalog[call]
		if _, ok := u.Catalog[call]; !ok {
			t.Errorf("%s: not run on MariaDB", call)
			continue
		}
		if len(er) == 0 && (strings.HasPrefix(call, "SQLColumns") || call == "SQLGetTypeInfo" || call == "SQLPrimaryKeys snapshots") {
			t.Errorf("%s: no rows on the embedded default", call)
		}
		kind, table, _ := strings.Cut(call, " ")
		if keys[kind] {
			// MariaDB's views carry no keys (the store's tables do).
			if len(ur) != 0 {
				t.Errorf("%s: MariaDB lists %q for a view", call, ur)
			}
			continue
		}
		for _, rows := range [][][][2]string{ur} {
			for _, row := range rows {
				for i, v := range row {
					if v[1] == upstreamSchema {
						row[i][1] = "heapprof"
					}
				}
			}
		}
		if len(er) != len(ur) {
			t.Errorf("%s: %d rows on the embedded default, %d on MariaDB:\nembedded %q\nMariaDB  %q", call, len(er), len(ur), er, ur)
			continue
		}
		for i := range er {
			for f := range er[i] {
				if f >= len(ur[i]) || er[i][f] == ur[i][f] {
					continue
				}
				column := er[i][min(3, len(er[i])-1)][1]
				if kind == "SQLColumns" && catalogDifference(table, column, f+1, ur[i][f]) {
					continue
				}
				t.Errorf("%s row %d (%s) field %d: embedded %q, MariaDB %q", call, i, column, f+1, er[i][f], ur[i][f])
			}
		}
	}
}

// keys are the catalog functions that list keys and indexes.
var keys = map[string]bool{"SQLStatistics": true, "SQLPrimaryKeys": true, "SQLForeignKeys": true, "SQLSpecialColumns": true}

// catalogDifference: what SQLColumns says of a column of MariaDB's view
// (field is SQLColumns' column number, mariadb MariaDB's value) that it
// cannot say as the embedded table does. diffs computes its columns with
// LAG() and COALESCE(): MariaDB derives each one's nullability and
// default (NULLABLE 11, COLUMN_DEF 13, IS_NULLABLE 18) from the
// expression, has no comment (REMARKS 12) for a computed column, and
// types LAG(taken_at) a DATETIME of MariaDB 5.3's format, which COLUMN_TYPE
// and so TYPE_NAME (6) mark "/* mariadb-5.3 */".
func catalogDifference(table, column string, field int, mariadb [2]string) bool {
	if table != "diffs" {
		return false
	}
	switch field {
	case 11, 13, 18:
		return true
	case 12:
		return mariadb[1] == "" && snapshot.ColumnComment("diffs", column) != snapshot.ColumnComment("snapshots", column)
	case 6:
		return column == "from_taken_at" && mariadb[1] == "DATETIME /* MARIADB-5.3 */"
	}
	return false
}

// checkLatin1Client: a program whose connection is latin1 (mysql2 for
// Ruby with encoding: 'latin1' transcodes the statement to latin1 and the
// results from the character set the server labels them with) gets its
// non-ASCII text back, as from MariaDB, which converts between the
// connection's character set and the data's. Only query(): mysql2 0.5.3's
// prepare sends the statement untranscoded (rb_mysql_stmt_new passes
// RSTRING_PTR(sql), not the latin1 copy), which MariaDB then misreads.
func checkLatin1Client(t *testing.T, m driverMode) {
	d := driverProbe{name: "ruby-mysql2-latin1", argv: []string{"ruby", "../testdata/clients/mysql2.rb"},
		env: []string{"HP_ENCODING=latin1"}}
	q := driverQuery{Name: "latin1", SQL: "SELECT CONCAT(node_kind, ' größe') AS label FROM " + m.schema +
		".snapshots ORDER BY taken_at LIMIT 1"}
	out := runProbe(t, d, m, []driverQuery{q})
	r := out.Results["latin1"]
	want := [][][2]string{{{"string", "greptimedb größe"}}}
	if r.Error != "" || !reflect.DeepEqual(r.Rows, want) {
		t.Errorf("%s through a latin1 connection: %q %s, want %q", q.SQL, r.Rows, r.Error, want)
	}
}

// modeRun is what one mode answered: go-sql-driver's baseline and each
// probe's output.
type modeRun struct {
	base   *driverBaseline
	outs   map[string]probeOutput
	schema string
}

// knownModeDifferences are what drivers still see differ between the
// embedded default and MariaDB, each with its reason (driver, statement,
// column). A difference not listed fails the test; an entry that no longer
// differs is logged, to be removed.
var knownModeDifferences = map[[3]string]string{
	// heapprof/sqlview/README.md "Known differences": MariaDB declares
	// ROUND(double, 1) with 1 decimal (and prints 0.0), the engine sends
	// NOT_FIXED_DEC (31) and prints 0; DBD::MariaDB keeps a DOUBLE with
	// fixed decimals as a string, so a Perl program gets "22.8" from
	// MariaDB and the number 22.8 from the embedded default.
	{"perl-dbi", "top", "pct"}: "ROUND(double, d): decimals 31 instead of d",
}

// compareModes checks that a driver hands a program the same from the
// embedded default (e) as from MariaDB (u), statement by statement: the
// column types the driver reports for the README queries (text or binary:
// MariaDB labels text with the connection's collation, heapproxy always
// utf8mb4_general_ci, and both send UTF-8 to these clients), and the kind
// of every column's values for all of them.
func compareModes(t *testing.T, driver string, e, u *modeRun) {
	t.Helper()
	seen := map[[3]string]bool{}
	defer func() {
		for k, why := range knownModeDifferences {
			if k[0] == driver && !seen[k] {
				t.Logf("known difference %v (%s) no longer seen: remove it from knownModeDifferences", k, why)
			}
		}
	}()
	isBinary := func(c *int) any {
		if c == nil {
			return "unknown"
		}
		return *c == binaryCharset
	}
	eo, ok1 := e.outs[driver]
	uo, ok2 := u.outs[driver]
	if !ok1 || !ok2 {
		t.Errorf("%s did not run in both modes", driver)
		return
	}
	names := slices.Sorted(maps.Keys(eo.Results))
	for _, name := range names {
		er, ur := eo.Results[name], uo.Results[name]
		if er.Error != "" || ur.Error != "" || len(er.Columns) != len(ur.Columns) {
			continue // reported by the mode's own subtest
		}
		base := strings.TrimSuffix(name, "@prepared")
		for i, ec := range er.Columns {
			uc := ur.Columns[i]
			why := func() string {
				ew, uw := e.base.results[base].columns, u.base.results[base].columns
				if i < len(ew) && i < len(uw) {
					return fmt.Sprintf(" (go-sql-driver: embedded %s scale %d, MariaDB %s scale %d)", ew[i].typ, ew[i].scale, uw[i].typ, uw[i].scale)
				}
				return ""
			}
			key := [3]string{driver, base, ec.Name}
			fail := func(format string, args ...any) {
				t.Helper()
				seen[key] = true
				if _, ok := knownModeDifferences[key]; !ok {
					t.Errorf(format, args...)
				}
			}
			if !strings.HasPrefix(name, "information_schema.") && (ec.Type != uc.Type || isBinary(ec.Charset) != isBinary(uc.Charset)) {
				fail("%s %s: column %s: the driver reports type %s charset %v on the embedded default, %s charset %v on MariaDB%s",
					driver, name, ec.Name, ec.Type, derefInt(ec.Charset), uc.Type, derefInt(uc.Charset), why())
			}
			if ek, uk := columnKind(er.Rows, i), columnKind(ur.Rows, i); ek != "" && uk != "" && ek != uk {
				fail("%s %s: column %s: the program gets a %s from the embedded default, a %s from MariaDB%s",
					driver, name, ec.Name, ek, uk, why())
			}
		}
	}
}

// columnKind is the kind of the first non-NULL value in column i.
func columnKind(rows [][][2]string, i int) string {
	for _, r := range rows {
		if i < len(r) && r[i][0] != "null" {
			return r[i][0]
		}
	}
	return ""
}

// startStoreProxy runs heapproxy in front of the test MariaDB with the
// snapshot store in a database of that MariaDB (a fresh one, so reruns in
// one MariaDB start empty) and three snapshots of the jemalloc test node.
func startStoreProxy(t *testing.T) driverMode {
	host, port := startJenode(t)
	schema := fmt.Sprintf("heapprof_drivers_%d", time.Now().UnixNano())
	t.Cleanup(func() { rootExec(t, "DROP DATABASE IF EXISTS "+schema) })
	st, err := snapshot.OpenMySQL(context.Background(), fmt.Sprintf("app:secret@tcp(%s)/%s", env.addr, schema), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	deps := testDeps(t, backends.Node{ID: 10001, Kind: backends.GreptimeDB, Host: host, HTTPPort: port, Binary: nodes.Jenode})
	deps.Snapshots = st
	srv := startProxyDeps(t, Config{Upstream: env.addr, ProfileUsers: []string{"app"}}, deps)
	db := openSchema(t, srv.Addr().String(), "app", "secret", "", "")
	mustLines(t, db, adminSQL("10001", "enable_prof()"))
	from := time.Now().Add(-time.Second)
	for range 3 {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/alloc", host, port))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		mustLines(t, db, adminSQL("10001", "snapshot()"))
	}
	return driverMode{addr: srv.Addr().String(), user: "app", password: "secret", schema: schema,
		from: from, to: time.Now().Add(time.Second)}
}

// driverQuery is a statement a probe runs; args are bound to its ?
// markers by the driver (its JSON form is the probe's argument).
type driverQuery struct {
	Name string `json:"name"`
	SQL  string `json:"sql"`
	Args []any  `json:"args"`
}

// driverQueries are heapprof/sqlview/README.md's example queries (Grafana's
// $__timeFilter expanded as Grafana does) on the mode's schema, a text
// column joined with a non-ASCII literal, which shows whether strings reach
// the program decoded, and a filter with arguments (a number, a time as a
// string) each driver binds its own way.
func driverQueries(m driverMode) []driverQuery {
	q := []driverQuery{
		{"series", fmt.Sprintf(`SELECT taken_at AS time, CONCAT('node ', node_id) AS metric, total_bytes AS value
FROM heapprof.snapshots
WHERE taken_at BETWEEN FROM_UNIXTIME(%d) AND FROM_UNIXTIME(%d)
ORDER BY taken_at`, m.from.Unix(), m.to.Unix()), nil},
		{"top", `SELECT name, flat_bytes, ROUND(flat_pct, 1) AS pct, cum_bytes
FROM heapprof.functions
WHERE snapshot_id = (SELECT id FROM heapprof.snapshots WHERE node_id = 10001
                     ORDER BY taken_at DESC LIMIT 1)
ORDER BY flat_bytes DESC, name LIMIT 20`, nil},
		{"diff", `SELECT name,
       SUM(flat_bytes_delta)    AS grown_bytes,
       SUM(flat_objects_delta)  AS grown_objects,
       COUNT(*)                 AS steps,
       MIN(flat_bytes_delta) > 0 AS grew_every_step
FROM heapprof.diffs
WHERE node_id = 10001 AND to_taken_at >= NOW() - INTERVAL 1 DAY
GROUP BY name
ORDER BY grown_bytes DESC, name
LIMIT 20`, nil},
		{"growth", `SELECT l.name, l.flat_bytes - COALESCE(f.flat_bytes, 0) AS grown_bytes
FROM heapprof.functions l
LEFT JOIN heapprof.functions f
  ON f.name = l.name
 AND f.snapshot_id = (SELECT id FROM heapprof.snapshots
                      WHERE node_id = 10001 AND taken_at >= NOW() - INTERVAL 1 DAY
                      ORDER BY taken_at LIMIT 1)
WHERE l.snapshot_id = (SELECT id FROM heapprof.snapshots WHERE node_id = 10001
                       ORDER BY taken_at DESC LIMIT 1)
ORDER BY grown_bytes DESC, l.name LIMIT 20`, nil},
		{"text", `SELECT CONCAT(node_kind, ' – größe ✓') AS label, node_kind, taken_at
FROM heapprof.snapshots ORDER BY taken_at LIMIT 1`, nil},
		{"filter", `SELECT id, total_bytes, taken_at FROM heapprof.snapshots
WHERE node_id = ? AND taken_at >= ? ORDER BY taken_at`, []any{10001, m.from.UTC().Format("2006-01-02 15:04:05")}},
	}
	for i := range q {
		q[i].SQL = strings.ReplaceAll(q[i].SQL, "heapprof.", m.schema+".")
	}
	return q
}

// baseColumn is a column as go-sql-driver reports it: name, type name and,
// for DECIMAL and DOUBLE, the scale the server declared (-1: none).
type baseColumn struct {
	name, typ string
	scale     int64
}

type baseResult struct {
	columns []baseColumn
	rows    [][]sql.NullString
}

// driverBaseline is what go-sql-driver answers in the mode: each query,
// the probes' information_schema listings, and the tables' columns.
type driverBaseline struct {
	results   map[string]baseResult
	tables    [][2]string             // information_schema: name, TABLE_TYPE
	infoCols  [][3]string             // information_schema: table, column, DATA_TYPE
	tableCols map[string][]baseColumn // SELECT * FROM t LIMIT 0
}

func loadDriverBaseline(t *testing.T, m driverMode, queries []driverQuery) *driverBaseline {
	t.Helper()
	// Arguments interpolated: every baseline statement is text protocol.
	db := openSchema(t, m.addr, m.user, m.password, m.schema, "time_zone=%27%2B00%3A00%27&interpolateParams=true")
	db.SetMaxOpenConns(1)
	b := &driverBaseline{results: map[string]baseResult{}, tableCols: map[string][]baseColumn{}}
	run := func(q string, args ...any) baseResult {
		t.Helper()
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("go-sql-driver %s: %v", q, err)
		}
		defer rows.Close()
		types, err := rows.ColumnTypes()
		if err != nil {
			t.Fatal(err)
		}
		var r baseResult
		for _, c := range types {
			scale := int64(-1)
			if _, s, ok := c.DecimalSize(); ok && s != math.MaxInt64 {
				scale = s
			}
			r.columns = append(r.columns, baseColumn{c.Name(), c.DatabaseTypeName(), scale})
		}
		if r.rows, err = mariadbtest.Scan(rows); err != nil {
			t.Fatalf("go-sql-driver %s: %v", q, err)
		}
		return r
	}
	for _, q := range queries {
		b.results[q.Name] = run(q.SQL, q.Args...)
	}
	// The Node probes' listings, with the schema bound there as a parameter.
	lit := "'" + m.schema + "'"
	tables := run("SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + lit + " ORDER BY TABLE_NAME")
	columns := run("SELECT TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = " + lit +
		" ORDER BY TABLE_NAME, ORDINAL_POSITION")
	b.results["information_schema.TABLES"], b.results["information_schema.COLUMNS"] = tables, columns
	for _, r := range tables.rows {
		b.tables = append(b.tables, [2]string{r[0].String, r[1].String})
		b.tableCols[r[0].String] = run("SELECT * FROM `" + r[0].String + "` LIMIT 0").columns
	}
	for _, r := range columns.rows {
		b.infoCols = append(b.infoCols, [3]string{r[0].String, r[1].String, r[2].String})
	}

	// The baseline itself must hold what the store holds: three dumps of
	// node 10001 in the time range, the jemalloc node's functions on top,
	// its leak growing, the four heapprof tables listed.
	for _, name := range []string{"diffs", "functions", "snapshots", "stacks"} {
		if !slices.ContainsFunc(b.tables, func(t [2]string) bool { return t[0] == name }) {
			t.Fatalf("information_schema.TABLES of %s lacks %s: %q", m.schema, name, b.tables)
		}
	}
	series := b.results["series"].rows
	if len(series) != 3 || series[0][1].String != "node 10001" {
		t.Fatalf("series baseline: %v", series)
	}
	if top := b.results["top"].rows; len(top) == 0 || !slices.ContainsFunc(top, func(r []sql.NullString) bool {
		return strings.HasPrefix(r[0].String, "jenode_")
	}) {
		t.Fatalf("top baseline: %v", top)
	}
	if diff := b.results["diff"].rows; !slices.ContainsFunc(diff, func(r []sql.NullString) bool {
		g, err := strconv.ParseFloat(r[1].String, 64)
		return r[0].String == "jenode_leak_step" && err == nil && g > 0
	}) {
		t.Fatalf("diff baseline lacks jenode_leak_step growing: %v", diff)
	}
	if filter := b.results["filter"].rows; len(filter) != 3 {
		t.Fatalf("filter baseline: %v", filter)
	}
	if text := b.results["text"].rows; len(text) != 1 || text[0][0].String != "greptimedb – größe ✓" {
		t.Fatalf("text baseline: %v", text)
	}
	return b
}

// runProbe runs a driver's probe: connection parts in the environment,
// the statements as arguments (never through a shell).
func runProbe(t *testing.T, d driverProbe, m driverMode, queries []driverQuery) probeOutput {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	host, port, err := net.SplitHostPort(m.addr)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string(nil), d.argv[1:]...)
	for _, q := range queries {
		j, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, string(j))
	}
	cmd := exec.CommandContext(ctx, d.argv[0], args...)
	cmd.Env = append(os.Environ(), "HP_HOST="+host, "HP_PORT="+port, "HP_USER="+m.user,
		"HP_PASSWORD="+m.password, "HP_DATABASE="+m.schema)
	cmd.Env = append(cmd.Env, d.env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s%s", d.name, err, out, stderr.String())
	}
	var p probeOutput
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("%s printed no JSON (%v):\n%s%s", d.name, err, out, stderr.String())
	}
	return p
}

// checkProbe compares a probe's output with the baseline.
func checkProbe(t *testing.T, d driverProbe, queries []driverQuery, b *driverBaseline, p probeOutput) {
	t.Helper()
	// Tables, as the tool lists them.
	var gotTables, wantTables []string
	for _, tb := range p.Tables {
		gotTables = append(gotTables, tb[0])
	}
	for _, tb := range b.tables {
		wantTables = append(wantTables, tb[0])
	}
	slices.Sort(gotTables)
	slices.Sort(wantTables)
	if !slices.Equal(gotTables, wantTables) {
		t.Errorf("tables: %q, want %q", gotTables, wantTables)
	}
	for _, tb := range p.Tables {
		if tb[1] == "" {
			continue
		}
		i := slices.IndexFunc(b.tables, func(w [2]string) bool { return w[0] == tb[0] })
		if i < 0 {
			continue
		}
		want := b.tables[i][1]
		if d.columns == "column_info" { // DBI and ODBC say TABLE or VIEW
			want = strings.TrimPrefix(want, "BASE ")
		}
		if tb[1] != want {
			t.Errorf("table %s: type %q, want %q", tb[0], tb[1], want)
		}
	}
	checkProbeColumns(t, d, b, p)

	// Every query, as text and as a prepared statement.
	variants := []struct {
		suffix string
		kinds  map[string]string
	}{{"", d.text}, {"@prepared", d.prepared}}
	names := []string{"information_schema.TABLES", "information_schema.COLUMNS"}
	for _, q := range queries {
		names = append(names, q.Name)
	}
	for _, name := range names {
		for _, v := range variants {
			got, ok := p.Results[name+v.suffix]
			if v.kinds == nil || !ok && strings.HasPrefix(name, "information_schema.") {
				continue // no prepared statements; listings only the Node probes run
			}
			if !ok {
				t.Errorf("%s%s: not run", name, v.suffix)
				continue
			}
			checkProbeResult(t, name+v.suffix, v.kinds, b.results[name], got)
		}
	}
	if d.name == "php-pdo" {
		if p.Transaction == nil || *p.Transaction != "ok" {
			t.Errorf("PDO beginTransaction(), a query, commit(): %v", deref(p.Transaction))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "<not run>"
	}
	return *s
}

// checkProbeColumns compares the tables' columns as the tool lists them.
func checkProbeColumns(t *testing.T, d driverProbe, b *driverBaseline, p probeOutput) {
	t.Helper()
	type col struct{ table, name, typ string }
	var got, want []col
	for _, c := range p.Columns {
		table, _ := c[0].(string)
		name, _ := c[1].(string)
		typ, _ := c[2].(string)
		got = append(got, col{table, name, typ})
	}
	switch d.columns {
	case "information_schema", "column_info":
		for _, c := range b.infoCols {
			typ := c[2]
			if d.columns == "column_info" {
				typ = strings.ToUpper(typ)
			}
			want = append(want, col{c[0], c[1], typ})
		}
		// ODBC's TYPE_NAME is MariaDB's COLUMN_TYPE, which marks a
		// temporal column of MariaDB 5.3's format (the diffs view's
		// from_taken_at, a LAG() of a DATETIME) "datetime /* mariadb-5.3 */".
		for i := range got {
			if j := strings.Index(got[i].typ, " /*"); j > 0 && d.name == "odbc" {
				got[i].typ = got[i].typ[:j]
			}
		}
	case "result":
		for _, tb := range b.tables {
			for _, c := range b.tableCols[tb[0]] {
				want = append(want, col{tb[0], c.name, c.typ})
			}
		}
		// The driver's type is a code or PDO's native name: compare it as
		// go-sql-driver names it, with the character set where the driver
		// tells it.
		for i, c := range p.Columns {
			j := slices.IndexFunc(want, func(w col) bool { return w.table == got[i].table && w.name == got[i].name })
			if got[i].typ == "" || j < 0 {
				got[i].typ = ""
				if j >= 0 {
					want[j].typ = ""
				}
				continue
			}
			var charset *int
			if f, ok := c[3].(float64); ok {
				n := int(f)
				charset = &n
			}
			got[i].typ = driverTypeName(got[i].typ, charset, want[j].typ)
		}
		for i := range want {
			want[i].typ = comparableType(want[i].typ)
		}
	}
	slices.SortStableFunc(got, func(a, b col) int { return strings.Compare(a.table, b.table) })
	slices.SortStableFunc(want, func(a, b col) int { return strings.Compare(a.table, b.table) })
	if !slices.Equal(got, want) {
		t.Errorf("columns (%s):\n got %v\nwant %v", d.columns, got, want)
	}
}

// checkProbeResult compares one statement's answer through the driver with
// go-sql-driver's: column names and types, every value, and what the
// driver made of it.
func checkProbeResult(t *testing.T, name string, kinds map[string]string, want baseResult, got probeResult) {
	t.Helper()
	// One wrong column shows in every row: report the first few.
	const shown = 8
	failures := 0
	fail := func(format string, args ...any) {
		t.Helper()
		if failures++; failures <= shown {
			t.Errorf("%s: %s", name, fmt.Sprintf(format, args...))
		}
	}
	defer func() {
		if failures > shown {
			t.Errorf("%s: %d more differences", name, failures-shown)
		}
	}()
	if got.Error != "" {
		fail("%s", got.Error)
		return
	}
	if len(got.Columns) != len(want.columns) {
		fail("%d columns %v, want %v", len(got.Columns), got.Columns, want.columns)
		return
	}
	for i, c := range got.Columns {
		w := want.columns[i]
		if c.Name != w.name {
			fail("column %d named %q, want %q", i, c.Name, w.name)
		}
		if c.Type != "" {
			if typ := driverTypeName(c.Type, c.Charset, w.typ); typ != comparableType(w.typ) {
				fail("column %s: the driver's type %s (charset %v) is %s, want %s", c.Name, c.Type, derefInt(c.Charset), typ, w.typ)
			}
		}
		if columnClass(w) == "text" && c.Charset != nil && *c.Charset == binaryCharset {
			fail("text column %s arrives with the binary character set", c.Name)
		}
	}
	if len(got.Rows) != len(want.rows) {
		fail("%d rows, want %d:\n got %q\nwant %v", len(got.Rows), len(want.rows), got.Rows, want.rows)
		return
	}
	for r, row := range got.Rows {
		if len(row) != len(want.columns) {
			fail("row %d has %d values, want %d", r, len(row), len(want.columns))
			continue
		}
		for i, v := range row {
			w, col := want.rows[r][i], want.columns[i]
			class := columnClass(col)
			if !w.Valid {
				if v[0] != "null" {
					fail("row %d %s: %q, want NULL", r, col.name, v)
				}
				continue
			}
			kind, ok := kinds[class]
			if !ok { // e.g. decimal/0: as decimal unless the driver tells apart
				kind, ok = kinds[strings.Split(class, "/")[0]]
			}
			if !ok {
				fail("column %s: type %s has no expectation for this driver", col.name, col.typ)
				continue
			}
			if v[0] != kind {
				fail("row %d %s (%s): the driver hands over a %s, want a %s", r, col.name, col.typ, v[0], kind)
			}
			if !sameValue(class, v[0], v[1], w.String) {
				fail("row %d %s: %q, want %q", r, col.name, v[1], w.String)
			}
		}
	}
}

func derefInt(p *int) any {
	if p == nil {
		return "unknown"
	}
	return *p
}

const binaryCharset = 63

// columnClass groups columns by what drivers convert them to: text, int,
// float, decimal, datetime; float/fixed is a DOUBLE with a declared scale
// (ROUND(x, 1) on MariaDB), decimal/0 a DECIMAL without fraction digits
// (SUM of integers on MariaDB), which some drivers treat apart.
func columnClass(c baseColumn) string {
	switch strings.TrimPrefix(c.typ, "UNSIGNED ") {
	case "VARCHAR", "CHAR", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET":
		return "text"
	case "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR":
		return "int"
	case "DOUBLE", "FLOAT":
		if c.scale >= 0 {
			return "float/fixed"
		}
		return "float"
	case "DECIMAL":
		if c.scale == 0 {
			return "decimal/0"
		}
		return "decimal"
	case "DATETIME", "TIMESTAMP", "DATE":
		return "datetime"
	}
	return c.typ
}

// sameValue compares a driver's value (as the probe printed it) with
// go-sql-driver's text: numbers by value (go-sql-driver parses numbers, so
// MariaDB's "0.0" is 0 there), dates to the driver's precision
// (JavaScript's Date keeps milliseconds), everything else exactly.
func sameValue(class, kind, got, want string) bool {
	switch strings.Split(class, "/")[0] {
	case "int", "float", "decimal":
		g, err1 := strconv.ParseFloat(got, 64)
		w, err2 := strconv.ParseFloat(want, 64)
		return err1 == nil && err2 == nil && (g == w || math.Abs(g-w) <= 1e-12*math.Abs(w))
	}
	if kind == "date" {
		const layout = "2006-01-02 15:04:05.999999999"
		g, err1 := time.Parse(layout, got)
		w, err2 := time.Parse(layout, want)
		digits := 0
		if i := strings.IndexByte(got, '.'); i >= 0 {
			digits = len(got) - i - 1
		}
		unit := time.Duration(math.Pow10(9 - min(digits, 9)))
		return err1 == nil && err2 == nil && g.Equal(w.Truncate(unit))
	}
	return got == want
}

// comparableType is a go-sql-driver type name as driverTypeName can tell
// it from a code and a character set: ENUM and SET are CHAR with a flag,
// UNSIGNED a flag too.
func comparableType(typ string) string {
	typ = strings.TrimPrefix(typ, "UNSIGNED ")
	if typ == "ENUM" || typ == "SET" {
		return "CHAR"
	}
	return typ
}

// pdoNativeTypes are PDO_MySQL's getColumnMeta native_type names (mysqlnd)
// by MYSQL_TYPE_* code.
var pdoNativeTypes = map[string]int{
	"DECIMAL": 0, "TINY": 1, "SHORT": 2, "LONG": 3, "FLOAT": 4, "DOUBLE": 5, "NULL": 6, "TIMESTAMP": 7,
	"LONGLONG": 8, "INT24": 9, "DATE": 10, "TIME": 11, "DATETIME": 12, "YEAR": 13, "NEWDATE": 14,
	"VARCHAR": 15, "BIT": 16, "JSON": 245, "NEWDECIMAL": 246, "ENUM": 247, "SET": 248, "TINY_BLOB": 249,
	"MEDIUM_BLOB": 250, "LONG_BLOB": 251, "BLOB": 252, "VAR_STRING": 253, "STRING": 254, "GEOMETRY": 255,
}

// driverTypeName names a driver's column type (a MYSQL_TYPE_* code or
// PDO's native_type) as go-sql-driver's DatabaseTypeName does, without
// UNSIGNED (not every driver tells the flags). Without a character set,
// the binary/text distinction is taken from want.
func driverTypeName(typ string, charset *int, want string) string {
	code, err := strconv.Atoi(typ)
	if err != nil {
		c, ok := pdoNativeTypes[typ]
		if !ok {
			return "unknown " + typ
		}
		code = c
	}
	binary := columnClass(baseColumn{typ: want}) != "text"
	if charset != nil {
		binary = *charset == binaryCharset
	}
	pick := func(bin, text string) string {
		if binary {
			return bin
		}
		return text
	}
	switch code {
	case 0, 246:
		return "DECIMAL"
	case 1:
		return "TINYINT"
	case 2:
		return "SMALLINT"
	case 3:
		return "INT"
	case 4:
		return "FLOAT"
	case 5:
		return "DOUBLE"
	case 6:
		return "NULL"
	case 7:
		return "TIMESTAMP"
	case 8:
		return "BIGINT"
	case 9:
		return "MEDIUMINT"
	case 10, 14:
		return "DATE"
	case 11:
		return "TIME"
	case 12:
		return "DATETIME"
	case 13:
		return "YEAR"
	case 15, 253:
		return pick("VARBINARY", "VARCHAR")
	case 16:
		return "BIT"
	case 245:
		return "JSON"
	case 247:
		return "ENUM"
	case 248:
		return "SET"
	case 249:
		return pick("TINYBLOB", "TINYTEXT")
	case 250:
		return pick("MEDIUMBLOB", "MEDIUMTEXT")
	case 251:
		return pick("LONGBLOB", "LONGTEXT")
	case 252:
		return pick("BLOB", "TEXT")
	case 254:
		return pick("BINARY", "CHAR")
	case 255:
		return "GEOMETRY"
	}
	return fmt.Sprintf("code %d", code)
}
