package server

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/heapprof/sqlview"
)

// A COM_STMT_EXECUTE body from a client is read without panicking: any
// bytes give values or a malformed-packet error.
func FuzzStmtExecuteBody(f *testing.F) {
	f.Add(uint8(1), []byte{0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_STRING, 0, 2, 'h', 'i'})
	f.Add(uint8(2), []byte{0, 1, 0, 0, 0, 0x02, 1, mysql.MYSQL_TYPE_LONGLONG, 0x80, mysql.MYSQL_TYPE_NULL, 0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add(uint8(3), []byte{0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_DATETIME, 0, mysql.MYSQL_TYPE_TIME, 0, mysql.MYSQL_TYPE_DOUBLE, 0,
		11, 0xea, 0x07, 1, 2, 3, 4, 5, 1, 0, 0, 0, 12, 1, 1, 0, 0, 0, 3, 4, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Add(uint8(1), []byte{0, 1, 0, 0, 0, 0, 1, mysql.MYSQL_TYPE_NEWDECIMAL, 0, 0xfc, 0xff})
	f.Fuzz(func(t *testing.T, params uint8, body []byte) {
		st := &localStmt{p: &sqlview.Prepared{Params: int(params % 8)}}
		args, e := st.bind(body)
		if e == nil && len(args) != st.p.Params {
			t.Fatalf("%d values for %d parameters", len(args), st.p.Params)
		}
	})
}
