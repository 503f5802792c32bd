package sqlview

import (
	"context"
	gosql "database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// refusal is a statement the engine must refuse before running it. %[1]s
// in query is a file path in the test's temporary directory (an existing
// file holding a secret for reads, a fresh name for writes).
type refusal struct {
	name  string
	query string
	want  string // in the message
	// viaVariable: also PREPARE s FROM @q / EXECUTE s, where only the
	// analyzer rule sees the statement.
	viaVariable bool
}

const secret = "heapproxy-red-team-secret"

var refusals = []refusal{
	{"load_file", "SELECT LOAD_FILE('%[1]s')", "--secure-file-priv", true},
	{"load_file in where", "SELECT name FROM heapprof.functions WHERE name <> LOAD_FILE('%[1]s')", "--secure-file-priv", true},
	{"load_file in subquery", "SELECT (SELECT LOAD_FILE('%[1]s')) AS x FROM heapprof.snapshots", "--secure-file-priv", true},
	{"load_file into variable", "SET @x = LOAD_FILE('%[1]s')", "--secure-file-priv", false},
	{"load_file upper case", "select Load_File('%[1]s')", "--secure-file-priv", true},
	{"into outfile", "SELECT * FROM heapprof.snapshots INTO OUTFILE '%[1]s.out'", "--secure-file-priv", true},
	{"into outfile fields", "SELECT id, node_id FROM heapprof.snapshots INTO OUTFILE '%[1]s.out' FIELDS TERMINATED BY ','", "--secure-file-priv", true},
	{"into dumpfile", "SELECT 'x' INTO DUMPFILE '%[1]s.out'", "--secure-file-priv", true},
	{"table into outfile", "TABLE heapprof.snapshots INTO OUTFILE '%[1]s.out'", "--secure-file-priv", false},
	{"load data", "LOAD DATA INFILE '%[1]s' INTO TABLE heapprof.snapshots", "--secure-file-priv", false},
	{"load data local", "LOAD DATA LOCAL INFILE '%[1]s' INTO TABLE heapprof.snapshots", "--secure-file-priv", false},
	{"prepare literal", "PREPARE s1 FROM 'SELECT LOAD_FILE(''%[1]s'')'", "--secure-file-priv", false},
	{"explain into outfile", "EXPLAIN SELECT 1 INTO OUTFILE '%[1]s.out'", "--secure-file-priv", false},
	{"get_lock", "SELECT GET_LOCK('heapprof', 1)", "GET_LOCK", true},
	{"release_lock", "SELECT RELEASE_LOCK('heapprof')", "RELEASE_LOCK", true},
	{"release_all_locks", "SELECT RELEASE_ALL_LOCKS()", "RELEASE_ALL_LOCKS", true},
	{"is_free_lock", "SELECT IS_FREE_LOCK('heapprof')", "IS_FREE_LOCK", true},
	{"is_used_lock", "SELECT IS_USED_LOCK('heapprof')", "IS_USED_LOCK", true},
	{"set global", "SET GLOBAL secure_file_priv = ''", "SET GLOBAL", false},
	{"set global sql_mode", "SET GLOBAL sql_mode = ''", "SET GLOBAL", true},
	{"set @@global", "SET @@global.max_connections = 1", "global", true},
	{"set persist", "SET PERSIST max_connections = 1", "PERSIST", false},
	{"set password", "SET PASSWORD = 'x'", "SET PASSWORD", false},
	{"kill", "KILL 1", "KILL", false},
	{"kill query", "KILL QUERY 1", "KILL", false},
	{"create user", "CREATE USER evil IDENTIFIED BY 'x'", "", false},
	{"grant", "GRANT ALL ON *.* TO bi", "", false},
	{"drop user", "DROP USER bi", "", false},
	{"flush", "FLUSH PRIVILEGES", "FLUSH", false},
	{"call", "CALL heapprof.p()", "CALL", false},
	// READ locks and UNLOCK TABLES answer OK (mariadb-dump sends them;
	// TestMariaDBDumpRestores).
	{"lock tables write", "LOCK TABLES heapprof.functions WRITE", "LOCK", false},
	{"analyze table", "ANALYZE TABLE heapprof.functions", "ANALYZE", false},
	{"change replication source", "CHANGE REPLICATION SOURCE TO SOURCE_HOST='127.0.0.1', SOURCE_PORT=1", "replication", false},
	{"start replica", "START REPLICA", "replication", false},
	{"stop replica", "STOP REPLICA", "replication", false},
	{"reset replica", "RESET REPLICA", "replication", false},
	{"purge binary logs", "PURGE BINARY LOGS TO 'x'", "replication", false},
	{"create database", "CREATE DATABASE evil", "read-only", false},
	{"create table", "CREATE TABLE heapprof.evil (a int)", "read-only", false},
}

// assertRefused wants ERROR 1290 (HY000) naming want.
func assertRefused(t *testing.T, path string, err error, want string) {
	t.Helper()
	var me *Error
	if !errors.As(err, &me) {
		t.Fatalf("%s: got %v, want ERROR 1290 (HY000)", path, err)
	}
	if me.Code != 1290 || me.State != "HY000" || !strings.Contains(me.Message, want) || strings.Contains(me.Message, secret) {
		t.Errorf("%s: got %v, want ERROR 1290 (HY000) naming %q", path, me, want)
	}
}

// assertUsable runs a query in the session after the refusal.
func assertUsable(t *testing.T, e *Engine, s *Session) {
	t.Helper()
	a, err := engineAnswer(context.Background(), e, s, "SELECT COUNT(*) FROM heapprof.snapshots")
	if err != nil || len(a.rows) != 1 || a.rows[0][0] != "7" {
		t.Fatalf("session after refusal: %v %v", a, err)
	}
}

// assertNoFiles wants dir to hold only the secret file.
func assertNoFiles(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files in %s: %v, want only the secret", dir, names)
	}
}

func secretFile(t *testing.T) (dir, path string) {
	dir = t.TempDir()
	path = filepath.Join(dir, "secret")
	if err := os.WriteFile(path, []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

func TestRefusedText(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := secretFile(t)
			q := strings.ReplaceAll(tc.query, "%[1]s", path)
			_, err := engineAnswer(context.Background(), e, s, q)
			assertRefused(t, "text", err, tc.want)
			assertNoFiles(t, dir)
			assertUsable(t, e, s)
		})
	}
}

func TestRefusedPrepared(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := secretFile(t)
			q := strings.ReplaceAll(tc.query, "%[1]s", path)
			p, err := e.Prepare(context.Background(), s, q)
			if err == nil {
				// Not refused at prepare: it must be at execute.
				r, xerr := e.Execute(context.Background(), s, p, nil)
				if xerr == nil {
					r.Close()
				}
				e.ClosePrepared(s, p)
				err = xerr
			}
			assertRefused(t, "prepare", err, tc.want)
			assertNoFiles(t, dir)
			assertUsable(t, e, s)
		})
	}
}

// TestRefusedPreparedFromVariable: SQL-level PREPARE s FROM @q hides the
// statement from the parser; PREPARE reads @q's text and refuses it there,
// before anything is planned (the analyzer rule, which refused it at
// EXECUTE before 2026-11-25, stays behind it).
func TestRefusedPreparedFromVariable(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	for _, tc := range refusals {
		if !tc.viaVariable {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir, path := secretFile(t)
			q := strings.ReplaceAll(tc.query, "%[1]s", path)
			if _, err := engineAnswer(context.Background(), e, s, "SET @q = '"+strings.ReplaceAll(q, "'", "''")+"'"); err != nil {
				t.Fatal(err)
			}
			_, err := engineAnswer(context.Background(), e, s, "PREPARE s FROM @q")
			assertRefused(t, "prepare", err, tc.want)
			if _, err := engineAnswer(context.Background(), e, s, "EXECUTE s"); err == nil {
				t.Error("EXECUTE of the refused statement ran")
			}
			assertNoFiles(t, dir)
			assertUsable(t, e, s)
		})
	}
}

// TestRefusedThroughClient runs the refusals through go-sql-driver/mysql:
// the text protocol, and the binary protocol (a statement with an
// argument is prepared on the server).
func TestRefusedThroughClient(t *testing.T) {
	e, _ := newTestEngine(t, fixture())
	addr := startFront(t, e)
	db, err := gosql.Open("mysql", "bi:bi@tcp("+addr+")/heapprof?allowAllFiles=true")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			dir, path := secretFile(t)
			q := strings.ReplaceAll(tc.query, "%[1]s", path)
			check := func(proto string, err error) {
				t.Helper()
				var me *mysql.MySQLError
				if !errors.As(err, &me) || me.Number != 1290 || string(me.SQLState[:]) != "HY000" || !strings.Contains(me.Message, tc.want) {
					t.Errorf("%s: %v, want ERROR 1290 (HY000) naming %q", proto, err, tc.want)
				}
			}
			_, err := db.ExecContext(ctx, q)
			check("text", err)
			// The binary protocol: COM_STMT_PREPARE, then EXECUTE.
			st, err := db.PrepareContext(ctx, q)
			if err == nil {
				_, err = st.ExecContext(ctx)
				st.Close()
			}
			check("binary", err)
			assertNoFiles(t, dir)
			var n int
			if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id > ?", 0).Scan(&n); err != nil || n != 7 {
				t.Fatalf("connection after refusal: %d %v", n, err)
			}
		})
	}
}

// TestAllowedStatements: what the guard lets through still runs.
func TestAllowedStatements(t *testing.T) {
	e, s := newTestEngine(t, fixture())
	for _, q := range []string{
		"SET SESSION sql_mode = 'ANSI_QUOTES'",
		"SET @@session.time_zone = '+00:00'",
		"SET @a = 1",
		"SELECT SLEEP(0)",
		"SELECT id INTO @first FROM heapprof.snapshots ORDER BY taken_at LIMIT 1",
		"PREPARE s2 FROM 'SELECT COUNT(*) FROM heapprof.functions WHERE node_id = ?'",
		"SET @n = 10001",
		"EXECUTE s2 USING @n",
		"DEALLOCATE PREPARE s2",
		"EXPLAIN SELECT * FROM heapprof.functions",
		"START TRANSACTION",
		"COMMIT",
		"SHOW PROCESSLIST",
		"SELECT REPEAT('ab', 3), SPACE(2), LPAD('x', 3, '-'), REPLACE('aaa', 'a', 'bb')",
	} {
		if _, err := engineAnswer(context.Background(), e, s, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestValueBounds: string functions that build from a count answer NULL
// beyond MaxValueBytes instead of allocating gigabytes.
func TestValueBounds(t *testing.T) {
	e, err := NewWithOptions(fixture(), Options{MaxValueBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s, err := e.NewSession(context.Background(), "bi", "127.0.0.1:1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ q, want string }{
		{"SELECT REPEAT('abc', 2147483647)", "NULL"},
		{"SELECT LENGTH(REPEAT('abc', 1000))", "3000"},
		{"SELECT SPACE(2147483647)", "NULL"},
		{"SELECT RPAD('a', 2147483647, 'b')", "NULL"},
		{"SELECT LPAD('a', 2147483647, 'b')", "NULL"},
		{"SELECT REPLACE(REPEAT('a', 1000000), 'a', 'bbbbbbbb')", "NULL"},
		{"SELECT (SELECT REPEAT(name, 2147483647) FROM heapprof.functions LIMIT 1)", "NULL"},
		{"SELECT LENGTH(REPEAT(name, 2)) FROM heapprof.functions WHERE name = 'main' LIMIT 1", "8"},
	} {
		a, err := engineAnswer(context.Background(), e, s, tc.q)
		if err != nil || len(a.rows) != 1 || a.rows[0][0] != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.q, a, err, tc.want)
		}
	}
	var before runtimeMem
	before.read()
	p, err := e.Prepare(context.Background(), s, "SELECT REPEAT(?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Execute(context.Background(), s, p, []any{"abc", int64(2147483647)})
	if err != nil {
		t.Fatal(err)
	}
	row, err := r.Next()
	r.Close()
	if err != nil || row[0] != nil {
		t.Errorf("prepared REPEAT(?, ?): %q %v, want NULL", row, err)
	}
	var after runtimeMem
	after.read()
	if grown := int64(after.totalAlloc - before.totalAlloc); grown > 64<<20 {
		t.Errorf("prepared REPEAT allocated %d bytes", grown)
	}
	// Typing a statement evaluates constant text (a date's fraction
	// digits, constText) but never builds a REPEAT.
	before.read()
	for _, q := range []string{
		"SELECT TIMESTAMP(REPEAT('1', 200000000))",
		"SELECT REPEAT('1', 200000000) + INTERVAL 1 DAY",
	} {
		if a, err := engineAnswer(context.Background(), e, s, q); err != nil || len(a.rows) != 1 || a.rows[0][0] != "NULL" {
			t.Errorf("%s: %v %v, want NULL", q, a, err)
		}
	}
	after.read()
	if grown := int64(after.totalAlloc - before.totalAlloc); grown > 64<<20 {
		t.Errorf("dates of REPEAT allocated %d bytes", grown)
	}
}
