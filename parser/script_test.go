package parser

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseScript(t *testing.T) {
	snap := []Arg{{Kind: ArgSnapshotCall}}
	tests := []struct {
		script string
		want   Call
	}{
		{"System.print(HeapProf.getInstance().enable_prof())", Call{Method: MethodEnableProf}},
		{"System.print(HeapProf.getInstance().disable_prof())", Call{Method: MethodDisableProf}},
		{"System.print(HeapProf.getInstance().has_enable())", Call{Method: MethodHasEnable}},
		{"System.print(HeapProf.getInstance().snapshot())", Call{Method: MethodSnapshot}},
		{"System.print(HeapProf.getInstance().dump_dot_snapshot())", Call{Method: MethodDumpDotSnapshot}},
		{"System.print(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().snapshot()))", Call{Method: MethodToDotFormat, Args: snap}},
		{` System . print ( HeapProf . getInstance ( ) . to_dot_format ( "/opt/be/heap_profile.123.456" ) ) `,
			Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgString, Str: "/opt/be/heap_profile.123.456"}}}},
		{"\tSystem.print(\r\n HeapProf.getInstance().has_enable()\n)\n", Call{Method: MethodHasEnable}},
		{"// comment\nSystem.print(/* a /* nested */ b */HeapProf.getInstance().has_enable())// end", Call{Method: MethodHasEnable}},
		{`System.print(HeapProf.getInstance().to_dot_format("\"\\\%\0\a\b\e\f\n\r\t\v\x7f\u00e9\U0001F600"))`,
			Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgString, Str: "\"\\%\x00\a\b\x1b\f\n\r\t\v\x7f\u00e9\U0001F600"}}}},
		{`System.print(HeapProf.getInstance().to_dot_format(""))`, Call{Method: MethodToDotFormat, Args: []Arg{{Kind: ArgString}}}},
	}
	for _, tt := range tests {
		got, err := ParseScript(tt.script)
		if err != nil {
			t.Errorf("ParseScript(%q): %v", tt.script, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseScript(%q) = %+v, want %+v", tt.script, got, tt.want)
		}
		again, err := ParseScript(got.Script())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("ParseScript(%q) (re-rendered) = %+v, %v; want %+v", got.Script(), again, err, got)
		}
	}
}

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		script string
		pos    int
		want   string
	}{
		{"", 0, "expected System.print(...), got end of statement"},
		{"HeapProf.getInstance().enable_prof()", 0, `expected System.print(...), got "HeapProf"`},
		{"system.print(HeapProf.getInstance().enable_prof())", 0, `got "system"`},
		{"System.println(HeapProf.getInstance().enable_prof())", 7, `expected System.print(...), got "println"`},
		{"System.print HeapProf.getInstance().enable_prof()", 13, "expected ( after System.print"},
		{"System.print(StorageEngine.getInstance().enable_prof())", 13, `got "StorageEngine" (only the HeapProf class is supported)`},
		{"System.print(ExecEnv.getInstance())", 13, "only the HeapProf class is supported"},
		{"System.print(HeapProf.instance().enable_prof())", 22, "expected HeapProf.getInstance()"},
		{"System.print(HeapProf.getInstance(1).enable_prof())", 34, "getInstance takes no arguments"},
		{"System.print(HeapProf.getInstance().enable_prof)", 47, "expected ( after method enable_prof"},
		{"System.print(HeapProf.getInstance().frobnicate())", 36, `unknown HeapProf method "frobnicate"`},
		{"System.print(HeapProf.getInstance().Enable_prof())", 36, `unknown HeapProf method "Enable_prof"`},
		{"System.print(HeapProf.getInstance().enable_prof(\"x\"))", 36, "enable_prof takes 0 argument(s), got 1"},
		{"System.print(HeapProf.getInstance().to_dot_format())", 36, "to_dot_format takes 1 argument(s), got 0"},
		{`System.print(HeapProf.getInstance().to_dot_format("a", "b"))`, 36, "to_dot_format takes 1 argument(s), got 2"},
		{`System.print(HeapProf.getInstance().to_dot_format("a" "b"))`, 54, "expected , or ) in the arguments of to_dot_format"},
		{"System.print(HeapProf.getInstance().to_dot_format(42))", 50, `expected a string literal or HeapProf.getInstance().snapshot() as argument, got "4"`},
		{"System.print(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().has_enable()))", 50, "does not give a profile file"},
		{`System.print(HeapProf.getInstance().to_dot_format("%(1+1)"))`, 51, "string interpolation"},
		{`System.print(HeapProf.getInstance().to_dot_format("a\qb"))`, 52, `invalid escape \q`},
		{`System.print(HeapProf.getInstance().to_dot_format("\x4"))`, 51, `want 2 hex digits`},
		{`System.print(HeapProf.getInstance().to_dot_format("\xzz"))`, 51, `invalid \x escape`},
		{`System.print(HeapProf.getInstance().to_dot_format("\ud800"))`, 51, "not a valid code point"},
		{`System.print(HeapProf.getInstance().to_dot_format("abc))`, 50, "unterminated string literal"},
		{`System.print(HeapProf.getInstance().to_dot_format("""x"""))`, 50, "raw strings"},
		{"System.print(HeapProf.getInstance().enable_prof()", 49, "expected ) closing System.print(, got end of statement"},
		{"System.print(HeapProf.getInstance().enable_prof()))", 50, `expected end of script after System.print(...), got ")"`},
		{"System.print(HeapProf.getInstance().enable_prof())\nSystem.print(1)", 51, `got "System"`},
		{"System.print(HeapProf.getInstance().enable_prof()) /* open", 51, "unterminated /* comment"},
		{"System.print(HeapProf.getInstance().enable_prof());", 50, `got ";"`},
		{"System.print(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().to_dot_format(HeapProf.getInstance().snapshot())))", 87, "nest only one level deep"},
	}
	for _, tt := range tests {
		_, err := ParseScript(tt.script)
		var perr *Error
		if !errors.As(err, &perr) {
			t.Errorf("ParseScript(%q) = %v, want *Error", tt.script, err)
			continue
		}
		if perr.Pos != tt.pos || !strings.Contains(perr.Msg, tt.want) {
			t.Errorf("ParseScript(%q) = %q (pos %d), want pos %d and %q", tt.script, perr.Msg, perr.Pos, tt.pos, tt.want)
		}
		if !strings.Contains(err.Error(), "supported methods: enable_prof(), disable_prof(), has_enable(), snapshot(), to_dot_format(\"<file>\" | HeapProf.getInstance().snapshot()), dump_dot_snapshot()") {
			t.Errorf("ParseScript(%q) error %q does not list the methods", tt.script, err)
		}
	}
}

func TestMethods(t *testing.T) {
	var names []string
	for _, m := range Methods() {
		names = append(names, m.String())
		if got, ok := lookupMethod(m.String()); !ok || got != m {
			t.Errorf("lookupMethod(%q) = %v, %v", m, got, ok)
		}
	}
	want := []string{"enable_prof", "disable_prof", "has_enable", "snapshot", "to_dot_format", "dump_dot_snapshot",
		"list_snapshots", "diff_dot_snapshot", "schedule_snapshots", "unschedule_snapshots"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("Methods() = %v, want %v", names, want)
	}
}

// Scripts that are not HeapProf calls at all are marked, so a proxy in front
// of a StarRocks FE can hand them to the FE; malformed HeapProf calls are not.
func TestNotHeapProf(t *testing.T) {
	for _, c := range []struct {
		script string
		want   bool
	}{
		{`System.print(ExecEnv.get_stack_trace_for_all_threads())`, true},
		{`System.print(StorageEngine.getInstance().get_tablet(1))`, true},
		{`HeapProf.getInstance().has_enable()`, true},
		{`System.write(HeapProf.getInstance().has_enable())`, true},
		{`System.print(HeapProf.getInstance().no_such_method())`, false},
		{`System.print(HeapProf.getInstance().has_enable(1))`, false},
	} {
		_, err := ParseScript(c.script)
		var pe *Error
		if !errors.As(err, &pe) || pe.NotHeapProf != c.want {
			t.Errorf("%s: error %v, NotHeapProf want %v", c.script, err, c.want)
		}
		_, err = Classify("ADMIN EXECUTE ON 10001 '" + c.script + "'")
		if !errors.As(err, &pe) || pe.NotHeapProf != c.want {
			t.Errorf("ADMIN EXECUTE %s: error %v, NotHeapProf want %v", c.script, err, c.want)
		}
	}
}
