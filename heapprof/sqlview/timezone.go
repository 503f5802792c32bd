package sqlview

// Time zones as MariaDB 10.11 names and applies them (sql/tztime.cc), with
// its time zone tables loaded from the system's zoneinfo
// (mariadb-tzinfo-to-sql /usr/share/zoneinfo), which heapproxy reads
// directly: a name is found whatever its case and reported as the
// zoneinfo spells it (SET time_zone = 'europe/berlin' reads back
// Europe/Berlin; go-mysql-server kept the text, on which Go's loader
// failed, and FROM_UNIXTIME then answered 0001-01-01 00:00:00); an offset
// is MariaDB's str_to_offset ([+-]h:mm from -12:59 to +13:00, reported
// +hh:mm); anything else is ERROR 1298 at the SET, where go-mysql-server
// took it and failed each later statement. CONVERT_TZ reads its date as
// MariaDB's Datetime, answers NULL for an unknown zone, leaves a date
// outside TIMESTAMP's range as it is, and resolves local times that a
// daylight-saving change skips or repeats as MariaDB's TIME_to_gmt_sec
// does (the instant the gap ends; the first of two): go-mysql-server's
// converted every date with Go's calendar and gave 01:30 UTC for
// 2026-10-25 02:30 in Europe/Berlin, 00:30 on MariaDB. UNIX_TIMESTAMP(x)
// converts x from the session's zone the same way, NULL outside
// TIMESTAMP's range.

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/shopspring/decimal"
)

// zoneDB is the system's zoneinfo, read on first use: the names it holds
// by lower case, and the zones loaded so far.
type zoneDB struct {
	dirs []string // where to look, first found wins (Go's own order)

	once  sync.Once
	names map[string]string // lower-case name -> name as spelled

	mu     sync.Mutex
	loaded map[string]*time.Location
}

// newZoneDB reads the zoneinfo Go's time package reads: $ZONEINFO, else
// the first of the usual directories that exists.
func newZoneDB() *zoneDB {
	var dirs []string
	if d := os.Getenv("ZONEINFO"); d != "" {
		dirs = append(dirs, d)
	}
	return &zoneDB{dirs: append(dirs, "/usr/share/zoneinfo", "/usr/share/lib/zoneinfo", "/usr/lib/locale/TZ")}
}

// readNames lists the zones as mariadb-tzinfo-to-sql's scan_tz_dir finds
// them (sql/tztime.cc): every compiled zone file, but none named Factory
// or starting with '.', through at most one symlinked directory (Debian's
// posix/ links to the zones beside it).
func (z *zoneDB) readNames() {
	z.names = map[string]string{}
	for _, dir := range z.dirs {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			z.scan(dir, "", 0)
			return
		}
	}
}

func (z *zoneDB) scan(root, rel string, symlinks int) {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		return
	}
	for _, d := range entries {
		if strings.HasPrefix(d.Name(), ".") || d.Name() == "Factory" {
			continue
		}
		name := path.Join(rel, d.Name())
		full := filepath.Join(root, name)
		st, err := os.Stat(full)
		if err != nil {
			continue
		}
		if st.IsDir() {
			link := d.Type()&fs.ModeSymlink != 0
			if link && symlinks > 0 {
				continue
			}
			if link {
				z.scan(root, name, symlinks+1)
			} else {
				z.scan(root, name, symlinks)
			}
			continue
		}
		if isTZif(full) {
			z.names[strings.ToLower(name)] = name
		}
	}
}

// isTZif is whether file is a compiled zone (its magic).
func isTZif(file string) bool {
	f, err := os.Open(file)
	if err != nil {
		return false
	}
	defer f.Close()
	magic := make([]byte, 4)
	n, _ := f.Read(magic)
	return n == 4 && string(magic) == "TZif"
}

// location is the zone named name (any case), and its name as spelled.
func (z *zoneDB) location(name string) (*time.Location, string, bool) {
	z.once.Do(z.readNames)
	spelled, ok := z.names[strings.ToLower(name)]
	if !ok {
		return nil, "", false
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if loc, ok := z.loaded[spelled]; ok {
		return loc, spelled, true
	}
	loc, err := time.LoadLocation(spelled)
	if err != nil {
		return nil, "", false
	}
	if z.loaded == nil {
		z.loaded = map[string]*time.Location{}
	}
	z.loaded[spelled] = loc
	return loc, spelled, true
}

// zone is a time zone: a fixed offset from UTC in seconds, or a location.
type zone struct {
	name   string // as MariaDB reports it
	offset int64
	loc    *time.Location
}

// find is the zone MariaDB's my_tz_find finds for s.
func (z *zoneDB) find(s string) (zone, bool) {
	if off, ok := zoneOffset(s); ok {
		sign := "+"
		if off < 0 {
			sign = "-"
		}
		a := max(off, -off)
		return zone{name: fmt.Sprintf("%s%02d:%02d", sign, a/3600, a/60%60), offset: off}, true
	}
	if strings.EqualFold(s, "SYSTEM") {
		return zone{name: "SYSTEM", loc: time.Local}, true
	}
	loc, name, ok := z.location(s)
	return zone{name: name, loc: loc}, ok
}

// zoneOffset is MariaDB's str_to_offset: [+-]h:mm, -12:59 to +13:00.
func zoneOffset(s string) (int64, bool) {
	if len(s) < 4 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	hours, rest, ok := leadingDigits(s[1:])
	if !ok || len(rest) < 2 || rest[0] != ':' {
		return 0, false
	}
	minutes, rest, ok := leadingDigits(rest[1:])
	if !ok || rest != "" || minutes > 59 {
		return 0, false
	}
	off := (hours*60 + minutes) * 60
	if s[0] == '-' {
		off = -off
	}
	if off < -13*3600+1 || off > 13*3600 {
		return 0, false
	}
	return off, true
}

// leadingDigits is the number the digits s starts with (none is 0, as
// MariaDB's loop reads), and what follows; ok is false on overflow.
func leadingDigits(s string) (int64, string, bool) {
	var n int64
	i := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > math.MaxInt32 {
			return 0, "", false
		}
		n = n*10 + int64(s[i]-'0')
	}
	return n, s[i:], true
}

// maxTimestamp is TIMESTAMP's last second (2038-01-19 03:14:07 UTC).
const maxTimestamp = math.MaxInt32

// toUTC is MariaDB's TIME_to_gmt_sec: d, a local time in z, as seconds
// since 1970 UTC; ok is false when d or the result is outside
// TIMESTAMP's range.
func (z zone) toUTC(d dateText) (at int64, ok bool) {
	if d.year > 2038 || d.year < 1969 || d.year == 2038 && (d.month > 1 || d.day > 19) || d.year == 1969 && (d.month < 12 || d.day < 31) {
		return 0, false
	}
	local := time.Date(d.year, time.Month(d.month), d.day, d.hour, d.minute, d.second, 0, time.UTC).Unix()
	at = local - z.offset
	if z.loc != nil {
		at = localToUTC(local, z.loc)
	}
	return at, at >= 0 && at <= maxTimestamp
}

// localToUTC is the instant of the local time local (seconds as if UTC)
// in loc: of two (a time repeated when clocks go back) the first; in a
// gap (clocks go forward) the instant the gap ends, as MariaDB answers.
func localToUTC(local int64, loc *time.Location) int64 {
	offsetAt := func(at int64) int64 {
		_, off := time.Unix(at, 0).In(loc).Zone()
		return int64(off)
	}
	found := false
	var first int64
	for _, probe := range []int64{local - 86400, local, local + 86400} {
		at := local - offsetAt(probe)
		if offsetAt(at) == local-at && (!found || at < first) {
			first, found = at, true
		}
	}
	if found {
		return first
	}
	// In a gap: read with the offset before it, the time falls after the
	// change; the zone in force then began when the gap did.
	start, _ := time.Unix(local-offsetAt(local-86400), 0).In(loc).ZoneBounds()
	return start.Unix()
}

// fromUTC is the local time in z of at seconds since 1970 UTC.
func (z zone) fromUTC(at int64) dateText {
	t := time.Unix(at+z.offset, 0).UTC()
	if z.loc != nil {
		t = time.Unix(at, 0).In(z.loc)
	}
	return dateOfTime(t)
}

// convertTZ is CONVERT_TZ(date, from, to) as MariaDB's
// Item_func_convert_tz answers it.
type convertTZ struct {
	answersFor // go-mysql-server's CONVERT_TZ
	typ        sql.Type
	zones      *zoneDB
}

var _ sql.FunctionExpression = (*convertTZ)(nil)

// newConvertTZ is CONVERT_TZ as MariaDB types it: a DATETIME with the
// fraction digits of its date (text's as written; go-mysql-server's was
// always DATETIME(6)).
func newConvertTZ(fn *function.ConvertTz, zones *zoneDB) *convertTZ {
	date := fn.Children()[0]
	digits := temporalDigits(date)
	if types.IsText(date.Type()) {
		digits = textFractionDigits(date, datetimeTextDigits)
	}
	return &convertTZ{answersFor{fn}, datetimeType(digits), zones}
}

func (c *convertTZ) FunctionName() string { return "convert_tz" }
func (c *convertTZ) Description() string  { return "MariaDB's CONVERT_TZ (heapprof/sqlview)" }
func (c *convertTZ) Type() sql.Type       { return c.typ }

func (c *convertTZ) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	fn, err := c.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &convertTZ{answersFor{fn}, c.typ, c.zones}, nil
}

func (c *convertTZ) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	args := c.fn.Children()
	var zones [2]zone
	for i, a := range args[1:] {
		v, err := a.Eval(ctx, row)
		if err != nil || v == nil {
			return nil, err
		}
		name, err := toText(ctx, v)
		if err != nil {
			return nil, fmt.Errorf("CONVERT_TZ zone: %w", err)
		}
		z, ok := c.zones.find(name)
		if !ok {
			return nil, nil
		}
		zones[i] = z
	}
	v, err := args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	d, ok, err := datetimeArg(ctx, v)
	if err != nil || !ok {
		return nil, err
	}
	// MariaDB converts only a nonzero result: 1970-01-01 00:00:00 UTC
	// stays as it was written, as a date outside TIMESTAMP's range does.
	if at, ok := zones[0].toUTC(d); ok && at != 0 {
		micro := d.micro
		d = zones[1].fromUTC(at)
		d.micro = micro
	}
	t := time.Date(d.year, time.Month(d.month), d.day, d.hour, d.minute, d.second, d.micro*1000, time.UTC)
	if digits := c.typ.(sql.DatetimeType).Precision(); digits < maxFractionDigits {
		t = t.Truncate(time.Duration(pow10(9 - digits)))
	}
	return t, nil
}

// unixTimestamp is UNIX_TIMESTAMP(x) as MariaDB's
// Item_func_unix_timestamp answers it: x, a local time in the session's
// zone, read as MariaDB's Datetime (a zero date NULL), in seconds since
// 1970 UTC, NULL outside TIMESTAMP's range (go-mysql-server answered 0 or
// a negative number), a skipped or repeated local time resolved as
// CONVERT_TZ resolves it, the fraction kept (go-mysql-server's was 0
// for any time in 1970-01-01 00:00:00.xxx UTC).
type unixTimestamp struct {
	answersFor // go-mysql-server's one-argument UNIX_TIMESTAMP
	zones      *zoneDB
}

var _ sql.FunctionExpression = (*unixTimestamp)(nil)

func (u *unixTimestamp) FunctionName() string { return "unix_timestamp" }
func (u *unixTimestamp) Description() string  { return "MariaDB's UNIX_TIMESTAMP (heapprof/sqlview)" }

// arg is the date UNIX_TIMESTAMP reads.
func (u *unixTimestamp) arg() sql.Expression { return u.fn.Children()[0] }

// Type is MariaDB's: a DECIMAL with the fraction digits of the date, a
// BIGINT without any (go-mysql-server's was DECIMAL(19,0) for DATE(x), and
// took every character after the first '.' of text for a digit).
func (u *unixTimestamp) Type() sql.Type {
	t := u.fn.Type()
	if arg := u.arg(); types.IsText(arg.Type()) {
		if _, constant := constText(arg); constant {
			t = types.MustCreateDecimalType(19, uint8(textFractionDigits(arg, datetimeTextDigits)))
		}
	}
	if dt, ok := t.(sql.DecimalType); ok && dt.Scale() == 0 {
		return types.Int64
	}
	return t
}

func (u *unixTimestamp) WithChildren(kids ...sql.Expression) (sql.Expression, error) {
	if len(kids) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(u, len(kids), 1)
	}
	fn, err := u.fn.WithChildren(kids...)
	if err != nil {
		return nil, err
	}
	return &unixTimestamp{answersFor{fn}, u.zones}, nil
}

func (u *unixTimestamp) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := u.arg().Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	if zeroDatetime(ctx, v) {
		return nil, nil
	}
	d, ok, err := datetimeArg(ctx, v)
	if err != nil || !ok {
		return nil, err
	}
	name, err := ctx.GetSessionVariable(ctx, "time_zone")
	if err != nil {
		return nil, fmt.Errorf("UNIX_TIMESTAMP: session time zone: %w", err)
	}
	text, _ := name.(string)
	z, ok := u.zones.find(text)
	if !ok {
		return nil, fmt.Errorf("UNIX_TIMESTAMP: unknown session time zone %q", text)
	}
	at, ok := z.toUTC(d)
	if !ok {
		return nil, nil
	}
	dt, isDecimal := u.Type().(sql.DecimalType)
	if !isDecimal {
		return at, nil
	}
	scale := int32(dt.Scale())
	micro := int64(d.micro) / pow10(maxFractionDigits-int(scale))
	return decimal.New(at, 0).Add(decimal.New(micro, -scale)), nil
}

// zeroDatetime is whether v is the zero date (0000-00-00 00:00:00) as
// text or go-mysql-server's value: UNIX_TIMESTAMP's NULL without a
// warning.
func zeroDatetime(ctx *sql.Context, v any) bool {
	v, err := sql.UnwrapAny(ctx, v)
	if err != nil {
		return false
	}
	switch x := v.(type) {
	case time.Time:
		return x.Equal(zeroDate)
	case []byte:
		v = string(x)
	}
	s, ok := v.(string)
	if !ok {
		return false
	}
	d := readDateText(s)
	return d.read && d == (dateText{read: true, datetime: d.datetime, truncated: d.truncated, extraDigits: d.extraDigits, fracDigits: d.fracDigits})
}

// checkTimeZone answers SET time_zone = 'text' as MariaDB does: the
// zone's name as MariaDB reports it goes in its place, and a name or
// offset MariaDB does not know is ERROR 1298.
func (z *zoneDB) checkTimeZone(stmt ast.Statement) error {
	for _, e := range sessionSets(stmt, "time_zone") {
		lit, ok := e.Expr.(*ast.SQLVal)
		if !ok || lit.Type != ast.StrVal {
			continue
		}
		zn, ok := z.find(string(lit.Val))
		if !ok {
			return &Error{Code: mysql.ERUnknownTimeZone, State: mysql.SSUnknownSQLState,
				Message: fmt.Sprintf("Unknown or incorrect time zone: '%s'", lit.Val)}
		}
		lit.Val = []byte(zn.name)
	}
	return nil
}
