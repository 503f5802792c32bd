package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-mysql-org/go-mysql/mysql"
	"golang.org/x/text/encoding/charmap"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
	"github.com/heapproxy/heapproxy/internal/mysqlwire"
	"github.com/heapproxy/heapproxy/parser"
)

// charsetTarget is a server the character set tests talk to: a real
// MariaDB, or heapproxy's embedded default, both serving a heapprof schema
// that holds the same snapshot.
type charsetTarget struct {
	name, addr, user, password, db string
}

// The snapshot both targets hold: text no single-byte character set holds
// whole (ł, ź, the elephant), what latin1 (cp1252) holds (ö, ß, €).
const (
	charsetNodeKind = "größe łódź € 🐘"
	charsetFunction = "größe::łódź<€>(🐘)"
)

func startCharsetTargets(t *testing.T) (embedded, mariadb charsetTarget) {
	t.Helper()
	ctx := context.Background()
	snap := &snapshot.Snapshot{ID: "charset-1", NodeID: 7, NodeKind: charsetNodeKind, NodeAddr: "127.0.0.1:1",
		TakenAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Format: "pprof", Raw: []byte("raw"), TotalBytes: 100, TotalObjects: 1}
	funcs := []snapshot.Function{{Name: charsetFunction, ShortName: "größe::łódź 🐘", FlatBytes: 100, CumBytes: 100,
		FlatPercent: 100, CumPercent: 100}}

	dir := testStore(t)
	if err := dir.Save(ctx, snap, funcs, nil); err != nil {
		t.Fatal(err)
	}
	deps := testDeps(t)
	deps.Snapshots = dir
	engine, err := sqlview.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { engine.Close() })
	deps.SQL = engine
	srv := startProxyDeps(t, Config{}, deps)

	schema := fmt.Sprintf("heapprof_cs_%d", time.Now().UnixNano())
	t.Cleanup(func() { rootExec(t, "DROP DATABASE IF EXISTS "+schema) })
	st, err := snapshot.OpenMySQL(ctx, fmt.Sprintf("app:secret@tcp(%s)/%s", env.addr, schema), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Save(ctx, snap, funcs, nil); err != nil {
		t.Fatal(err)
	}
	return charsetTarget{"embedded", srv.Addr().String(), "root", "", "heapprof"},
		charsetTarget{"mariadb", env.addr, "app", "secret", schema}
}

// in encodes a statement written in UTF-8 in a connection character set,
// as a client in that character set sends it.
func in(cs, s string) []byte {
	var cm *charmap.Charmap
	switch cs {
	case "utf8mb4", "utf8mb3", "binary", "ascii":
		return []byte(s)
	case "latin1":
		cm = charmap.Windows1252
	case "cp1250":
		cm = charmap.Windows1250
	case "koi8r":
		cm = charmap.KOI8R
	}
	b, err := cm.NewEncoder().Bytes([]byte(s))
	if err != nil {
		panic(fmt.Sprintf("%q in %s: %v", s, cs, err))
	}
	return b
}

// charsetStep is one thing a client does: a statement in a character set,
// a prepared statement, COM_CHANGE_USER or COM_RESET_CONNECTION.
type charsetStep struct {
	cs, sql    string // the statement, written in UTF-8, sent in cs
	params     []rawParam
	prepared   bool
	changeUser uint16 // COM_CHANGE_USER with this collation (non-zero)
	reset      bool   // COM_RESET_CONNECTION
	multi      bool   // several statements in one COM_QUERY
	// codeOnly compares an error's code alone: the engine words its
	// errors its own way.
	codeOnly bool
}

// run performs the step and returns what to compare: the column names
// and collation ids, the bytes of every value, an error's code and text.
func (s charsetStep) run(t *testing.T, tg charsetTarget, c *rawClient) string {
	t.Helper()
	var res rawResult
	var prep []rawCol
	var err error
	switch {
	case s.changeUser != 0:
		if err = c.changeUser(tg.user, tg.password, s.changeUser); err == nil {
			_, err = c.query([]byte("USE " + tg.db))
		}
		return fmt.Sprint("change user: ", err)
	case s.reset:
		if err = c.command(mysql.COM_RESET_CONNECTION, nil); err == nil {
			res, err = c.readResult(false)
		}
	case s.prepared:
		prep, res, err = c.prepareExecute(in(s.cs, s.sql), s.params...)
	case s.multi:
		var all []rawResult
		all, err = c.queryAll(in(s.cs, s.sql))
		var out []string
		for _, r := range all {
			out = append(out, s.format(r, nil))
		}
		if err == nil {
			return strings.Join(out, " ;; ")
		}
	default:
		res, err = c.query(in(s.cs, s.sql))
	}
	if err != nil {
		t.Fatalf("%s: %s: %v", tg.name, s.sql, err)
	}
	return s.format(res, prep)
}

func (s charsetStep) format(res rawResult, prep []rawCol) string {
	var b strings.Builder
	if res.Err != nil {
		fmt.Fprintf(&b, "ERROR %d", res.Err.Code)
		if !s.codeOnly {
			fmt.Fprintf(&b, " (%s): %q", res.Err.State, res.Err.Message)
		}
		return b.String()
	}
	for _, c := range prep {
		fmt.Fprintf(&b, "prepared %q/%d ", c.Name, c.Charset)
	}
	for _, c := range res.Cols {
		fmt.Fprintf(&b, "%q/%d ", c.Name, c.Charset)
	}
	for _, row := range res.Rows {
		b.WriteString("|")
		for _, v := range row {
			if v == nil {
				b.WriteString(" NULL")
			} else {
				fmt.Fprintf(&b, " %q", v)
			}
		}
	}
	if res.Warnings > 0 {
		fmt.Fprintf(&b, " warnings %d", res.Warnings)
	}
	return b.String()
}

// TestCharsetAsMariaDB sends the same statements, in the same character
// sets, to MariaDB and to the embedded default, which must answer with the
// same bytes and label the same columns with the same collation: the
// connection character set from the handshake, COM_CHANGE_USER, SET NAMES
// (with COLLATE), SET CHARACTER SET and SET character_set_*; statements and
// string parameters read in character_set_client; values, column names and
// error messages sent in character_set_results, '?' for what it cannot
// hold, without a warning; NULL results not converted.
func TestCharsetAsMariaDB(t *testing.T) {
	embedded, mariadb := startCharsetTargets(t)
	q := func(cs, sql string) charsetStep { return charsetStep{cs: cs, sql: sql} }
	const (
		rows      = "SELECT node_kind, CONCAT(node_kind, ' größe') AS label, node_id FROM snapshots"
		functions = "SELECT name, short_name AS `größe` FROM functions WHERE name LIKE 'größe%'"
		literals  = "SELECT 'größe' AS `größe`, '' AS e, 42 AS answer"
		vars      = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results, @@collation_connection"
		kinds     = "SELECT node_kind FROM snapshots"
		// The same variables read in a query with FROM, a subquery and
		// WHERE: the session's values everywhere, not the engine's.
		varsFrom = "SELECT @@character_set_client, @@character_set_results, @@collation_connection, " +
			"(SELECT @@character_set_connection FROM snapshots LIMIT 1) AS sub, node_id FROM snapshots " +
			"WHERE @@character_set_results = @@character_set_client OR @@character_set_results IS NULL"
	)
	cases := []struct {
		name      string
		handshake uint8
		steps     []charsetStep
	}{
		{"utf8mb4", 45, []charsetStep{q("utf8mb4", vars), q("utf8mb4", rows), q("utf8mb4", functions), q("utf8mb4", literals)}},
		{"latin1 handshake", 8, []charsetStep{q("latin1", vars), q("latin1", rows), q("latin1", functions), q("latin1", literals),
			q("latin1", "SHOW SESSION VARIABLES LIKE 'character_set_results'"),
			q("latin1", "SELECT TABLE_NAME AS `größe` FROM information_schema.TABLES WHERE TABLE_NAME = 'snapshots'"),
			{cs: "latin1", sql: "SELECT * FROM `größe`", codeOnly: true}}},
		{"latin1_bin handshake", 47, []charsetStep{q("latin1", vars), q("latin1", rows)}},
		{"utf8mb4_unicode_ci handshake", 224, []charsetStep{q("utf8mb4", vars), q("utf8mb4", rows)}},
		{"utf8mb3 handshake", 33, []charsetStep{q("utf8mb3", vars), q("utf8mb3", rows)}},
		{"binary handshake", 63, []charsetStep{q("binary", vars), q("binary", kinds)}},
		{"vars with FROM", 8, []charsetStep{q("latin1", varsFrom), q("latin1", "SET NAMES utf8mb4"), q("utf8mb4", varsFrom),
			q("utf8mb4", "SET NAMES cp1250"), q("cp1250", varsFrom), q("cp1250", "SHOW VARIABLES LIKE 'character_set_c%'")}},
		{"set names", 45, []charsetStep{q("utf8mb4", "SET NAMES latin1"), q("latin1", vars), q("latin1", rows), q("latin1", literals),
			q("latin1", "SET NAMES 'latin1' COLLATE 'latin1_german1_ci'"), q("latin1", vars), q("latin1", rows),
			q("latin1", "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci"), q("utf8mb4", vars), q("utf8mb4", rows),
			q("utf8mb4", "SET NAMES utf8"), q("utf8mb3", vars), q("utf8mb3", rows),
			q("utf8mb3", "SET NAMES ascii"), q("ascii", vars), q("ascii", kinds),
			q("ascii", "SET NAMES binary"), q("binary", vars), q("binary", kinds),
			q("binary", "SET NAMES cp1250"), q("cp1250", vars), q("cp1250", rows),
			q("cp1250", "SET NAMES koi8r"), q("koi8r", vars), q("koi8r", kinds)}},
		{"set character set", 45, []charsetStep{q("utf8mb4", "SET CHARACTER SET latin1"), q("latin1", rows),
			q("latin1", "SELECT @@character_set_client, @@character_set_results")}},
		{"set variables", 45, []charsetStep{
			q("utf8mb4", "SET character_set_results = latin1"), q("utf8mb4", vars), q("utf8mb4", rows),
			q("utf8mb4", "SET character_set_client = 'latin1', character_set_results = utf8mb4"), q("latin1", vars), q("latin1", rows),
			q("latin1", "SET @@session.character_set_client = utf8mb4, character_set_results = @@character_set_client"), q("utf8mb4", vars),
			q("utf8mb4", "SET @cs = 'latin1'"), q("utf8mb4", "SET character_set_results = @cs"), q("utf8mb4", vars),
			q("utf8mb4", "SET character_set_connection = latin1"), q("utf8mb4", vars),
			q("utf8mb4", "SET collation_connection = utf8mb4_bin"), q("utf8mb4", vars),
			q("utf8mb4", "SET character_set_results = 8"), q("utf8mb4", vars),
			// NULL: values as they are, each column labelled with its
			// own collation (the literal's is collation_connection's).
			q("utf8mb4", "SET NAMES utf8mb4"), q("utf8mb4", "SET character_set_results = NULL"),
			q("utf8mb4", "SELECT 'größe' AS `größe`, node_id FROM snapshots"),
			q("utf8mb4", "SET character_set_results = binary"), q("utf8mb4", vars), q("utf8mb4", rows),
			q("utf8mb4", "SET NAMES latin1, @a = 'x'"), q("latin1", "SELECT @a, @@character_set_client"),
			q("latin1", "SET collation_connection = 47, @z = 'a,b', character_set_results = 33"),
			q("latin1", "SELECT @z"), q("latin1", "SELECT @@collation_connection, @@character_set_results")}},
		{"errors", 45, []charsetStep{
			q("utf8mb4", "SET NAMES foo"), q("utf8mb4", "SET NAMES 'utf8mb4' COLLATE 'latin1_bin'"),
			q("utf8mb4", "SET character_set_client = 'foo'"), q("utf8mb4", "SET character_set_client = NULL"),
			q("utf8mb4", "SET character_set_results = 47"),
			{cs: "utf8mb4", sql: "SET collation_connection = 'foo'", codeOnly: true},
			q("utf8mb4", "SET @b = 1, NAMES foo"), q("utf8mb4", "SELECT @b, @@character_set_client"),
			q("utf8mb4", "SET NAMES latin1"), q("latin1", "SET NAMES 'größe'")}},
		{"change user", 45, []charsetStep{{changeUser: 8}, q("latin1", vars), q("latin1", rows),
			{changeUser: 47}, q("latin1", vars), q("latin1", rows)}},
		{"reset connection", 47, []charsetStep{q("latin1", "SET NAMES cp1250"), q("cp1250", vars),
			{reset: true}, q("latin1", vars), q("latin1", rows)}},
		{"multi-statement", 45, []charsetStep{
			// Each statement is read in the character set of its moment.
			{cs: "utf8mb4", multi: true, sql: "SET NAMES latin1; SELECT 'größe' AS g; SET NAMES utf8mb4; SELECT 'größe' AS g"}}},
		{"prepared", 8, []charsetStep{
			{cs: "latin1", prepared: true, sql: "SELECT CONCAT(?, ' größe') AS label, node_kind, ? FROM snapshots WHERE node_kind LIKE CONCAT(?, '%')",
				params: []rawParam{{mysql.MYSQL_TYPE_VAR_STRING, in("latin1", "größe")}, {mysql.MYSQL_TYPE_STRING, in("latin1", "ß")},
					{mysql.MYSQL_TYPE_VARCHAR, in("latin1", "grö")}}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got [2][]string
			for i, tg := range []charsetTarget{mariadb, embedded} {
				cl, err := dialRaw(tg.addr, tg.user, tg.password, tg.db, c.handshake)
				if err != nil {
					t.Fatalf("%s: %v", tg.name, err)
				}
				for _, s := range c.steps {
					got[i] = append(got[i], s.run(t, tg, cl))
				}
				cl.Close()
			}
			for i, s := range c.steps {
				if got[0][i] != got[1][i] {
					t.Errorf("step %d, %s in %s:\n  MariaDB:  %s\n  embedded: %s", i, s.sql, s.cs, got[0][i], got[1][i])
				}
			}
		})
	}
}

// TestCharsetColumnLengths: a text column's length is counted in
// character_set_results' bytes per character, as on MariaDB: the same
// query through utf8mb4 (4 bytes) and latin1 (1) connections.
func TestCharsetColumnLengths(t *testing.T) {
	embedded, mariadb := startCharsetTargets(t)
	queries := []string{"SELECT node_kind, name, short_name, snapshot_id FROM functions f JOIN snapshots s ON f.snapshot_id = s.id",
		"SELECT TABLE_NAME, TABLE_SCHEMA FROM information_schema.TABLES WHERE TABLE_NAME = 'snapshots'"}
	for _, tg := range []charsetTarget{mariadb, embedded} {
		var lengths [2][]uint32
		for i, hs := range []uint8{45, 8} {
			c, err := dialRaw(tg.addr, tg.user, tg.password, tg.db, hs)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range queries {
				res, err := c.query([]byte(q))
				if err != nil || res.Err != nil {
					t.Fatalf("%s: %v %v", tg.name, err, res.Err)
				}
				for _, col := range res.Cols {
					lengths[i] = append(lengths[i], col.Length)
				}
			}
			c.Close()
		}
		for j := range lengths[0] {
			if u, l := lengths[0][j], lengths[1][j]; l != u/4 && !(u == l && u == 1<<32-1) {
				t.Errorf("%s: column %d is %d long for utf8mb4, %d for latin1", tg.name, j, u, l)
			}
		}
	}
}

// TestCharsetEmbeddedOnly checks what this MariaDB cannot show, its
// character_set_server being latin1: an id heapproxy cannot convert falls
// back to the server's utf8mb4, as does DEFAULT; a character set it does
// not convert is MySQL's unknown one; SHOW PROCESSLIST shows statements
// read in the client's character set.
func TestCharsetEmbeddedOnly(t *testing.T) {
	embedded, _ := startCharsetTargets(t)
	utf8Vars := `"@@character_set_client"/45 "@@character_set_results"/45 "@@collation_connection"/45 | "utf8mb4" "utf8mb4" "utf8mb4_general_ci"`
	vars := "SELECT @@character_set_client, @@character_set_results, @@collation_connection"
	for _, c := range []struct {
		name      string
		handshake uint8
		steps     []charsetStep
		want      []string
	}{
		{"unknown id", 0, []charsetStep{{cs: "utf8mb4", sql: vars}}, []string{utf8Vars}},
		{"ucs2 id", 35, []charsetStep{{cs: "utf8mb4", sql: vars}}, []string{utf8Vars}},
		{"cp1256 id", 57, []charsetStep{{cs: "utf8mb4", sql: vars}}, []string{utf8Vars}},
		{"names default", 8, []charsetStep{{cs: "latin1", sql: "SET NAMES DEFAULT"}, {cs: "utf8mb4", sql: vars}}, []string{"", utf8Vars}},
		{"change user to ucs2", 8, []charsetStep{{changeUser: 35}, {cs: "utf8mb4", sql: vars}}, []string{"change user: <nil>", utf8Vars}},
		{"unsupported", 45, []charsetStep{{cs: "utf8mb4", sql: "SET NAMES ucs2"}, {cs: "utf8mb4", sql: "SET character_set_results = koi8u"}},
			[]string{`ERROR 1115 (42000): "Unknown character set: 'ucs2'"`, `ERROR 1115 (42000): "Unknown character set: 'koi8u'"`}},
		{"show variables", 8, []charsetStep{{cs: "latin1", sql: "SHOW VARIABLES LIKE 'character_set_results'"}},
			[]string{`"Variable_name"/8 "Value"/8 | "character_set_results" "latin1"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl, err := dialRaw(embedded.addr, embedded.user, embedded.password, embedded.db, c.handshake)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			for i, s := range c.steps {
				if got := s.run(t, embedded, cl); got != c.want[i] {
					t.Errorf("%s: got %s, want %s", s.sql, got, c.want[i])
				}
			}
		})
	}
	t.Run("admin execute", func(t *testing.T) {
		// heapproxy's own answers are labelled and converted like the
		// engine's: the client's character_set_results.
		cl, err := dialRaw(embedded.addr, embedded.user, embedded.password, embedded.db, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		s := charsetStep{cs: "latin1", sql: "ADMIN EXECUTE ON FRONTEND 'System.print(HeapProf.getInstance().has_enable())'"}
		if got := s.run(t, embedded, cl); !strings.HasPrefix(got, `"result"/8 | `) {
			t.Errorf("%s: %s", s.sql, got)
		}
	})
	t.Run("processlist", func(t *testing.T) {
		// The statement SHOW PROCESSLIST shows was read in the client's
		// character set, and is shown in character_set_results.
		cl, err := dialRaw(embedded.addr, embedded.user, embedded.password, embedded.db, 8)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		s := charsetStep{cs: "latin1", sql: "SHOW PROCESSLIST /* größe */"}
		if got := s.run(t, embedded, cl); !strings.Contains(got, `"SHOW PROCESSLIST /* gr\xf6\xdfe */"`) {
			t.Errorf("%s: %s", s.sql, got)
		}
	})
}

// TestCharsetConversion checks the tables against MariaDB's: every byte of
// each single-byte character set read as MariaDB reads it
// (CONVERT(... USING utf8mb4)), and every character any of them holds
// written back as MariaDB writes it ('?' for those it cannot hold).
func TestCharsetConversion(t *testing.T) {
	db := openDB(t, env.addr, "app", "secret", "")
	var all []rune
	seen := map[rune]bool{}
	for _, cs := range supportedCharsets.byName {
		if cs.kind != kindSingleByte {
			continue
		}
		for _, r := range cs.decode {
			if !seen[r] {
				seen[r] = true
				all = append(all, r)
			}
		}
	}
	all = append(all, 'ł', '🐘', '€', 'Ω')
	for name, cs := range supportedCharsets.byName {
		t.Run(name, func(t *testing.T) {
			if cs.kind == kindSingleByte || cs.kind == kindASCII {
				bytes256 := make([]byte, 256)
				for i := range bytes256 {
					bytes256[i] = byte(i)
				}
				var hex string
				if err := db.QueryRow(fmt.Sprintf("SELECT HEX(CONVERT(CONVERT(UNHEX('%X') USING %s) USING utf8mb4))", bytes256, name)).Scan(&hex); err != nil {
					t.Fatal(err)
				}
				if got := fmt.Sprintf("%X", cs.toUTF8(bytes256)); got != hex {
					t.Errorf("reading %s: MariaDB %s, heapproxy %s", name, hex, got)
				}
			}
			text := string(all)
			var want string
			if err := db.QueryRow(fmt.Sprintf("SELECT HEX(CONVERT(_utf8mb4 X'%X' USING %s))", text, name)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%X", cs.fromUTF8([]byte(text))); got != want {
				for _, r := range all { // name the first character that differs
					var w string
					g := fmt.Sprintf("%X", cs.fromUTF8([]byte(string(r))))
					if err := db.QueryRow(fmt.Sprintf("SELECT HEX(CONVERT(_utf8mb4 X'%X' USING %s))", string(r), name)).Scan(&w); err == nil && g != w {
						t.Errorf("writing %q (U+%04X) in %s: MariaDB %s, heapproxy %s", r, r, name, w, g)
						break
					}
				}
			}
		})
	}
}

// TestCharsetUnits covers what the MariaDB comparison cannot reach.
func TestCharsetUnits(t *testing.T) {
	t.Run("ascii is never copied", func(t *testing.T) {
		in := []byte("SELECT 1")
		for _, cs := range supportedCharsets.byName {
			if out := cs.toUTF8(in); &out[0] != &in[0] {
				t.Errorf("%s copied ASCII on the way in", cs.name)
			}
			if out := cs.fromUTF8(in); &out[0] != &in[0] {
				t.Errorf("%s copied ASCII on the way out", cs.name)
			}
		}
	})
	t.Run("round trip", func(t *testing.T) {
		for _, cs := range supportedCharsets.byName {
			if cs.kind != kindSingleByte {
				continue
			}
			for b := 0x80; b < 0x100; b++ {
				r := cs.decode[b]
				if r == '?' {
					continue
				}
				if got := cs.fromUTF8(cs.toUTF8([]byte{byte(b)})); !bytes.Equal(got, []byte{byte(b)}) {
					t.Errorf("%s: byte %02X (%q) comes back as %X", cs.name, b, r, got)
				}
			}
		}
	})
	t.Run("utf8mb3 and invalid UTF-8", func(t *testing.T) {
		utf8mb3 := lookupCharset("utf8")
		for _, c := range []struct{ in, want string }{
			{"größe 🐘", "größe ?"}, {"\xff", "\xff"}, {"a\xf0\x9f", "a\xf0\x9f"},
		} {
			if got := string(utf8mb3.fromUTF8([]byte(c.in))); got != c.want {
				t.Errorf("utf8mb3 %q: %q, want %q", c.in, got, c.want)
			}
		}
		if got := string(lookupCharset("latin1").fromUTF8([]byte("\xffö"))); got != "?\xf6" {
			t.Errorf("latin1 of invalid UTF-8: %q", got)
		}
	})
	t.Run("lookups", func(t *testing.T) {
		for _, c := range []struct {
			name string
			want string
		}{{"UTF8", "utf8mb3"}, {"Latin1", "latin1"}, {"utf8mb4", "utf8mb4"}, {"ucs2", ""}, {"koi8u", ""}} {
			got := ""
			if cs := lookupCharset(c.name); cs != nil {
				got = cs.name
			}
			if got != c.want {
				t.Errorf("charset %s: %q, want %q", c.name, got, c.want)
			}
		}
		if c := lookupCollation("utf8_general_ci"); c == nil || c.id != 33 {
			t.Errorf("utf8_general_ci: %+v", c)
		}
		for id, c := range supportedCharsets.collByID {
			if c.id != id || c.cs.def == nil || c.cs.def.cs != c.cs || !utf8.ValidString(c.name) {
				t.Errorf("collation %d: %+v", id, c)
			}
		}
	})
	t.Run("parameters", func(t *testing.T) {
		// String parameters (long data too) are read in the client's
		// character set; BLOB-typed ones are bytes, as in MySQL.
		s := &session{charsets: handshakeCharsets(8)}
		args := []any{"gr\xf6\xdfe", "\xf6", int64(1), nil}
		s.decodeArgs(args, []byte{mysql.MYSQL_TYPE_VAR_STRING, 0, mysql.MYSQL_TYPE_BLOB, 0, mysql.MYSQL_TYPE_LONGLONG, 0,
			mysql.MYSQL_TYPE_STRING, 0})
		if want := []any{"größe", "\xf6", int64(1), nil}; fmt.Sprint(args) != fmt.Sprint(want) {
			t.Errorf("%q, want %q", args, want)
		}
	})
	t.Run("SET without the character sets", func(t *testing.T) {
		c := parser.NewClassifier()
		for _, tc := range []struct{ query, want string }{
			{"SET NAMES latin1, @a = 'x,y', autocommit = (1)", "SET @a = 'x,y', autocommit = (1)"},
			{"SET character_set_results = NULL", ""},
			{"SET @a = 1 /* , */, NAMES latin1", "SET @a = 1 /* , */, NAMES latin1"}, // kept whole
		} {
			st, err := c.Classify(tc.query)
			if err != nil || st.Kind != parser.Set {
				t.Fatalf("%s: %v %v", tc.query, st, err)
			}
			if got := string(setWithout([]byte(tc.query), st.Set, setsCharsets)); got != tc.want {
				t.Errorf("%s: %q, want %q", tc.query, got, tc.want)
			}
		}
	})
	t.Run("SET the grammar does not parse", func(t *testing.T) {
		for _, c := range []struct {
			query string
			ok    bool
			set   string // name=value/collate, ...
			rest  string
		}{
			{"SET NAMES koi8u", true, "names=koi8u/", ""},
			{"set  character set 'cp866' ;", true, "character set=cp866/", ""},
			{"SET CHARSET `x`", true, "character set=x/", ""},
			{"SET NAMES greek COLLATE greek_bin", true, "names=greek/greek_bin", ""},
			{"SET @b = 'a,(b', NAMES foo, @c = f(1, 2)", true, "names=foo/", "SET @b = 'a,(b', @c = f(1, 2)"},
			{"SET NAMES DEFAULT, x = 1", true, "names=DEFAULT/", "SET x = 1"},
			{"SET @a = 1", false, "", ""},
			{"SETNAMES x", false, "", ""},
			{"SELECT 1", false, "", ""},
		} {
			set, rest, ok := splitSetCharsets([]byte(c.query))
			var got []string
			for _, a := range set {
				v := a.Value.Value
				if a.Value.Kind == parser.ExprOther {
					v = a.Value.Text
				}
				got = append(got, a.Name+"="+v+"/"+a.Collate)
			}
			if ok != c.ok || strings.Join(got, ", ") != c.set || rest != c.rest {
				t.Errorf("%s: %v %q %q", c.query, ok, got, rest)
			}
		}
	})
}

// BenchmarkCharsetConvert: what the conversions cost per result row and
// per statement, against a utf8mb4 connection's (which converts nothing)
// in the same run.
func BenchmarkCharsetConvert(b *testing.B) {
	cells := []string{"tsdb.(*Head).appender", "größe::łódź<€>(🐘) std::vector<int>::push_back", "12345"}
	convert := []bool{true, true, false}
	stmt := "SELECT CONCAT(node_kind, ' größe') AS label, name FROM functions WHERE name LIKE 'jenode%' ORDER BY flat_bytes DESC LIMIT 10"
	for _, name := range []string{"utf8mb4", "utf8mb3", "latin1"} {
		cc := handshakeCharsets(lookupCharset(name).def.id)
		sent := in(name, stmt)
		b.Run("row/"+name, func(b *testing.B) {
			row := make([][]byte, len(cells))
			for b.Loop() {
				for i, c := range cells {
					row[i] = []byte(c)
				}
				cc.convertRow(row, convert)
			}
		})
		b.Run("statement/"+name, func(b *testing.B) {
			for b.Loop() {
				cc.decode(sent)
			}
		})
	}
}

// rawClient is a MySQL client that sends statements as the bytes given and
// hands back results as the bytes and column definitions received, so the
// character set tests see exactly what a client in another character set
// sends and gets (drivers transcode on both sides).
type rawClient struct {
	c        *mysqlwire.Conn
	caps     uint32
	salt     []byte
	password string
}

// rawCol is what a test compares of a column definition.
type rawCol struct {
	Name    string
	Type    byte
	Charset uint16
	Length  uint32
}

// rawResult is a statement's answer: columns and rows (nil cells are
// NULL), or an OK, or an error.
type rawResult struct {
	Cols     []rawCol
	Rows     [][][]byte
	Err      *mysql.MyError
	Warnings uint16
	Status   uint16 // of the closing OK or EOF
}

// rawCaps are the capabilities rawClient asks for: no DEPRECATE_EOF, so
// every result set ends in an EOF packet with its warning count.
const rawCaps = mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_PLUGIN_AUTH |
	mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_LONG_FLAG | mysql.CLIENT_TRANSACTIONS | mysql.CLIENT_MULTI_RESULTS |
	mysql.CLIENT_MULTI_STATEMENTS

// dialRaw logs in with collation as the handshake's character set.
func dialRaw(addr, user, password, db string, collation uint8) (*rawClient, error) {
	nc, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(time.Minute))
	r := &rawClient{c: mysqlwire.NewConn(nc), caps: rawCaps, password: password}
	p, err := r.c.ReadPacket(1 << 20)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("greeting: %w", err)
	}
	g, err := mysqlwire.ParseGreeting(p)
	if err != nil {
		nc.Close()
		return nil, err
	}
	r.salt = g.Salt
	hr := &mysqlwire.HandshakeResponse{Caps: r.caps, MaxPacket: 1 << 24, Charset: collation, User: user,
		Auth: r.scramble(g.Salt), DB: db, Plugin: nativePassword}
	if db != "" {
		hr.Caps |= mysql.CLIENT_CONNECT_WITH_DB
	}
	if err := r.c.WritePacket(hr.Encode()); err != nil {
		nc.Close()
		return nil, err
	}
	if err := r.c.Flush(); err != nil {
		nc.Close()
		return nil, err
	}
	if err := r.finishAuth(); err != nil {
		nc.Close()
		return nil, err
	}
	return r, nil
}

func (r *rawClient) scramble(salt []byte) []byte {
	if r.password == "" {
		return nil
	}
	return mysql.CalcNativePassword(salt, []byte(r.password))
}

// finishAuth answers auth switches until the server says OK or ERR.
func (r *rawClient) finishAuth() error {
	for {
		p, err := r.c.ReadPacket(1 << 20)
		if err != nil {
			return err
		}
		switch {
		case len(p) == 0:
			return fmt.Errorf("empty packet during login")
		case p[0] == mysqlwire.HdrOK:
			return nil
		case p[0] == mysqlwire.HdrErr:
			return mysqlwire.ParseErrPacket(p)
		case p[0] == mysqlwire.HdrEOF:
			i := bytes.IndexByte(p[1:], 0)
			if i < 0 {
				return fmt.Errorf("malformed auth switch")
			}
			r.salt = bytes.TrimSuffix(p[2+i:], []byte{0})
			if err := r.c.WritePacket(r.scramble(r.salt)); err != nil {
				return err
			}
			if err := r.c.Flush(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("unexpected packet 0x%02x during login", p[0])
		}
	}
}

// changeUser sends COM_CHANGE_USER with collation as its character set.
func (r *rawClient) changeUser(user, password string, collation uint16) error {
	r.password = password
	cu := &mysqlwire.ChangeUser{User: user, Auth: r.scramble(r.salt), Charset: collation, Plugin: nativePassword}
	r.c.ResetSeq()
	if err := r.c.WritePacket(cu.Encode(r.caps)); err != nil {
		return err
	}
	if err := r.c.Flush(); err != nil {
		return err
	}
	return r.finishAuth()
}

func (r *rawClient) Close() { r.c.NetConn().Close() }

// command sends one command packet.
func (r *rawClient) command(code byte, body []byte) error {
	r.c.ResetSeq()
	if err := r.c.WritePacket(append([]byte{code}, body...)); err != nil {
		return err
	}
	return r.c.Flush()
}

// query runs a statement given as the bytes to send.
func (r *rawClient) query(q []byte) (rawResult, error) {
	if err := r.command(mysql.COM_QUERY, q); err != nil {
		return rawResult{}, err
	}
	return r.readResult(false)
}

// queryAll runs a multi-statement query: one result per statement, up to
// the first error.
func (r *rawClient) queryAll(q []byte) ([]rawResult, error) {
	if err := r.command(mysql.COM_QUERY, q); err != nil {
		return nil, err
	}
	var all []rawResult
	for {
		res, err := r.readResult(false)
		if err != nil {
			return all, err
		}
		all = append(all, res)
		if res.Err != nil || res.Status&mysql.SERVER_MORE_RESULTS_EXISTS == 0 {
			return all, nil
		}
	}
}

// readResult reads an OK, an ERR or a result set (binary rows when
// binaryRows).
func (r *rawClient) readResult(binaryRows bool) (rawResult, error) {
	var res rawResult
	p, err := r.c.ReadPacket(1 << 24)
	if err != nil {
		return res, err
	}
	switch {
	case len(p) == 0:
		return res, fmt.Errorf("empty response")
	case p[0] == mysqlwire.HdrErr:
		res.Err = mysqlwire.ParseErrPacket(p)
		return res, nil
	case p[0] == mysqlwire.HdrOK:
		// affected rows, insert id (length-encoded), status (2), warnings (2)
		rest := p[1:]
		for range 2 {
			_, _, k := mysqlwire.LenEncInt(rest)
			rest = rest[k:]
		}
		if len(rest) >= 4 {
			res.Status = binary.LittleEndian.Uint16(rest)
			res.Warnings = binary.LittleEndian.Uint16(rest[2:])
		}
		return res, nil
	}
	n, _, _ := mysqlwire.LenEncInt(p)
	if res.Cols, err = r.readColumns(int(n)); err != nil {
		return res, err
	}
	for {
		p, err := r.c.ReadPacket(1 << 24)
		if err != nil {
			return res, err
		}
		if mysqlwire.IsEOF(p) {
			res.Warnings = binary.LittleEndian.Uint16(p[1:])
			res.Status = binary.LittleEndian.Uint16(p[3:])
			return res, nil
		}
		if p[0] == mysqlwire.HdrErr {
			res.Err = mysqlwire.ParseErrPacket(p)
			return res, nil
		}
		var row [][]byte
		if binaryRows {
			row, err = parseBinaryRow(p, res.Cols)
		} else {
			row, err = parseTextRow(p, len(res.Cols))
		}
		if err != nil {
			return res, err
		}
		res.Rows = append(res.Rows, row)
	}
}

// readColumns reads n column definitions and their EOF.
func (r *rawClient) readColumns(n int) ([]rawCol, error) {
	cols := make([]rawCol, n)
	for i := range cols {
		p, err := r.c.ReadPacket(1 << 20)
		if err != nil {
			return nil, err
		}
		f, err := mysql.FieldData(p).Parse()
		if err != nil {
			return nil, err
		}
		cols[i] = rawCol{Name: string(f.Name), Type: f.Type, Charset: f.Charset, Length: f.ColumnLength}
	}
	if n > 0 {
		if p, err := r.c.ReadPacket(1 << 20); err != nil || !mysqlwire.IsEOF(p) {
			return nil, fmt.Errorf("no EOF after the column definitions: %v %x", err, p)
		}
	}
	return cols, nil
}

func parseTextRow(p []byte, n int) ([][]byte, error) {
	row := make([][]byte, n)
	for i := range row {
		v, null, k := mysqlwire.LenEncInt(p)
		if k == 0 || uint64(len(p)-k) < v {
			return nil, fmt.Errorf("malformed row")
		}
		if !null {
			row[i] = append([]byte{}, p[k:k+int(v)]...)
		}
		p = p[k+int(v):]
	}
	return row, nil
}

// parseBinaryRow reads a binary-protocol row of string and integer
// columns (what the character set tests select).
func parseBinaryRow(p []byte, cols []rawCol) ([][]byte, error) {
	nullBytes := (len(cols) + 7 + 2) / 8
	if len(p) < 1+nullBytes {
		return nil, fmt.Errorf("malformed binary row")
	}
	nulls, p := p[1:1+nullBytes], p[1+nullBytes:]
	row := make([][]byte, len(cols))
	for i, c := range cols {
		if nulls[(i+2)/8]&(1<<((i+2)%8)) != 0 {
			continue
		}
		size := map[byte]int{mysql.MYSQL_TYPE_TINY: 1, mysql.MYSQL_TYPE_SHORT: 2, mysql.MYSQL_TYPE_YEAR: 2,
			mysql.MYSQL_TYPE_LONG: 4, mysql.MYSQL_TYPE_INT24: 4, mysql.MYSQL_TYPE_LONGLONG: 8}[c.Type]
		if size > 0 {
			if len(p) < size {
				return nil, fmt.Errorf("malformed binary row")
			}
			var n uint64
			for j := size - 1; j >= 0; j-- {
				n = n<<8 | uint64(p[j])
			}
			row[i], p = fmt.Appendf(nil, "%d", n), p[size:]
			continue
		}
		v, _, k := mysqlwire.LenEncInt(p)
		if k == 0 || uint64(len(p)-k) < v {
			return nil, fmt.Errorf("malformed binary row")
		}
		row[i], p = append([]byte{}, p[k:k+int(v)]...), p[k+int(v):]
	}
	return row, nil
}

// rawParam is a COM_STMT_EXECUTE parameter: its type and value bytes.
type rawParam struct {
	Type  byte
	Value []byte
}

// prepareExecute prepares q and executes it once with params.
func (r *rawClient) prepareExecute(q []byte, params ...rawParam) (prep []rawCol, res rawResult, err error) {
	if err := r.command(mysql.COM_STMT_PREPARE, q); err != nil {
		return nil, res, err
	}
	p, err := r.c.ReadPacket(1 << 20)
	if err != nil {
		return nil, res, err
	}
	if p[0] == mysqlwire.HdrErr {
		res.Err = mysqlwire.ParseErrPacket(p)
		return nil, res, nil
	}
	if len(p) < 12 {
		return nil, res, fmt.Errorf("malformed prepare OK")
	}
	id := binary.LittleEndian.Uint32(p[1:])
	ncols, nparams := int(binary.LittleEndian.Uint16(p[5:])), int(binary.LittleEndian.Uint16(p[7:]))
	if _, err := r.readColumns(nparams); err != nil {
		return nil, res, err
	}
	if prep, err = r.readColumns(ncols); err != nil {
		return nil, res, err
	}
	body := binary.LittleEndian.AppendUint32(nil, id)
	body = append(body, 0)
	body = binary.LittleEndian.AppendUint32(body, 1)
	if nparams > 0 {
		body = append(body, make([]byte, (nparams+7)/8)...)
		body = append(body, 1)
		for _, pr := range params {
			body = append(body, pr.Type, 0)
		}
		for _, pr := range params {
			body = mysql.AppendLengthEncodedInteger(body, uint64(len(pr.Value)))
			body = append(body, pr.Value...)
		}
	}
	if err := r.command(mysql.COM_STMT_EXECUTE, body); err != nil {
		return nil, res, err
	}
	res, err = r.readResult(true)
	if err == nil {
		err = r.command(mysql.COM_STMT_CLOSE, binary.LittleEndian.AppendUint32(nil, id))
	}
	return prep, res, err
}
