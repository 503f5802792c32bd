package sqlview

// The reference for every query in these tests is a real MariaDB (Debian's
// mariadb-server) started by TestMain and loaded with the same rows the test
// Source holds; diffs there is a plain SQL view (LAG over snapshots, joins
// over functions), so the Go diff computation is checked against SQL.

import (
	"bytes"
	"context"
	gosql "database/sql"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	_ "github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// memSource is a Source over fixed rows in the store's types, without
// I/O: unlike a snapshot.Store it keeps the rows in the order given and
// accepts any id. The schema only lists all snapshots, so List ignores the
// filter.
type memSource struct {
	snaps []snapshot.Snapshot
	fns   map[string][]snapshot.Function
	stk   map[string][]snapshot.Stack
}

func (m *memSource) List(context.Context, snapshot.Filter) ([]snapshot.Snapshot, error) {
	return m.snaps, nil
}

func (m *memSource) Functions(_ context.Context, id string) ([]snapshot.Function, error) {
	return m.fns[id], nil
}

func (m *memSource) Stacks(_ context.Context, id string) ([]snapshot.Stack, error) {
	return m.stk[id], nil
}

// fixture is a small history: node 10001 leaks in LeakyCache::Put, node
// 10002 frees a function between its two snapshots, node 10003 has a single
// snapshot (no diff rows). Times carry microseconds; names carry the
// characters that break naive quoting. Functions are given by short name;
// their full names (functions.name) add an argument list where the short
// name is a C++ one (see fullName).
func fixture() *memSource {
	src := &memSource{fns: map[string][]snapshot.Function{}, stk: map[string][]snapshot.Stack{}}
	base := time.Date(2026, 11, 20, 8, 0, 0, 123456000, time.UTC)
	add := func(id string, node int64, kind string, at time.Time, fns []snapshot.Function, stacks []snapshot.Stack) {
		var total, objs int64
		for _, s := range stacks {
			total += s.Bytes
			objs += s.Objects
		}
		src.snaps = append(src.snaps, snapshot.Snapshot{ID: id, NodeID: node, NodeKind: kind, NodeAddr: fmt.Sprintf("10.0.0.%d:8040", node%100),
			TakenAt: at, TotalBytes: total, TotalObjects: objs, SamplePeriod: 524288, Format: "jemalloc"})
		for i := range fns {
			fns[i].SnapshotID = id
			fns[i].Name = fullName(fns[i].ShortName)
			if total > 0 {
				fns[i].FlatPercent = 100 * float64(fns[i].FlatBytes) / float64(total)
				fns[i].CumPercent = 100 * float64(fns[i].CumBytes) / float64(total)
			}
		}
		for i := range stacks {
			stacks[i].SnapshotID = id
			stacks[i].StackID = int64(i + 1)
		}
		src.fns[id], src.stk[id] = fns, stacks
	}
	for i := range 4 {
		leak := int64(3<<20) * int64(i+1)
		at := base.Add(time.Duration(i) * 6 * time.Hour)
		fns := []snapshot.Function{
			{ShortName: "main", CumBytes: leak + 7<<20, CumObjects: int64(30*(i+1)) + 70},
			{ShortName: "LeakyCache::Put", FlatBytes: leak, CumBytes: leak, FlatObjects: int64(30 * (i + 1)), CumObjects: int64(30 * (i + 1))},
			{ShortName: "starrocks::Segment::open", FlatBytes: 7 << 20, CumBytes: 7 << 20, FlatObjects: 70, CumObjects: 70},
		}
		if i == 2 {
			fns = append(fns, snapshot.Function{ShortName: "operator new[](unsigned long)", FlatBytes: 1000, CumBytes: 1000, FlatObjects: 1, CumObjects: 1})
		}
		stacks := []snapshot.Stack{
			{Frames: "main;LeakyCache::Put", Bytes: leak, Objects: int64(30 * (i + 1))},
			{Frames: "main;starrocks::Segment::open", Bytes: 7 << 20, Objects: 70},
		}
		add(fmt.Sprintf("heap_profile.10001.%d", i), 10001, "starrocks", at, fns, stacks)
	}
	add("heap_profile.10002.0", 10002, "doris", base.Add(time.Hour), []snapshot.Function{
		{ShortName: "doris::Agg's \"hash\" table", FlatBytes: 5 << 20, CumBytes: 5 << 20, FlatObjects: 5, CumObjects: 5},
		{ShortName: "doris::Join", FlatBytes: 2 << 20, CumBytes: 2 << 20, FlatObjects: 2, CumObjects: 2},
	}, []snapshot.Stack{{Frames: "doris::Agg's \"hash\" table", Bytes: 5 << 20, Objects: 5}, {Frames: "doris::Join", Bytes: 2 << 20, Objects: 2}})
	add("heap_profile.10002.1", 10002, "doris", base.Add(25*time.Hour), []snapshot.Function{
		{ShortName: "doris::Agg's \"hash\" table", FlatBytes: 4 << 20, CumBytes: 4 << 20, FlatObjects: 4, CumObjects: 4},
	}, []snapshot.Stack{{Frames: "doris::Agg's \"hash\" table", Bytes: 4 << 20, Objects: 4}})
	add("heap_profile.10003.0", 10003, "tikv", base.Add(2*time.Hour), []snapshot.Function{
		{ShortName: "tikv::storage::Engine::get — ünïcode", FlatBytes: 1, CumBytes: 1, FlatObjects: 1, CumObjects: 1},
	}, []snapshot.Stack{{Frames: "tikv::storage::Engine::get — ünïcode", Bytes: 1, Objects: 1}})
	return src
}

// fullName is the fixture's full name of a function: its short name, with
// an argument list for a C++ name, as the symbolizer would give it.
func fullName(short string) string {
	if !strings.Contains(short, "::") {
		return short
	}
	return short + "(long, std::vector<int, std::allocator<int> > const&)"
}

// refDB is the MariaDB the tests compare with: root loads it, then the
// tests query it as user bi.
type refDB struct {
	srv    *mariadbtest.Server
	socket string
	db     *gosql.DB
	// zones are the time zone names MariaDB's tables hold, loaded from
	// the system's zoneinfo as mariadb-tzinfo-to-sql reads it.
	zones []string
}

var ref *refDB

func TestMain(m *testing.M) {
	r, err := startMariaDB()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start MariaDB:", err)
		if r != nil {
			r.stop()
		}
		os.Exit(1)
	}
	ref = r
	code := m.Run()
	r.stop()
	os.Exit(code)
}

func startMariaDB() (*refDB, error) {
	srv, err := mariadbtest.Start(mariadbtest.Options{Args: []string{
		"--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin", "--default-time-zone=+00:00"}})
	if err != nil {
		return nil, err
	}
	r := &refDB{srv: srv, socket: srv.Socket}
	root, err := gosql.Open("mysql", srv.DSN("root", "", "")+"?multiStatements=true")
	if err != nil {
		return r, err
	}
	defer root.Close()
	if err := loadReference(root, fixture()); err != nil {
		return r, err
	}
	if r.zones, err = loadTimeZones(root, srv.Socket); err != nil {
		return r, err
	}
	if r.db, err = gosql.Open("mysql", srv.DSN("bi", "bi", "heapprof")); err != nil {
		return r, err
	}
	// One connection, so session state (USE, SET) carries across statements
	// as it does on the engine's Session.
	r.db.SetMaxOpenConns(1)
	return r, nil
}

func (r *refDB) stop() {
	if r.db != nil {
		r.db.Close()
	}
	r.srv.Stop()
}

// loadTimeZones fills MariaDB's time zone tables from /usr/share/zoneinfo,
// as a DBA does to use named zones, and lists the names they hold.
func loadTimeZones(root *gosql.DB, socket string) ([]string, error) {
	sqlText, err := exec.Command("mariadb-tzinfo-to-sql", "/usr/share/zoneinfo").Output()
	if err != nil {
		return nil, fmt.Errorf("mariadb-tzinfo-to-sql: %w", err)
	}
	load := exec.Command("mariadb", "--no-defaults", "--socket="+socket, "--user=root", "mysql")
	load.Stdin = bytes.NewReader(sqlText)
	if out, err := load.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("load time zones: %w: %s", err, out)
	}
	rows, err := root.Query("SELECT name FROM mysql.time_zone_name ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, err
		}
		names = append(names, name)
	}
	return names, rows.Err()
}

// loadReference creates the heapprof tables in MariaDB from the engine's
// own schema (so a type change shows up as a difference) and fills them.
func loadReference(db *gosql.DB, src *memSource) error {
	tables := newTables(src)
	indexed := withIndexes(tables)
	stmts := []string{"CREATE DATABASE heapprof"}
	for _, name := range []string{TableSnapshots, TableFunctions, TableStacks, TableDiffs} {
		t := tables[name]
		var cols, pk []string
		for _, c := range t.schema {
			cols = append(cols, fmt.Sprintf("`%s` %s NOT NULL COMMENT %s", c.Name, c.Type.String(), quote(c.Comment)))
			if c.PrimaryKey {
				pk = append(pk, "`"+c.Name+"`")
			}
		}
		if len(pk) > 0 {
			cols = append(cols, "PRIMARY KEY ("+strings.Join(pk, ",")+")")
		}
		// The engine's indexes, so DESCRIBE and the information_schema
		// show the same keys.
		it := indexed[name].(*indexedTable)
		for _, x := range it.indexes {
			if x.ID() != primaryKey {
				cols = append(cols, fmt.Sprintf("KEY `%s` (`%s`)", x.ID(), x.col.Name))
			}
		}
		for _, fk := range it.fks {
			cols = append(cols, fmt.Sprintf("CONSTRAINT `%s` FOREIGN KEY (`%s`) REFERENCES `%s` (`%s`) ON DELETE %s ON UPDATE %s",
				fk.Name, strings.Join(fk.Columns, "`,`"), fk.ParentTable, strings.Join(fk.ParentColumns, "`,`"), fk.OnDelete, fk.OnUpdate))
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE heapprof.%s (%s) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT=%s",
			name, strings.Join(cols, ", "), quote(tableComments[name])))
	}
	ctx := sql.NewEmptyContext()
	for _, name := range []string{TableSnapshots, TableFunctions, TableStacks} {
		t := tables[name]
		ps, err := t.scan.partitions(ctx)
		if err != nil {
			return err
		}
		for _, p := range ps {
			rows, err := t.scan.rows(ctx, p)
			if err != nil {
				return err
			}
			for _, row := range rows {
				var vals []string
				for _, v := range row {
					vals = append(vals, literal(v))
				}
				stmts = append(stmts, fmt.Sprintf("INSERT INTO heapprof.%s VALUES (%s)", name, strings.Join(vals, ",")))
			}
		}
	}
	// diffs: computed by the view in database ref, copied into a table
	// declared from the engine's schema like the others.
	stmts = append(stmts, "CREATE DATABASE ref", diffsView, "INSERT INTO heapprof.diffs SELECT * FROM ref.diffs")
	// Statistics computed now, not by InnoDB's background thread at some
	// point during the tests: the optimizer's join order (which decides
	// some column definitions of sorted joins) must not change with when
	// a query runs.
	stmts = append(stmts, "ANALYZE TABLE heapprof.snapshots, heapprof.functions, heapprof.stacks, heapprof.diffs")
	stmts = append(stmts,
		"CREATE USER bi@localhost IDENTIFIED BY 'bi'",
		// Write privileges on purpose: read_only, not missing grants, must
		// be what refuses writes, as in heapproxy.
		"GRANT SELECT, INSERT, UPDATE, DELETE, CREATE, DROP, ALTER, CREATE VIEW ON heapprof.* TO bi@localhost",
		"GRANT CREATE ON x.* TO bi@localhost",
		"SET GLOBAL read_only = 1")
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// diffsView is heapprof.diffs written in SQL: consecutive snapshots of a
// node by LAG, every function (full name) present in either one, missing
// sides as 0, short_name the later snapshot's where it has the function.
const diffsView = `CREATE VIEW ref.diffs AS
WITH pairs AS (
  SELECT node_id, id AS to_id, taken_at AS to_at,
    LAG(id) OVER (PARTITION BY node_id ORDER BY taken_at, id) AS from_id,
    LAG(taken_at) OVER (PARTITION BY node_id ORDER BY taken_at, id) AS from_at
  FROM heapprof.snapshots),
names AS (
  SELECT p.*, f.name FROM pairs p JOIN heapprof.functions f ON f.snapshot_id = p.to_id
  UNION
  SELECT p.*, f.name FROM pairs p JOIN heapprof.functions f ON f.snapshot_id = p.from_id)
SELECT n.node_id, n.name, COALESCE(a.short_name, b.short_name) AS short_name,
  n.from_id AS from_snapshot_id, n.to_id AS to_snapshot_id,
  n.from_at AS from_taken_at, n.to_at AS to_taken_at,
  CAST(TIMESTAMPDIFF(MICROSECOND, n.from_at, n.to_at) / 1000000 AS DOUBLE) AS seconds,
  COALESCE(b.flat_bytes, 0) AS flat_bytes_before, COALESCE(a.flat_bytes, 0) AS flat_bytes_after,
  COALESCE(a.flat_bytes, 0) - COALESCE(b.flat_bytes, 0) AS flat_bytes_delta,
  COALESCE(b.cum_bytes, 0) AS cum_bytes_before, COALESCE(a.cum_bytes, 0) AS cum_bytes_after,
  COALESCE(a.cum_bytes, 0) - COALESCE(b.cum_bytes, 0) AS cum_bytes_delta,
  COALESCE(a.flat_objects, 0) - COALESCE(b.flat_objects, 0) AS flat_objects_delta,
  COALESCE(a.cum_objects, 0) - COALESCE(b.cum_objects, 0) AS cum_objects_delta
FROM names n
LEFT JOIN heapprof.functions b ON b.snapshot_id = n.from_id AND b.name = n.name
LEFT JOIN heapprof.functions a ON a.snapshot_id = n.to_id AND a.name = n.name
WHERE n.from_id IS NOT NULL`

func quote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func literal(v any) string {
	switch v := v.(type) {
	case string:
		return quote(v)
	case time.Time:
		return quote(v.Format("2006-01-02 15:04:05.000000"))
	case float64:
		return fmt.Sprintf("%.17g", v)
	default:
		return fmt.Sprint(v)
	}
}
