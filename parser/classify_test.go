package parser

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func TestClassifyKind(t *testing.T) {
	tests := []struct {
		sql  string
		want Kind
	}{
		{"SELECT c FROM sbtest1 WHERE id=42", Forward},
		{"select * from t", Forward},
		{"SELECT 'FROM' AS x", LocalSelect},
		{"SELECT 1 /* FROM */", LocalSelect},
		{"SELECT (SELECT 1 FROM dual)", Forward},
		{"SELECT @a", Forward},
		{"SELECT SLEEP(1)", Forward},
		{"SELECT 1 UNION SELECT 2", Forward},
		{"SELECT 1 WHERE 1=1", Forward},
		{"SELECT 1 LIMIT 1, 2", Forward},
		{"SELECT 1; SELECT 2", Forward},
		{"SELECT 1 +", Forward},
		{"INSERT INTO t VALUES (1)", Forward},
		{"", Forward},
		{"   ", Forward},
		{";", Forward},
		{"/* only a comment */", Forward},
		{"(SELECT 1)", Forward},
		{"SELECT @@version_comment LIMIT 1", LocalSelect},
		{"  /* c */ -- line\n # hash\n select 1", LocalSelect},
		{"--\nSELECT 1", LocalSelect},
		{"--x\nSELECT 1", Forward}, // "--x" is not a comment in MySQL
		{"/*!40101 SET NAMES utf8 */", Set},
		{"/*!40101 SET NAMES utf8 */;", Set},
		{"/*M!100100 SET NAMES utf8 */", Set},
		{"SET NAMES utf8mb4", Set},
		{"SET @@session.autocommit = 0", Set},
		{"SET PASSWORD = 'x'", Forward},
		{"SET ROLE ALL", Forward},
		{"SHOW WARNINGS", ShowWarnings},
		{"SHOW ERRORS", ShowWarnings},
		{"SHOW COUNT(*) WARNINGS", Forward},
		{"SHOW DATABASES", ShowDatabases},
		{"show schemas like 'a%'", ShowDatabases},
		{"SHOW VARIABLES", ShowVariables},
		{"SHOW SESSION VARIABLES LIKE 'x'", ShowVariables},
		{"SHOW GLOBAL VARIABLES", ShowVariables},
		{"SHOW VARIABLES WHERE Variable_name = 'x'", Forward},
		{"SHOW GLOBAL STATUS", Forward},
		{"SHOW TABLES", Forward},
		{"SHOW FULL PROCESSLIST", Forward},
		{"SHOW BACKENDS", ShowBackends},
		{"show backends;", ShowBackends},
		{"SHOW FRONTENDS", ShowFrontends},
		{"SHOW /* x */ COMPUTE\n\tNODES ;", ShowComputeNodes},
		{"USE test", Use},
		{"BEGIN", Begin},
		{"begin work;", Begin},
		{"START TRANSACTION", Begin},
		{"START TRANSACTION WITH CONSISTENT SNAPSHOT", Begin},
		{"START SLAVE", Forward},
		{"COMMIT", Commit},
		{"COMMIT AND CHAIN", Forward},
		{"ROLLBACK", Rollback},
		{"ROLLBACK TO SAVEPOINT s1", Forward},
		{"ADMIN SHOW REPLICA STATUS", Forward},
		{"KILL 12", Kill},
		{"kill query 12;", Kill},
		{"KILL CONNECTION 7", Kill},
		{"KILL HARD QUERY 7", Forward},
		{"KILL USER bob", Forward},
		{"KILL QUERY ID 7", Forward},
		{"KILL 99999999999", Forward},
		// The TiDB parser's literal driver panics on decimals of more than
		// 81 digits (found by FuzzClassify): forwarded, not a crash.
		{"SET " + strings.Repeat("0", 127) + ".", Forward},
		{"SELECT " + strings.Repeat("9", 100) + ".5", Forward},
		{"ADMIN", Forward},
		{"ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().has_enable())'", AdminExecute},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		if err != nil {
			t.Errorf("Classify(%q) error: %v", tt.sql, err)
			continue
		}
		if st.Kind != tt.want {
			t.Errorf("Classify(%q).Kind = %v, want %v", tt.sql, st.Kind, tt.want)
		}
	}
}

func TestClassifyKill(t *testing.T) {
	for _, tt := range []struct {
		sql  string
		want KillStmt
	}{
		{"KILL 12", KillStmt{ID: 12}},
		{"KILL QUERY 3", KillStmt{ID: 3, Query: true}},
		{"kill connection 4 ;", KillStmt{ID: 4}},
	} {
		st, err := Classify(tt.sql)
		if err != nil || st.Kind != Kill || *st.Kill != tt.want {
			t.Errorf("Classify(%q) = %+v, %v; want Kill %+v", tt.sql, st, err, tt.want)
		}
	}
}

func TestClassifyAdminExecute(t *testing.T) {
	enable := Call{Method: MethodEnableProf}
	tests := []struct {
		sql    string
		target Target
		script string
		call   Call
	}{
		{"ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().enable_prof())'",
			Target{IDs: []int64{10001}}, "System.print(HeapProf.getInstance().enable_prof())", enable},
		{"admin execute on 10001, 10002,10003 'System.print(HeapProf.getInstance().enable_prof())';",
			Target{IDs: []int64{10001, 10002, 10003}}, "System.print(HeapProf.getInstance().enable_prof())", enable},
		{"Admin Execute On All Backends 'System.print(HeapProf.getInstance().enable_prof())'  ;  ",
			Target{AllBackends: true}, "System.print(HeapProf.getInstance().enable_prof())", enable},
		{"ADMIN EXECUTE ON ALL COMPUTE NODES 'System.print(HeapProf.getInstance().enable_prof())'",
			Target{AllComputeNodes: true}, "System.print(HeapProf.getInstance().enable_prof())", enable},
		{"ADMIN EXECUTE ON FRONTEND 'System.print(HeapProf.getInstance().disable_prof())'",
			Target{Frontend: true}, "System.print(HeapProf.getInstance().disable_prof())", Call{Method: MethodDisableProf}},
		{"/* lead */ ADMIN /* a */ EXECUTE -- b\n ON # c\n 7 /* d */ 'System.print(HeapProf.getInstance().has_enable())' /* e */",
			Target{IDs: []int64{7}}, "System.print(HeapProf.getInstance().has_enable())", Call{Method: MethodHasEnable}},
		{"/*! ADMIN EXECUTE ON 7 'System.print(HeapProf.getInstance().snapshot())' */",
			Target{IDs: []int64{7}}, "System.print(HeapProf.getInstance().snapshot())", Call{Method: MethodSnapshot}},
		{`ADMIN EXECUTE ON 7 "System.print(HeapProf.getInstance().dump_dot_snapshot())"`,
			Target{IDs: []int64{7}}, "System.print(HeapProf.getInstance().dump_dot_snapshot())", Call{Method: MethodDumpDotSnapshot}},
		{"ADMIN EXECUTE ON 7 'System.print(\n  HeapProf.getInstance()\n    .to_dot_format(HeapProf.getInstance().snapshot())\n)'",
			Target{IDs: []int64{7}}, "System.print(\n  HeapProf.getInstance()\n    .to_dot_format(HeapProf.getInstance().snapshot())\n)",
			Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgSnapshotCall}}}},
		// MySQL escapes in the SQL literal: \" and \n decode before the script is read.
		{`ADMIN EXECUTE ON 7 'System.print(HeapProf.getInstance().to_dot_format(\"/tmp/heap_profile.1.2\"))\n'`,
			Target{IDs: []int64{7}}, "System.print(HeapProf.getInstance().to_dot_format(\"/tmp/heap_profile.1.2\"))\n",
			Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgString, Str: "/tmp/heap_profile.1.2"}}}},
		// A doubled quote inside a double-quoted SQL literal, and Wren escapes in the script string.
		{`ADMIN EXECUTE ON 7 "System.print(HeapProf.getInstance().to_dot_format(""a\\\\b\\x41\\u00e9\\%""))"`,
			Target{IDs: []int64{7}}, `System.print(HeapProf.getInstance().to_dot_format("a\\b\x41\u00e9\%"))`,
			Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgString, Str: "a\\bAé%"}}}},
		{`ADMIN EXECUTE ON 9223372036854775807 'System.print(HeapProf.getInstance().enable_prof())'`,
			Target{IDs: []int64{9223372036854775807}}, "System.print(HeapProf.getInstance().enable_prof())", enable},
		{"ADMIN EXECUTE ON 7 'System.print(HeapProf.getInstance().enable_prof()) // why\n/* nested /* ok */ */'",
			Target{IDs: []int64{7}}, "System.print(HeapProf.getInstance().enable_prof()) // why\n/* nested /* ok */ */", enable},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		if err != nil {
			t.Errorf("Classify(%q) error: %v", tt.sql, err)
			continue
		}
		if st.Kind != AdminExecute || st.Admin == nil {
			t.Errorf("Classify(%q) = %+v, want AdminExecute", tt.sql, st)
			continue
		}
		a := st.Admin
		if !reflect.DeepEqual(a.Target, tt.target) || a.Script != tt.script || !reflect.DeepEqual(a.Call, tt.call) {
			t.Errorf("Classify(%q) = %+v, want target %+v script %q call %+v", tt.sql, *a, tt.target, tt.script, tt.call)
		}
		checkRoundTrip(t, a)
	}
}

// checkRoundTrip checks that the canonical rendering of a parses back to a.
func checkRoundTrip(t *testing.T, a *AdminExecuteStmt) {
	t.Helper()
	sql := a.String()
	st, err := Classify(sql)
	if err != nil {
		t.Fatalf("re-parse of %q: %v", sql, err)
	}
	if st.Kind != AdminExecute || !reflect.DeepEqual(st.Admin, a) {
		t.Fatalf("re-parse of %q = %+v, want %+v", sql, st.Admin, a)
	}
	call, err := ParseScript(a.Call.Script())
	if err != nil {
		t.Fatalf("ParseScript(%q): %v", a.Call.Script(), err)
	}
	if !reflect.DeepEqual(call, a.Call) {
		t.Fatalf("ParseScript(%q) = %+v, want %+v", a.Call.Script(), call, a.Call)
	}
}

func TestClassifyErrors(t *testing.T) {
	const ok = "'System.print(HeapProf.getInstance().enable_prof())'"
	tests := []struct {
		sql  string
		pos  int
		want string // substring of the message
	}{
		{"ADMIN EXECUTE ON xyz 'x'", 17, `ADMIN EXECUTE: expected node id, list of ids, ALL BACKENDS, ALL COMPUTE NODES or FRONTEND after ON, got "xyz"`},
		{"ADMIN EXECUTE", 13, "expected ON after ADMIN EXECUTE, got end of statement"},
		{"ADMIN EXECUTE AT 1 " + ok, 14, `expected ON after ADMIN EXECUTE, got "AT"`},
		{"ADMIN EXECUTE ON " + ok, 17, "expected node id"},
		{"ADMIN EXECUTE ON -1 " + ok, 17, `got "-"`},
		{"ADMIN EXECUTE ON 1x " + ok, 17, `got "1x"`},
		{"ADMIN EXECUTE ON 99999999999999999999 " + ok, 17, "node id 99999999999999999999 is out of range"},
		{"ADMIN EXECUTE ON 1, " + ok, 20, `expected node id after ",", got "'System`},
		{"ADMIN EXECUTE ON 1,,2 " + ok, 19, `expected node id after ","`},
		{"ADMIN EXECUTE ON ALL " + ok, 21, "expected BACKENDS or COMPUTE NODES after ON ALL"},
		{"ADMIN EXECUTE ON ALL COMPUTE " + ok, 29, "expected NODES after ON ALL COMPUTE"},
		{"ADMIN EXECUTE ON ALL NODES " + ok, 21, `got "NODES"`},
		{"ADMIN EXECUTE ON 1", 18, "expected the script as a quoted string after ON 1, got end of statement"},
		{"ADMIN EXECUTE ON 1 System", 19, `expected the script as a quoted string after ON 1, got "System"`},
		{"ADMIN EXECUTE ON 1 'System.print(", 19, "unterminated string literal"},
		{`ADMIN EXECUTE ON 1 'System.print(\'`, 19, "unterminated string literal"},
		{`ADMIN EXECUTE ON 1 "x""`, 19, "unterminated string literal"},
		{"ADMIN EXECUTE ON 1 " + ok + " 'x'", 72, "expected end of statement after the script"},
		{"ADMIN EXECUTE ON 1 " + ok + "; SELECT 1", 73, `expected end of statement after the script, got "SELECT"`},
		{"ADMIN EXECUTE ON 1 " + ok + ";;", 72, `got ";"`},
		{"ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().foo())'", 56, `script: unknown HeapProf method "foo"`},
		// The position points into the SQL text even after escapes.
		{`ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().to_dot_format(\"a\"), 1)'`, 76, "expected ) closing System.print("},
		{"ADMIN EXECUTE ON 1 'System.print(Foo.getInstance().enable_prof())'", 33, `got "Foo" (only the HeapProf class is supported)`},
		{"SHOW BACKENDS x", 14, `SHOW BACKENDS: expected end of statement, got "x"`},
		{"SHOW BACKENDS;;", 14, `got ";"`},
		{"SHOW COMPUTE", 12, "expected NODES after SHOW COMPUTE, got end of statement"},
		{"SHOW COMPUTE NODES LIKE 'x'", 19, `SHOW COMPUTE NODES: expected end of statement, got "LIKE"`},
	}
	for _, tt := range tests {
		st, err := Classify(tt.sql)
		var perr *Error
		if !errors.As(err, &perr) {
			t.Errorf("Classify(%q) = %+v, %v; want *Error", tt.sql, st, err)
			continue
		}
		if perr.Pos != tt.pos || !strings.Contains(perr.Msg, tt.want) {
			t.Errorf("Classify(%q) error = %q (pos %d), want pos %d and %q", tt.sql, err, perr.Pos, tt.pos, tt.want)
		}
		if !strings.Contains(err.Error(), " at position "+strconv.Itoa(tt.pos)) {
			t.Errorf("Classify(%q) error %q does not name position %d", tt.sql, err, tt.pos)
		}
		if strings.Contains(perr.Msg, "script:") && !strings.Contains(err.Error(), "supported methods: enable_prof(), disable_prof(), has_enable(), snapshot(), to_dot_format(") {
			t.Errorf("Classify(%q) error %q does not list the supported methods", tt.sql, err)
		}
	}
}

// ClassifyOwn answers like Classify for heapproxy's own statements and
// KILL, and Forward for everything else, parse errors of its grammar
// included.
func TestClassifyOwn(t *testing.T) {
	c := NewClassifier()
	for _, tt := range []struct {
		sql  string
		want Kind
	}{
		{"SELECT 1", Forward},
		{"SET NAMES utf8mb4", Forward},
		{"SELECT @@version_comment LIMIT 1", Forward},
		{"SHOW VARIABLES", Forward},
		{"USE t", Forward},
		{"KILL 3", Kill},
		{"kill query 3", Kill},
		{"KILL USER app", Forward}, // MariaDB's other forms go to the upstream alone
		{"BEGIN", Forward},
		{"SHOW BACKENDS", ShowBackends},
		{"show compute nodes", ShowComputeNodes},
		{"SHOW FRONTENDS;", ShowFrontends},
		{"ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().has_enable())'", AdminExecute},
		{"ADMIN SHOW REPLICA STATUS", Forward},
	} {
		st, err := c.ClassifyOwn(tt.sql)
		if err != nil || st.Kind != tt.want {
			t.Errorf("ClassifyOwn(%q) = %v, %v; want %v", tt.sql, st.Kind, err, tt.want)
		}
	}
	if _, err := c.ClassifyOwn("SHOW BACKENDS x"); err == nil {
		t.Error("ClassifyOwn(SHOW BACKENDS x): no error")
	}
}
