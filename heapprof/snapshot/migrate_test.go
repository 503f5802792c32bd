package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// legacySchema is the DDL of the MySQL store before the heapprof schema
// became views over storage tables (heapproxy up to this change), verbatim.
var legacySchema = []string{
	"CREATE TABLE IF NOT EXISTS `snapshots` (" +
		"`id` VARCHAR(190) NOT NULL COMMENT 'what snapshot() prints and to_dot_format() takes'," +
		"`node_id` BIGINT NOT NULL COMMENT 'the id in ADMIN EXECUTE ON <id> and SHOW BACKENDS'," +
		"`node_kind` VARCHAR(64) NOT NULL," +
		"`node_addr` VARCHAR(255) NOT NULL," +
		"`taken_at` DATETIME(6) NOT NULL COMMENT 'UTC'," +
		"`total_bytes` BIGINT NOT NULL COMMENT 'in-use bytes, estimated from the samples as jeprof does'," +
		"`total_objects` BIGINT NOT NULL," +
		"`sample_period` BIGINT NOT NULL COMMENT 'bytes between samples'," +
		"`format` VARCHAR(32) NOT NULL COMMENT 'encoding of raw'," +
		"`raw` LONGBLOB NOT NULL COMMENT 'the dump as the node sent it'," +
		"`profile` LONGBLOB NOT NULL COMMENT 'symbolized pprof protobuf, gzipped: go tool pprof opens it'," +
		"PRIMARY KEY (`id`)," +
		"KEY `node_taken` (`node_id`, `taken_at`)," +
		"KEY `taken` (`taken_at`)" +
		") DEFAULT CHARSET=utf8mb4 COMMENT='heap profiles heapproxy took, one row each'",
	"CREATE TABLE IF NOT EXISTS `functions` (" +
		"`snapshot_id` VARCHAR(190) NOT NULL," +
		"`seq` INT NOT NULL COMMENT '0 is the largest flat_bytes'," +
		"`name` TEXT NOT NULL COMMENT 'full symbol name'," +
		"`short_name` TEXT NOT NULL COMMENT 'as jeprof shows it: no arguments, no templates'," +
		"`flat_bytes` BIGINT NOT NULL COMMENT 'allocated by the function itself'," +
		"`flat_objects` BIGINT NOT NULL," +
		"`cum_bytes` BIGINT NOT NULL COMMENT 'allocated by it and its callees'," +
		"`cum_objects` BIGINT NOT NULL," +
		"`flat_percent` DOUBLE NOT NULL COMMENT 'of the snapshot total_bytes'," +
		"`cum_percent` DOUBLE NOT NULL," +
		"PRIMARY KEY (`snapshot_id`, `seq`)," +
		"KEY `short_name` (`short_name`(191))" +
		") DEFAULT CHARSET=utf8mb4 COMMENT='per snapshot and function: flat and cumulative in-use memory'",
	"CREATE TABLE IF NOT EXISTS `stacks` (" +
		"`snapshot_id` VARCHAR(190) NOT NULL," +
		"`stack_id` BIGINT NOT NULL COMMENT 'hash of frames: equal in every snapshot'," +
		"`seq` INT NOT NULL COMMENT '0 is the largest'," +
		"`depth` INT NOT NULL," +
		"`bytes` BIGINT NOT NULL," +
		"`objects` BIGINT NOT NULL," +
		"`frames` MEDIUMTEXT NOT NULL COMMENT 'function names, root first, joined by ;'," +
		"PRIMARY KEY (`snapshot_id`, `stack_id`)," +
		"KEY `stack` (`stack_id`)" +
		") DEFAULT CHARSET=utf8mb4 COMMENT='per snapshot and call stack: in-use memory'",
}

// legacySave writes a snapshot as the earlier heapproxy did.
func legacySave(ctx context.Context, db *sql.DB, s *Snapshot, funcs []Function, stacks []Stack) error {
	if _, err := db.ExecContext(ctx, "INSERT INTO `snapshots` (`id`, `node_id`, `node_kind`, `node_addr`, `taken_at`,"+
		" `total_bytes`, `total_objects`, `sample_period`, `format`, `raw`, `profile`) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
		s.ID, s.NodeID, s.NodeKind, s.NodeAddr, s.TakenAt.UTC(), s.TotalBytes, s.TotalObjects, s.SamplePeriod,
		s.Format, nonNil(s.Raw), nonNil(s.Profile)); err != nil {
		return fmt.Errorf("legacy snapshot: %w", err)
	}
	for i, f := range funcs {
		if _, err := db.ExecContext(ctx, "INSERT INTO `functions` (`snapshot_id`, `seq`, `name`, `short_name`, `flat_bytes`,"+
			" `flat_objects`, `cum_bytes`, `cum_objects`, `flat_percent`, `cum_percent`) VALUES (?,?,?,?,?,?,?,?,?,?)",
			s.ID, i, f.Name, f.ShortName, f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects, f.FlatPercent, f.CumPercent); err != nil {
			return fmt.Errorf("legacy function: %w", err)
		}
	}
	for i, st := range stacks {
		if _, err := db.ExecContext(ctx, "INSERT INTO `stacks` (`snapshot_id`, `stack_id`, `seq`, `depth`, `bytes`, `objects`, `frames`)"+
			" VALUES (?,?,?,?,?,?,?)", s.ID, st.StackID, i, st.Depth, st.Bytes, st.Objects, st.Frames); err != nil {
			return fmt.Errorf("legacy stack: %w", err)
		}
	}
	return nil
}

// previousTables and previousViews are the DDL of the MySQL store one
// version later than legacySchema, verbatim: the storage tables without
// store_functions' index on (snapshot_id, name), and views where
// functions.name was the short name and diffs summed the functions of one
// short name.
var previousTables = []string{
	"CREATE TABLE IF NOT EXISTS `store_snapshots` (" +
		"`id` VARCHAR(255) NOT NULL COMMENT 'what snapshot() prints and to_dot_format() takes'," +
		"`node_id` BIGINT NOT NULL COMMENT 'the id in ADMIN EXECUTE ON <id> and SHOW BACKENDS'," +
		"`node_kind` VARCHAR(64) NOT NULL," +
		"`node_addr` VARCHAR(255) NOT NULL," +
		"`taken_at` DATETIME(6) NOT NULL COMMENT 'UTC'," +
		"`total_bytes` BIGINT NOT NULL COMMENT 'in-use bytes, estimated from the samples as jeprof does'," +
		"`total_objects` BIGINT NOT NULL," +
		"`sample_period` BIGINT NOT NULL COMMENT 'bytes between samples'," +
		"`format` VARCHAR(64) NOT NULL COMMENT 'encoding of raw'," +
		"`raw` LONGBLOB NOT NULL COMMENT 'the dump as the node sent it'," +
		"`profile` LONGBLOB NOT NULL COMMENT 'symbolized pprof protobuf, gzipped: go tool pprof opens it'," +
		"PRIMARY KEY (`id`)," +
		"KEY `node_taken` (`node_id`, `taken_at`)," +
		"KEY `taken` (`taken_at`)" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='heap profiles heapproxy took, one row each (BI tools: the view snapshots)'",
	"CREATE TABLE IF NOT EXISTS `store_functions` (" +
		"`snapshot_id` VARCHAR(255) NOT NULL," +
		"`seq` INT NOT NULL COMMENT '0 is the largest flat_bytes'," +
		"`name` TEXT NOT NULL COMMENT 'full symbol name'," +
		"`short_name` VARCHAR(4096) NOT NULL COMMENT 'as jeprof shows it: no arguments, no templates'," +
		"`flat_bytes` BIGINT NOT NULL COMMENT 'allocated by the function itself'," +
		"`flat_objects` BIGINT NOT NULL," +
		"`cum_bytes` BIGINT NOT NULL COMMENT 'allocated by it and its callees'," +
		"`cum_objects` BIGINT NOT NULL," +
		"`flat_percent` DOUBLE NOT NULL COMMENT 'of the snapshot total_bytes'," +
		"`cum_percent` DOUBLE NOT NULL," +
		"PRIMARY KEY (`snapshot_id`, `seq`)," +
		"KEY `short_name` (`short_name`(191))," +
		"CONSTRAINT `store_functions_snapshot` FOREIGN KEY (`snapshot_id`) REFERENCES `store_snapshots` (`id`) ON DELETE CASCADE" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='per snapshot and function (BI tools: the view functions)'",
	"CREATE TABLE IF NOT EXISTS `store_stacks` (" +
		"`snapshot_id` VARCHAR(255) NOT NULL," +
		"`stack_id` BIGINT NOT NULL COMMENT 'hash of frames: equal in every snapshot'," +
		"`seq` INT NOT NULL COMMENT '0 is the largest'," +
		"`depth` INT NOT NULL," +
		"`bytes` BIGINT NOT NULL," +
		"`objects` BIGINT NOT NULL," +
		"`frames` LONGTEXT NOT NULL COMMENT 'function names, root first, joined by ;'," +
		"PRIMARY KEY (`snapshot_id`, `stack_id`)," +
		"KEY `stack` (`stack_id`)," +
		"CONSTRAINT `store_stacks_snapshot` FOREIGN KEY (`snapshot_id`) REFERENCES `store_snapshots` (`id`) ON DELETE CASCADE" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='per snapshot and call stack (BI tools: the view stacks)'",
}

var previousViews = []struct{ name, query string }{
	{"snapshots", "SELECT `id`, `node_id`, `node_kind`, `node_addr`, `taken_at`, `total_bytes`, `total_objects`," +
		" `sample_period`, `format` FROM `store_snapshots`"},
	{"functions", "SELECT f.`snapshot_id`, s.`node_id`, s.`taken_at`, f.`short_name` AS `name`, f.`flat_bytes`," +
		" f.`flat_objects`, f.`cum_bytes`, f.`cum_objects`, f.`flat_percent` AS `flat_pct`, f.`cum_percent` AS `cum_pct`" +
		" FROM `store_functions` f JOIN `store_snapshots` s ON s.`id` = f.`snapshot_id`"},
	{"stacks", "SELECT k.`snapshot_id`, s.`node_id`, s.`taken_at`, k.`stack_id`, k.`frames`, k.`bytes`, k.`objects`" +
		" FROM `store_stacks` k JOIN `store_snapshots` s ON s.`id` = k.`snapshot_id`"},
	// Consecutive snapshots of a node by LAG (ties by id, as the embedded
	// default orders them), every function name present in either one,
	// rows of one name summed, a missing side counted 0.
	{"diffs", "WITH `pairs` AS (" +
		"SELECT `node_id`, `id` AS `to_id`, `taken_at` AS `to_at`," +
		" LAG(`id`) OVER (PARTITION BY `node_id` ORDER BY `taken_at`, `id`) AS `from_id`," +
		" LAG(`taken_at`) OVER (PARTITION BY `node_id` ORDER BY `taken_at`, `id`) AS `from_at`" +
		" FROM `store_snapshots`)," +
		" `fn` AS (SELECT `snapshot_id`, `short_name` AS `name`," +
		" CAST(SUM(`flat_bytes`) AS SIGNED) AS `flat_bytes`, CAST(SUM(`flat_objects`) AS SIGNED) AS `flat_objects`," +
		" CAST(SUM(`cum_bytes`) AS SIGNED) AS `cum_bytes`, CAST(SUM(`cum_objects`) AS SIGNED) AS `cum_objects`" +
		" FROM `store_functions` GROUP BY `snapshot_id`, `short_name`)," +
		" `names` AS (" +
		"SELECT p.*, f.`short_name` AS `name` FROM `pairs` p JOIN `store_functions` f ON f.`snapshot_id` = p.`to_id`" +
		" UNION SELECT p.*, f.`short_name` FROM `pairs` p JOIN `store_functions` f ON f.`snapshot_id` = p.`from_id`)" +
		" SELECT n.`node_id`, n.`name`, n.`from_id` AS `from_snapshot_id`, n.`to_id` AS `to_snapshot_id`," +
		" n.`from_at` AS `from_taken_at`, n.`to_at` AS `to_taken_at`," +
		" CAST(TIMESTAMPDIFF(MICROSECOND, n.`from_at`, n.`to_at`) / 1000000 AS DOUBLE) AS `seconds`," +
		" COALESCE(b.`flat_bytes`, 0) AS `flat_bytes_before`, COALESCE(a.`flat_bytes`, 0) AS `flat_bytes_after`," +
		" COALESCE(a.`flat_bytes`, 0) - COALESCE(b.`flat_bytes`, 0) AS `flat_bytes_delta`," +
		" COALESCE(b.`cum_bytes`, 0) AS `cum_bytes_before`, COALESCE(a.`cum_bytes`, 0) AS `cum_bytes_after`," +
		" COALESCE(a.`cum_bytes`, 0) - COALESCE(b.`cum_bytes`, 0) AS `cum_bytes_delta`," +
		" COALESCE(a.`flat_objects`, 0) - COALESCE(b.`flat_objects`, 0) AS `flat_objects_delta`," +
		" COALESCE(a.`cum_objects`, 0) - COALESCE(b.`cum_objects`, 0) AS `cum_objects_delta`" +
		" FROM `names` n" +
		" LEFT JOIN `fn` b ON b.`snapshot_id` = n.`from_id` AND b.`name` = n.`name`" +
		" LEFT JOIN `fn` a ON a.`snapshot_id` = n.`to_id` AND a.`name` = n.`name`" +
		" WHERE n.`from_id` IS NOT NULL"},
}

// previousSave writes a snapshot as the previous version did.
func previousSave(ctx context.Context, db *sql.DB, s *Snapshot, funcs []Function, stacks []Stack) error {
	if _, err := db.ExecContext(ctx, "INSERT INTO `store_snapshots` (`id`, `node_id`, `node_kind`, `node_addr`, `taken_at`,"+
		" `total_bytes`, `total_objects`, `sample_period`, `format`, `raw`, `profile`) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
		s.ID, s.NodeID, s.NodeKind, s.NodeAddr, s.TakenAt.UTC(), s.TotalBytes, s.TotalObjects, s.SamplePeriod,
		s.Format, nonNil(s.Raw), nonNil(s.Profile)); err != nil {
		return fmt.Errorf("previous snapshot: %w", err)
	}
	for i, f := range funcs {
		if _, err := db.ExecContext(ctx, "INSERT INTO `store_functions` (`snapshot_id`, `seq`, `name`, `short_name`, `flat_bytes`,"+
			" `flat_objects`, `cum_bytes`, `cum_objects`, `flat_percent`, `cum_percent`) VALUES (?,?,?,?,?,?,?,?,?,?)",
			s.ID, i, f.Name, f.ShortName, f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects, f.FlatPercent, f.CumPercent); err != nil {
			return fmt.Errorf("previous function: %w", err)
		}
	}
	for i, st := range stacks {
		if _, err := db.ExecContext(ctx, "INSERT INTO `store_stacks` (`snapshot_id`, `stack_id`, `seq`, `depth`, `bytes`, `objects`, `frames`)"+
			" VALUES (?,?,?,?,?,?,?)", s.ID, st.StackID, i, st.Depth, st.Bytes, st.Objects, st.Frames); err != nil {
			return fmt.Errorf("previous stack: %w", err)
		}
	}
	return nil
}

// queryStrings runs q and returns its rows as text.
func queryStrings(t *testing.T, db *sql.DB, q string) [][]string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMySQLUpgradesPreviousVersion: a store the previous version wrote
// (its DDL, its INSERTs) gets store_functions' index on names and the
// views of this version on open, also when an earlier open stopped
// halfway: functions.name is the full name with short_name beside it, and
// two overloads are two rows of functions and of diffs, where the previous
// diffs summed them. Nothing stored is lost; a later open changes nothing,
// so an account without DROP opens it.
func TestMySQLUpgradesPreviousVersion(t *testing.T) {
	ctx := context.Background()
	newView := func(name string) string {
		for _, v := range views {
			if v.name == name {
				return "CREATE OR REPLACE SQL SECURITY INVOKER VIEW `" + name + "` AS " + v.query
			}
		}
		t.Fatalf("no view %s", name)
		return ""
	}
	addIndex := "CREATE INDEX `" + functionsByName + "` ON `store_functions` " + functionsByNameCols
	tests := []struct {
		name string
		// halfway is what an earlier open of this version did before it
		// stopped.
		halfway []string
	}{
		{name: "previous version"},
		{name: "index added", halfway: []string{addIndex}},
		{name: "index and functions view", halfway: []string{addIndex, newView("functions")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := mariaDSN(t, "new")
			dbName := dsn[strings.LastIndex(dsn, "/")+1:]
			m0, err := OpenMySQL(ctx, dsn, Retention{})
			if err != nil {
				t.Fatal(err)
			}
			db := m0.DB()
			defer m0.Close()
			// The previous version's store, written as it wrote it.
			stmts := []string{"DROP VIEW snapshots, functions, stacks, diffs", "DROP TABLE store_stacks, store_functions, store_snapshots"}
			stmts = append(stmts, previousTables...)
			for _, v := range previousViews {
				stmts = append(stmts, "CREATE SQL SECURITY INVOKER VIEW `"+v.name+"` AS "+v.query)
			}
			for _, q := range stmts {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			type saved struct {
				s      *Snapshot
				funcs  []Function
				stacks []Stack
			}
			var all []saved
			for i := range 3 {
				s, funcs, stacks := newSnap(t, int64(10+i%2), base.Add(time.Duration(i)*time.Hour))
				all = append(all, saved{s, funcs, stacks})
			}
			// Node 77: two overloads, then one of them freed.
			work := func(name string, b int64) Function {
				return Function{Name: name, ShortName: "engine::work", FlatBytes: b, FlatObjects: 1, CumBytes: b, CumObjects: 1}
			}
			stack := []Stack{{StackID: 1, Frames: "main;engine::work", Depth: 2, Bytes: 300, Objects: 2}}
			all = append(all,
				saved{&Snapshot{ID: "heap_profile.77.0", NodeID: 77, NodeKind: "starrocks", NodeAddr: "10.0.0.77:8040", TakenAt: base, Format: "jemalloc"},
					[]Function{work("engine::work(double)", 200), work("engine::work(int)", 100)}, stack},
				saved{&Snapshot{ID: "heap_profile.77.1", NodeID: 77, NodeKind: "starrocks", NodeAddr: "10.0.0.77:8040", TakenAt: base.Add(time.Hour), Format: "jemalloc"},
					[]Function{work("engine::work(int)", 150)}, stack})
			for _, sv := range all {
				if err := previousSave(ctx, db, sv.s, sv.funcs, sv.stacks); err != nil {
					t.Fatal(err)
				}
			}
			diffs77 := "SELECT name, flat_bytes_before, flat_bytes_after FROM diffs WHERE node_id = 77 ORDER BY name"
			if got, want := queryStrings(t, db, diffs77), [][]string{{"engine::work", "300", "150"}}; !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("the previous diffs: %q, want %q (overloads summed)", got, want)
			}
			for _, q := range tt.halfway {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}

			m, err := OpenMySQL(ctx, dsn, Retention{})
			if err != nil {
				t.Fatalf("open the previous version's store: %v", err)
			}
			defer m.Close()
			for _, sv := range all[:3] {
				checkSnapshot(t, m, sv.s, sv.funcs, sv.stacks)
			}
			checkRowCounts(t, m.DB(), len(all))
			cols := queryStrings(t, m.DB(), "SELECT table_name, GROUP_CONCAT(column_name ORDER BY ordinal_position)"+
				" FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name IN ('functions', 'diffs') GROUP BY table_name ORDER BY 1")
			wantCols := [][]string{
				{"diffs", "node_id,name,short_name,from_snapshot_id,to_snapshot_id,from_taken_at,to_taken_at,seconds," +
					"flat_bytes_before,flat_bytes_after,flat_bytes_delta,cum_bytes_before,cum_bytes_after,cum_bytes_delta," +
					"flat_objects_delta,cum_objects_delta"},
				{"functions", "snapshot_id,node_id,taken_at,name,short_name,flat_bytes,flat_objects,cum_bytes,cum_objects,flat_pct,cum_pct"},
			}
			if !slices.EqualFunc(cols, wantCols, slices.Equal) {
				t.Errorf("views after the upgrade:\n got %q\nwant %q", cols, wantCols)
			}
			for _, c := range []struct {
				q    string
				want [][]string
			}{
				{"SELECT snapshot_id, name, short_name, flat_bytes FROM functions WHERE node_id = 77 ORDER BY 1, 2", [][]string{
					{"heap_profile.77.0", "engine::work(double)", "engine::work", "200"},
					{"heap_profile.77.0", "engine::work(int)", "engine::work", "100"},
					{"heap_profile.77.1", "engine::work(int)", "engine::work", "150"},
				}},
				{"SELECT name, short_name, flat_bytes_before, flat_bytes_after, flat_bytes_delta FROM diffs WHERE node_id = 77 ORDER BY name", [][]string{
					{"engine::work(double)", "engine::work", "200", "0", "-200"},
					{"engine::work(int)", "engine::work", "100", "150", "50"},
				}},
				// The real snapshots: one diffs row per function of node 10's two.
				{"SELECT COUNT(*), COUNT(DISTINCT name) FROM diffs WHERE node_id = 10", [][]string{
					{fmt.Sprint(len(all[0].funcs)), fmt.Sprint(len(all[0].funcs))},
				}},
				{"SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() AND index_name = '" + functionsByName + "'",
					[][]string{{"2"}}},
			} {
				if got := queryStrings(t, m.DB(), c.q); !slices.EqualFunc(got, c.want, slices.Equal) {
					t.Errorf("%s:\n got %q\nwant %q", c.q, got, c.want)
				}
			}
			// Up to date now: an account without DROP opens it and saves.
			user := "nodrop" + strings.TrimPrefix(dbName, "heapprof_")
			for _, q := range []string{
				"CREATE USER '" + user + "'@'127.0.0.1' IDENTIFIED BY 'pw'",
				"GRANT SELECT, INSERT, DELETE, CREATE, INDEX, REFERENCES, CREATE VIEW ON `" + dbName + "`.* TO '" + user + "'@'127.0.0.1'",
			} {
				if _, err := m.DB().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			m2, err := OpenMySQL(ctx, user+":pw@tcp("+mariaAddr+")/"+dbName, Retention{})
			if err != nil {
				t.Fatalf("open again without DROP: %v", err)
			}
			defer m2.Close()
			s, funcs, stacks := newSnap(t, 10, base.Add(5*time.Hour))
			if err := m2.Save(ctx, s, funcs, stacks); err != nil {
				t.Fatal(err)
			}
			checkSnapshot(t, m, s, funcs, stacks)
		})
	}
}

// TestMySQLMigratesLegacyLayout: a database written by the earlier layout
// (its DDL, its INSERTs) is migrated by OpenMySQL with every snapshot, blob,
// function and stack preserved; the views answer; a second open and a save
// work; a migration interrupted after its copy committed (old tables still
// there, storage tables filled) completes on the next open.
func TestMySQLMigratesLegacyLayout(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// interrupted fills the storage tables as a migration that stopped
		// before dropping the old tables would have.
		interrupted bool
		// orphan adds a functions row whose snapshot is gone.
		orphan bool
	}{
		{name: "fresh"},
		{name: "interrupted after the copy", interrupted: true},
		{name: "orphan rows", orphan: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dsn := mariaDSN(t, "new")
			// The database, empty, as an administrator made it.
			m0, err := OpenMySQL(ctx, dsn, Retention{})
			if err != nil {
				t.Fatal(err)
			}
			db := m0.DB()
			if tt.interrupted {
				defer m0.Close()
			} else {
				for _, q := range []string{"DROP VIEW snapshots, functions, stacks, diffs", "DROP TABLE store_stacks, store_functions, store_snapshots"} {
					if _, err := db.ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.interrupted {
				for _, q := range []string{"DROP VIEW snapshots, functions, stacks, diffs"} {
					if _, err := db.ExecContext(ctx, q); err != nil {
						t.Fatal(err)
					}
				}
			}
			for _, q := range legacySchema {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			type saved struct {
				s      *Snapshot
				funcs  []Function
				stacks []Stack
			}
			var all []saved
			for i := range 3 {
				s, funcs, stacks := newSnap(t, int64(10+i%2), base.Add(time.Duration(i)*time.Hour))
				if err := legacySave(ctx, db, s, funcs, stacks); err != nil {
					t.Fatal(err)
				}
				if tt.interrupted && i < 2 {
					// The interrupted copy: some rows already in storage.
					if err := m0.Save(ctx, s, funcs, stacks); err != nil {
						t.Fatal(err)
					}
				}
				all = append(all, saved{s, funcs, stacks})
			}
			if tt.orphan {
				if _, err := db.ExecContext(ctx, "INSERT INTO `functions` VALUES ('gone', 0, 'f', 'f', 1, 1, 1, 1, 1, 1)"); err != nil {
					t.Fatal(err)
				}
			}
			if !tt.interrupted {
				m0.Close()
			}

			m, err := OpenMySQL(ctx, dsn, Retention{})
			if err != nil {
				t.Fatalf("open the earlier layout: %v", err)
			}
			defer m.Close()
			for _, sv := range all {
				checkSnapshot(t, m, sv.s, sv.funcs, sv.stacks)
			}
			checkRowCounts(t, m.DB(), len(all))
			var kinds []string
			rows, err := m.DB().QueryContext(ctx, "SELECT CONCAT(table_name, ' ', table_type) FROM information_schema.tables"+
				" WHERE table_schema = DATABASE() ORDER BY table_name")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k string
				if err := rows.Scan(&k); err != nil {
					t.Fatal(err)
				}
				kinds = append(kinds, k)
			}
			rows.Close()
			want := []string{"diffs VIEW", "functions VIEW", "snapshots VIEW", "stacks VIEW",
				"store_functions BASE TABLE", "store_snapshots BASE TABLE", "store_stacks BASE TABLE"}
			if !slices.Equal(kinds, want) {
				t.Errorf("after the migration: %q, want %q", kinds, want)
			}
			// The views show the migrated rows.
			var n int
			if err := m.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM functions f JOIN snapshots s ON s.id = f.snapshot_id").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if wantN := len(all[0].funcs) * len(all); n != wantN {
				t.Errorf("functions view: %d rows, want %d", n, wantN)
			}
			// Opening again leaves it alone; saving works.
			m2, err := OpenMySQL(ctx, dsn, Retention{})
			if err != nil {
				t.Fatalf("open again: %v", err)
			}
			defer m2.Close()
			s, funcs, stacks := newSnap(t, 10, base.Add(5*time.Hour))
			if err := m2.Save(ctx, s, funcs, stacks); err != nil {
				t.Fatal(err)
			}
			checkSnapshot(t, m, s, funcs, stacks)
			checkRowCounts(t, m.DB(), len(all)+1)
		})
	}
}
