package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
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
// BI tools see the heapprof schema of heapprof/sqlview/README.md, the same
// as the embedded default serves: the views snapshots, functions, stacks
// and diffs, with its columns and types (see views). They read the
// storage tables (created if missing, see storeSchema):
//
//	store_snapshots  one row per snapshot: the columns of snapshots, and
//	                 raw and profile (LONGBLOBs)
//	store_functions  one row per snapshot and function: snapshot_id, seq
//	                 (0 is the largest flat), name (full, one row per name),
//	                 short_name (jeprof's, the graph's), flat_bytes,
//	                 flat_objects, cum_bytes, cum_objects, flat_percent,
//	                 cum_percent
//	store_stacks     one row per snapshot and stack: snapshot_id, stack_id
//	                 (same stack, same id in every snapshot), seq, depth,
//	                 bytes, objects, frames (root first, joined by ";")
//
// store_functions and store_stacks reference store_snapshots(id) (ON DELETE
// CASCADE). A database written by an earlier heapproxy (tables snapshots,
// functions, stacks holding the rows; or views of an earlier definition) is
// brought up to date when opened (setUp).
//
// Times are stored in UTC with microseconds; TakenAt comes back truncated
// to the microsecond. A blob larger than the server's max_allowed_packet
// (MariaDB's default: 16 MiB) makes Save fail with the server's error.
type MySQL struct {
	db        *sql.DB
	retention Retention
	now       func() time.Time
	// queue saves in the background (SaveBackground).
	queue *Queue
}

var _ Store = (*MySQL)(nil)

// DefaultDatabase is the database OpenMySQL uses when the DSN names none.
const DefaultDatabase = "heapprof"

// The storage tables.
const (
	storeSnapshots = "store_snapshots"
	storeFunctions = "store_functions"
	storeStacks    = "store_stacks"
)

// maxShortName is the length of the schema's functions.short_name
// (VARCHAR(4096)); longer short names are cut there. name, the full name,
// is TEXT and never cut: cutting would merge functions.
const maxShortName = 4096

// storeSchema creates the storage tables; each statement is idempotent.
// Text columns are utf8mb4_bin like the schema's (names are case-sensitive;
// the server's default collation would merge "Foo" and "foo" in GROUP BY).
var storeSchema = []string{
	"CREATE TABLE IF NOT EXISTS `store_snapshots` (" +
		"`id` VARCHAR(255) NOT NULL " + comment("snapshots", "id") + "," +
		"`node_id` BIGINT NOT NULL " + comment("snapshots", "node_id") + "," +
		"`node_kind` VARCHAR(64) NOT NULL " + comment("snapshots", "node_kind") + "," +
		"`node_addr` VARCHAR(255) NOT NULL " + comment("snapshots", "node_addr") + "," +
		"`taken_at` DATETIME(6) NOT NULL " + comment("snapshots", "taken_at") + "," +
		"`total_bytes` BIGINT NOT NULL " + comment("snapshots", "total_bytes") + "," +
		"`total_objects` BIGINT NOT NULL " + comment("snapshots", "total_objects") + "," +
		"`sample_period` BIGINT NOT NULL " + comment("snapshots", "sample_period") + "," +
		"`format` VARCHAR(64) NOT NULL " + comment("snapshots", "format") + "," +
		"`raw` LONGBLOB NOT NULL COMMENT 'the dump as the node sent it'," +
		"`profile` LONGBLOB NOT NULL COMMENT 'symbolized pprof protobuf, gzipped: go tool pprof opens it'," +
		"PRIMARY KEY (`id`)," +
		"KEY `node_taken` (`node_id`, `taken_at`)," +
		"KEY `taken` (`taken_at`)" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='heap profiles heapproxy took, one row each (BI tools: the view snapshots)'",
	"CREATE TABLE IF NOT EXISTS `store_functions` (" +
		"`snapshot_id` VARCHAR(255) NOT NULL " + comment("functions", "snapshot_id") + "," +
		"`seq` INT NOT NULL COMMENT '0 is the largest flat_bytes'," +
		"`name` TEXT NOT NULL " + comment("functions", "name") + "," +
		"`short_name` VARCHAR(4096) NOT NULL " + comment("functions", "short_name") + "," +
		"`flat_bytes` BIGINT NOT NULL " + comment("functions", "flat_bytes") + "," +
		"`flat_objects` BIGINT NOT NULL " + comment("functions", "flat_objects") + "," +
		"`cum_bytes` BIGINT NOT NULL " + comment("functions", "cum_bytes") + "," +
		"`cum_objects` BIGINT NOT NULL " + comment("functions", "cum_objects") + "," +
		"`flat_percent` DOUBLE NOT NULL " + comment("functions", "flat_pct") + "," +
		"`cum_percent` DOUBLE NOT NULL " + comment("functions", "cum_pct") + "," +
		"PRIMARY KEY (`snapshot_id`, `seq`)," +
		"KEY `short_name` (`short_name`(191))," +
		// diffs looks a function up by snapshot and full name.
		"KEY `" + functionsByName + "` " + functionsByNameCols + "," +
		"CONSTRAINT `store_functions_snapshot` FOREIGN KEY (`snapshot_id`) REFERENCES `store_snapshots` (`id`) ON DELETE CASCADE" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='per snapshot and function (BI tools: the view functions)'",
	"CREATE TABLE IF NOT EXISTS `store_stacks` (" +
		"`snapshot_id` VARCHAR(255) NOT NULL " + comment("stacks", "snapshot_id") + "," +
		"`stack_id` BIGINT NOT NULL " + comment("stacks", "stack_id") + "," +
		"`seq` INT NOT NULL COMMENT '0 is the largest'," +
		"`depth` INT NOT NULL," +
		"`bytes` BIGINT NOT NULL " + comment("stacks", "bytes") + "," +
		"`objects` BIGINT NOT NULL " + comment("stacks", "objects") + "," +
		"`frames` LONGTEXT NOT NULL " + comment("stacks", "frames") + "," +
		"PRIMARY KEY (`snapshot_id`, `stack_id`)," +
		"KEY `stack` (`stack_id`)," +
		"CONSTRAINT `store_stacks_snapshot` FOREIGN KEY (`snapshot_id`) REFERENCES `store_snapshots` (`id`) ON DELETE CASCADE" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin COMMENT='per snapshot and call stack (BI tools: the view stacks)'",
}

// comment is the COMMENT clause of a store column that a view passes
// through as the schema's table.column (ColumnComment). Stores created
// before the comments were shared keep theirs: heapproxy does not ALTER
// tables that hold data.
func comment(table, column string) string {
	return "COMMENT '" + strings.ReplaceAll(ColumnComment(table, column), "'", "''") + "'"
}

// functionsByName is store_functions' index on (snapshot_id, name), which
// the diffs view needs. Stores created before it get it on open.
const (
	functionsByName     = "snapshot_name"
	functionsByNameCols = "(`snapshot_id`, `name`(255))"
)

// views are the heapprof schema over the storage tables: the columns,
// their order and types of the embedded default's tables (heapprof/sqlview;
// the tests compare both). Views carry no keys; the storage tables do.
// SQL SECURITY INVOKER: a BI user needs SELECT on the database, and the
// views keep working when the account that created them is dropped.
var views = []struct{ name, query string }{
	{"snapshots", "SELECT `id`, `node_id`, `node_kind`, `node_addr`, `taken_at`, `total_bytes`, `total_objects`," +
		" `sample_period`, `format` FROM `store_snapshots`"},
	{"functions", "SELECT f.`snapshot_id`, s.`node_id`, s.`taken_at`, f.`name`, f.`short_name`, f.`flat_bytes`," +
		" f.`flat_objects`, f.`cum_bytes`, f.`cum_objects`, f.`flat_percent` AS `flat_pct`, f.`cum_percent` AS `cum_pct`" +
		" FROM `store_functions` f JOIN `store_snapshots` s ON s.`id` = f.`snapshot_id`"},
	{"stacks", "SELECT k.`snapshot_id`, s.`node_id`, s.`taken_at`, k.`stack_id`, k.`frames`, k.`bytes`, k.`objects`" +
		" FROM `store_stacks` k JOIN `store_snapshots` s ON s.`id` = k.`snapshot_id`"},
	// Consecutive snapshots of a node by LAG (ties by id, as the embedded
	// default orders them), then every function (full name) of either
	// snapshot, x: the later snapshot's row where it has the function (so
	// short_name is the later one's), else the earlier one's; a, b its rows
	// in the later and the earlier snapshot, a missing side counted 0. A
	// snapshot has one row per full name (Summarize tells functions apart
	// by it). a and b are looked up by the index functionsByName. The
	// earlier form, a UNION of names joined to per-snapshot sums, compared
	// every function with every other (derived tables get no key on long
	// text): the README's top-growing query took 32-35 s on 34,288
	// function rows (MariaDB 10.11), 0.15 s this way. A UNION would also
	// type name MEDIUMTEXT.
	{"diffs", "WITH `pairs` AS (" +
		"SELECT `node_id`, `id` AS `to_id`, `taken_at` AS `to_at`," +
		" LAG(`id`) OVER (PARTITION BY `node_id` ORDER BY `taken_at`, `id`) AS `from_id`," +
		" LAG(`taken_at`) OVER (PARTITION BY `node_id` ORDER BY `taken_at`, `id`) AS `from_at`" +
		" FROM `store_snapshots`)" +
		" SELECT p.`node_id`, x.`name`, x.`short_name`, p.`from_id` AS `from_snapshot_id`, p.`to_id` AS `to_snapshot_id`," +
		" p.`from_at` AS `from_taken_at`, p.`to_at` AS `to_taken_at`," +
		" CAST(TIMESTAMPDIFF(MICROSECOND, p.`from_at`, p.`to_at`) / 1000000 AS DOUBLE) AS `seconds`," +
		" COALESCE(b.`flat_bytes`, 0) AS `flat_bytes_before`, COALESCE(a.`flat_bytes`, 0) AS `flat_bytes_after`," +
		" COALESCE(a.`flat_bytes`, 0) - COALESCE(b.`flat_bytes`, 0) AS `flat_bytes_delta`," +
		" COALESCE(b.`cum_bytes`, 0) AS `cum_bytes_before`, COALESCE(a.`cum_bytes`, 0) AS `cum_bytes_after`," +
		" COALESCE(a.`cum_bytes`, 0) - COALESCE(b.`cum_bytes`, 0) AS `cum_bytes_delta`," +
		" COALESCE(a.`flat_objects`, 0) - COALESCE(b.`flat_objects`, 0) AS `flat_objects_delta`," +
		" COALESCE(a.`cum_objects`, 0) - COALESCE(b.`cum_objects`, 0) AS `cum_objects_delta`" +
		" FROM `pairs` p JOIN `store_functions` x ON x.`snapshot_id` IN (p.`to_id`, p.`from_id`)" +
		" LEFT JOIN `store_functions` a ON a.`snapshot_id` = p.`to_id` AND a.`name` = x.`name`" +
		" LEFT JOIN `store_functions` b ON b.`snapshot_id` = p.`from_id` AND b.`name` = x.`name`" +
		" WHERE p.`from_id` IS NOT NULL AND (x.`snapshot_id` = p.`to_id` OR a.`snapshot_id` IS NULL)"},
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
	if err := setUp(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open snapshot database %s: %w", cfg.DBName, err)
	}
	m := &MySQL{db: db, retention: r, now: time.Now}
	m.queue = NewQueue(m.Save, runtime.NumCPU(), DefaultQueueLimit())
	return m, nil
}

// setUp creates the storage tables and the views, migrating a database an
// earlier heapproxy wrote: the layout before the storage tables (migrate),
// store_functions without its index on names, views of an earlier
// definition (upgradeViews). Proxies opening one database at once take
// turns (a named lock), so only one migrates and creates the views.
func setUp(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(CONCAT('heapproxy.schema.', DATABASE()), 60)").Scan(&got); err != nil {
		return fmt.Errorf("lock the schema: %w", err)
	}
	if got.Int64 != 1 {
		return errors.New("lock the schema: another heapproxy held it for 60 s")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "DO RELEASE_LOCK(CONCAT('heapproxy.schema.', DATABASE()))") //nolint:errcheck // ends with the connection anyway

	for _, stmt := range storeSchema {
		if _, err := conn.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
	}
	legacy, err := hasLegacyTables(ctx, conn)
	if err != nil {
		return err
	}
	if legacy {
		if err := migrate(ctx, conn); err != nil {
			return fmt.Errorf("migrate from the earlier layout: %w", err)
		}
	}
	if err := addIndex(ctx, conn, storeFunctions, functionsByName, functionsByNameCols); err != nil {
		return err
	}
	return upgradeViews(ctx, conn)
}

// addIndex creates an index that stores made by an earlier heapproxy lack
// (InnoDB builds it online; the account needs INDEX).
func addIndex(ctx context.Context, conn *sql.Conn, table, name, cols string) error {
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.statistics"+
		" WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?", table, name).Scan(&n); err != nil {
		return fmt.Errorf("look for index %s.%s: %w", table, name, err)
	}
	if n > 0 {
		return nil
	}
	if _, err := conn.ExecContext(ctx, "CREATE INDEX `"+name+"` ON `"+table+"` "+cols); err != nil {
		return fmt.Errorf("add index %s.%s: %w", table, name, err)
	}
	return nil
}

// upgradeViews creates the views that are missing and replaces those whose
// columns (names, in order) differ from this version's: the definitions of
// an earlier heapproxy (functions.name was the short name, diffs keyed by
// it). Replacing needs DROP on the view. A later change of a view that
// keeps its columns would need a check of its own here.
func upgradeViews(ctx context.Context, conn *sql.Conn) error {
	have, err := existingViews(ctx, conn)
	if err != nil {
		return err
	}
	for _, v := range views {
		create := "CREATE"
		if cols, ok := have[v.name]; ok {
			want, err := queryColumns(ctx, conn, v.query)
			if err != nil {
				return fmt.Errorf("view %s: %w", v.name, err)
			}
			if slices.Equal(cols, want) {
				continue
			}
			create = "CREATE OR REPLACE"
		}
		if _, err := conn.ExecContext(ctx, create+" SQL SECURITY INVOKER VIEW `"+v.name+"` AS "+v.query); err != nil {
			return fmt.Errorf("create view %s: %w", v.name, err)
		}
	}
	return nil
}

// queryColumns names the columns q answers with, without running it
// (LIMIT 0 returns at once).
func queryColumns(ctx context.Context, conn *sql.Conn, q string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, q+" LIMIT 0")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	return cols, rows.Close()
}

// hasLegacyTables tells whether the database holds the tables an earlier
// heapproxy wrote its rows to: a base table snapshots with a raw column.
func hasLegacyTables(ctx context.Context, conn *sql.Conn) (bool, error) {
	var n int
	err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.columns c"+
		" JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name"+
		" WHERE c.table_schema = DATABASE() AND c.table_name = 'snapshots' AND c.column_name = 'raw'"+
		" AND t.table_type = 'BASE TABLE'").Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for an earlier layout: %w", err)
	}
	return n > 0, nil
}

// existingViews returns the database's views with their columns in
// order (none for a view the server cannot resolve).
func existingViews(ctx context.Context, conn *sql.Conn) (map[string][]string, error) {
	rows, err := conn.QueryContext(ctx, "SELECT t.table_name, c.column_name FROM information_schema.tables t"+
		" LEFT JOIN information_schema.columns c ON c.table_schema = t.table_schema AND c.table_name = t.table_name"+
		" WHERE t.table_schema = DATABASE() AND t.table_type = 'VIEW' ORDER BY t.table_name, c.ordinal_position")
	if err != nil {
		return nil, fmt.Errorf("list views: %w", err)
	}
	defer rows.Close()
	have := map[string][]string{}
	for rows.Next() {
		var name string
		var col sql.NullString
		if err := rows.Scan(&name, &col); err != nil {
			return nil, fmt.Errorf("list views: %w", err)
		}
		cols := have[name]
		if col.Valid {
			cols = append(cols, col.String)
		}
		have[name] = cols
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list views: %w", err)
	}
	return have, nil
}

// migrate moves the rows of the earlier layout (tables snapshots,
// functions, stacks) into the storage tables in one transaction, then drops
// the old tables so the views can take their names. DDL commits on its own
// in MySQL, so the order makes it safe: the copy commits whole or not at
// all, and the old tables are dropped only after it committed. Interrupted
// after the commit, the next open finds the old tables again and copies
// anew (the storage tables are emptied first, in the same transaction).
// Rows of functions and stacks whose snapshot is gone are not copied: the
// foreign keys would refuse them.
func migrate(ctx context.Context, conn *sql.Conn) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	stmts := []string{
		"DELETE FROM `store_stacks`",
		"DELETE FROM `store_functions`",
		"DELETE FROM `store_snapshots`",
		"INSERT INTO `store_snapshots` (" + metaCols + ", `raw`, `profile`) SELECT " + metaCols + ", `raw`, `profile` FROM `snapshots`",
		"INSERT INTO `store_functions` (`snapshot_id`, `seq`, `name`, `short_name`, `flat_bytes`, `flat_objects`," +
			" `cum_bytes`, `cum_objects`, `flat_percent`, `cum_percent`)" +
			" SELECT f.`snapshot_id`, f.`seq`, f.`name`, LEFT(f.`short_name`, " + strconv.Itoa(maxShortName) + "), f.`flat_bytes`," +
			" f.`flat_objects`, f.`cum_bytes`, f.`cum_objects`, f.`flat_percent`, f.`cum_percent`" +
			" FROM `functions` f JOIN `snapshots` s ON s.`id` = f.`snapshot_id`",
		"INSERT INTO `store_stacks` (`snapshot_id`, `stack_id`, `seq`, `depth`, `bytes`, `objects`, `frames`)" +
			" SELECT k.`snapshot_id`, k.`stack_id`, k.`seq`, k.`depth`, k.`bytes`, k.`objects`, k.`frames`" +
			" FROM `stacks` k JOIN `snapshots` s ON s.`id` = k.`snapshot_id`",
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			_ = tx.Rollback() // the statement's error is the one to report
			return fmt.Errorf("copy rows: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("copy rows: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS `stacks`, `functions`, `snapshots`"); err != nil {
		return fmt.Errorf("drop the old tables (their rows are copied): %w", err)
	}
	return nil
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
		if _, err := tx.ExecContext(ctx, "INSERT INTO `store_snapshots` (`id`, `node_id`, `node_kind`, `node_addr`, `taken_at`,"+
			" `total_bytes`, `total_objects`, `sample_period`, `format`, `raw`, `profile`) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
			s.ID, s.NodeID, s.NodeKind, s.NodeAddr, s.TakenAt.UTC().Truncate(time.Microsecond),
			s.TotalBytes, s.TotalObjects, s.SamplePeriod, s.Format, nonNil(s.Raw), nonNil(s.Profile)); err != nil {
			return fmt.Errorf("insert snapshot: %w", err)
		}
		fb := batch{tx: tx, table: storeFunctions, cols: "`snapshot_id`, `seq`, `name`, `short_name`, `flat_bytes`, `flat_objects`," +
			" `cum_bytes`, `cum_objects`, `flat_percent`, `cum_percent`", ncols: 10}
		for i, f := range funcs {
			if err := fb.add(ctx, len(f.Name)+len(f.ShortName), s.ID, i, validUTF8(f.Name), cut(validUTF8(f.ShortName), maxShortName),
				f.FlatBytes, f.FlatObjects, f.CumBytes, f.CumObjects, f.FlatPercent, f.CumPercent); err != nil {
				return err
			}
		}
		if err := fb.flush(ctx); err != nil {
			return err
		}
		sb := batch{tx: tx, table: storeStacks, cols: "`snapshot_id`, `stack_id`, `seq`, `depth`, `bytes`, `objects`, `frames`", ncols: 7}
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

// cut keeps the first n characters of s.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
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
		got, err := m.ids(ctx, "SELECT `id` FROM `store_snapshots` WHERE `node_id` = ? ORDER BY `taken_at` DESC, `id` DESC"+
			" LIMIT 18446744073709551615 OFFSET ?", node, m.retention.PerNode)
		if err != nil {
			return err
		}
		ids = append(ids, got...)
	}
	if m.retention.MaxAge > 0 {
		cut := m.now().Add(-m.retention.MaxAge).UTC()
		got, err := m.ids(ctx, "SELECT `id` FROM `store_snapshots` WHERE `taken_at` < ?", cut)
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
			for _, table := range []string{storeFunctions, storeStacks} {
				if _, err := tx.ExecContext(ctx, "DELETE FROM `"+table+"` WHERE `snapshot_id` IN ("+in+")", args...); err != nil {
					return fmt.Errorf("drop old %s: %w", table, err)
				}
			}
			if _, err := tx.ExecContext(ctx, "DELETE FROM `store_snapshots` WHERE `id` IN ("+in+")", args...); err != nil {
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
	if s, ok, err := m.queue.Lookup(ctx, id); ok {
		return s, err
	}
	var s Snapshot
	row := m.db.QueryRowContext(ctx, "SELECT "+metaCols+", `raw`, `profile` FROM `store_snapshots` WHERE `id` = ?", id)
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
	q := "SELECT " + metaCols + " FROM `store_snapshots`"
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
	if f, ok, err := m.queue.LookupFunctions(ctx, id); ok {
		return f, err
	}
	out := []Function{}
	err := m.rows(ctx, id, "SELECT `name`, `short_name`, `flat_bytes`, `flat_objects`, `cum_bytes`, `cum_objects`,"+
		" `flat_percent`, `cum_percent` FROM `store_functions` WHERE `snapshot_id` = ? ORDER BY `seq`",
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
	if st, ok, err := m.queue.LookupStacks(ctx, id); ok {
		return st, err
	}
	out := []Stack{}
	err := m.rows(ctx, id, "SELECT `stack_id`, `frames`, `depth`, `bytes`, `objects` FROM `store_stacks`"+
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
	if err := tx.QueryRowContext(ctx, "SELECT 1 FROM `store_snapshots` WHERE `id` = ?", id).Scan(&one); err != nil {
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
// SaveBackground queues s to be saved by Save in the background: see
// Dir.SaveBackground and Queue.
func (m *MySQL) SaveBackground(ctx context.Context, s *Snapshot, prepare Prepare, done func(error)) error {
	return m.queue.Enqueue(ctx, s, prepare, done)
}

// Queue is the store's background save queue.
func (m *MySQL) Queue() *Queue { return m.queue }

// Close saves what the background queue holds (flush), then closes the
// connection pool.
func (m *MySQL) Close() error {
	m.queue.Close()
	return m.db.Close()
}
