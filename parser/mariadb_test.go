package parser

import (
	"database/sql"
	"reflect"
	"testing"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// startMariaDB starts a throwaway MariaDB and returns a connection to it
// as root. It is stopped when the test ends.
func startMariaDB(t *testing.T) *sql.DB {
	t.Helper()
	srv, err := mariadbtest.Start(mariadbtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	db, err := sql.Open("mysql", srv.DSN("root", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestColumnsMatchMariaDB checks Field.Column against the column names the
// real server gives the same SELECT, and that a LIMIT is read as it does.
func TestColumnsMatchMariaDB(t *testing.T) {
	db := startMariaDB(t)
	queries := []string{
		"SELECT @@version_comment LIMIT 1",
		"select @@VERSION_COMMENT limit 0",
		"SELECT DATABASE()",
		"select database()",
		"SELECT  @@max_allowed_packet,@@system_time_zone ,  @@time_zone,@@auto_increment_increment",
		"SELECT @@session.auto_increment_increment AS auto_increment_increment, @@GLOBAL.max_connections",
		"SELECT @@local.time_zone tz, @@session.tx_isolation",
		"SELECT VERSION()",
		"SELECT 1",
		"SELECT USER(), CURRENT_USER(), current_user, CONNECTION_ID()",
		"SELECT 'abc', \"a\"\"b\", 'it''s', 'x' AS y, NULL, -2, 1.50, 18446744073709551615",
		"SELECT /* c */ 1",
		"SELECT 1 /* c */",
		"SELECT 1 -- c\n",
		"SELECT 1;",
		"/*!40101 SELECT 1 */",
		"/*!40101 SELECT @@version_comment*/ LIMIT 1",
		"/* mysql-connector-j */ SELECT  @@session.tx_read_only",
	}
	for _, q := range queries {
		st, err := Classify(q)
		if err != nil || st.Kind != LocalSelect {
			t.Errorf("Classify(%q) = %+v, %v; want LocalSelect", q, st, err)
			continue
		}
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("MariaDB %q: %v", q, err)
			continue
		}
		cols, err := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range st.Select.Fields {
			got = append(got, f.Column)
		}
		if !reflect.DeepEqual(got, cols) {
			t.Errorf("Classify(%q) columns %q, MariaDB says %q", q, got, cols)
		}
		want := 1
		if st.Select.HasLimit {
			want = min(int(st.Select.Limit), 1)
		}
		if n != want {
			t.Errorf("%q: MariaDB returned %d rows, the parsed LIMIT means %d", q, n, want)
		}
	}
}
