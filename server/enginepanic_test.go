package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// A statement during which go-mysql-server panics (these three did on
// 2026-11-25: a type assertion on an argument that is not a string) gets
// ERROR 1105 on the embedded default, and the connection goes on. Until
// then the session was closed: the client saw ERROR 2013, lost connection.
// Text and binary protocol alike.
func TestSQLEnginePanicAnswersAnError(t *testing.T) {
	srv, _, _ := startSchemaProxy(t, 0)
	ctx := context.Background()
	for _, params := range []string{"", "interpolateParams=false"} {
		db := openSchema(t, srv.Addr().String(), "root", "", "heapprof", params)
		conn, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var id0 int64
		if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id0); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"SELECT INET6_ATON(1)", "SELECT JSON_OBJECT(NULL, 1)", "SELECT JSON_VALUE('{}', 1)"} {
			var args []any
			if params != "" {
				q, args = strings.Replace(q, "1)", "?)", 1), []any{1} // a server-side prepared statement
			}
			var v any
			err := conn.QueryRowContext(ctx, q, args...).Scan(&v)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1105 || !strings.Contains(me.Message, "failed on this statement") {
				t.Errorf("%s (%s): got %v, want ERROR 1105 saying the engine failed", q, params, err)
			}
			var id int64
			if err := conn.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil || id != id0 {
				t.Fatalf("after %s: connection %d, %v; want the same connection %d going on", q, id, err, id0)
			}
		}
		conn.Close()
	}
}
