package mysqlwire

// The binary protocol's values (COM_STMT_EXECUTE parameters, the rows of
// its result sets), as MySQL's documentation of the protocol lays them out.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-mysql-org/go-mysql/mysql"
)

var errShort = errors.New("value cut short")

// DecodeParam reads one binary-protocol value of type typ from b.
func DecodeParam(typ byte, unsigned bool, b []byte) (any, []byte, error) {
	fixed := func(size int) (uint64, []byte, error) {
		if len(b) < size {
			return 0, nil, errShort
		}
		var v uint64
		for i := size - 1; i >= 0; i-- {
			v = v<<8 | uint64(b[i])
		}
		return v, b[size:], nil
	}
	integer := func(size int) (any, []byte, error) {
		v, rest, err := fixed(size)
		if err != nil || unsigned {
			return v, rest, err
		}
		shift := 64 - 8*size // sign-extend
		return int64(v<<shift) >> shift, rest, nil
	}
	if size := intSize(typ); size > 0 {
		return integer(size)
	}
	switch typ {
	case mysql.MYSQL_TYPE_NULL:
		return nil, b, nil
	case mysql.MYSQL_TYPE_FLOAT:
		v, rest, err := fixed(4)
		return float64(math.Float32frombits(uint32(v))), rest, err
	case mysql.MYSQL_TYPE_DOUBLE:
		v, rest, err := fixed(8)
		return math.Float64frombits(v), rest, err
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP, mysql.MYSQL_TYPE_TIME:
		// A length byte, then that many bytes. The length is widened
		// before it is added to: 1+b[0] in byte arithmetic is 0 for 0xff.
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, nil, errShort
		}
		n := 1 + int(b[0])
		if typ == mysql.MYSQL_TYPE_TIME {
			return timeParam(b[1:n]), b[n:], nil
		}
		return datetimeParam(typ, b[1:n]), b[n:], nil
	}
	size, isNull, k := LenEncInt(b)
	if k == 0 || uint64(len(b)-k) < size {
		return nil, nil, errShort
	}
	if isNull {
		return nil, b[k:], nil
	}
	v, rest := string(b[k:k+int(size)]), b[k+int(size):]
	if typ == mysql.MYSQL_TYPE_DECIMAL || typ == mysql.MYSQL_TYPE_NEWDECIMAL {
		return Decimal(v), rest, nil
	}
	return v, rest, nil
}

// Decimal is a DECIMAL parameter's text, told apart from a string so the
// engine binds it as a number.
type Decimal string

// intSize is the width of an integer type in the binary protocol, 0 for
// other types.
func intSize(typ byte) int {
	switch typ {
	case mysql.MYSQL_TYPE_TINY:
		return 1
	case mysql.MYSQL_TYPE_SHORT, mysql.MYSQL_TYPE_YEAR:
		return 2
	case mysql.MYSQL_TYPE_LONG, mysql.MYSQL_TYPE_INT24:
		return 4
	case mysql.MYSQL_TYPE_LONGLONG:
		return 8
	}
	return 0
}

// datetimeParam prints a binary DATE/DATETIME/TIMESTAMP (0, 4, 7 or 11
// bytes) as MySQL's text form. go-mysql's FormatBinaryDate and
// FormatBinaryDateTime print the forms they know as MySQL does and are used
// for those; ours remains for what they get wrong or refuse:
//   - the 11-byte form with zero microseconds: go-mysql prints
//     ".000000", MariaDB does not (Item_param::set_time sets no decimals
//     when second_part is 0), nor does MySQL's text form;
//   - a DATE sent in 7 or 11 bytes (the date part is meant; go-mysql
//     refuses it), and lengths go-mysql refuses, read as far as they go.
func datetimeParam(typ byte, b []byte) string {
	n := len(b)
	if typ == mysql.MYSQL_TYPE_DATE && (n == 0 || n == 4) {
		if v, err := mysql.FormatBinaryDate(n, b); err == nil {
			return string(v)
		}
	}
	if typ != mysql.MYSQL_TYPE_DATE && (n == 0 || n == 4 || n == 7 || n == 11 && binary.LittleEndian.Uint32(b[7:]) != 0) {
		if v, err := mysql.FormatBinaryDateTime(n, b); err == nil {
			return string(v)
		}
	}
	var y, mo, d, h, mi, sec, us int
	if n >= 4 {
		y, mo, d = int(binary.LittleEndian.Uint16(b)), int(b[2]), int(b[3])
	}
	if n >= 7 {
		h, mi, sec = int(b[4]), int(b[5]), int(b[6])
	}
	if n >= 11 {
		us = int(binary.LittleEndian.Uint32(b[7:]))
	}
	date := fmt.Sprintf("%04d-%02d-%02d", y, mo, d)
	if typ == mysql.MYSQL_TYPE_DATE {
		return date
	}
	if us != 0 {
		return fmt.Sprintf("%s %02d:%02d:%02d.%06d", date, h, mi, sec, us)
	}
	return fmt.Sprintf("%s %02d:%02d:%02d", date, h, mi, sec)
}

// timeParam prints a binary TIME (0, 8 or 12 bytes) as [-]hhh:mm:ss[.ffffff].
// go-mysql's FormatBinaryTime is used where it is right; ours remains for:
//   - days of 256 and more: go-mysql reads only the low byte of the
//     4-byte day count (beyond TIME's 838:59:59, but a client may send it);
//   - the 12-byte form with zero microseconds: go-mysql prints ".000000",
//     MariaDB and MySQL do not (as for DATETIME above);
//   - other lengths, read as far as they go (go-mysql refuses them).
func timeParam(b []byte) string {
	n := len(b)
	if n == 0 || (n == 8 || n == 12) && binary.LittleEndian.Uint32(b[1:]) < 256 && (n == 8 || binary.LittleEndian.Uint32(b[8:]) != 0) {
		if v, err := mysql.FormatBinaryTime(n, b); err == nil {
			return string(v)
		}
	}
	var neg bool
	var days, h, mi, sec, us int
	if n >= 8 {
		neg, days, h, mi, sec = b[0] == 1, int(binary.LittleEndian.Uint32(b[1:])), int(b[5]), int(b[6]), int(b[7])
	}
	if n >= 12 {
		us = int(binary.LittleEndian.Uint32(b[8:]))
	}
	sign := ""
	if neg {
		sign = "-"
	}
	t := fmt.Sprintf("%s%02d:%02d:%02d", sign, days*24+h, mi, sec)
	if us != 0 {
		t += fmt.Sprintf(".%06d", us)
	}
	return t
}

// AppendBinaryRow encodes one row of the engine's text values in the binary
// protocol: a 0x00 header, the NULL bitmap (offset 2), then the values.
func AppendBinaryRow(dst []byte, cols []Column, cells [][]byte) ([]byte, error) {
	dst = append(dst, 0)
	bitmap := len(dst)
	dst = append(dst, make([]byte, (len(cols)+7+2)/8)...)
	for i, c := range cols {
		if i >= len(cells) || cells[i] == nil {
			dst[bitmap+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		var err error
		if dst, err = appendBinaryValue(dst, c, string(cells[i])); err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
	}
	return dst, nil
}

// appendBinaryValue encodes the text value v of column c in its binary form.
func appendBinaryValue(dst []byte, c Column, v string) ([]byte, error) {
	integer := func(size int) ([]byte, error) {
		var u uint64
		if c.Flags&mysql.UNSIGNED_FLAG != 0 {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, err
			}
			u = n
		} else {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, err
			}
			u = uint64(n)
		}
		for i := range size {
			dst = append(dst, byte(u>>(8*i)))
		}
		return dst, nil
	}
	if size := intSize(c.Type); size > 0 {
		return integer(size)
	}
	switch c.Type {
	case mysql.MYSQL_TYPE_FLOAT:
		f, err := strconv.ParseFloat(v, 32)
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(f))), err
	case mysql.MYSQL_TYPE_DOUBLE:
		f, err := strconv.ParseFloat(v, 64)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), err
	case mysql.MYSQL_TYPE_DATE, mysql.MYSQL_TYPE_DATETIME, mysql.MYSQL_TYPE_TIMESTAMP:
		return appendBinaryDatetime(dst, v)
	case mysql.MYSQL_TYPE_TIME:
		return appendBinaryTime(dst, v)
	}
	dst = mysql.AppendLengthEncodedInteger(dst, uint64(len(v)))
	return append(dst, v...), nil
}

// appendBinaryDatetime encodes "YYYY-MM-DD[ hh:mm:ss[.f]]" in the shortest
// of the 0, 4, 7 and 11 byte forms.
func appendBinaryDatetime(dst []byte, v string) ([]byte, error) {
	date, clock, _ := strings.Cut(v, " ")
	var f [6]int // y, mo, d, h, mi, s
	us := 0
	ok := atoi3(date, "-", f[:3])
	if ok && clock != "" {
		hms, frac, _ := strings.Cut(clock, ".")
		var err error
		us, err = micros(frac)
		ok = atoi3(hms, ":", f[3:]) && err == nil
	}
	if !ok {
		return nil, fmt.Errorf("datetime %q", v)
	}
	size := 0
	switch {
	case us != 0:
		size = 11
	case f[3] != 0 || f[4] != 0 || f[5] != 0:
		size = 7
	case f[0] != 0 || f[1] != 0 || f[2] != 0:
		size = 4
	}
	dst = append(dst, byte(size))
	if size >= 4 {
		dst = binary.LittleEndian.AppendUint16(dst, uint16(f[0]))
		dst = append(dst, byte(f[1]), byte(f[2]))
	}
	if size >= 7 {
		dst = append(dst, byte(f[3]), byte(f[4]), byte(f[5]))
	}
	if size == 11 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(us))
	}
	return dst, nil
}

// appendBinaryTime encodes "[-]h:mm:ss[.f]" (hours may exceed 24) in the
// 0, 8 or 12 byte form.
func appendBinaryTime(dst []byte, v string) ([]byte, error) {
	neg := strings.HasPrefix(v, "-")
	hms, frac, _ := strings.Cut(strings.TrimPrefix(v, "-"), ".")
	var f [3]int
	us, err := micros(frac)
	if !atoi3(hms, ":", f[:]) || err != nil {
		return nil, fmt.Errorf("time %q", v)
	}
	size := 0
	switch {
	case us != 0:
		size = 12
	case f[0] != 0 || f[1] != 0 || f[2] != 0:
		size = 8
	}
	dst = append(dst, byte(size))
	if size == 0 {
		return dst, nil
	}
	sign := byte(0)
	if neg {
		sign = 1
	}
	dst = append(dst, sign)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(f[0]/24))
	dst = append(dst, byte(f[0]%24), byte(f[1]), byte(f[2]))
	if size == 12 {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(us))
	}
	return dst, nil
}

// atoi3 reads three integers separated by sep ("2026-01-02", "27:04:05")
// into out.
func atoi3(s, sep string, out []int) bool {
	parts := strings.Split(s, sep)
	if len(parts) != 3 {
		return false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return false
		}
		out[i] = n
	}
	return true
}

// micros reads up to six fraction digits as microseconds.
func micros(frac string) (int, error) {
	if frac == "" {
		return 0, nil
	}
	if len(frac) > 6 {
		frac = frac[:6]
	}
	n, err := strconv.Atoi(frac)
	if err != nil {
		return 0, err
	}
	for range 6 - len(frac) {
		n *= 10
	}
	return n, nil
}
