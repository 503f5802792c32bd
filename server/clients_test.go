package server

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// jdbc runs the real MariaDB Connector/J (Debian libmariadb-java) through
// testdata/clients/JdbcProbe.java and returns what it printed.
func jdbc(t *testing.T, url, user, password string, stmts ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	args := append([]string{"-cp", "/usr/share/java/mariadb-java-client.jar", "../testdata/clients/JdbcProbe.java",
		url, user, password}, stmts...)
	out, err := exec.CommandContext(ctx, "java", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("JdbcProbe: %v\n%s", err, out)
	}
	return string(out)
}

// pymysql runs a PyMySQL (Debian python3-pymysql) script body with conn open.
func pymysql(t *testing.T, host, port, user, password, db, body string) string {
	t.Helper()
	script := fmt.Sprintf(`import pymysql
conn = pymysql.connect(host=%q, port=%s, user=%q, password=%q, database=%s, autocommit=True)
cur = conn.cursor()
%s
`, host, port, user, password, db, body)
	out, err := exec.Command("/usr/bin/python3", "-c", script).CombinedOutput()
	if err != nil {
		t.Fatalf("PyMySQL: %v\n%s", err, out)
	}
	return string(out)
}

// JDBC and PyMySQL work through the proxy unchanged.
func TestJDBCAndPyMySQLThroughProxy(t *testing.T) {
	srv := upstreamProxy(t)
	h, p := hostPort(srv)
	rootExec(t, "CREATE TABLE IF NOT EXISTS t.clients (id INT PRIMARY KEY, name VARCHAR(20)); REPLACE INTO t.clients VALUES (1, 'jdbc'), (2, 'py')")
	out := jdbc(t, fmt.Sprintf("jdbc:mariadb://%s:%s/t", h, p), "app", "secret",
		"SELECT id, name FROM clients ORDER BY id",
		"prepared:SELECT name FROM clients WHERE name = ?:py",
		"columns:t:clients",
		"SELECT * FROM no_such_table")
	want := "1\tjdbc\n2\tpy\npy\nid\tINT\nname\tVARCHAR\nERROR 1146 42S02"
	if !strings.HasPrefix(out, want) {
		t.Fatalf("JDBC through the proxy:\n%s\nwant prefix:\n%s", out, want)
	}
	out = pymysql(t, h, p, "app", "secret", `"t"`, `cur.execute("SELECT name FROM clients WHERE id = %s", (2,))
print(cur.fetchone()[0])
try:
    cur.execute("SELECT * FROM no_such_table")
except pymysql.err.ProgrammingError as e:
    print(e.args[0])`)
	if out != "py\n1146\n" {
		t.Fatalf("PyMySQL through the proxy: %q", out)
	}
}
