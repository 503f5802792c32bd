package sqlview

// information_schema and the SHOW statements that describe tables, for
// the heapprof schema, against MariaDB holding the same DDL: row by row,
// column by column (infoschema.go).

import (
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// readerUser is a MariaDB account with what heapproxy grants a user that
// may read profiles: SELECT on heapprof.* (SHOW GRANTS), so PRIVILEGES
// answers compare.
const readerUser = "reader"

var readerOnce sync.Once

// readerAnswer asks MariaDB as readerUser, creating the account once.
func readerAnswer(ctx context.Context, t *testing.T, q string) answer {
	t.Helper()
	readerOnce.Do(func() {
		// root may write although the server is read_only.
		if _, err := cliAnswer(ctx, "mysql", "CREATE USER IF NOT EXISTS "+readerUser+"@localhost IDENTIFIED BY '"+readerUser+"'; "+
			"GRANT SELECT ON heapprof.* TO "+readerUser+"@localhost"); err != nil {
			t.Fatal(err)
		}
	})
	out, err := exec.CommandContext(ctx, "mariadb", "--no-defaults", "-u"+readerUser, "-p"+readerUser, "-S", ref.socket,
		"--default-character-set=utf8mb4", "-B", "-e", q, "heapprof").CombinedOutput()
	if err != nil {
		t.Fatalf("MariaDB: %v: %s\n%s", err, out, q)
	}
	var a answer
	if len(out) == 0 {
		return a
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	a.cols = strings.Split(lines[0], "\t")
	for _, l := range lines[1:] {
		a.rows = append(a.rows, strings.Split(l, "\t"))
	}
	return a
}

// Columns one server has and the other has not: go-mysql-server's
// information_schema and SHOW statements have MySQL 8's column sets. They
// are listed so that a change on either side shows; a client naming one
// gets an error (1054), not a wrong answer.
var (
	onlyMySQL8  = []string{"DEFAULT_ENCRYPTION", "SRS_ID", "IS_VISIBLE", "EXPRESSION", "ENFORCED", "Visible", "Expression"}
	onlyMariaDB = []string{"SCHEMA_COMMENT", "MAX_INDEX_LENGTH", "TEMPORARY", "IS_GENERATED", "IGNORED", "Ignored",
		"Max_index_length", "Temporary"}
)

// Columns whose values are MariaDB's server state, not facts of the DDL:
// InnoDB's estimates of the rows the tests loaded into it (row counts,
// page sizes, sampled cardinalities) and when the tables were created and
// loaded. The engine reads its rows from the snapshot store on every scan
// and keeps no statistics.
var serverState = []string{
	"TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH", "INDEX_LENGTH", "CREATE_TIME", "UPDATE_TIME", "CARDINALITY",
	"Rows", "Avg_row_length", "Data_length", "Index_length", "Create_time", "Update_time", "Cardinality",
}

func TestInformationSchemaMatchesMariaDB(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e, err := New(fixture())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	s, err := e.NewSessionWith(ctx, readerUser, "127.0.0.1:50000", 9, SessionOptions{ReadsProfiles: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Query(ctx, s, "USE heapprof"); err != nil {
		t.Fatal(err)
	}
	tables := []string{TableDiffs, TableFunctions, TableSnapshots, TableStacks}
	type tc struct {
		name, query string
		// rows: the answer must have some (a filter on a corrected value).
		rows bool
		// asBI asks MariaDB as bi, who holds more than SELECT: MariaDB,
		// as the SQL standard says, shows TABLE_CONSTRAINTS and
		// REFERENTIAL_CONSTRAINTS rows only to a user with some privilege
		// other than SELECT on the table (none to heapproxy's profile
		// readers). The engine shows them to every user on purpose: BI
		// tools draw and join by the keys (Connector/J's getImportedKeys
		// and DBeaver read them there).
		asBI bool
	}
	tests := []tc{
		{name: "schemata", query: "SELECT * FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = 'heapprof'"},
		{name: "tables", query: "SELECT * FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'heapprof' ORDER BY TABLE_NAME"},
		{name: "columns", query: "SELECT * FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'heapprof' ORDER BY TABLE_NAME, ORDINAL_POSITION"},
		{name: "statistics", query: "SELECT * FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'heapprof' ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX"},
		{name: "key column usage", query: "SELECT * FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = 'heapprof' ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION"},
		{name: "referential constraints", asBI: true, query: "SELECT * FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = 'heapprof' ORDER BY CONSTRAINT_NAME"},
		{name: "table constraints", asBI: true, query: "SELECT * FROM information_schema.TABLE_CONSTRAINTS WHERE TABLE_SCHEMA = 'heapprof' ORDER BY TABLE_NAME, CONSTRAINT_NAME"},
		// Filters and joins see the corrected values.
		{name: "unique keys", rows: true, query: "SELECT TABLE_NAME, INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'heapprof' AND NON_UNIQUE = 0 ORDER BY 1, 2"},
		{name: "binary columns", rows: true, query: "SELECT TABLE_NAME, COLUMN_NAME, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'heapprof' AND COLLATION_NAME = 'utf8mb4_bin' AND CHARACTER_OCTET_LENGTH >= 65535 ORDER BY 1, 2"},
		{name: "tables collation", rows: true, query: "SELECT t.TABLE_NAME, s.DEFAULT_COLLATION_NAME FROM information_schema.TABLES t JOIN information_schema.SCHEMATA s ON s.SCHEMA_NAME = t.TABLE_SCHEMA AND s.DEFAULT_COLLATION_NAME = t.TABLE_COLLATION WHERE t.TABLE_SCHEMA = 'heapprof' ORDER BY 1"},
		{name: "show full columns where", rows: true, query: "SHOW FULL COLUMNS FROM heapprof.functions WHERE Collation = 'utf8mb4_bin' OR Type = 'bigint(20)'"},
		{name: "show create database", query: "SHOW CREATE DATABASE heapprof"},
		{name: "show table status", query: "SHOW TABLE STATUS FROM heapprof"},
		{name: "show table status like", query: "SHOW TABLE STATUS LIKE 'snap%'"},
	}
	for _, tb := range tables {
		tests = append(tests,
			tc{name: "show index " + tb, query: "SHOW INDEX FROM heapprof." + tb},
			tc{name: "show keys " + tb, query: "SHOW KEYS FROM " + tb},
			tc{name: "show full columns " + tb, query: "SHOW FULL COLUMNS FROM " + tb},
			tc{name: "show columns " + tb, query: "SHOW COLUMNS FROM heapprof." + tb},
			tc{name: "describe " + tb, query: "DESCRIBE " + tb},
			// Connector/J 2.7.6's DatabaseMetaData.getIndexInfo(catalog,
			// null, table, unique, approximate), as its source builds it.
			tc{name: "connectorj getIndexInfo " + tb, query: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, NON_UNIQUE,  TABLE_SCHEMA INDEX_QUALIFIER, INDEX_NAME, 3 TYPE, SEQ_IN_INDEX ORDINAL_POSITION, COLUMN_NAME, COLLATION ASC_OR_DESC, CARDINALITY, NULL PAGES, NULL FILTER_CONDITION FROM INFORMATION_SCHEMA.STATISTICS WHERE TABLE_NAME = '" + tb + "' AND TABLE_SCHEMA = 'heapprof' ORDER BY NON_UNIQUE, TYPE, INDEX_NAME, ORDINAL_POSITION"},
			tc{name: "connectorj getIndexInfo unique " + tb, query: "SELECT TABLE_SCHEMA TABLE_CAT, NULL TABLE_SCHEM, TABLE_NAME, NON_UNIQUE,  TABLE_SCHEMA INDEX_QUALIFIER, INDEX_NAME, 3 TYPE, SEQ_IN_INDEX ORDINAL_POSITION, COLUMN_NAME, COLLATION ASC_OR_DESC, CARDINALITY, NULL PAGES, NULL FILTER_CONDITION FROM INFORMATION_SCHEMA.STATISTICS WHERE TABLE_NAME = '" + tb + "' AND TABLE_SCHEMA = 'heapprof' AND NON_UNIQUE = 0 ORDER BY NON_UNIQUE, TYPE, INDEX_NAME, ORDINAL_POSITION"},
			tc{name: "connectorj getColumns " + tb, query: getColumnsQuery("TABLE_SCHEMA='heapprof' AND TABLE_NAME='" + tb + "'")},
		)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := engineAnswer(ctx, e, s, tt.query)
			if err != nil {
				t.Fatalf("engine: %v", err)
			}
			want := readerAnswer(ctx, t, tt.query)
			if tt.asBI {
				if want, err = refAnswer(ctx, tt.query); err != nil {
					t.Fatalf("MariaDB: %v", err)
				}
			}
			if tt.rows && len(want.rows) == 0 {
				t.Fatalf("MariaDB has no rows: the case tests nothing")
			}
			if len(got.rows) != len(want.rows) {
				t.Fatalf("engine %d rows, MariaDB %d:\nengine:\n%s\nMariaDB:\n%s", len(got.rows), len(want.rows), got, want)
			}
			if len(want.rows) == 0 {
				return // batch mode prints no names without rows
			}
			var shared []string
			for _, c := range got.cols {
				switch {
				case slices.Contains(want.cols, c):
					shared = append(shared, c)
				case !slices.Contains(onlyMySQL8, c):
					t.Errorf("engine column %s is not MariaDB's", c)
				}
			}
			for _, c := range want.cols {
				if !slices.Contains(got.cols, c) && !slices.Contains(onlyMariaDB, c) {
					t.Errorf("MariaDB column %s is missing", c)
				}
			}
			for i := range want.rows {
				for _, c := range shared {
					if slices.Contains(serverState, c) {
						continue
					}
					g, w := got.rows[i][slices.Index(got.cols, c)], want.rows[i][slices.Index(want.cols, c)]
					if g != w {
						t.Errorf("row %d %s: engine %q, MariaDB %q", i, c, g, w)
					}
				}
			}
			if t.Failed() {
				t.Logf("engine:\n%s\nMariaDB:\n%s", got, want)
			}
		})
	}
}

// TestInformationSchemaColumnsForOthers: users that may not read profiles
// get no PRIVILEGES on heapprof's columns (their SHOW GRANTS lists none),
// and the other databases' columns are left as go-mysql-server gives them
// but for the collation names.
func TestInformationSchemaColumnsForOthers(t *testing.T) {
	ctx := context.Background()
	e, s := newTestEngine(t, fixture())
	for _, tt := range []struct{ query, want string }{
		{"SELECT DISTINCT PRIVILEGES FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'heapprof'", "[[]]"},
		{"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE COLLATION_NAME LIKE '%0900%'", "[[0]]"},
		{"SELECT COUNT(*) FROM information_schema.COLUMNS WHERE GENERATION_EXPRESSION = ''", "[[0]]"},
	} {
		got, err := engineAnswer(ctx, e, s, tt.query)
		if err != nil {
			t.Fatalf("%s: %v", tt.query, err)
		}
		if fmt.Sprint(got.rows) != tt.want {
			t.Errorf("%s: %v, want %s", tt.query, got.rows, tt.want)
		}
	}
}
