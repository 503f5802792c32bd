package sqlview

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestTimeZoneNamesMatchMariaDB: the engine knows the zones MariaDB's
// tables hold when loaded from the same zoneinfo, no more, by any case,
// and a session in one reads back its name and its times as MariaDB's
// does. SET time_zone = 'europe/berlin' was kept as written, Go's loader
// failed on it, and FROM_UNIXTIME answered 0001-01-01 00:00:00.
func TestTimeZoneNamesMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	e.zones.once.Do(e.zones.readNames)
	var engine []string
	for _, name := range e.zones.names {
		engine = append(engine, name)
	}
	slices.Sort(engine)
	maria := slices.Sorted(slices.Values(ref.zones))
	if !slices.Equal(engine, maria) {
		t.Errorf("zones: the engine knows %d, MariaDB %d; only the engine: %q; only MariaDB: %q", len(engine), len(maria),
			missing(maria, engine), missing(engine, maria))
	}
	// MariaDB reads a zone back as spelled when it first loaded it since it
	// started (its tz_names cache); the engine as the zoneinfo spells it.
	// Loading each zone first by that spelling makes the two one answer.
	for _, name := range ref.zones {
		if err := r.exec("DO CONVERT_TZ('2026-01-01', '" + name + "', 'UTC')"); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range append(slices.Clone(ref.zones), "system", "SYSTEM", "+1:00", "-12:59", "+13:00", "+00:00", "-0:30") {
		set := "SET time_zone = '" + strings.ToLower(name) + "'"
		t.Run(set, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, set, false, false)
			matchMariaDB(t, ctx, e, s, r, "SELECT @@time_zone, FROM_UNIXTIME(1795161600), FROM_UNIXTIME(1782000000.5), FROM_UNIXTIME(0), "+
				"UNIX_TIMESTAMP('2026-03-29 02:30:00'), UNIX_TIMESTAMP('2026-10-25 02:30:00.5'), UNIX_TIMESTAMP('1970-01-01 00:30:00'), UNIX_TIMESTAMP('2038-01-19 03:14:07')", false, false)
		})
	}
	for _, bad := range []string{"Nowhere/X", "+14:00", "-13:00", "+1:60", "+01", "1:00", "", "Europe/", "../../etc/passwd", "/usr/share/zoneinfo/UTC"} {
		set := "SET time_zone = '" + bad + "'"
		t.Run(set, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, set, false, false)
			matchMariaDB(t, ctx, e, s, r, "SELECT @@time_zone", false, false)
		})
	}
}

// missing is what of want got lacks.
func missing(got, want []string) []string {
	var out []string
	for _, w := range want {
		if _, found := slices.BinarySearch(got, w); !found {
			out = append(out, w)
		}
	}
	return out
}

// TestConvertTZMatchesMariaDB: CONVERT_TZ answers MariaDB's dates in every
// zone, from local times around each of the zone's clock changes of
// 2025-2027 (a local time the change skips is the instant it ends, one it
// repeats the first of the two; go-mysql-server answered with Go's
// calendar), at the ends of TIMESTAMP's range (outside it a date is left
// as it is), and with MariaDB's offsets and unknown zones (NULL).
func TestConvertTZMatchesMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	seen := map[string]bool{} // zone files by content: posix/X is X
	for _, name := range ref.zones {
		data, err := os.ReadFile(filepath.Join("/usr/share/zoneinfo", name))
		if err != nil {
			t.Fatal(err)
		}
		if seen[string(data)] {
			continue
		}
		seen[string(data)] = true
		loc, _, ok := e.zones.location(name)
		if !ok {
			t.Errorf("zone %s: not found", name)
			continue
		}
		zone := "'" + name + "'"
		var items []string
		for _, local := range aroundChanges(loc) {
			items = append(items, "CONVERT_TZ('"+local+"', "+zone+", 'UTC')")
		}
		for _, d := range []string{"1970-01-01 00:00:00", "1969-12-31 23:59:59", "2038-01-19 03:14:07", "2038-01-20 00:00:00", "2026-07-01 12:00:00.123456", "2026-01-01"} {
			items = append(items, "CONVERT_TZ('"+d+"', "+zone+", '+00:00')", "CONVERT_TZ('"+d+"', '+00:00', "+zone+")")
		}
		q := "SELECT " + strings.Join(items, ", ")
		t.Run(name, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, q, false, true) })
	}
	for _, q := range []string{
		"SELECT id, CONVERT_TZ(taken_at, 'UTC', 'europe/berlin'), CONVERT_TZ(taken_at, '+00:00', '+1:00'), CONVERT_TZ(taken_at, '+00:00', '+14:00'), CONVERT_TZ(taken_at, 'Nowhere/X', 'UTC'), CONVERT_TZ(DATE(taken_at), 'UTC', 'Asia/Kolkata') FROM snapshots ORDER BY id",
		"SELECT CONVERT_TZ('2026-11-20 10:00', 'UTC', 'SYSTEM'), CONVERT_TZ('2026-11-20 10:00:00.5', '-12:59', '+13:00'), CONVERT_TZ(20261120100000, 'UTC', 'Asia/Tokyo'), CONVERT_TZ('2026-11-00', 'UTC', 'UTC'), CONVERT_TZ(NULL, 'UTC', 'UTC'), CONVERT_TZ('2026-11-20', NULL, 'UTC')",
		// UNIX_TIMESTAMP: NULL outside TIMESTAMP's range (it was 0 or
		// negative), the fraction kept near 1970, BIGINT of a DATE.
		"SELECT UNIX_TIMESTAMP('1970-01-01 00:00:00'), UNIX_TIMESTAMP('1970-01-01 00:00:00.5'), UNIX_TIMESTAMP('1969-12-31 23:59:59'), UNIX_TIMESTAMP('2038-01-19 03:14:07.999999'), " +
			"UNIX_TIMESTAMP('2038-01-19 03:14:08'), UNIX_TIMESTAMP('0000-00-00'), UNIX_TIMESTAMP(20261120), UNIX_TIMESTAMP('2026-11-00'), UNIX_TIMESTAMP('x'), UNIX_TIMESTAMP(NULL)",
		"SELECT id, UNIX_TIMESTAMP(taken_at), UNIX_TIMESTAMP(DATE(taken_at)), UNIX_TIMESTAMP(taken_at) DIV 60 * 60 FROM snapshots ORDER BY id",
		// Metabase's sync reads the server's offset this way.
		"SELECT @@GLOBAL.time_zone AS global_tz, time_format(timediff(now(), convert_tz(now(), @@GLOBAL.time_zone, '+00:00')), '%H:%i') AS 'offset'",
	} {
		t.Run(q, func(t *testing.T) { matchWithWarnings(t, ctx, e, s, r, q) })
	}
}

// aroundChanges are local times in loc at each of its clock changes from
// 2025 to 2027, a minute before and half an hour after, read with the
// offsets before and after the change (at most 8 changes): for a gap of
// an hour, 01:59, 02:00 and 02:30 (in it), 02:59, 03:00 and 03:30.
func aroundChanges(loc *time.Location) []string {
	var out []string
	at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	end := time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)
	for n := 0; n < 8; n++ {
		_, next := at.In(loc).ZoneBounds()
		if next.IsZero() || next.After(end) {
			break
		}
		_, before := next.Add(-time.Second).In(loc).Zone()
		_, after := next.In(loc).Zone()
		for _, off := range []int{before, after} {
			wall := next.UTC().Add(time.Duration(off) * time.Second)
			for _, d := range []time.Duration{-time.Minute, 0, 30 * time.Minute} {
				out = append(out, wall.Add(d).Format("2006-01-02 15:04:05"))
			}
		}
		at = next
	}
	return out
}
