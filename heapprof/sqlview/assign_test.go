package sqlview

import "testing"

func TestRewriteAssignments(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT @n := 1", "SELECT heapproxy_set_user_var('n', 1) AS `@n := 1`"},
		{"SELECT @n := @n + 1 AS k, @n FROM t", "SELECT heapproxy_set_user_var('n', @n + 1) AS k, @n FROM t"},
		{"SELECT a, @x:=b*2 FROM t WHERE c", "SELECT a, heapproxy_set_user_var('x', b*2) AS `@x:=b*2` FROM t WHERE c"},
		{"SELECT IF(a, @k := 1, @k := 2)", "SELECT IF(a, heapproxy_set_user_var('k', 1), heapproxy_set_user_var('k', 2))"},
		{"SELECT CASE x WHEN 1 THEN @dt:=(-7) ELSE @dt:=4 END AS d, @dt",
			"SELECT CASE x WHEN 1 THEN heapproxy_set_user_var('dt', (-7)) ELSE heapproxy_set_user_var('dt', 4) END AS d, @dt"},
		{"SELECT @t := CAST(CASE @dt WHEN 1 THEN 2 END AS SIGNED) AS b",
			"SELECT heapproxy_set_user_var('t', CAST(CASE @dt WHEN 1 THEN 2 END AS SIGNED)) AS b"},
		{"SELECT @p := @q := 7 AS a", "SELECT heapproxy_set_user_var('p', heapproxy_set_user_var('q', 7)) AS a"},
		{"SELECT @`odd name` := 1 AS a", "SELECT heapproxy_set_user_var('odd name', 1) AS a"},
		{"SELECT ':=' AS s, @@sql_mode", ""},
		{"SELECT x FROM (SELECT @r := 0) init", "SELECT x FROM (SELECT heapproxy_set_user_var('r', 0)) init"},
	}
	for _, tt := range tests {
		got, ok := rewriteAssignments(tt.in)
		if tt.want == "" {
			if ok {
				t.Errorf("%s: rewritten as %s, want unchanged", tt.in, got)
			}
			continue
		}
		if !ok || got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}
