package sqlview

// Real clients against the engine: a minimal MySQL front built on
// go-mysql's server package (the library heapproxy's own front uses) turns
// each Result into protocol packets, the way the lead's server will; then
// MariaDB Connector/J (DatabaseMetaData), PyMySQL and the mariadb CLI query it.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-mysql-org/go-mysql/mysql"
	"github.com/go-mysql-org/go-mysql/server"
)

// frontHandler answers one connection's commands from the engine.
type frontHandler struct {
	server.EmptyHandler
	e *Engine
	s *Session
}

func (h *frontHandler) UseDB(db string) error {
	return frontError(h.e.SetDatabase(context.Background(), h.s, db))
}

func (h *frontHandler) HandleQuery(q string) (*mysql.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := h.e.Query(ctx, h.s, q)
	if err != nil {
		return nil, frontError(err)
	}
	defer r.Close()
	if r.Columns == nil {
		return &mysql.Result{AffectedRows: r.AffectedRows, InsertId: r.InsertID}, nil
	}
	rs := &mysql.Resultset{FieldNames: map[string]int{}}
	for i, c := range r.Columns {
		rs.Fields = append(rs.Fields, &mysql.Field{Name: []byte(c.Name), OrgName: []byte(c.Name), Table: []byte(c.Table),
			OrgTable: []byte(c.Table), Schema: []byte(c.Database), Type: c.Type, Flag: c.Flags, Charset: c.Charset,
			ColumnLength: c.Length, Decimal: c.Decimals})
		rs.FieldNames[c.Name] = i
	}
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, frontError(err)
		}
		var data []byte
		for _, v := range row {
			if v == nil {
				data = append(data, 0xfb) // NULL in a text row
			} else {
				data = append(data, mysql.PutLengthEncodedString(v)...)
			}
		}
		rs.RowDatas = append(rs.RowDatas, data)
	}
	return &mysql.Result{Resultset: rs}, nil
}

// HandleStmtPrepare, HandleStmtExecute and HandleStmtClose serve the
// binary protocol from Prepare / Execute / ClosePrepared.
func (h *frontHandler) HandleStmtPrepare(query string) (int, int, any, error) {
	p, err := h.e.Prepare(context.Background(), h.s, query)
	if err != nil {
		return 0, 0, nil, frontError(err)
	}
	return p.Params, len(p.Columns), p, nil
}

func (h *frontHandler) HandleStmtExecute(pc any, _ string, args []any) (*mysql.Result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := h.e.Execute(ctx, h.s, pc.(*Prepared), args)
	if err != nil {
		return nil, frontError(err)
	}
	defer r.Close()
	if r.Columns == nil {
		return &mysql.Result{AffectedRows: r.AffectedRows, InsertId: r.InsertID}, nil
	}
	names := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		names[i] = c.Name
	}
	var values [][]any
	for {
		row, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, frontError(err)
		}
		vals := make([]any, len(row))
		for i, v := range row {
			if v != nil {
				vals[i] = string(v)
			}
		}
		values = append(values, vals)
	}
	rs, err := mysql.BuildSimpleBinaryResultset(names, values)
	if err != nil {
		return nil, err
	}
	return &mysql.Result{Resultset: rs}, nil
}

func (h *frontHandler) HandleStmtClose(pc any) error {
	h.e.ClosePrepared(h.s, pc.(*Prepared))
	return nil
}

func frontError(err error) error {
	var e *Error
	if errors.As(err, &e) {
		return &mysql.MyError{Code: e.Code, State: e.State, Message: e.Message}
	}
	return err
}

// startFront serves the engine on 127.0.0.1 for user bi, password bi.
func startFront(t *testing.T, e *Engine) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// A MariaDB version string: Connector/J then sends the statements
	// captured from MariaDB 10.11.
	srv := server.NewServer("10.11.19-MariaDB-heapproxy", mysql.DEFAULT_COLLATION_ID, mysql.AUTH_NATIVE_PASSWORD, nil, nil)
	go func() {
		for id := uint32(1); ; id++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				s, err := e.NewSession(context.Background(), "bi", c.RemoteAddr().String(), id)
				if err != nil {
					return
				}
				auth := server.NewInMemoryAuthenticationHandler(mysql.AUTH_NATIVE_PASSWORD)
				if err := auth.AddUser("bi", "bi"); err != nil {
					return
				}
				conn, err := srv.NewCustomizedConn(c, auth, &frontHandler{e: e, s: s})
				if err != nil {
					return
				}
				for !conn.Closed() {
					if err := conn.HandleCommand(); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

const connectorJProgram = `import java.sql.*;
public class Meta {
  public static void main(String[] a) throws Exception {
    try (Connection c = DriverManager.getConnection(a[0], "bi", "bi")) {
      DatabaseMetaData md = c.getMetaData();
      try (ResultSet rs = md.getCatalogs()) { while (rs.next()) System.out.println("catalog " + rs.getString(1)); }
      try (ResultSet rs = md.getTables("heapprof", null, "%", new String[]{"TABLE", "VIEW"})) {
        while (rs.next()) System.out.println("table " + rs.getString("TABLE_NAME") + " " + rs.getString("TABLE_TYPE"));
      }
      try (ResultSet rs = md.getColumns(null, null, "snap%", "%")) {
        while (rs.next()) System.out.println("column " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getString("TYPE_NAME") + " " + rs.getInt("DATA_TYPE"));
      }
      try (ResultSet rs = md.getPrimaryKeys("heapprof", null, "snapshots")) {
        while (rs.next()) System.out.println("pk " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getString("PK_NAME"));
      }
      for (String t : new String[]{"functions", "stacks"}) {
        try (ResultSet rs = md.getImportedKeys("heapprof", null, t)) {
          while (rs.next()) System.out.println("fk " + rs.getString("FKTABLE_NAME") + "." + rs.getString("FKCOLUMN_NAME") + " -> " + rs.getString("PKTABLE_NAME") + "." + rs.getString("PKCOLUMN_NAME") + " " + rs.getString("FK_NAME") + " delete " + rs.getInt("DELETE_RULE"));
        }
      }
      for (String t : new String[]{"snapshots", "functions"}) {
        for (boolean unique : new boolean[]{false, true}) {
          try (ResultSet rs = md.getIndexInfo("heapprof", null, t, unique, false)) {
            while (rs.next()) System.out.println("index unique=" + unique + " " + rs.getString("TABLE_NAME") + " " + rs.getString("INDEX_NAME") + " " + rs.getString("COLUMN_NAME") + " non_unique=" + rs.getBoolean("NON_UNIQUE"));
          }
        }
      }
      try (ResultSet rs = md.getColumns("heapprof", null, "%", "%")) {
        while (rs.next()) System.out.println("size " + rs.getString("TABLE_NAME") + "." + rs.getString("COLUMN_NAME") + " " + rs.getInt("COLUMN_SIZE"));
      }
      try (ResultSet rs = md.getExportedKeys("heapprof", null, "snapshots")) {
        while (rs.next()) System.out.println("exported " + rs.getString("FKTABLE_NAME"));
      }
      try (PreparedStatement ps = c.prepareStatement("SELECT id, taken_at, total_bytes FROM heapprof.snapshots WHERE taken_at BETWEEN ? AND ? ORDER BY taken_at")) {
        ps.setString(1, "2026-11-20 08:00:00"); ps.setString(2, "2026-11-20 15:00:00");
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) System.out.println("row " + rs.getString(1) + " " + rs.getTimestamp(2).toInstant() + " " + rs.getLong(3));
        }
      }
    }
  }
}
`

func TestConnectorJ(t *testing.T) {
	jar := "/usr/share/java/mariadb-java-client.jar"
	e, _ := newTestEngine(t, fixture())
	addr := startFront(t, e)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Meta.java"), []byte(connectorJProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// java runs the source file itself (JEP 330): the JRE is enough (Debian's
	// default-jre-headless ships the compiler module).
	// The JVM prints in the machine's zone; the instants are UTC anyway.
	cmd := exec.CommandContext(ctx, "java", "-Duser.timezone=UTC", "-cp", jar, filepath.Join(dir, "Meta.java"), "jdbc:mariadb://"+addr+"/heapprof")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	got := string(out)
	var want []string
	want = append(want, "catalog heapprof", "catalog information_schema")
	for _, tb := range []string{"diffs", "functions", "snapshots", "stacks"} {
		want = append(want, "table "+tb+" TABLE")
	}
	for _, c := range newTables(fixture())[TableSnapshots].schema {
		want = append(want, "column snapshots."+c.Name+" ")
	}
	// DatabaseMetaData.importedKeyCascade is 0.
	want = append(want, "pk snapshots.id PRIMARY",
		"fk functions.snapshot_id -> snapshots.id functions_snapshot delete 0",
		"fk stacks.snapshot_id -> snapshots.id stacks_snapshot delete 0",
		"exported functions", "exported stacks")
	want = append(want, "column snapshots.taken_at DATETIME 93", "column snapshots.node_id BIGINT -5", "column snapshots.id VARCHAR 12")
	// getIndexInfo: the primary key is unique, the others are not (as on
	// MariaDB; the planner is told otherwise, index.go); COLUMN_SIZE of
	// TEXT and LONGTEXT in bytes (capped at Integer.MAX_VALUE).
	want = append(want, "index unique=false snapshots PRIMARY id non_unique=false",
		"index unique=true snapshots PRIMARY id non_unique=false",
		"index unique=false functions snapshot_id snapshot_id non_unique=true",
		"index unique=false functions node_id node_id non_unique=true",
		"size functions.name 65535", "size diffs.name 65535", "size stacks.frames 2147483647", "size functions.short_name 4096")
	rows := 0
	for _, sn := range fixture().snaps {
		if !sn.TakenAt.Before(time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC)) && !sn.TakenAt.After(time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC)) {
			want = append(want, fmt.Sprintf("row %s %s %d", sn.ID, sn.TakenAt.UTC().Format(time.RFC3339Nano), sn.TotalBytes))
			rows++
		}
	}
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("Connector/J output lacks %q:\n%s", w, got)
		}
	}
	if strings.Contains(got, "index unique=true functions") {
		t.Errorf("getIndexInfo(functions, unique) lists a non-unique index:\n%s", got)
	}
	if n := strings.Count(got, "row "); n != rows {
		t.Errorf("time range gave %d rows, want %d:\n%s", n, rows, got)
	}
}

const pymysqlProgram = `import sys, pymysql
kw = dict(user="bi", password="bi", database="heapprof")
if sys.argv[1].startswith("/"):
    kw["unix_socket"] = sys.argv[1]
else:
    host, port = sys.argv[1].rsplit(":", 1)
    kw.update(host=host, port=int(port))
conn = pymysql.connect(**kw)
with conn.cursor() as cur:
    for q in sys.argv[2:]:
        cur.execute(q)
        print([d[0] for d in cur.description or []])
        for row in cur.fetchall():
            print(row)
conn.close()
`

// The mariadb CLI and PyMySQL (Debian python3-pymysql) print the same
// against the engine as against MariaDB holding the same rows.
func TestClientsMatchMariaDB(t *testing.T) {
	e, _ := newTestEngine(t, fixture())
	addr := startFront(t, e)
	host, port, _ := net.SplitHostPort(addr)
	dir := t.TempDir()
	py := filepath.Join(dir, "q.py")
	if err := os.WriteFile(py, []byte(pymysqlProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"SHOW TABLES",
		"SELECT UNIX_TIMESTAMP(taken_at) DIV 3600 * 3600 AS \"time\", node_id, MAX(total_bytes) AS value FROM heapprof.snapshots WHERE taken_at BETWEEN FROM_UNIXTIME(1795161600) AND FROM_UNIXTIME(1795334400) GROUP BY 1, 2 ORDER BY 1, 2",
		"SELECT id, taken_at, node_kind FROM snapshots WHERE node_id = 10002 ORDER BY taken_at",
		// MAX, not SUM: SUM of BIGINT is DOUBLE here, DECIMAL in MariaDB
		// (PyMySQL shows 9437184.0 against Decimal('9437184'); see README).
		"SELECT name, MAX(flat_bytes_delta) AS g, AVG(seconds) FROM diffs GROUP BY name ORDER BY g DESC, name LIMIT 3",
		"SELECT NULL, '', frames FROM stacks WHERE snapshot_id = 'heap_profile.10003.0'",
	}
	tests := []struct {
		name string
		// args for the engine (front) and for MariaDB (reference).
		front, ref []string
	}{
		{"mariadb cli",
			[]string{"mariadb", "--no-defaults", "-h", host, "-P", port, "-ubi", "-pbi", "--default-character-set=utf8mb4", "-B", "heapprof", "-e", strings.Join(queries, ";\n")},
			[]string{"mariadb", "--no-defaults", "-S", ref.socket, "-ubi", "-pbi", "--default-character-set=utf8mb4", "-B", "heapprof", "-e", strings.Join(queries, ";\n")}},
		{"pymysql",
			append([]string{"/usr/bin/python3", py, addr}, queries...),
			append([]string{"/usr/bin/python3", py, ref.socket}, queries...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			got, err := exec.CommandContext(ctx, tt.front[0], tt.front[1:]...).CombinedOutput()
			if err != nil {
				t.Fatalf("against the engine: %v\n%s", err, got)
			}
			want, err := exec.CommandContext(ctx, tt.ref[0], tt.ref[1:]...).CombinedOutput()
			if err != nil {
				t.Fatalf("against MariaDB: %v\n%s", err, want)
			}
			if string(got) != string(want) {
				t.Errorf("engine:\n%s\nMariaDB:\n%s", got, want)
			}
		})
	}
}
