package server

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/heapproxy/heapproxy/internal/mariadbtest"
)

// The real mariadb CLI prints exactly the same through the proxy as direct.
func TestCLIThroughProxyMatchesDirect(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		ph, pp := hostPort(srv)
		dh, dp, _ := net.SplitHostPort(env.addr)
		script := `DROP DATABASE IF EXISTS cli; CREATE DATABASE cli; USE cli;
	CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(10,2), at DATETIME, note TEXT);
	INSERT INTO p VALUES (1,'apple',1.50,'2026-01-02 03:04:05',NULL),(2,'pear',2.25,NULL,'ripe');
	SELECT * FROM p ORDER BY id; SELECT * FROM p WHERE id=2\G
	SELECT COUNT(*), SUM(price) FROM p; SHOW WARNINGS; SELECT DATABASE();
	INSERT INTO p VALUES (1,'dup',0,NULL,NULL);`
		direct, derr := cli(t, dh, dp, "app", "secret", "--table", "-e", script)
		proxied, perr := cli(t, ph, pp, "app", "secret", "--table", "-e", script)
		if derr == nil || perr == nil {
			t.Fatalf("the duplicate INSERT must fail both ways: direct %v, proxy %v", derr, perr)
		}
		if direct != proxied {
			t.Fatalf("output differs\ndirect:\n%s\nproxy:\n%s", direct, proxied)
		}
		if !strings.Contains(proxied, "ERROR 1062 (23000)") || !strings.Contains(proxied, "| pear") {
			t.Fatalf("unexpected output:\n%s", proxied)
		}
	})
}

// Prepared statements with every common column type and NULLs, through
// go-sql-driver's binary protocol, read back equal to what was written.
func TestPreparedStatementsAllTypes(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		db := openDB(t, srv.Addr().String(), "app", "secret", "parseTime=true&loc=UTC")
		mustExec(t, db, `CREATE TABLE IF NOT EXISTS types (
			id INT PRIMARY KEY, ti TINYINT, si SMALLINT, mi MEDIUMINT, bi BIGINT, ub BIGINT UNSIGNED,
			f FLOAT, d DOUBLE, dec1 DECIMAL(30,10), s VARCHAR(100), c CHAR(5), tx MEDIUMTEXT, bl BLOB,
			dt DATETIME(6), ts TIMESTAMP(3) NULL, da DATE, tm TIME(3), yr YEAR, bit8 BIT(8), js JSON,
			en ENUM('a','b'), st SET('x','y'))`)
		mustExec(t, db, "DELETE FROM types")
		at := time.Date(2026, 11, 22, 10, 11, 12, 123456000, time.UTC)
		stmt, err := db.Prepare(`INSERT INTO types VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`)
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		if _, err := stmt.Exec(1, -128, -32768, -8388608, int64(-9223372036854775808), uint64(18446744073709551615),
			1.5, 1e300, "12345678901234567890.0123456789", "héllo", "abc", strings.Repeat("x", 70000), []byte{0, 1, 2, 255},
			at, at.Truncate(time.Millisecond), "2026-11-22", "838:59:59.999", 2026, []byte{0xA5}, `{"k": [1, 2]}`, "b", "x,y"); err != nil {
			t.Fatal(err)
		}
		if _, err := stmt.Exec(2, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		q, err := db.Prepare("SELECT ti, si, mi, bi, ub, f, d, dec1, s, c, LENGTH(tx), bl, dt, ts, da, tm, yr, bit8, js, en, st FROM types WHERE id = ?")
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		var (
			ti, si, mi, bi      sql.NullInt64
			ub                  sql.NullString
			f, d                sql.NullFloat64
			dec, s, c           sql.NullString
			txLen               sql.NullInt64
			bl, bit8            []byte
			dt, ts, da          sql.NullTime
			tm, yr, js, en, set sql.NullString
		)
		scan := func(id int) {
			t.Helper()
			if err := q.QueryRow(id).Scan(&ti, &si, &mi, &bi, &ub, &f, &d, &dec, &s, &c, &txLen, &bl, &dt, &ts, &da, &tm, &yr, &bit8, &js, &en, &set); err != nil {
				t.Fatal(err)
			}
		}
		scan(1)
		got := fmt.Sprint(ti.Int64, si.Int64, mi.Int64, bi.Int64, ub.String, f.Float64, d.Float64, dec.String, s.String, c.String,
			txLen.Int64, bl, dt.Time.Format(time.RFC3339Nano), ts.Time.Format(time.RFC3339Nano), da.Time.Format("2006-01-02"),
			tm.String, yr.String, bit8, js.String, en.String, set.String)
		want := fmt.Sprint(-128, -32768, -8388608, int64(-9223372036854775808), "18446744073709551615", 1.5, 1e300,
			"12345678901234567890.0123456789", "héllo", "abc", 70000, []byte{0, 1, 2, 255}, at.Format(time.RFC3339Nano),
			at.Truncate(time.Millisecond).Format(time.RFC3339Nano), "2026-11-22", "838:59:59.999", "2026", []byte{0xA5},
			`{"k": [1, 2]}`, "b", "x,y")
		if got != want {
			t.Fatalf("row 1 through the proxy:\n got %s\nwant %s", got, want)
		}
		scan(2)
		if ti.Valid || ub.Valid || f.Valid || dec.Valid || s.Valid || bl != nil || dt.Valid || ts.Valid || tm.Valid || js.Valid || set.Valid {
			t.Fatal("row 2: every column must be NULL")
		}
	})
}

func mustExec(t testing.TB, db *sql.DB, q string, args ...any) sql.Result {
	t.Helper()
	r, err := db.Exec(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return r
}

func TestTransactionsAndErrorCodes(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		db := openDB(t, srv.Addr().String(), "app", "secret", "")
		mustExec(t, db, "CREATE TABLE IF NOT EXISTS tx (id INT PRIMARY KEY AUTO_INCREMENT, v INT)")
		mustExec(t, db, "DELETE FROM tx")
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		r, err := tx.Exec("INSERT INTO tx (v) VALUES (1), (2)")
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := r.RowsAffected(); n != 2 {
			t.Fatalf("affected rows %d, want 2", n)
		}
		if id, _ := r.LastInsertId(); id == 0 {
			t.Fatal("last insert id not relayed")
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM tx").Scan(&n); err != nil || n != 0 {
			t.Fatalf("after rollback: %d rows, err %v", n, err)
		}
		tx, _ = db.Begin()
		tx.Exec("INSERT INTO tx (v) VALUES (3)")
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := db.QueryRow("SELECT COUNT(*) FROM tx").Scan(&n); err != nil || n != 1 {
			t.Fatalf("after commit: %d rows, err %v", n, err)
		}
		for _, c := range []struct {
			q     string
			code  uint16
			state string
		}{
			{"SELECT * FROM no_such_table", 1146, "42S02"},
			{"SELEKT 1", 1064, "42000"},
			{"INSERT INTO tx (id, v) VALUES (1, 1), (1, 1)", 1062, "23000"},
		} {
			_, err := db.Exec(c.q)
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != c.code || string(me.SQLState[:]) != c.state {
				t.Errorf("%s: got %v, want error %d (%s)", c.q, err, c.code, c.state)
			}
		}
		// The in-transaction status flag reaches the client: a statement
		// after BEGIN sees the transaction.
		conn, _ := db.Conn(context.Background())
		defer conn.Close()
		conn.ExecContext(context.Background(), "BEGIN")
		var inTx int
		conn.QueryRowContext(context.Background(), "SELECT @@in_transaction").Scan(&inTx)
		conn.ExecContext(context.Background(), "ROLLBACK")
		if inTx != 1 {
			t.Fatal("BEGIN through the proxy did not open a transaction")
		}
	})
}

func TestMultiStatementsMultiResults(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		db := openDB(t, srv.Addr().String(), "app", "secret", "multiStatements=true")
		rows, err := db.Query("SELECT 1 AS a; SELECT 'x' AS b, 'y' AS c UNION ALL SELECT 'z', NULL; DO 1; SELECT 42")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var sets [][]string
		for {
			cols, _ := rows.Columns()
			vals, err := mariadbtest.Scan(rows)
			if err != nil {
				t.Fatal(err)
			}
			var set []string
			for _, row := range vals {
				var cells []string
				for _, v := range row {
					cells = append(cells, fmt.Sprintf("%s %v", v.String, v.Valid))
				}
				set = append(set, strings.Join(cols, ",")+"="+strings.Join(cells, ","))
			}
			sets = append(sets, set)
			if !rows.NextResultSet() {
				break
			}
		}
		got := fmt.Sprint(sets)
		want := "[[a=1 true] [b,c=x true,y true b,c=z true, false] [42=42 true]]"
		if got != want {
			t.Fatalf("result sets\n got %s\nwant %s", got, want)
		}
		// A stored procedure returning two result sets plus its final OK.
		mustExec(t, db, "DROP PROCEDURE IF EXISTS two; CREATE PROCEDURE two() BEGIN SELECT 1; SELECT 2; END")
		rows2, err := db.Query("CALL two()")
		if err != nil {
			t.Fatal(err)
		}
		count := 0
		for {
			for rows2.Next() {
				count++
			}
			if !rows2.NextResultSet() {
				break
			}
		}
		rows2.Close()
		if count != 2 {
			t.Fatalf("CALL returned %d rows, want 2", count)
		}
		// The connection is still in sync afterwards.
		var v int
		if err := db.QueryRow("SELECT 7").Scan(&v); err != nil || v != 7 {
			t.Fatalf("after multi-results: %v %d", err, v)
		}
	})
}

// A 20 MiB LONGBLOB crosses the 16 MiB packet boundary both ways, once as a
// text query, once as a prepared statement sent in SEND_LONG_DATA pieces.
func TestLargePackets(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		db := openDB(t, srv.Addr().String(), "app", "secret", "")
		mustExec(t, db, "CREATE TABLE IF NOT EXISTS blobs (id INT PRIMARY KEY, b LONGBLOB)")
		mustExec(t, db, "DELETE FROM blobs")
		blob := bytes.Repeat([]byte("0123456789abcdef"), 20<<20/16)
		blob[12345] = 0
		mustExec(t, db, "INSERT INTO blobs VALUES (1, ?)", blob) // prepared: a 20 MiB COM_STMT_EXECUTE
		interp := openDB(t, srv.Addr().String(), "app", "secret", "interpolateParams=true")
		mustExec(t, interp, "INSERT INTO blobs VALUES (2, ?)", blob) // a 40 MiB COM_QUERY (hex literal)
		// maxAllowedPacket small: the driver sends the blob with COM_STMT_SEND_LONG_DATA.
		long := openDB(t, srv.Addr().String(), "app", "secret", "maxAllowedPacket=1048576")
		mustExec(t, long, "INSERT INTO blobs VALUES (3, ?)", blob)
		for id := 1; id <= 3; id++ {
			var got []byte
			if err := db.QueryRow("SELECT b FROM blobs WHERE id = ?", id).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, blob) {
				t.Fatalf("blob %d: read back %d bytes, differs from the %d written", id, len(got), len(blob))
			}
			var text []byte
			if err := interp.QueryRow(fmt.Sprintf("SELECT b FROM blobs WHERE id = %d", id)).Scan(&text); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(text, blob) {
				t.Fatalf("blob %d over the text protocol differs", id)
			}
		}
	})
}

func TestLoadDataLocalInfile(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		dir := t.TempDir()
		file := filepath.Join(dir, "rows.csv")
		var b strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&b, "%d,name-%d\n", i, i)
		}
		os.WriteFile(file, []byte(b.String()), 0o600)
		h, p := hostPort(srv)
		out, err := cli(t, h, p, "app", "secret", "--local-infile=1", "-N", "-e",
			fmt.Sprintf(`USE t; CREATE TABLE IF NOT EXISTS li (id INT, name VARCHAR(20)); DELETE FROM li;
	LOAD DATA LOCAL INFILE '%s' INTO TABLE li FIELDS TERMINATED BY ','; SELECT COUNT(*), MAX(id) FROM li;`, file))
		if err != nil || strings.TrimSpace(out) != "5000\t4999" {
			t.Fatalf("CLI LOAD DATA LOCAL: %v\n%s", err, out)
		}
		mysql.RegisterLocalFile(file)
		db := openDB(t, srv.Addr().String(), "app", "secret", "allowAllFiles=false")
		r := mustExec(t, db, fmt.Sprintf("LOAD DATA LOCAL INFILE '%s' INTO TABLE li FIELDS TERMINATED BY ','", file))
		if n, _ := r.RowsAffected(); n != 5000 {
			t.Fatalf("go driver LOAD DATA: %d rows", n)
		}
		// A file the client refuses to send: the upstream's error comes back and
		// the session stays usable.
		_, err = db.Exec("LOAD DATA LOCAL INFILE '/nonexistent/file' INTO TABLE li")
		if err == nil {
			t.Fatal("LOAD DATA of a missing file succeeded")
		}
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM li").Scan(&n); err != nil || n != 10000 {
			t.Fatalf("after refused file: %d rows, %v", n, err)
		}
	})
}

// A 1,000,000-row SELECT streams through the proxy row by row.
func TestMillionRowsStreamed(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		db := openDB(t, srv.Addr().String(), "app", "secret", "")
		rows, err := db.Query("SELECT seq, CONCAT('row-', seq) FROM seq_1_to_1000000")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var n, sum int64
		var id int64
		var s string
		for rows.Next() {
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			n++
			sum += id
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n != 1000000 || sum != 500000500000 || s != "row-1000000" {
			t.Fatalf("got %d rows, sum %d, last %q", n, sum, s)
		}
	})
}

// The upstream connection dies mid-session (KILL from another session): the
// client gets a MySQL error, not a hang, and other sessions keep working.
func TestUpstreamDiesMidSession(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		victim := openDB(t, srv.Addr().String(), "app", "secret", "")
		victim.SetMaxOpenConns(1)
		other := openDB(t, srv.Addr().String(), "app", "secret", "")
		var id int64
		if err := victim.QueryRow("SELECT CONNECTION_ID()").Scan(&id); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			_, err := victim.Exec("SELECT SLEEP(30)")
			errc <- err
		}()
		time.Sleep(500 * time.Millisecond)
		rootExec(t, fmt.Sprintf("KILL %d", id))
		select {
		case err := <-errc:
			var me *mysql.MySQLError
			if !errors.As(err, &me) {
				t.Fatalf("killed upstream: got %v, want a MySQL error", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("client hangs after its upstream connection died")
		}
		var v int
		if err := other.QueryRow("SELECT 5").Scan(&v); err != nil || v != 5 {
			t.Fatalf("other session after a kill: %v", err)
		}
		// The victim's pool reconnects and works again.
		if err := victim.QueryRow("SELECT 6").Scan(&v); err != nil || v != 6 {
			t.Fatalf("victim after reconnect: %v", err)
		}
	})
}

func TestUpstreamDown(t *testing.T) {
	port, _ := mariadbtest.FreePort() // nothing listens there
	srv := startProxy(t, Config{Upstream: fmt.Sprintf("127.0.0.1:%d", port)})
	h, p := hostPort(srv)
	out, err := cli(t, h, p, "app", "secret", "-e", "SELECT 1")
	if err == nil || !strings.Contains(out, "1105 - heapproxy cannot reach upstream") {
		t.Fatalf("upstream down: %v\n%s", err, out)
	}
}

// The client vanishes in the middle of a large result (the real CLI is
// killed while it reads): the upstream session is closed, not left running.
func TestClientGoneClosesUpstream(t *testing.T) {
	relayModes(t, func(t *testing.T, srv *Server) {
		h, p := hostPort(srv)
		cmd := exec.Command("mariadb", "--no-defaults", "-h", h, "-P", p, "-uapp", "--password=secret", "-N", "-B", "--quick",
			"-e", "SELECT CONNECTION_ID(); SELECT seq FROM seq_1_to_50000000")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(out)
		var id string
		for i := 0; i < 1000 && sc.Scan(); i++ {
			if i == 0 {
				id = sc.Text()
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		if id == "" {
			t.Fatal("no connection id read")
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			n := rootExec(t, fmt.Sprintf("SELECT COUNT(*) FROM information_schema.processlist WHERE id = %s", id))
			if n == "0" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("upstream session %s still alive 20 s after its client left", id)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// relayModes runs a relay test against a proxy relaying forwarded
// statements on event loops (the default) and one relaying them on each
// session's goroutine (event_loops: -1): both must behave as direct.
func relayModes(t *testing.T, test func(t *testing.T, srv *Server)) {
	for _, mode := range []struct {
		name  string
		loops int
	}{{"event loops", 0}, {"goroutines", -1}} {
		t.Run(mode.name, func(t *testing.T) {
			test(t, startProxy(t, Config{Upstream: env.addr, EventLoops: mode.loops}))
		})
	}
}
