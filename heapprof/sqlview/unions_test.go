package sqlview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// UNION chains whose SELECTs differ in column types answer what MariaDB
// answers (columns, rows; types where both derive them alike), however
// long: the planner took k^d steps for d UNIONs with k unconverted
// columns before lineUpUnions (50 literal rows of 8 columns never
// finished).
func TestUnionChainsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	literalRows := func(n int) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(" UNION ")
			}
			// Lengths, widths and NULLs change from row to row, as in
			// MariaDB Connector/ODBC's SQLGetTypeInfo.
			fmt.Fprintf(&b, "SELECT '%s' AS name, %d AS code, %d AS size, %s AS params, %d AS a, %d AS b, 3 AS c, 'x' AS d",
				strings.Repeat("T", 1+i%7), i-20, 1<<(i%31), map[bool]string{true: "NULL", false: "'len'"}[i%3 == 0], i%2, i%5)
		}
		return b.String()
	}
	// Rows of equal column types: only the regrouping applies. Names
	// repeat every 37 rows, so UNION DISTINCT drops rows from both halves
	// of the chain.
	sameRows := func(n int, op string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(op)
			}
			fmt.Fprintf(&b, "SELECT 'T%02d' AS name, %d AS code, 'x' AS a, 'y' AS b, 1 AS c, 2 AS d", i%37, i%37%9)
		}
		return b.String()
	}
	tests := []struct {
		name, query string
		types       bool
	}{
		{"literal rows", literalRows(50) + " ORDER BY code", false},
		{"same types, union all, as written", sameRows(200, " UNION ALL "), false},
		{"same types, union, as written", sameRows(120, " UNION "), false},
		{"same types, order by and limit", sameRows(100, " UNION ") + " ORDER BY code DESC, name LIMIT 7", false},
		{"same types, tables", strings.TrimSuffix(strings.Repeat("SELECT id, node_id FROM heapprof.snapshots WHERE node_id > 0 UNION ALL ", 30),
			" UNION ALL ") + " ORDER BY node_id, id", true},
		{"parenthesized selects", "(SELECT 1 AS n LIMIT 1) UNION ALL (SELECT 2) UNION ALL SELECT 3 UNION ALL (SELECT 4 ORDER BY 1) " +
			"UNION ALL SELECT 5 UNION ALL SELECT 1", false},
		{"union all then union", "SELECT 1 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION SELECT 2 UNION ALL SELECT 2 UNION ALL SELECT 1", false},
		{"union then except", "SELECT 1 AS n UNION SELECT 2 UNION SELECT 3 UNION SELECT 4 EXCEPT SELECT 2 EXCEPT SELECT 3", false},
		{"with recursive, not referring to itself", "WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3 " +
			"UNION ALL SELECT 4 UNION ALL SELECT 5) SELECT * FROM t", false},
		{"with recursive", "WITH RECURSIVE t AS (SELECT 1 AS n UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 " +
			"UNION ALL SELECT n + 10 FROM t WHERE n < 30) SELECT * FROM t ORDER BY n", false},
		{"union all", strings.ReplaceAll(literalRows(30), " UNION ", " UNION ALL ") + " ORDER BY code", false},
		{"table and literals", "SELECT node_id AS v, node_kind AS k FROM heapprof.snapshots UNION SELECT 7, 'seven' UNION SELECT NULL, NULL " +
			"UNION SELECT 10001, 'greptimedb' UNION SELECT -1, '' ORDER BY v, k", false},
		{"numbers widen", "SELECT 1 AS n UNION SELECT 300 UNION SELECT 70000 UNION SELECT 5000000000 UNION SELECT -2 ORDER BY n", true},
		{"in a derived table", "SELECT COUNT(*), SUM(n) FROM (SELECT 1 AS n UNION SELECT 2 UNION SELECT 'x' UNION SELECT NULL UNION SELECT 2) t", false},
		{"in a subquery", "SELECT id FROM heapprof.snapshots WHERE node_id IN (SELECT 1 UNION SELECT 10001 UNION SELECT '7') ORDER BY id", true},
		{"distinct after conversion", "SELECT 1 AS v UNION SELECT '1' UNION SELECT 1 UNION SELECT 'a' ORDER BY v", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { matchMariaDB(t, ctx, e, s, r, tt.query, false, tt.types) })
	}
	// PREPARE ... FROM 'text' plans the text at once: it is lined up too.
	t.Run("prepared", func(t *testing.T) {
		for _, q := range []string{"PREPARE u FROM '" + strings.ReplaceAll(literalRows(40)+" ORDER BY code", "'", "''") + "'",
			"EXECUTE u", "DEALLOCATE PREPARE u",
			"PREPARE v FROM '" + strings.ReplaceAll(sameRows(100, " UNION "), "'", "''") + "'", "EXECUTE v", "DEALLOCATE PREPARE v"} {
			matchMariaDB(t, ctx, e, s, r, q, false, false)
		}
	})
}

// A chain lineUpUnions cannot rewrite (a SELECT of * among other items,
// whose columns it cannot convert; or one with a ? marker) is refused with ERROR 1235
// naming what to do when planning it as written would take more than a
// moment, and planned as written when not. A grouped SELECT is converted
// like any other.
func TestUnionChainsTooLongToPlan(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	wide := func(n int, middle string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteString(" UNION ")
			}
			// b's literal is a TINYINT, SMALLINT or INT by its width: every
			// UNION converts b and leaves the seven others as they are.
			sel := fmt.Sprintf("SELECT 'x%02d' AS a, %d AS b, 2 AS c, 3 AS d, 4 AS e, 5 AS f, 6 AS g, 7 AS h", i, 1<<(i%3*12))
			switch {
			case i != n/2:
			case middle == "star":
				// * among other items: its columns are not written out.
				sel = "SELECT 'x' AS a, t.* FROM (" + strings.Replace(sel, "SELECT 'x"+fmt.Sprintf("%02d", i)+"' AS a, ", "SELECT ", 1) + ") t"
			case middle == "grouped":
				sel += " FROM heapprof.snapshots GROUP BY node_id"
			}
			b.WriteString(sel)
		}
		return b.String()
	}
	t.Run("refused", func(t *testing.T) {
		_, err := engineAnswer(ctx, e, s, wide(40, "star"))
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "CAST") {
			t.Fatalf("got %v, want ERROR 1235 saying to CAST", err)
		}
		// The connection goes on.
		if _, err := engineAnswer(ctx, e, s, "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("short enough", func(t *testing.T) {
		a, err := engineAnswer(ctx, e, s, wide(4, "star"))
		if err != nil || len(a.rows) != 4 {
			t.Fatalf("got %v %v, want 4 rows", a.rows, err)
		}
	})
	t.Run("markers", func(t *testing.T) {
		q := strings.Replace(wide(12, ""), "2 AS c", "? AS c", 1)
		_, err := e.Prepare(ctx, s, q)
		var ge *Error
		if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "? marker") {
			t.Fatalf("got %v, want ERROR 1235 naming the marker", err)
		}
	})
	t.Run("lined up", func(t *testing.T) {
		a, err := engineAnswer(ctx, e, s, wide(40, ""))
		if err != nil || len(a.rows) != 40 {
			t.Fatalf("got %d rows, %v; want 40", len(a.rows), err)
		}
	})
	t.Run("grouped lined up", func(t *testing.T) {
		// The grouped SELECT's three rows are one after UNION.
		a, err := engineAnswer(ctx, e, s, wide(40, "grouped"))
		if err != nil || len(a.rows) != 40 {
			t.Fatalf("got %d rows, %v; want 40", len(a.rows), err)
		}
	})
}
