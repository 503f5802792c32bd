package parser

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// startMariaDB starts a throwaway MariaDB on a unix socket in a temp dir and
// returns a connection to it as root. It is stopped when the test ends.
func startMariaDB(t *testing.T) *sql.DB {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	sock := filepath.Join(dir, "sock")
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"}
	}
	install := exec.Command("mariadb-install-db", append([]string{"--no-defaults", "--datadir=" + data,
		"--auth-root-authentication-method=normal", "--skip-test-db"}, asRoot...)...)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("mariadb-install-db: %v\n%s", err, out)
	}
	logf, err := os.Create(filepath.Join(dir, "mariadbd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	srv := exec.Command("mariadbd", append([]string{"--no-defaults", "--datadir=" + data, "--socket=" + sock,
		"--skip-networking", "--pid-file=" + filepath.Join(dir, "pid"), "--innodb-buffer-pool-size=16M"}, asRoot...)...)
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		t.Fatalf("start mariadbd: %v", err)
	}
	exited := make(chan struct{})
	go func() { srv.Wait(); close(exited) }()
	t.Cleanup(func() {
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			srv.Process.Kill()
			<-exited
		}
	})
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = "root", "unix", sock
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(connector)
	t.Cleanup(func() { db.Close() })
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return db
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("mariadbd exited: %s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("mariadbd does not answer: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestColumnsMatchMariaDB checks Field.Column against the column names the
// real server gives the same SELECT, and that a LIMIT is read as it does.
func TestColumnsMatchMariaDB(t *testing.T) {
	db := startMariaDB(t)
	queries := []string{
		"SELECT @@version_comment LIMIT 1",
		"select @@VERSION_COMMENT limit 0",
		"SELECT DATABASE()",
		"select database()",
		"SELECT  @@max_allowed_packet,@@system_time_zone ,  @@time_zone,@@auto_increment_increment",
		"SELECT @@session.auto_increment_increment AS auto_increment_increment, @@GLOBAL.max_connections",
		"SELECT @@local.time_zone tz, @@session.tx_isolation",
		"SELECT VERSION()",
		"SELECT 1",
		"SELECT USER(), CURRENT_USER(), current_user, CONNECTION_ID()",
		"SELECT 'abc', \"a\"\"b\", 'it''s', 'x' AS y, NULL, -2, 1.50, 18446744073709551615",
		"SELECT /* c */ 1",
		"SELECT 1 /* c */",
		"SELECT 1 -- c\n",
		"SELECT 1;",
		"/*!40101 SELECT 1 */",
		"/*!40101 SELECT @@version_comment*/ LIMIT 1",
		"/* mysql-connector-j */ SELECT  @@session.tx_read_only",
	}
	for _, q := range queries {
		st, err := Classify(q)
		if err != nil || st.Kind != LocalSelect {
			t.Errorf("Classify(%q) = %+v, %v; want LocalSelect", q, st, err)
			continue
		}
		rows, err := db.Query(q)
		if err != nil {
			t.Errorf("MariaDB %q: %v", q, err)
			continue
		}
		cols, err := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range st.Select.Fields {
			got = append(got, f.Column)
		}
		if !reflect.DeepEqual(got, cols) {
			t.Errorf("Classify(%q) columns %q, MariaDB says %q", q, got, cols)
		}
		want := 1
		if st.Select.HasLimit {
			want = min(int(st.Select.Limit), 1)
		}
		if n != want {
			t.Errorf("%q: MariaDB returned %d rows, the parsed LIMIT means %d", q, n, want)
		}
	}
}
