package mysqlwire

import (
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// TestTemporalParams decodes binary DATE/DATETIME/TIME parameters and
// compares them with go-mysql's Format* codecs: equal where those are
// used, and the documented differences where ours is kept.
func TestTemporalParams(t *testing.T) {
	cases := []struct {
		name    string
		typ     byte
		payload []byte // without the length byte
		want    string
		goMySQL string // what go-mysql prints ("" when it refuses), when it differs
	}{
		{name: "date-0", typ: mysql.MYSQL_TYPE_DATE, want: "0000-00-00"},
		{name: "date-4", typ: mysql.MYSQL_TYPE_DATE, payload: []byte{0xea, 0x07, 1, 2}, want: "2026-01-02"},
		{name: "date-7", typ: mysql.MYSQL_TYPE_DATE, payload: []byte{0xea, 0x07, 1, 2, 3, 4, 5}, want: "2026-01-02", goMySQL: ""},
		{name: "datetime-0", typ: mysql.MYSQL_TYPE_DATETIME, want: "0000-00-00 00:00:00"},
		{name: "datetime-4", typ: mysql.MYSQL_TYPE_DATETIME, payload: []byte{0xea, 0x07, 1, 2}, want: "2026-01-02 00:00:00"},
		{name: "datetime-7", typ: mysql.MYSQL_TYPE_TIMESTAMP, payload: []byte{0xea, 0x07, 1, 2, 3, 4, 5}, want: "2026-01-02 03:04:05"},
		{name: "datetime-11", typ: mysql.MYSQL_TYPE_DATETIME, payload: []byte{0xea, 0x07, 1, 2, 3, 4, 5, 0x40, 0xe2, 0x01, 0}, want: "2026-01-02 03:04:05.123456"},
		{name: "datetime-11-zero-us", typ: mysql.MYSQL_TYPE_DATETIME, payload: []byte{0xea, 0x07, 1, 2, 3, 4, 5, 0, 0, 0, 0},
			want: "2026-01-02 03:04:05", goMySQL: "2026-01-02 03:04:05.000000"},
		{name: "time-0", typ: mysql.MYSQL_TYPE_TIME, want: "00:00:00"},
		{name: "time-8", typ: mysql.MYSQL_TYPE_TIME, payload: []byte{1, 1, 0, 0, 0, 3, 4, 5}, want: "-27:04:05"},
		{name: "time-12", typ: mysql.MYSQL_TYPE_TIME, payload: []byte{0, 34, 0, 0, 0, 22, 59, 59, 0x40, 0xe2, 0x01, 0}, want: "838:59:59.123456"},
		{name: "time-12-zero-us", typ: mysql.MYSQL_TYPE_TIME, payload: []byte{0, 0, 0, 0, 0, 3, 4, 5, 0, 0, 0, 0},
			want: "03:04:05", goMySQL: "03:04:05.000000"},
		{name: "time-256-days", typ: mysql.MYSQL_TYPE_TIME, payload: []byte{0, 0, 1, 0, 0, 1, 2, 3},
			want: "6145:02:03", goMySQL: "01:02:03"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := append([]byte{byte(len(c.payload))}, c.payload...)
			v, rest, err := DecodeParam(c.typ, false, append(in, 0x99))
			if err != nil {
				t.Fatal(err)
			}
			if v != c.want || len(rest) != 1 {
				t.Errorf("DecodeParam = %q (rest %x), want %q", v, rest, c.want)
			}
			var ref []byte
			switch c.typ {
			case mysql.MYSQL_TYPE_DATE:
				ref, err = mysql.FormatBinaryDate(len(c.payload), c.payload)
			case mysql.MYSQL_TYPE_TIME:
				ref, err = mysql.FormatBinaryTime(len(c.payload), c.payload)
			default:
				ref, err = mysql.FormatBinaryDateTime(len(c.payload), c.payload)
			}
			goMySQL := c.want
			if c.goMySQL != "" || c.name == "date-7" {
				goMySQL = c.goMySQL
			}
			if err != nil {
				ref = nil
			}
			if string(ref) != goMySQL {
				t.Errorf("go-mysql prints %q (%v), the table says %q", ref, err, goMySQL)
			}
		})
	}
}

// TestTemporalParamLengthByte: a temporal parameter's length byte is read
// as a number of bytes up to 255. 0xff once wrapped to 0 (1+b[0] in byte
// arithmetic) and the slice panicked, ending the session
// (FuzzStmtExecuteBody's input in server/testdata/fuzz).
func TestTemporalParamLengthByte(t *testing.T) {
	for _, typ := range []byte{mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME} {
		long := append(append([]byte{0xff}, make([]byte, 255)...), 0x99)
		if _, rest, err := DecodeParam(typ, false, long); err != nil || len(rest) != 1 || rest[0] != 0x99 {
			t.Errorf("type %#x, 255 bytes: rest %x, err %v; want the byte after them", typ, rest, err)
		}
		if _, _, err := DecodeParam(typ, false, append([]byte{0xff}, make([]byte, 10)...)); err == nil {
			t.Errorf("type %#x: 255 bytes announced, 10 sent: no error", typ)
		}
	}
}
