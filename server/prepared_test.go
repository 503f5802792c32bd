package server

import (
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-mysql-org/go-mysql/client"
	gomysql "github.com/go-mysql-org/go-mysql/mysql"
	driver "github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// Prepared statements (the binary protocol) on the embedded default answer
// what the same statements answer as text: go-sql-driver prepares a query
// with arguments unless interpolateParams is set, MariaDB Connector/J
// with useServerPrepStmts.
func TestPreparedStatementsOnEmbeddedSchema(t *testing.T) {
	srv, from, to := startSchemaProxy(t, 2)
	addr := srv.Addr().String()
	text := openSchema(t, addr, "root", "", "heapprof", "interpolateParams=true")
	binary := openSchema(t, addr, "root", "", "heapprof", "")
	binary.SetMaxOpenConns(1) // one session: statements, errors and reuse on one connection

	rows := func(db *sql.DB, q string, args ...any) [][]sql.NullString {
		t.Helper()
		r, err := db.Query(q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		out, err := mariadbtest.Scan(r)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	var id string
	if err := text.QueryRow("SELECT id FROM snapshots ORDER BY taken_at DESC LIMIT 1").Scan(&id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		sql  string
		args []any
		min  int // rows the answer has at least
	}{
		{"SELECT id, node_id, node_kind, taken_at, total_bytes, total_objects FROM snapshots WHERE node_id = ? AND taken_at BETWEEN ? AND ? ORDER BY taken_at",
			[]any{10001, from, to}, 2},
		{"SELECT name, flat_bytes, cum_bytes, flat_pct FROM functions WHERE snapshot_id = ? AND name LIKE ? ORDER BY cum_bytes DESC, name LIMIT ?",
			[]any{id, "jenode%", 5}, 1},
		// Every kind of column and argument: integers signed and not,
		// DOUBLE, DECIMAL, DATE, DATETIME with microseconds, TIME over a
		// day and negative, NULL, bytes, text with non-ASCII letters.
		{"SELECT ? AS i, ? AS f, ? AS s, ? AS n, ? AS b, CAST(? AS SIGNED) AS c, CAST(-7 AS SIGNED) AS neg, " +
			"CAST(7 AS UNSIGNED) AS u, 2.5e0 AS d, CAST(1.25 AS DECIMAL(5,2)) AS dec52, DATE('2026-01-02') AS dt, " +
			"TIMESTAMP('2026-01-02 03:04:05.123456') AS ts, CAST('-27:04:05' AS TIME) AS tm, NULL AS nul, 'x' AS x",
			[]any{int64(-5), 3.25, "héllo", nil, []byte{1, 2}, "42"}, 1},
	} {
		want, got := rows(text, q.sql, q.args...), rows(binary, q.sql, q.args...)
		if len(want) < q.min || !reflect.DeepEqual(got, want) {
			t.Errorf("%s\nbinary protocol: %v\ntext protocol:   %v", q.sql, got, want)
		}
	}

	// One statement executed again with other values, then closed.
	stmt, err := binary.Prepare("SELECT COUNT(*) FROM snapshots WHERE node_id = ?")
	if err != nil {
		t.Fatal(err)
	}
	for node, want := range map[int64]int64{10001: 2, 10002: 0} {
		var n int64
		if err := stmt.QueryRow(node).Scan(&n); err != nil || n != want {
			t.Fatalf("node %d: %d snapshots, %v; want %d", node, n, err, want)
		}
	}
	stmt.Close()

	// Errors at prepare time carry MySQL's codes; the session goes on.
	for q, code := range map[string]uint16{
		"SELECT * FROM no_such_table WHERE id = ?": 1146,
		"SELECT no_such_column FROM snapshots":     1054,
		"DELETE FROM snapshots WHERE id = ?":       1290,
		"SELECT FROM WHERE ?":                      1064,
	} {
		_, err := binary.Prepare(q)
		var me *driver.MySQLError
		if !errors.As(err, &me) || me.Number != code {
			t.Errorf("prepare %q: %v, want error %d", q, err, code)
		}
	}
	var n int
	if err := binary.QueryRow("SELECT COUNT(*) FROM snapshots WHERE node_id = ?", 10001).Scan(&n); err != nil || n != 2 {
		t.Fatalf("after the errors: %d, %v", n, err)
	}

	// MariaDB Connector/J with server-side prepared statements.
	h, p := hostPort(srv)
	out := jdbc(t, fmt.Sprintf("jdbc:mariadb://%s:%s/heapprof?useServerPrepStmts=true", h, p), "root", "",
		"prepared:SELECT node_id, COUNT(*) FROM snapshots WHERE node_kind = ? GROUP BY node_id:greptimedb",
		"prepared:SELECT id FROM no_such_table WHERE id = ?:1")
	if want := "10001\t2\nERROR 1146 42S02"; !strings.HasPrefix(out, want) {
		t.Fatalf("JDBC with useServerPrepStmts:\n%s\nwant prefix:\n%s", out, want)
	}
}

// Prepared-statement commands a driver would not send (unknown ids, cut
// packets, a cursor fetch) get MySQL's errors and the session goes on;
// values sent as long data are bound.
func TestPreparedStatementBadInput(t *testing.T) {
	srv, _, _ := startSchemaProxy(t, 0)
	c, err := client.Connect(srv.Addr().String(), "root", "", "heapprof")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stmt, err := c.Prepare("SELECT CONCAT(?, 'x') AS v")
	if err != nil {
		t.Fatal(err)
	}
	// send writes one command and returns the packets of its response
	// (up to the second EOF of a result set).
	send := func(payload ...byte) [][]byte {
		t.Helper()
		c.ResetSequence()
		if err := c.WritePacket(append(make([]byte, 4), payload...)); err != nil {
			t.Fatal(err)
		}
		if payload[0] == gomysql.COM_STMT_SEND_LONG_DATA || payload[0] == gomysql.COM_STMT_CLOSE {
			return nil
		}
		var out [][]byte
		eofs := 0
		for {
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, p)
			if len(out) == 1 && (p[0] == 0x00 || p[0] == 0xff) {
				return out
			}
			if p[0] == 0xfe && len(p) < 9 {
				if eofs++; eofs == 2 {
					return out
				}
			}
		}
	}
	errCode := func(resp [][]byte) int {
		if len(resp) != 1 || resp[0][0] != 0xff {
			return 0
		}
		return int(resp[0][1]) | int(resp[0][2])<<8
	}
	const execute, sendLong, fetch, reset, closeStmt = gomysql.COM_STMT_EXECUTE, gomysql.COM_STMT_SEND_LONG_DATA,
		gomysql.COM_STMT_FETCH, gomysql.COM_STMT_RESET, gomysql.COM_STMT_CLOSE
	for _, tc := range []struct {
		name    string
		payload []byte
		code    int
	}{
		{"unknown statement", []byte{execute, 99, 0, 0, 0, 0, 1, 0, 0, 0}, 1243},
		{"cut after the id", []byte{execute, 1, 0, 0, 0, 0}, 1835},
		{"no parameter types", []byte{execute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0}, 1210},
		{"value cut short", []byte{execute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_STRING, 0, 10, 'a', 'b'}, 1835},
		{"cursor fetch", []byte{fetch, 1, 0, 0, 0, 1, 0, 0, 0}, 1421},
	} {
		if got := errCode(send(tc.payload...)); got != tc.code {
			t.Errorf("%s: error %d, want %d", tc.name, got, tc.code)
		}
	}
	// Long data for parameter 0 in two pieces; the execution sends only
	// its type. The binary row is 0x00, the NULL bitmap, "abcx".
	send(sendLong, 1, 0, 0, 0, 0, 0, 'a', 'b')
	send(sendLong, 1, 0, 0, 0, 0, 0, 'c')
	resp := send(execute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_STRING, 0)
	if len(resp) != 5 || string(resp[3]) != "\x00\x00\x04abcx" {
		t.Fatalf("long data: %q", resp)
	}
	// More long data than one execution may take: an error, then the
	// statement works again.
	big := append([]byte{sendLong, 1, 0, 0, 0, 0, 0}, make([]byte, 9<<20)...)
	send(big...)
	send(big...)
	execOne := []byte{execute, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_STRING, 0, 1, 'z'}
	if got := errCode(send(execOne...)); got != 1153 {
		t.Fatalf("18 MB of long data: error %d, want 1153", got)
	}
	if resp := send(execOne...); len(resp) != 5 || string(resp[3]) != "\x00\x00\x02zx" {
		t.Fatalf("after too much long data: %q", resp)
	}
	if resp := send(reset, 1, 0, 0, 0); len(resp) != 1 || resp[0][0] != 0 {
		t.Fatalf("reset: %q", resp)
	}
	// The session is usable: the statement runs through go-mysql's client.
	r, err := stmt.Execute("y")
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := r.GetString(0, 0); v != "yx" {
		t.Fatalf("after bad input: %q", v)
	}
	send(closeStmt, 1, 0, 0, 0)
	if got := errCode(send(execute, 1, 0, 0, 0, 0, 1, 0, 0, 0)); got != 1243 {
		t.Fatalf("closed statement: error %d, want 1243", got)
	}
	// MariaDB's pipelining: id 0xffffffff executes the statement prepared
	// last. The prepare answers OK, one parameter and one column, each
	// list ended by EOF.
	if resp := send(append([]byte{gomysql.COM_STMT_PREPARE}, "SELECT CONCAT('p', ?)"...)...); resp[0][0] != 0 {
		t.Fatalf("prepare: %q", resp)
	}
	for range 4 {
		if _, err := c.ReadPacket(); err != nil {
			t.Fatal(err)
		}
	}
	resp = send(execute, 0xff, 0xff, 0xff, 0xff, 0, 1, 0, 0, 0, 0, 1, gomysql.MYSQL_TYPE_STRING, 0, 1, 'q')
	if len(resp) != 5 || string(resp[3]) != "\x00\x00\x02pq" {
		t.Fatalf("execute the last prepared: %q", resp)
	}
}
