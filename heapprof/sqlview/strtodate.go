package sqlview

import (
	"fmt"
	"strings"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// STR_TO_DATE as MariaDB's extract_date_time (sql/item_timefunc.cc) parses:
// go-mysql-server v0.20.0 lacks %X %x %V %v %U %u %W %a %w %j and reads %f
// as a number of microseconds, so Metabase's week bucket
// STR_TO_DATE(CONCAT(YEARWEEK(x), ' Sunday'), '%X%V %W') was NULL.

// erWrongValueForType is MySQL's warning 1411 ("Incorrect %s value: '%s'
// for function %s"), what STR_TO_DATE warns when a value does not parse.
const erWrongValueForType = 1411

var (
	monthNames = []string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// strToDateKind is the result type MariaDB derives from a constant format
// (get_date_time_result_type): DATE with date specifiers only, TIME with
// time specifiers only, DATETIME with both; %f adds six fraction digits.
func strToDateKind(format string) sql.Type {
	var date, tm, frac bool
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		switch format[i] {
		case 'f':
			frac, tm = true, true
		case 'H', 'h', 'I', 'i', 'k', 'l', 'p', 'r', 'S', 's', 'T':
			tm = true
		case 'a', 'b', 'c', 'D', 'd', 'e', 'j', 'M', 'm', 'U', 'u', 'V', 'v', 'W', 'w', 'X', 'x', 'Y', 'y':
			date = true
		}
	}
	switch {
	case date && tm && frac:
		return types.DatetimeMaxPrecision
	case date && tm:
		return types.Datetime
	case tm:
		return types.Time
	case date:
		return types.Date
	}
	return types.DatetimeMaxPrecision
}

type strToDate struct{ date, format sql.Expression }

var _ sql.FunctionExpression = (*strToDate)(nil)

func (s *strToDate) Resolved() bool             { return s.date.Resolved() && s.format.Resolved() }
func (s *strToDate) String() string             { return fmt.Sprintf("STR_TO_DATE(%s, %s)", s.date, s.format) }
func (s *strToDate) IsNullable() bool           { return true }
func (s *strToDate) Children() []sql.Expression { return []sql.Expression{s.date, s.format} }
func (s *strToDate) FunctionName() string       { return "str_to_date" }
func (s *strToDate) Description() string        { return "MariaDB's STR_TO_DATE (heapprof/sqlview)" }

func (s *strToDate) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	if len(c) != 2 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(c), 2)
	}
	return &strToDate{date: c[0], format: c[1]}, nil
}

// Type is DATE, TIME or DATETIME by a constant format, DATETIME(6)
// otherwise (MariaDB's choice when the format is known only per row).
func (s *strToDate) Type() sql.Type {
	lit, ok := s.format.(*expression.Literal)
	if !ok {
		return types.DatetimeMaxPrecision
	}
	f, ok := lit.Value().(string)
	if !ok {
		return types.DatetimeMaxPrecision
	}
	return strToDateKind(f)
}

func (s *strToDate) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	var strs [2]string
	for i, e := range []sql.Expression{s.date, s.format} {
		v, err := e.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		t, _, err := types.LongText.Convert(ctx, v)
		if err != nil {
			return nil, err
		}
		strs[i], _ = t.(string)
	}
	p, ok := parseMySQLDate(strs[0], strs[1])
	if !ok {
		ctx.Warn(erWrongValueForType, "Incorrect datetime value: '%s' for function str_to_date", strs[0])
		return nil, nil
	}
	typ := s.Type()
	if typ == types.Time {
		us := ((int64(p.day)*24+int64(p.hour))*3600+int64(p.minute)*60+int64(p.second))*1_000_000 + int64(p.micro)
		return types.Time.MicrosecondsToTimespan(us), nil
	}
	if p.month == 0 || p.day == 0 {
		// MariaDB answers dates such as 2024-00-00 (a year alone); Go's
		// time cannot hold them, so say so rather than answer a wrong day.
		return nil, errUnsupported(fmt.Sprintf("STR_TO_DATE results with a zero month or day ('%04d-%02d-%02d' from '%s')", p.year, p.month, p.day, strs[0]))
	}
	t := time.Date(p.year, time.Month(p.month), p.day, p.hour, p.minute, p.second, p.micro*1000, time.UTC)
	if t.Day() != p.day {
		return nil, errUnsupported(fmt.Sprintf("STR_TO_DATE results that are not calendar dates ('%04d-%02d-%02d' from '%s')", p.year, p.month, p.day, strs[0]))
	}
	if typ == types.Date {
		return time.Date(p.year, time.Month(p.month), p.day, 0, 0, 0, 0, time.UTC), nil
	}
	if dt, ok := typ.(sql.DatetimeType); ok && dt.Precision() == 0 {
		t = t.Truncate(time.Second)
	}
	return t, nil
}

// parsed is extract_date_time's MYSQL_TIME.
type parsed struct {
	year, month, day, hour, minute, second, micro int
}

// parseMySQLDate is extract_date_time: false where MariaDB answers NULL
// with warning 1411.
func parseMySQLDate(val, format string) (parsed, bool) {
	var p parsed
	weekday, yearday, week := 0, 0, -1
	weekYear, weekYearSunday := -1, false
	sundayFirst, strictWeek, usaTime := false, false, false
	daypart := 0
	val = strings.TrimLeft(val, " \t\n\r\v\f")
	// num reads up to n digits (an optional sign first), as my_strtoll10 on
	// a window of n characters; false when there is no digit.
	num := func(n int) (int, bool) {
		i, neg := 0, false
		if i < len(val) && i < n && (val[i] == '-' || val[i] == '+') {
			neg = val[i] == '-'
			i++
		}
		start, v := i, 0
		for i < len(val) && i < n && val[i] >= '0' && val[i] <= '9' {
			v = v*10 + int(val[i]-'0')
			i++
		}
		if i == start {
			return 0, false
		}
		val = val[i:]
		if neg {
			v = -v
		}
		return v, true
	}
	// word matches a name (or a unique prefix of one), case-insensitively:
	// MariaDB's check_word; the answer counts from 1.
	word := func(names []string, abbrev bool) int {
		i := 0
		for i < len(val) && (val[i] >= 'a' && val[i] <= 'z' || val[i] >= 'A' && val[i] <= 'Z') {
			i++
		}
		w := val[:i]
		if w == "" {
			return 0
		}
		found := 0
		for k, n := range names {
			if abbrev {
				n = n[:3]
			}
			if strings.EqualFold(n, w) {
				val = val[i:]
				return k + 1
			}
			if len(w) < len(n) && strings.EqualFold(n[:len(w)], w) {
				if found != 0 {
					return 0
				}
				found = k + 1
			}
		}
		if found != 0 {
			val = val[i:]
		}
		return found
	}
	year2000 := func(y int) int {
		if y < 70 {
			return y + 2000
		}
		return y + 1900
	}
	expand := map[byte]string{'r': "%I:%i:%S %p", 'T': "%H:%i:%S"}
	for fi := 0; fi < len(format) && val != ""; fi++ {
		val = strings.TrimLeft(val, " \t\n\r\v\f")
		if val == "" {
			break
		}
		c := format[fi]
		if c != '%' || fi+1 == len(format) {
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				continue
			}
			if val[0] != c {
				return p, false
			}
			val = val[1:]
			continue
		}
		fi++
		spec := format[fi]
		if sub, ok := expand[spec]; ok {
			format = format[:fi-1] + sub + format[fi+1:]
			fi -= 2
			continue
		}
		var ok bool
		switch spec {
		case 'Y':
			before := len(val)
			if p.year, ok = num(4); ok && before-len(val) <= 2 {
				p.year = year2000(p.year)
			}
		case 'y':
			if p.year, ok = num(2); ok {
				p.year = year2000(p.year)
			}
		case 'm', 'c':
			p.month, ok = num(2)
		case 'M':
			p.month = word(monthNames, false)
			ok = p.month > 0
		case 'b':
			p.month = word(monthNames, true)
			ok = p.month > 0
		case 'd', 'e':
			p.day, ok = num(2)
		case 'D':
			if p.day, ok = num(2); ok {
				val = val[min(len(val), 2):]
			}
		case 'h', 'I', 'l':
			usaTime = true
			p.hour, ok = num(2)
		case 'k', 'H':
			p.hour, ok = num(2)
		case 'i':
			p.minute, ok = num(2)
		case 's', 'S':
			p.second, ok = num(2)
		case 'f':
			before := len(val)
			if p.micro, ok = num(6); ok {
				for range 6 - (before - len(val)) {
					p.micro *= 10
				}
			}
		case 'p':
			if len(val) < 2 || !usaTime {
				return p, false
			}
			switch strings.ToUpper(val[:2]) {
			case "PM":
				daypart = 12
			case "AM":
			default:
				return p, false
			}
			val, ok = val[2:], true
		case 'W':
			weekday = word(dayNames, false)
			ok = weekday > 0
		case 'a':
			weekday = word(dayNames, true)
			ok = weekday > 0
		case 'w':
			if weekday, ok = num(1); ok {
				if weekday < 0 || weekday >= 7 {
					return p, false
				}
				if weekday == 0 {
					weekday = 7
				}
			}
		case 'j':
			yearday, ok = num(3)
		case 'V', 'U', 'v', 'u':
			sundayFirst = spec == 'U' || spec == 'V'
			strictWeek = spec == 'V' || spec == 'v'
			if week, ok = num(2); ok && (week < 0 || (strictWeek && week == 0) || week > 53) {
				return p, false
			}
		case 'X', 'x':
			weekYearSunday = spec == 'X'
			weekYear, ok = num(4)
		case '.':
			for val != "" && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", rune(val[0])) {
				val = val[1:]
			}
			ok = true
		case '@':
			for val != "" && (val[0] >= 'a' && val[0] <= 'z' || val[0] >= 'A' && val[0] <= 'Z') {
				val = val[1:]
			}
			ok = true
		case '#':
			for val != "" && val[0] >= '0' && val[0] <= '9' {
				val = val[1:]
			}
			ok = true
		default:
			return p, false
		}
		if !ok {
			return p, false
		}
	}
	if usaTime {
		if p.hour > 12 || p.hour < 1 {
			return p, false
		}
		p.hour = p.hour%12 + daypart
	}
	if yearday > 0 {
		t := time.Date(p.year, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, yearday-1)
		if t.Year() > 9999 {
			return p, false
		}
		p.year, p.month, p.day = t.Year(), int(t.Month()), t.Day()
	}
	if week >= 0 && weekday != 0 {
		// %V/%v need %X/%x of the same kind; %U/%u take %Y, not %X/%x.
		if (strictWeek && (weekYear < 0 || weekYearSunday != sundayFirst)) || (!strictWeek && weekYear >= 0) {
			return p, false
		}
		y := p.year
		if strictWeek {
			y = weekYear
		}
		jan1 := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
		var days int
		if sundayFirst {
			b := int(jan1.Weekday()) // 0 = Sunday
			if b != 0 {
				days = 7
			}
			days += -b + (week-1)*7 + weekday%7
		} else {
			b := (int(jan1.Weekday()) + 6) % 7 // 0 = Monday
			if b > 3 {
				days = 7
			}
			days += -b + (week-1)*7 + weekday - 1
		}
		t := jan1.AddDate(0, 0, days)
		if t.Year() < 0 || t.Year() > 9999 {
			return p, false
		}
		p.year, p.month, p.day = t.Year(), int(t.Month()), t.Day()
	}
	if p.year < 0 || p.month < 0 || p.day < 0 || p.month > 12 || p.day > 31 || p.hour > 23 || p.minute > 59 || p.second > 59 {
		return p, false
	}
	return p, true
}

// datetimeType is DATETIME(fsp).
func datetimeType(fsp int) sql.DatetimeType {
	return types.MustCreateDatetimeType(sqltypes.Datetime, max(0, min(fsp, 6)))
}
