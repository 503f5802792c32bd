package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
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
