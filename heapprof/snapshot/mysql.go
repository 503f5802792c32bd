package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
)

// MySQL keeps snapshots in a MySQL-compatible database (MySQL, MariaDB,
// TiDB), so that several proxies share one history and BI tools query it
// with plain SQL. It implements Store and is safe for concurrent use, also
// by several processes on one database.
//
// The tables (created if missing, see schema):
//
//	snapshots  one row per snapshot: id, node_id, node_kind, node_addr,
//	           taken_at (DATETIME(6), UTC), total_bytes, total_objects,
//	           sample_period, format, raw, profile (LONGBLOBs)
//	functions  one row per snapshot and function: snapshot_id, seq (0 is
//	           the largest flat), name, short_name, flat_bytes,
//	           flat_objects, cum_bytes, cum_objects, flat_percent,
//	           cum_percent
//	stacks     one row per snapshot and stack: snapshot_id, stack_id (same
//	           stack, same id in every snapshot), seq, depth, bytes,
//	           objects, frames ("leaf;caller;...")
//
// Times are stored in UTC with microseconds; TakenAt comes back truncated
// to the microsecond. A blob larger than the server's max_allowed_packet
// (MariaDB's default: 16 MiB) makes Save fail with the server's error.
type MySQL struct {
	db        *sql.DB
	retention Retention
	now       func() time.Time
}

var _ Store = (*MySQL)(nil)

// DefaultDatabase is the database OpenMySQL uses when the DSN names none.
const DefaultDatabase = "heapprof"

// schema creates the tables; each statement is idempotent.
var schema = []string{
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

// OpenMySQL connects to the server in dsn (go-sql-driver/mysql syntax,
// e.g. "user:pass@tcp(host:3306)/"), creates the database (the DSN's, else
// DefaultDatabase) and the tables if missing. The DSN's timeouts apply;
// unset ones default to 10 s (connect) and 60 s (read, write).
func OpenMySQL(ctx context.Context, dsn string, r Retention) (*MySQL, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("open snapshot database: %w", err)
	}
	if cfg.DBName == "" {
		cfg.DBName = DefaultDatabase
	}
	for _, c := range cfg.DBName {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return nil, fmt.Errorf("open snapshot database: database name %q: only letters, digits and '_'", cfg.DBName)
		}
	}
	cfg.ParseTime = true
	cfg.Loc = time.UTC
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	// Our session works in UTC, so NOW() and FROM_UNIXTIME() agree with
	// the UTC values in taken_at.
	cfg.Params["time_zone"] = "'+00:00'"
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 60 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 60 * time.Second
	}

	server := cfg.Clone()
	server.DBName = ""
	if err := createDatabase(ctx, server, cfg.DBName); err != nil {
		return nil, err
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, fmt.Errorf("open snapshot database: %w", err)
	}
	db := sql.OpenDB(conn)
	db.SetConnMaxIdleTime(5 * time.Minute)
	for _, stmt := range schema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("open snapshot database %s: create tables: %w", cfg.DBName, err)
		}
	}
	return &MySQL{db: db, retention: r, now: time.Now}, nil
}

// createDatabase creates the database unless it exists; a user without
// the CREATE privilege can still use a database an administrator made.
func createDatabase(ctx context.Context, cfg *mysql.Config, name string) error {
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return fmt.Errorf("open snapshot database: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	var found string
	err = db.QueryRowContext(ctx, "SELECT schema_name FROM information_schema.schemata WHERE schema_name = ?", name).Scan(&found)
	if err == nil {
		return nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("open snapshot database: %w", err)
	}
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"` DEFAULT CHARACTER SET utf8mb4"); err != nil {
		return fmt.Errorf("open snapshot database: create database %s: %w", name, err)
	}
	return nil
}

// DB is the connection pool, for queries the Store methods do not cover.
func (m *MySQL) DB() *sql.DB { return m.db }

// Save implements Store: the snapshot and its rows are written in one
// transaction.
func (m *MySQL) Save(ctx context.Context, s *Snapshot, funcs []Function, stacks []Stack) error {
	if err := checkSave(s); err != nil {
		return err
	}
	funcs, stacks = rowsFor(s.ID, funcs, stacks)
	sortFunctions(funcs)
	sortStacks(stacks)
	err := m.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "INSERT INTO `snapshots` (`id`, `node_id`, `node_kind`, `node_addr`, `taken_at`,"+
			" `total_bytes`, `total_objects`, `sample_period`, `format`, `raw`, `profile`) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
			s.ID, s.NodeID, s.NodeKind, s.NodeAddr, s.TakenAt.UTC().Truncate(time.Microsecond),
			s.TotalBytes, s.TotalObjects, s.SamplePeriod, s.Format, nonNil(s.Raw), nonNil(s.Profile)); err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		fb := batch{tx: tx, table: "functions", cols: "`snapshot_id`, `seq`, `name`, `short_name`, `flat_bytes`, `flat_objects`," +
			" `cum_bytes`, `cum_objects`, `flat_percent`, `cum_percent`", ncols: 10}
		for i, f := range funcs {
			if err := fb.add(ctx, len(f.Name)+len(f.ShortName), s.ID, i, validUTF8(f.Name), validUTF8(f.ShortName),
				f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects, f.FlatPercent, f.CumPercent); err != nil {
				return err
			}
		}
		if err := fb.flush(ctx); err != nil {
			return err
		}
		sb := batch{tx: tx, table: "stacks", cols: "`snapshot_id`, `stack_id`, `seq`, `depth`, `bytes`, `objects`, `frames`", ncols: 7}
		for i, st := range stacks {
			if err := sb.add(ctx, len(st.Frames), s.ID, st.StackID, i, st.Depth, st.Bytes, st.Objects, validUTF8(st.Frames)); err != nil {
				return err
			}
		}
		return sb.flush(ctx)
	})
	if err != nil {
		return fmt.Errorf("save snapshot %s: %w", s.ID, err)
	}
	if err := m.prune(ctx, s.NodeID); err != nil {
		return &RetentionError{ID: s.ID, Err: err}
	}
	return nil
}

// inTx runs f in a transaction, retrying it when the server picked it as
// a deadlock victim (two proxies pruning the same rows).
func (m *MySQL) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	for attempt := 1; ; attempt++ {
		tx, err := m.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		err = f(tx)
		if err == nil {
			err = tx.Commit()
		} else {
			_ = tx.Rollback() // the error that made us roll back is the one to report
		}
		var me *mysql.MySQLError
		if err != nil && attempt < 3 && errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205) {
			continue // ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT
		}
		return err
	}
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// validUTF8 keeps utf8mb4 columns from refusing a name with stray bytes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// batch collects rows into multi-row INSERTs: at most batchRows rows or
// about batchBytes of text per statement, well under max_allowed_packet.
type batch struct {
	tx    *sql.Tx
	table string
	cols  string
	ncols int
	args  []any
	size  int
}

const (
	batchRows  = 500
	batchBytes = 4 << 20
)

func (b *batch) add(ctx context.Context, size int, args ...any) error {
	b.args = append(b.args, args...)
	b.size += size
	if len(b.args)/b.ncols >= batchRows || b.size >= batchBytes {
		return b.flush(ctx)
	}
	return nil
}

func (b *batch) flush(ctx context.Context) error {
	n := len(b.args) / b.ncols
	if n == 0 {
		return nil
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", b.ncols), ",") + ")"
	q := "INSERT INTO `" + b.table + "` (" + b.cols + ") VALUES " + strings.TrimSuffix(strings.Repeat(row+",", n), ",")
	if _, err := b.tx.ExecContext(ctx, q, b.args...); err != nil {
		return fmt.Errorf("insert %s: %w", b.table, err)
	}
	b.args, b.size = b.args[:0], 0
	return nil
}

// prune applies the retention: PerNode to the node just saved, MaxAge to
// all nodes.
func (m *MySQL) prune(ctx context.Context, node int64) error {
	var ids []string
	if m.retention.PerNode > 0 {
		got, err := m.ids(ctx, "SELECT `id` FROM `snapshots` WHERE `node_id` = ? ORDER BY `taken_at` DESC, `id` DESC"+
			" LIMIT 18446744073709551615 OFFSET ?", node, m.retention.PerNode)
		if err != nil {
			return err
		}
		ids = append(ids, got...)
	}
	if m.retention.MaxAge > 0 {
		cut := m.now().Add(-m.retention.MaxAge).UTC()
		got, err := m.ids(ctx, "SELECT `id` FROM `snapshots` WHERE `taken_at` < ?", cut)
		if err != nil {
			return err
		}
		ids = append(ids, got...)
	}
	for len(ids) > 0 {
		chunk := ids[:min(len(ids), batchRows)]
		ids = ids[len(chunk):]
		in := strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		err := m.inTx(ctx, func(tx *sql.Tx) error {
			for _, table := range []string{"functions", "stacks"} {
				if _, err := tx.ExecContext(ctx, "DELETE FROM `"+table+"` WHERE `snapshot_id` IN ("+in+")", args...); err != nil {
					return fmt.Errorf("drop old %s: %w", table, err)
				}
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM `snapshots` WHERE `id` IN ("+in+")", args...); err != nil {
				return fmt.Errorf("drop old snapshots: %w", err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (m *MySQL) ids(ctx context.Context, q string, args ...any) ([]string, error) {
	rows, err := m.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find old snapshots: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("find old snapshots: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find old snapshots: %w", err)
	}
	return ids, nil
}

const metaCols = "`id`, `node_id`, `node_kind`, `node_addr`, `taken_at`, `total_bytes`, `total_objects`, `sample_period`, `format`"

func scanMeta(sc interface{ Scan(...any) error }, s *Snapshot, extra ...any) error {
	return sc.Scan(append([]any{&s.ID, &s.NodeID, &s.NodeKind, &s.NodeAddr, &s.TakenAt,
		&s.TotalBytes, &s.TotalObjects, &s.SamplePeriod, &s.Format}, extra...)...)
}

// Get implements Store.
func (m *MySQL) Get(ctx context.Context, id string) (*Snapshot, error) {
	var s Snapshot
	row := m.db.QueryRowContext(ctx, "SELECT "+metaCols+", `raw`, `profile` FROM `snapshots` WHERE `id` = ?", id)
	if err := scanMeta(row, &s, &s.Raw, &s.Profile); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, &ErrNotFound{ID: id}
		}
		return nil, fmt.Errorf("read snapshot %s: %w", id, err)
	}
	return &s, nil
}

// List implements Store.
func (m *MySQL) List(ctx context.Context, f Filter) ([]Snapshot, error) {
	q := "SELECT " + metaCols + " FROM `snapshots`"
	var where []string
	var args []any
	if f.NodeID != nil {
		where = append(where, "`node_id` = ?")
		args = append(args, *f.NodeID)
	}
	if !f.Since.IsZero() {
		where = append(where, "`taken_at` >= ?")
		args = append(args, f.Since.UTC())
	}
	if !f.Until.IsZero() {
		where = append(where, "`taken_at` < ?")
		args = append(args, f.Until.UTC())
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY `taken_at` DESC, `id` DESC"
	if f.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, f.Limit)
	}
	rows, err := m.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	defer rows.Close()
	out := []Snapshot{}
	for rows.Next() {
		var s Snapshot
		if err := scanMeta(rows, &s); err != nil {
			return nil, fmt.Errorf("list snapshots: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	return out, nil
}

// Functions implements Store.
func (m *MySQL) Functions(ctx context.Context, id string) ([]Function, error) {
	out := []Function{}
	err := m.rows(ctx, id, "SELECT `name`, `short_name`, `flat_bytes`, `flat_objects`, `cum_bytes`, `cum_objects`,"+
		" `flat_percent`, `cum_percent` FROM `functions` WHERE `snapshot_id` = ? ORDER BY `seq`",
		func(sc *sql.Rows) error {
			f := Function{SnapshotID: id}
			if err := sc.Scan(&f.Name, &f.ShortName, &f.FlatBytes, &f.FlatObjects, &f.CumBytes, &f.CumObjects,
				&f.FlatPercent, &f.CumPercent); err != nil {
				return err
			}
			out = append(out, f)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Stacks implements Store.
func (m *MySQL) Stacks(ctx context.Context, id string) ([]Stack, error) {
	out := []Stack{}
	err := m.rows(ctx, id, "SELECT `stack_id`, `frames`, `depth`, `bytes`, `objects` FROM `stacks`"+
		" WHERE `snapshot_id` = ? ORDER BY `seq`",
		func(sc *sql.Rows) error {
			s := Stack{SnapshotID: id}
			if err := sc.Scan(&s.StackID, &s.Frames, &s.Depth, &s.Bytes, &s.Objects); err != nil {
				return err
			}
			out = append(out, s)
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// rows runs a per-snapshot query in a read-only transaction together with
// the snapshot's existence check, so a concurrent prune cannot make an
// existing snapshot look empty.
func (m *MySQL) rows(ctx context.Context, id, q string, scan func(*sql.Rows) error) error {
	tx, err := m.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true, Isolation: sql.LevelRepeatableRead})
	if err != nil {
		return fmt.Errorf("read snapshot %s: %w", id, err)
	}
	defer tx.Rollback() // read-only: nothing to keep
	var one int
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM `snapshots` WHERE `id` = ?", id).Scan(&one); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return &ErrNotFound{ID: id}
		}
		return fmt.Errorf("read snapshot %s: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, q, id)
	if err != nil {
		return fmt.Errorf("read snapshot %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("read snapshot %s: %w", id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read snapshot %s: %w", id, err)
	}
	return nil
}

// Close closes the connection pool.
func (m *MySQL) Close() error { return m.db.Close() }
