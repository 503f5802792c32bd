package sqlview

// Text read as a date the way MariaDB reads it (sql-common/my_time.c,
// str_to_datetime_or_date, MariaDB 10.11). go-mysql-server v0.20.0 tries a
// dozen Go layouts, so text MariaDB reads as a date ('2026-11-20 09',
// '2026/11/20', '26-11-20', '2026-11-20T09', '2026-11-20 09:30:00 PM',
// ' 2026-11-20') was ERROR 1105 in a comparison with a DATETIME and NULL
// in a CAST, a seventh fraction digit rounded where MariaDB cuts it, and
// text that is no date ('main', '2026-02-30') was ERROR 1105 where MariaDB
// warns and compares with the zero date (or, for a day past the month's
// end, with that day: taken_at < '2026-11-31' holds for all of November).

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// dateText is text read as a date.
type dateText struct {
	year, month, day, hour, minute, second, micro int
	// read: a date was read (else the text is no date: MariaDB's
	// MYSQL_TIMESTAMP_NONE or _ERROR).
	read bool
	// datetime: more than the three date fields were read.
	datetime bool
	// truncated: text around the date was ignored (warning 1292),
	// extraDigits: fraction digits past the sixth were (note 1292).
	truncated, extraDigits bool
	// badDay: the day is past the end of its month (2026-02-30). A
	// comparison takes it as it is, a value (CAST, DATE()) is NULL.
	badDay bool
	// fracDigits is how many fraction digits were read (at most 6).
	fracDigits int
}

// latin1 character classes MariaDB's date reader uses (my_isdigit,
// my_isspace and my_ispunct over strings/ctype-latin1.c's table), byte by
// byte: MariaDB reads utf8mb4 text's bytes with that table.
func dateDigit(b byte) bool { return b >= '0' && b <= '9' }

func dateSpace(b byte) bool { return b == ' ' || b >= '\t' && b <= '\r' || b == 0xa0 }

func datePunct(b byte) bool {
	switch {
	case b < 0x80:
		return b > ' ' && b < 0x7f && !dateDigit(b) && !(b|0x20 >= 'a' && b|0x20 <= 'z')
	case b < 0xa0:
		// cp1252's punctuation in MariaDB's latin1 (0x81, 0x8d, 0x8f,
		// 0x90 and 0x9d are nothing; the rest of 0x8a-0x9f letters).
		switch b {
		case 0x80, 0x82, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89, 0x8b,
			0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9b:
			return true
		}
		return false
	case b < 0xc0:
		return b != 0xa0
	}
	return b == 0xd7 || b == 0xf7
}

// readDateText reads s as MariaDB's str_to_datetime_or_date does: leading
// spaces and a '+' skipped, trailing spaces and letters cut (with a
// warning), then either digits alone ([YY]YYMMDD[T]hhmmss[.ffffff], the
// year two digits long unless there are 4, 8 or 14 and more) or numbers
// between any punctuation (the year as long as it is written), the date
// and the time apart by 'T', punctuation or spaces. Two-digit years
// below 70 are 20xx, others 19xx.
func readDateText(s string) dateText {
	body, neg, garbage := textBody(s)
	if neg || len(body) == 0 || !dateDigit(body[0]) {
		return dateText{}
	}
	d, _ := readDateBody(body, true)
	if d.read && garbage {
		d.truncated = true
	}
	return d
}

// textBody is MariaDB's find_body: s without leading spaces and sign
// (neg: it was '-') and without trailing spaces and letters (garbage:
// there were letters).
func textBody(s string) (body []byte, neg, garbage bool) {
	b := []byte(s)
	i := 0
	for i < len(b) && dateSpace(b[i]) {
		i++
	}
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	for i < len(b) && dateSpace(b[i]) {
		i++
	}
	end := len(b)
	for ; end > i; end-- {
		c := b[end-1]
		if dateDigit(c) || datePunct(c) {
			break
		}
		if dateSpace(c) {
			continue
		}
		if c == 'T' && end-2 >= i && dateDigit(b[end-2]) {
			break
		}
		garbage = true
	}
	return b[i:end], neg, garbage
}

// bodyRead is how far readDateBody got: the fields it read, where it
// stopped reading them, and whether they were out of range.
type bodyRead struct {
	fields, end int
	outOfRange  bool
}

// readDateBody is MariaDB's str_to_datetime_or_date_body over a body
// that starts with a digit; punctSep: punctuation may separate the date
// from the time (else it ends the reading: no date).
func readDateBody(body []byte, punctSep bool) (dateText, bodyRead) {
	var d dateText
	r := dateReader{b: body, punctSep: punctSep}
	yearDigits := d.readFields(&r)
	br := bodyRead{fields: r.fields, end: r.i}
	if r.fields < 3 {
		return dateText{}, br
	}
	if !r.bad && r.i < len(body) && body[r.i] == '.' {
		r.i++
		start := r.i
		v, ok := r.number(min(len(body), start+6))
		if !ok {
			d.truncated = true
		}
		n := r.i - start
		d.fracDigits = n
		for ; n < 6; n++ {
			v *= 10
		}
		d.micro = v
		for r.i < len(body) && dateDigit(body[r.i]) {
			r.i++
			d.extraDigits = true
		}
		br.end = r.i
	}
	if r.bad {
		d.truncated = true
	}
	notZero := d.year|d.month|d.day|d.hour|d.minute|d.second|d.micro != 0
	if yearDigits == 2 && notZero {
		if d.year < 70 {
			d.year += 2000
		} else {
			d.year += 1900
		}
	}
	if d.year > 9999 || d.month > 12 || d.day > 31 || d.hour > 23 || d.minute > 59 || d.second > 59 {
		br.outOfRange = true
		return dateText{}, br
	}
	if notZero && d.month > 0 && d.day > daysIn(d.year, d.month) {
		d.badDay = true
	}
	if r.i != len(body) {
		d.truncated = true
	}
	d.read, d.datetime = true, br.fields > 3
	return d, br
}

// readFields reads the year to the second into d and returns how many
// digits the year was written with.
func (d *dateText) readFields(r *dateReader) int {
	digits := r.digitsAt(0)
	pos := digits
	if pos < len(r.b) && r.b[pos] == 'T' {
		pos++
		n := r.digitsAt(pos)
		digits += n
		pos += n
	}
	if pos < len(r.b) && r.b[pos] == '.' && digits >= 12 {
		pos++
		pos += r.digitsAt(pos)
	}
	if pos == len(r.b) {
		// Digits only: fixed widths.
		yearDigits := 2
		if digits == 4 || digits == 8 || digits >= 14 {
			yearDigits = 4
		}
		for k, f := range []*int{&d.year, &d.month, &d.day, nil, &d.hour, &d.minute, &d.second} {
			if f == nil {
				if r.i < len(r.b) && r.b[r.i] == 'T' {
					r.i++
				}
				continue
			}
			width := 2
			if k == 0 {
				width = yearDigits
			}
			v, ok := r.number(min(len(r.b), r.i+width))
			if !ok {
				r.bad = true
				break
			}
			*f = v
		}
		return yearDigits
	}
	start := r.i
	d.year, _ = r.number(len(r.b))
	yearDigits := r.i - start
	steps := []func() bool{
		r.punct, func() bool { return r.field(&d.month) },
		r.punct, func() bool { return r.field(&d.day) },
		r.dateTimeSeparator, func() bool { return r.field(&d.hour) },
		r.punct, func() bool { return r.field(&d.minute) },
		r.punct, func() bool { return r.field(&d.second) },
	}
	for _, step := range steps {
		if !step() {
			r.bad = true
			break
		}
	}
	return yearDigits
}

// dateReader walks a date's text; fields counts the numbers read.
type dateReader struct {
	b        []byte
	i        int
	fields   int
	bad      bool // a field or separator was not where it belonged
	punctSep bool // punctuation may separate the date and the time
}

func (r *dateReader) digitsAt(i int) int {
	n := 0
	for i+n < len(r.b) && dateDigit(r.b[i+n]) {
		n++
	}
	return n
}

// number reads the digits before end: none at the end of the text is
// fine (and no field), a non-digit is not.
func (r *dateReader) number(end int) (int, bool) {
	if r.i >= end {
		return 0, true
	}
	if !dateDigit(r.b[r.i]) {
		return 0, false
	}
	v := 0
	for r.i < end && dateDigit(r.b[r.i]) {
		if v < 1e9 {
			v = v*10 + int(r.b[r.i]-'0')
		}
		r.i++
	}
	r.fields++
	return v, true
}

func (r *dateReader) field(f *int) bool {
	v, ok := r.number(len(r.b))
	*f = v
	return ok
}

func (r *dateReader) punct() bool {
	if r.i >= len(r.b) {
		return true
	}
	if datePunct(r.b[r.i]) {
		r.i++
		return true
	}
	return false
}

func (r *dateReader) dateTimeSeparator() bool {
	if r.i >= len(r.b) {
		return true
	}
	if c := r.b[r.i]; c == 'T' || datePunct(c) && r.punctSep {
		r.i++
		return true
	}
	if datePunct(r.b[r.i]) {
		r.fields = 0 // MariaDB's hard abort: no date
		return false
	}
	if !dateSpace(r.b[r.i]) {
		return false
	}
	for r.i < len(r.b) && dateSpace(r.b[r.i]) {
		r.i++
	}
	return true
}

func daysIn(year, month int) int {
	// Year 0 is no leap year to MariaDB (calc_days_in_year).
	if month == 2 && daysInYear(year) == 366 {
		return 29
	}
	return [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
}

// packed orders dates as MariaDB's packed DATETIME does: field by field,
// a zero month or day before the first, the zero date first of all.
func (d dateText) packed() int64 {
	return (((((int64(d.year)*13+int64(d.month))*32+int64(d.day))*24+int64(d.hour))*60+int64(d.minute))*60+int64(d.second))*1e6 + int64(d.micro)
}

// zeroDate is go-mysql-server's value for 0000-00-00 00:00:00.
var zeroDate = time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC)

// kind names the value in warnings as MariaDB does.
func (d dateText) kind() string {
	if d.read && !d.datetime {
		return "date"
	}
	return "datetime"
}

// warnCompared warns what MariaDB warns when s, read as d, is compared
// with a date: no date is compared as the zero date.
func warnCompared(ctx *sql.Context, s string, d dateText) {
	switch {
	case !d.read || d.truncated:
		ctx.Warn(erWarnDatetime, "Truncated incorrect %s value: '%s'", d.kind(), warnedText(s))
	case d.extraDigits:
		note(ctx, erWarnDatetime, "Truncated incorrect %s value: '%s'", d.kind(), warnedText(s))
	}
}

// note is ctx.Warn at MariaDB's Note level.
func note(ctx *sql.Context, code int, format string, args ...any) {
	if ctx == nil || ctx.Session == nil {
		return
	}
	ctx.Session.Warn(&sql.Warning{Level: "Note", Code: code, Message: fmt.Sprintf(format, args...)})
}

// warnedText is text as MariaDB's date warnings show it (err_conv over
// its bytes, then the message's %-.128T): bytes outside printable ASCII
// as \xHH, and past 128 characters cut to 125 and "...".
func warnedText(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x20 && c <= 0x7e {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "\\x%02X", c)
		}
	}
	if out := b.String(); len(out) > 128 {
		return out[:125] + "..."
	}
	return b.String()
}
