package sqlview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// nest wraps x depth times in the functions of layers, in turn
// (layers[0] innermost); each layer's %[1]s is the expression so far and
// %[2]d the level.
func nest(x string, depth int, layers ...string) string {
	for i := range depth {
		x = fmt.Sprintf(layers[i%len(layers)], x, i)
	}
	return x
}

// Functions nested 40 deep answer what MariaDB answers; IFNULL, NULLIF
// and unary minus as deep as maxDoublingDepth. Before heapprof's own
// ROUND, GREATEST/LEAST and CONCAT_WS length asked each argument once,
// ROUND of integers, GREATEST/LEAST of decimals and CONCAT_WS separators
// 40 deep did not finish in 60 s (twice the work per level), and nothing
// stopped a statement being planned.
func TestNestedFunctionsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	const depth = 40
	tests := []struct {
		name, query string
		types       bool
	}{
		{"ifnull", "SELECT " + nest("flat_bytes", maxDoublingDepth, "IFNULL(%[1]s, %[2]d)") + " AS v FROM heapprof.functions ORDER BY v", false},
		{"nullif and ifnull", "SELECT " + nest("node_id", maxDoublingDepth, "NULLIF(%[1]s, %[2]d)", "IFNULL(%[1]s, %[2]d)") +
			" AS v, name FROM heapprof.functions ORDER BY v, name", false},
		{"nullif of text", "SELECT " + nest("short_name", maxDoublingDepth, "NULLIF(%[1]s, 'x%[2]d')") + " AS v FROM heapprof.functions ORDER BY v", true},
		{"unary minus", "SELECT " + nest("flat_bytes", maxDoublingDepth, "-(%[1]s)") + " AS v FROM heapprof.functions ORDER BY v", false},
		{"siblings", "SELECT " + nest("flat_bytes", maxDoublingDepth, "IFNULL(%[1]s, 1)") + " + " + nest("flat_bytes", maxDoublingDepth, "IFNULL(%[1]s, 2)") +
			" AS v FROM heapprof.functions ORDER BY v", false},
		{"round of decimals", "SELECT " + nest("flat_bytes / 7", depth, "ROUND(%[1]s, 5)", "ROUND(%[1]s, 3)") + " AS v FROM heapprof.functions ORDER BY v", true},
		{"round of integers", "SELECT " + nest("flat_bytes", depth, "ROUND(%[1]s, -1)", "ROUND(%[1]s)") + " AS v FROM heapprof.functions ORDER BY v", false},
		{"truncate", "SELECT " + nest("flat_bytes / 3", depth, "TRUNCATE(%[1]s, 4)", "TRUNCATE(%[1]s, 2)") + " AS v FROM heapprof.functions ORDER BY v", true},
		{"greatest and least of decimals", "SELECT " + nest("flat_bytes / 11", depth, "GREATEST(%[1]s, %[2]d.25)", "LEAST(%[1]s, 1000.5)") +
			" AS v FROM heapprof.functions ORDER BY v", true},
		{"concat_ws separators", "SELECT " + nest("'-'", depth, "CONCAT_WS(%[1]s, 'a', 'b')") + " AS v", true},
		{"concat_ws values", "SELECT " + nest("short_name", depth, "CONCAT_WS('/', %[1]s, %[2]d)") + " AS v FROM heapprof.functions ORDER BY v", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, tt.query, false, tt.types) })
	}
}

// IFNULL, NULLIF and unary minus nested deeper than maxDoublingDepth on one
// path, in any mix and through subqueries, are refused with ERROR 1235
// naming them and what to write instead; the session goes on.
func TestDoublingTooDeep(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	for _, tt := range []struct{ query, names string }{
		{"SELECT " + nest("flat_bytes", 50, "IFNULL(%[1]s, 1)") + " FROM heapprof.functions", "IFNULL"},
		{"SELECT " + nest("1", maxDoublingDepth+1, "-(%[1]s)"), "unary minus"},
		{"SELECT " + nest("name", maxDoublingDepth+1, "NULLIF(%[1]s, 'a')", "IFNULL(%[1]s, 'b')") + " FROM heapprof.functions", "IFNULL and NULLIF"},
		{"SELECT " + nest("(SELECT "+nest("1", 9, "IFNULL(%[1]s, 2)")+")", 8, "-(%[1]s)"), "IFNULL and unary minus"},
	} {
		_, err := engineAnswer(ctx, e, s, tt.query)
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, tt.names+" nested more than") ||
			!strings.Contains(ge.Message, "COALESCE") {
			t.Errorf("%.60s...: got %v, want ERROR 1235 naming %s and what to write", tt.query, err, tt.names)
		}
		if _, err := engineAnswer(ctx, e, s, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
}
