package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// A real MariaDB server, started by the first test that needs it and
// stopped by TestMain.
var (
	mariaOnce sync.Once
	maria     *mariadbtest.Server
	mariaAddr string
	mariaErr  error
	dbSeq     int
	dbSeqMu   sync.Mutex
)

func startMariaDB() {
	maria, mariaErr = mariadbtest.Start(mariadbtest.Options{TCP: true,
		Args: []string{"--innodb-buffer-pool-size=64M", "--max-allowed-packet=64M"}})
	if mariaErr == nil {
		mariaAddr = maria.Addr
	}
}

func stopMariaDB() {
	if maria != nil {
		maria.Stop()
	}
}

// mariaDSN returns a DSN for the test server; db "" means no database (so
// OpenMySQL uses DefaultDatabase), "new" a fresh database per call.
func mariaDSN(t testing.TB, db string) string {
	t.Helper()
	mariaOnce.Do(startMariaDB)
	if mariaErr != nil {
		t.Fatalf("starting MariaDB: %v", mariaErr)
	}
	if db == "new" {
		dbSeqMu.Lock()
		dbSeq++
		db = fmt.Sprintf("heapprof_t%d", dbSeq)
		dbSeqMu.Unlock()
	}
	return "root@tcp(" + mariaAddr + ")/" + db
}

func mysqlKind() storeKind {
	return storeKind{name: "mysql", open: func(t *testing.T, r Retention) Store {
		m, err := OpenMySQL(context.Background(), mariaDSN(t, "new"), r)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}}
}

func TestStoreMySQL(t *testing.T) { testStore(t, mysqlKind()) }

// TestMySQLSchema opens with a DSN naming no database: heapproxy creates
// `heapprof` with the three tables; opening again (a second proxy, a
// restart) is fine.
func TestMySQLSchema(t *testing.T) {
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		m, err := OpenMySQL(ctx, mariaDSN(t, ""), Retention{})
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		m.Close()
	}
	db, err := sql.Open("mysql", mariaDSN(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT table_name, column_name, column_type FROM information_schema.columns"+
		" WHERE table_schema = 'heapprof' ORDER BY table_name, ordinal_position")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols := map[string][]string{}
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			t.Fatal(err)
		}
		cols[table] = append(cols[table], col+" "+typ)
	}
	want := map[string][]string{
		"store_snapshots": {"id varchar(255)", "node_id bigint(20)", "node_kind varchar(64)", "node_addr varchar(255)",
			"taken_at datetime(6)", "total_bytes bigint(20)", "total_objects bigint(20)", "sample_period bigint(20)",
			"format varchar(64)", "raw longblob", "profile longblob"},
		"store_functions": {"snapshot_id varchar(255)", "seq int(11)", "name text", "short_name varchar(4096)", "flat_bytes bigint(20)",
			"flat_objects bigint(20)", "cum_bytes bigint(20)", "cum_objects bigint(20)", "flat_percent double",
			"cum_percent double"},
		"store_stacks": {"snapshot_id varchar(255)", "stack_id bigint(20)", "seq int(11)", "depth int(11)", "bytes bigint(20)",
			"objects bigint(20)", "frames longtext"},
		"snapshots": {"id varchar(255)", "node_id bigint(20)", "node_kind varchar(64)", "node_addr varchar(255)",
			"taken_at datetime(6)", "total_bytes bigint(20)", "total_objects bigint(20)", "sample_period bigint(20)",
			"format varchar(64)"},
		"functions": {"snapshot_id varchar(255)", "node_id bigint(20)", "taken_at datetime(6)", "name text",
			"short_name varchar(4096)", "flat_bytes bigint(20)", "flat_objects bigint(20)", "cum_bytes bigint(20)",
			"cum_objects bigint(20)", "flat_pct double", "cum_pct double"},
		"stacks": {"snapshot_id varchar(255)", "node_id bigint(20)", "taken_at datetime(6)", "stack_id bigint(20)",
			"frames longtext", "bytes bigint(20)", "objects bigint(20)"},
	}
	if len(cols) != len(want)+1 || cols["diffs"] == nil {
		t.Errorf("heapprof holds %d tables and views, want %d and diffs", len(cols), len(want))
	}
	if d := cols["diffs"]; len(d) < 3 || d[1] != "name text" || d[2] != "short_name varchar(4096)" {
		t.Errorf("heapprof.diffs columns: %q, want name text and short_name varchar(4096) after node_id", d)
	}
	for table, w := range want {
		if !slices.Equal(cols[table], w) {
			t.Errorf("heapprof.%s columns:\n got %q\nwant %q", table, cols[table], w)
		}
	}
	var key string
	if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) FROM information_schema.statistics"+
		" WHERE table_schema = 'heapprof' AND table_name = 'store_snapshots' AND index_name = 'node_taken'").Scan(&key); err != nil || key != "node_id,taken_at" {
		t.Errorf("index node_taken: %q, %v", key, err)
	}
	if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(CONCAT(column_name, '(', COALESCE(sub_part, ''), ')') ORDER BY seq_in_index)"+
		" FROM information_schema.statistics WHERE table_schema = 'heapprof' AND table_name = 'store_functions'"+
		" AND index_name = '"+functionsByName+"'").Scan(&key); err != nil || key != "snapshot_id(),name(255)" {
		t.Errorf("index %s: %q, %v", functionsByName, key, err)
	}
	var fks string
	if err := db.QueryRowContext(ctx, "SELECT GROUP_CONCAT(CONCAT(table_name, '.', column_name, '>', referenced_table_name, '.', referenced_column_name)"+
		" ORDER BY table_name) FROM information_schema.key_column_usage WHERE table_schema = 'heapprof' AND referenced_table_name IS NOT NULL").Scan(&fks); err != nil ||
		fks != "store_functions.snapshot_id>store_snapshots.id,store_stacks.snapshot_id>store_snapshots.id" {
		t.Errorf("foreign keys: %q, %v", fks, err)
	}
}

// TestMySQLTwoProxies: two stores on one database (two heapproxy
// processes) save concurrently, see each other's snapshots, and one's
// retention applies to the other's snapshots of the same node.
func TestMySQLTwoProxies(t *testing.T) {
	ctx := context.Background()
	dsn := mariaDSN(t, "new")
	var stores [2]*MySQL
	for i := range stores {
		m, err := OpenMySQL(ctx, dsn, Retention{})
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		stores[i] = m
	}
	at := time.Now().UTC().Truncate(time.Microsecond)
	var wg sync.WaitGroup
	ids := make([][]string, 2)
	errs := make(chan error, 20)
	for i, st := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				// Same node, same instant on both proxies: ids must still
				// differ.
				s, funcs, stacks := newSnap(t, 42, at.Add(time.Duration(j)*time.Second))
				if err := st.Save(ctx, s, funcs, stacks); err != nil {
					errs <- err
					return
				}
				ids[i] = append(ids[i], s.ID)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i, st := range stores {
		other := ids[1-i]
		for _, id := range other {
			if _, err := st.Get(ctx, id); err != nil {
				t.Errorf("store %d cannot read the other's snapshot %s: %v", i, id, err)
			}
		}
		list, err := st.List(ctx, Filter{})
		if err != nil || len(list) != 10 {
			t.Errorf("store %d lists %d snapshots, want 10: %v", i, len(list), err)
		}
	}
	// A third proxy with PerNode 3 prunes everyone's snapshots of node 42.
	m3, err := OpenMySQL(ctx, dsn, Retention{PerNode: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer m3.Close()
	s, funcs, stacks := newSnap(t, 42, at.Add(time.Minute))
	if err := m3.Save(ctx, s, funcs, stacks); err != nil {
		t.Fatal(err)
	}
	list, err := stores[0].List(ctx, Filter{})
	if err != nil || len(list) != 3 || list[0].ID != s.ID {
		t.Errorf("after pruning to 3 per node: %d snapshots (newest %v), %v", len(list), list, err)
	}
	checkRowCounts(t, stores[0].DB(), 3)
}

// checkRowCounts checks that only snapshots rows exist, and that the row
// tables hold rows of exactly those snapshots.
func checkRowCounts(t *testing.T, db *sql.DB, snapshots int) {
	t.Helper()
	var n, orphans int
	if err := db.QueryRow("SELECT COUNT(*) FROM store_snapshots").Scan(&n); err != nil || n != snapshots {
		t.Errorf("snapshots rows: %d, want %d (%v)", n, snapshots, err)
	}
	for _, table := range []string{storeFunctions, storeStacks} {
		if err := db.QueryRow("SELECT COUNT(*) FROM " + table + " r LEFT JOIN store_snapshots s ON s.id = r.snapshot_id WHERE s.id IS NULL").Scan(&orphans); err != nil || orphans != 0 {
			t.Errorf("%s rows without a snapshot: %d (%v)", table, orphans, err)
		}
		if err := db.QueryRow("SELECT COUNT(DISTINCT snapshot_id) FROM " + table).Scan(&n); err != nil || n != snapshots {
			t.Errorf("%s rows for %d snapshots, want %d (%v)", table, n, snapshots, err)
		}
	}
}

// TestMySQLAtomicSave: a Save that fails after some rows were written
// (duplicate stack ids violate the primary key; a cancelled context)
// leaves no row of that snapshot.
func TestMySQLAtomicSave(t *testing.T) {
	ctx := context.Background()
	m, err := OpenMySQL(ctx, mariaDSN(t, "new"), Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	good, funcs, stacks := newSnap(t, 1, base)
	if err := m.Save(ctx, good, funcs, stacks); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		save func(s *Snapshot) error
		want func(error) bool
	}{
		{"duplicate stack id in the last INSERT", func(s *Snapshot) error {
			// Three INSERTs of stacks succeed inside the transaction
			// before the fourth fails.
			bad := slices.Clone(stacks)
			for i := 0; len(bad) < 3*batchRows+10; i++ {
				bad = append(bad, Stack{StackID: int64(1e6 + i), Frames: fmt.Sprintf("g%d;main", i), Depth: 2, Bytes: 1})
			}
			bad[len(bad)-1].StackID = bad[0].StackID
			bad[len(bad)-1].Bytes = 0 // sorts last
			return m.Save(ctx, s, funcs, bad)
		}, func(err error) bool {
			var me *mysql.MySQLError
			return errors.As(err, &me) && me.Number == 1062 // ER_DUP_ENTRY
		}},
		{"cancelled mid-save", func(s *Snapshot) error {
			// Enough stack rows for several INSERTs; the context ends
			// while they are written.
			many := make([]Stack, 0, 50*batchRows)
			for i := 0; i < 50*batchRows; i++ {
				many = append(many, Stack{StackID: int64(i), Frames: fmt.Sprintf("f%d;main", i), Depth: 2, Bytes: int64(i)})
			}
			cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
			defer cancel()
			return m.Save(cctx, s, funcs, many)
		}, func(err error) bool { return err != nil }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _, _ := newSnap(t, 1, base.Add(time.Hour))
			err := c.save(s)
			if !c.want(err) {
				t.Fatalf("Save: %v", err)
			}
			t.Logf("Save failed as intended: %v", err)
			var nf *ErrNotFound
			if _, err := m.Get(ctx, s.ID); !errors.As(err, &nf) {
				t.Errorf("Get after failed Save: %v", err)
			}
			for _, table := range []string{storeFunctions, storeStacks} {
				var n int
				if err := m.DB().QueryRow("SELECT COUNT(*) FROM "+table+" WHERE snapshot_id = ?", s.ID).Scan(&n); err != nil || n != 0 {
					t.Errorf("%s rows of the failed save: %d (%v)", table, n, err)
				}
			}
			checkRowCounts(t, m.DB(), 1)
		})
	}
	checkSnapshot(t, m, good, funcs, stacks)
}

// TestMySQLExistingDatabase: a user allowed only on a database an
// administrator created (no CREATE DATABASE) can open the store.
func TestMySQLExistingDatabase(t *testing.T) {
	ctx := context.Background()
	admin, err := sql.Open("mysql", mariaDSN(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS heapprof_shared",
		"CREATE USER IF NOT EXISTS 'proxy'@'127.0.0.1' IDENTIFIED BY 'pw'",
		"GRANT SELECT, INSERT, DELETE, CREATE, INDEX, REFERENCES, CREATE VIEW ON heapprof_shared.* TO 'proxy'@'127.0.0.1'",
	} {
		if _, err := admin.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	m, err := OpenMySQL(ctx, "proxy:pw@tcp("+mariaAddr+")/heapprof_shared", Retention{})
	if err != nil {
		t.Fatalf("OpenMySQL as a user without CREATE DATABASE: %v", err)
	}
	defer m.Close()
	s, funcs, stacks := newSnap(t, 3, base)
	if err := m.Save(ctx, s, funcs, stacks); err != nil {
		t.Fatal(err)
	}
	checkSnapshot(t, m, s, funcs, stacks)
	if _, err := OpenMySQL(ctx, "proxy:pw@tcp("+mariaAddr+")/heapprof_other", Retention{}); err == nil {
		t.Error("OpenMySQL created a database the user may not create")
	}
}
