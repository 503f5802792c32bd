package mysqlwire

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Encoding the engine's text values in the binary protocol fails cleanly
// on text that is not of the column's type.
func FuzzBinaryValue(f *testing.F) {
	for _, seed := range []struct {
		typ byte
		v   string
	}{
		{mysql.MYSQL_TYPE_LONGLONG, "-42"}, {mysql.MYSQL_TYPE_DATETIME, "2026-01-02 03:04:05.123456"},
		{mysql.MYSQL_TYPE_TIME, "-27:04:05"}, {mysql.MYSQL_TYPE_DATE, "0000-00-00"}, {mysql.MYSQL_TYPE_DOUBLE, "1e300"},
		{mysql.MYSQL_TYPE_TINY, "300"}, {mysql.MYSQL_TYPE_VAR_STRING, "héllo"}, {mysql.MYSQL_TYPE_TIME, "1:2"},
	} {
		f.Add(seed.typ, uint16(0), seed.v)
	}
	f.Fuzz(func(t *testing.T, typ byte, flags uint16, v string) {
		appendBinaryValue(nil, Column{Name: "c", Type: typ, Flags: flags}, v)
	})
}
