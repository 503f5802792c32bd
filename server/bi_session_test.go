package server

import (
	"context"
	"database/sql"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"testing"

	driver "github.com/go-sql-driver/mysql"
)

// stmtAnswer is a statement's answer through go-sql-driver/mysql: column
// names and types as the driver names them, text rows, the error code.
type stmtAnswer struct {
	cols, types []string
	rows        [][]string
	code        uint16
}

func answerOn(ctx context.Context, t *testing.T, conn *sql.Conn, q string) stmtAnswer {
	t.Helper()
	rs, err := conn.QueryContext(ctx, q)
	var me *driver.MySQLError
	if errors.As(err, &me) {
		return stmtAnswer{code: me.Number}
	}
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	var a stmtAnswer
	cts, _ := rs.ColumnTypes()
	for _, c := range cts {
		a.cols = append(a.cols, c.Name())
		a.types = append(a.types, c.DatabaseTypeName())
	}
	for rs.Next() {
		vals := make([]sql.RawBytes, len(cts))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = "NULL"
			if v != nil {
				row[i] = string(v)
			}
		}
		a.rows = append(a.rows, row)
	}
	if err := rs.Err(); errors.As(err, &me) {
		return stmtAnswer{code: me.Number}
	}
	return a
}

// passwordHash is what MariaDB's SHOW GRANTS adds for an account with a
// password; heapproxy shows no password hashes.
var passwordHash = regexp.MustCompile(` IDENTIFIED BY PASSWORD '[^']*'`)

// Session statements BI tools and drivers send, in order on one connection
// of a real MariaDB and one of the embedded default (both through
// go-sql-driver/mysql, as user viewer granted SELECT on heapprof.*): the
// same columns, types, rows and error codes.
func TestBISessionMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	srv, _, _ := startSchemaProxyWith(t, 2, Config{Users: []User{{Name: "root"}, {Name: "viewer", Password: "pw"}},
		ProfileUsers: []string{"root", "viewer"}})
	// MariaDB holds the proxy's snapshot rows (id, node_id) in heapprof.snapshots.
	proxyRoot := openSchema(t, srv.Addr().String(), "root", "", "", "")
	rows, err := proxyRoot.QueryContext(ctx, "SELECT id, node_id FROM heapprof.snapshots ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	load := "DROP DATABASE IF EXISTS heapprof; CREATE DATABASE heapprof; " +
		"CREATE TABLE heapprof.snapshots (id varchar(255) PRIMARY KEY, node_id bigint NOT NULL); " +
		"DROP USER IF EXISTS viewer@'%'; CREATE USER viewer@'%' IDENTIFIED BY 'pw'; GRANT SELECT ON heapprof.* TO viewer@'%';"
	n := 0
	for rows.Next() {
		var id string
		var node int64
		if err := rows.Scan(&id, &node); err != nil {
			t.Fatal(err)
		}
		load += "INSERT INTO heapprof.snapshots VALUES ('" + id + "', " + strconv.FormatInt(node, 10) + ");"
		n++
	}
	rows.Close()
	if n != 2 {
		t.Fatalf("%d snapshots on the proxy, want 2", n)
	}
	rootExec(t, load)
	t.Cleanup(func() { rootExec(t, "DROP DATABASE heapprof; DROP USER viewer@'%'") })

	conns := make([]*sql.Conn, 2)
	for i, addr := range []string{env.addr, srv.Addr().String()} {
		db := openSchema(t, addr, "viewer", "pw", "heapprof", "")
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	tests := []struct {
		name, query string
		types       bool // compare column types too
	}{
		{"set user variable", "SET @n = 10001", false},
		{"where user variable", "SELECT COUNT(*) AS c FROM heapprof.snapshots WHERE node_id = @n", false},
		{"select user variable", "SELECT @n + 1 AS m", false},
		{"prepare", "PREPARE s FROM 'SELECT id FROM heapprof.snapshots WHERE node_id = ? ORDER BY id'", false},
		{"execute using", "EXECUTE s USING @n", true},
		{"sql_quote_show_create", "SET sql_quote_show_create = 1", false},
		{"session_track_system_variables", "SET session_track_system_variables = 'autocommit'", false},
		{"more session variables", "SET net_read_timeout = 30, group_concat_max_len = 1000000, sql_safe_updates = 1, foreign_key_checks = 0", false},
		{"echoed", "SELECT @@sql_quote_show_create, @@session_track_system_variables, @@net_read_timeout, @@group_concat_max_len, @@sql_safe_updates, @@foreign_key_checks", false},
		{"unknown variable", "SET no_such_variable = 1", false},
		{"sql_select_limit", "SET SQL_SELECT_LIMIT = 1", false},
		{"limited", "SELECT id FROM heapprof.snapshots ORDER BY id", true},
		{"sql_select_limit default", "SET SQL_SELECT_LIMIT = DEFAULT", false},
		{"unlimited", "SELECT id FROM heapprof.snapshots ORDER BY id", true},
		{"time_zone", "SET time_zone = '+05:30'", false},
		{"now in the session time zone", "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW()) AS d, @@time_zone AS tz", false},
		{"now is a datetime", "SELECT NOW() AS t LIMIT 0", true},
		{"show grants", "SHOW GRANTS", false},
		{"show grants for current_user", "SHOW GRANTS FOR CURRENT_USER()", false},
		{"mysql.user", "SELECT user FROM mysql.user", false},
		{"three-part keyword column", "SELECT heapprof.snapshots.id FROM heapprof.snapshots ORDER BY 1 LIMIT 0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, got := answerOn(ctx, t, conns[0], tt.query), answerOn(ctx, t, conns[1], tt.query)
			for _, r := range want.rows {
				for i := range r {
					r[i] = passwordHash.ReplaceAllString(r[i], "")
				}
			}
			if got.code != want.code || !slices.Equal(got.cols, want.cols) || !slices.EqualFunc(got.rows, want.rows, slices.Equal) {
				t.Errorf("heapproxy: %d %q %q\nMariaDB:   %d %q %q", got.code, got.cols, got.rows, want.code, want.cols, want.rows)
			}
			if tt.types && !slices.Equal(got.types, want.types) {
				t.Errorf("types: heapproxy %q, MariaDB %q", got.types, want.types)
			}
		})
	}
}

// SHOW VARIABLES and SELECT @@x give the same values on the embedded
// default, heapproxy's own (version, version_comment, max_allowed_packet,
// license) and the engine's (sql_mode, time_zone).
func TestShowVariablesAgreesWithSelect(t *testing.T) {
	ctx := context.Background()
	srv, _, _ := startSchemaProxy(t, 0)
	db := openSchema(t, srv.Addr().String(), "root", "", "", "")
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, name := range []string{"version", "version_comment", "license", "max_allowed_packet", "sql_mode", "time_zone", "port"} {
		t.Run(name, func(t *testing.T) {
			var shown, value, selected string
			if err := conn.QueryRowContext(ctx, "SHOW VARIABLES LIKE '"+name+"'").Scan(&shown, &value); err != nil {
				t.Fatal(err)
			}
			if err := conn.QueryRowContext(ctx, "SELECT @@"+name).Scan(&selected); err != nil {
				t.Fatal(err)
			}
			if value != selected {
				t.Errorf("SHOW VARIABLES %q, SELECT @@%s %q", value, name, selected)
			}
		})
	}
	var version string
	if err := conn.QueryRowContext(ctx, "SELECT @@version").Scan(&version); err != nil || version != srv.cfg.ServerVersion {
		t.Errorf("@@version %q (%v), want the handshake's %q", version, err, srv.cfg.ServerVersion)
	}
}
