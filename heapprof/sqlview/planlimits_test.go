package sqlview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// selfJoin joins n copies of snapshots on node_id, none matching.
func selfJoin(n int, extra string) string {
	var b strings.Builder
	b.WriteString("SELECT COUNT(*) FROM heapprof.snapshots t1")
	for i := 2; i <= n; i++ {
		fmt.Fprintf(&b, " JOIN heapprof.snapshots t%d ON t%d.node_id = t%d.node_id", i, i, i-1)
	}
	b.WriteString(" WHERE t1.node_id = -5" + extra)
	return b.String()
}

// Joins the planner orders by trying every order (11 to 15 tables; it
// took more than 100 s for 14, uninterruptibly) are refused with ERROR
// 1235 saying what to write; smaller and larger ones, and the same tables
// split by a derived table, answer MariaDB's rows.
func TestJoinSizes(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	for _, tt := range []struct {
		name, query string
		refused     bool
	}{
		{"10 tables", selfJoin(10, ""), false},
		{"12 tables prepared", "PREPARE j FROM '" + selfJoin(12, "") + "'", true},
		{"12 tables in a variable", "SET @j = '" + selfJoin(12, "") + "'", false},
		{"prepared from the variable", "PREPARE j FROM @j", true},
		{"12 tables", selfJoin(12, ""), true},
		{"15 tables", selfJoin(15, ""), true},
		{"16 tables", selfJoin(16, ""), false},
		{"10 tables and 2 subqueries", selfJoin(10, " AND t1.id IN (SELECT snapshot_id FROM heapprof.functions)"+
			" AND EXISTS (SELECT 1 FROM heapprof.stacks k WHERE k.snapshot_id = t2.id)"), true},
		{"scalar subqueries do not join", "SELECT MAX(node_id) FROM heapprof.snapshots WHERE node_id <= (" +
			strings.Repeat("SELECT MAX(node_id) FROM heapprof.snapshots WHERE node_id <= (", 10) + "SELECT 99999" +
			strings.Repeat(")", 11), false},
		{"split by a derived table", "SELECT COUNT(*) FROM (" + selfJoin(8, "") + ") AS d JOIN (" +
			strings.Replace(selfJoin(8, ""), "COUNT(*)", "t1.node_id", 1) + ") AS d2", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.refused {
				matchMariaDB(t, ctx, e, s, r, tt.query, false, false)
				return
			}
			_, err := engineAnswer(ctx, e, s, tt.query)
			var ge *Error
			if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "derived table") {
				t.Fatalf("got %v, want ERROR 1235 saying to use a derived table", err)
			}
			if _, err := engineAnswer(ctx, e, s, "SELECT 1"); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Arithmetic nested deeper than maxArithmeticDepth is refused with ERROR
// 1235 (planning took the square of the depth: 5,000 terms more than 30 s);
// up to it the engine answers, and MariaDB's answer where MariaDB has one:
// MariaDB 10.11 at its default thread_stack itself refuses more than 593
// terms with ERROR 1436 (thread stack overrun).
func TestArithmeticDepth(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	sum := func(n int) (string, int) {
		terms, total := make([]string, n), 0
		for i := range terms {
			terms[i] = fmt.Sprint(i % 7)
			total += i % 7
		}
		return strings.Join(terms, " + "), total
	}
	q590, _ := sum(590)
	matchMariaDB(t, ctx, e, s, r, "SELECT "+q590+" AS s, node_id FROM heapprof.snapshots ORDER BY id", false, false)
	matchMariaDB(t, ctx, e, s, r, "SELECT CONCAT("+q590+", '/', "+q590+") AS s", false, false)
	deepest, total := sum(maxArithmeticDepth + 1)
	if a, err := engineAnswer(ctx, e, s, "SELECT "+deepest); err != nil || len(a.rows) != 1 || a.rows[0][0] != fmt.Sprint(total) {
		t.Errorf("%d operators: %v %v, want %d", maxArithmeticDepth, a.rows, err, total)
	}
	deeper, _ := sum(maxArithmeticDepth + 2)
	_, err := engineAnswer(ctx, e, s, "SELECT COUNT(*) FROM heapprof.snapshots WHERE node_id < ("+deeper+")")
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "SUM()") {
		t.Fatalf("got %v, want ERROR 1235 saying to add up in parts", err)
	}
}

// Subqueries nested deeper than maxSubqueryDepth are refused with ERROR
// 1235 (17 derived tables nested with a WHERE each: about 2.5 s of
// planning, doubling per level, mostly beyond KILL's reach); 16 answer
// MariaDB's rows.
func TestSubqueryDepth(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	nested := func(n int) string {
		q := "SELECT node_id, total_bytes FROM heapprof.snapshots"
		for i := range n {
			q = fmt.Sprintf("SELECT node_id, total_bytes FROM (%s) AS t%d WHERE total_bytes >= 0", q, i)
		}
		return q + " ORDER BY node_id, total_bytes"
	}
	matchMariaDB(t, ctx, e, s, r, nested(maxSubqueryDepth), false, true)
	_, err := engineAnswer(ctx, e, s, nested(maxSubqueryDepth+1))
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != 1235 || !strings.Contains(ge.Message, "nested 17 deep") {
		t.Fatalf("got %v, want ERROR 1235 naming the depth", err)
	}
}
