package parser

import (
	"errors"
	"reflect"
	"testing"
)

var fuzzSeeds = []string{
	"ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().enable_prof())'",
	"admin execute on 1, 2 ,3 \"System.print(HeapProf.getInstance().to_dot_format(\"\"a\\\\\"\"b\"\"))\";",
	"ADMIN EXECUTE ON ALL COMPUTE NODES 'System.print(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().snapshot()))'",
	"/*!ADMIN EXECUTE ON FRONTEND 'System.print(HeapProf.getInstance().has_enable())'*/",
	"ADMIN EXECUTE ON 1 'System.print(HeapProf.getInstance().to_dot_format(\\\"\\\\x41\\\\u00e9\\\\%\\\"))'",
	"SHOW BACKENDS", "SHOW COMPUTE NODES;", "SELECT @@version_comment LIMIT 1", "SELECT c FROM sbtest1 WHERE id=1",
	"SET NAMES utf8mb4", "/*M!100100 SET @a = '/*M!1'*/", "SHOW VARIABLES LIKE 'x%'", "USE db", "BEGIN", "-- \n#\n/* */",
}

// FuzzClassify checks that Classify never panics, that its only errors are
// *Error with a position inside the input, and that a parsed ADMIN EXECUTE
// renders to SQL that parses back to the same statement.
func FuzzClassify(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		st, err := Classify(sql)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("Classify(%q) error %T %v, want *Error", sql, err, err)
			}
			if perr.Pos < 0 || perr.Pos > len(sql) {
				t.Fatalf("Classify(%q) error position %d outside the input", sql, perr.Pos)
			}
			return
		}
		if st == nil {
			t.Fatalf("Classify(%q) = nil, nil", sql)
		}
		if st.Kind == AdminExecute {
			checkRoundTrip(t, st.Admin)
		}
	})
}

// FuzzParseScript checks that ParseScript never panics, returns only *Error,
// and that a parsed call renders to a script that parses to the same call.
func FuzzParseScript(f *testing.F) {
	for _, s := range []string{
		"System.print(HeapProf.getInstance().enable_prof())",
		"System.print(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().snapshot()))",
		`System.print(HeapProf.getInstance().to_dot_format("a\"\\\%\x41\u00e9\U0001F600"))`,
		"// c\nSystem.print(/* a /* b */ */HeapProf.getInstance().has_enable())",
		`System.print(HeapProf.getInstance().to_dot_format("%(x)"))`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		call, err := ParseScript(script)
		if err != nil {
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseScript(%q) error %T %v, want *Error", script, err, err)
			}
			if perr.Pos < 0 || perr.Pos > len(script) {
				t.Fatalf("ParseScript(%q) error position %d outside the input", script, perr.Pos)
			}
			return
		}
		again, err := ParseScript(call.Script())
		if err != nil || !reflect.DeepEqual(again, call) {
			t.Fatalf("ParseScript(%q) = %+v; re-rendered %q gives %+v, %v", script, call, call.Script(), again, err)
		}
		// The script must also survive being embedded in ADMIN EXECUTE.
		a := &AdminExecuteStmt{Target: Target{IDs: []int64{1}}, Script: script, Call: call}
		checkRoundTrip(t, a)
	})
}
