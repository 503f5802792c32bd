package sqlview

import (
	"context"
	"errors"
	"testing"
)

// An unqualified column two joined tables have is refused as MariaDB
// refuses it, code, SQLSTATE and text, in every clause; until 2026-11-25
// the planner took the first table's column in a query with aggregates
// (COUNT(node_id) of snapshots LEFT JOIN functions counted the snapshots).
// Where MariaDB resolves the name (a select item's name in ORDER BY and
// GROUP BY, USING, a subquery's own FROM), both answer the same rows.
func TestAmbiguousColumnsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	const join = " FROM snapshots s JOIN functions f ON f.snapshot_id = s.id"
	const leftJoin = " FROM snapshots s LEFT JOIN functions f ON f.snapshot_id = s.id AND f.flat_bytes > 10000000"
	for _, tt := range []struct {
		query   string
		refused bool
	}{
		{"SELECT COUNT(node_id)" + leftJoin, true},
		{"SELECT MAX(taken_at)" + join, true},
		{"SELECT node_id, COUNT(*)" + join + " GROUP BY s.node_id", true},
		{"SELECT COUNT(*)" + leftJoin + " WHERE node_id = 10002", true},
		{"SELECT s.id" + leftJoin + " GROUP BY node_id, s.id ORDER BY 1", true},
		{"SELECT COUNT(*)" + join + " HAVING MAX(node_id) > 0", true},
		{"SELECT s.node_id AS n" + join + " ORDER BY node_id", true},
		{"SELECT COUNT(*)" + join + " ORDER BY MAX(node_id)", true},
		{"SELECT 1 FROM snapshots s JOIN functions f ON node_id = 10001", true},
		{"SELECT name FROM functions f JOIN diffs d ON d.node_id = f.node_id AND d.name = f.name", true},
		{"SELECT s.id, (SELECT COUNT(*) FROM functions f JOIN stacks k ON k.snapshot_id = f.snapshot_id WHERE taken_at > '2026-11-20') FROM snapshots s", true},
		// Resolved: a select item's name, USING, a subquery's own table.
		{"SELECT s.node_id, COUNT(*)" + join + " GROUP BY node_id ORDER BY node_id", false},
		{"SELECT s.node_id AS node_id, MAX(f.flat_bytes)" + join + " GROUP BY s.node_id ORDER BY node_id", false},
		{"SELECT node_id, COUNT(*) FROM snapshots s JOIN functions f USING (node_id) GROUP BY node_id ORDER BY node_id", false},
		{"SELECT s.id, (SELECT MAX(node_id) FROM functions)" + join + " ORDER BY s.id, f.name LIMIT 3", false},
		{"SELECT s.id FROM snapshots s WHERE EXISTS (SELECT 1 FROM functions f WHERE f.snapshot_id = s.id AND flat_bytes > 10000000) ORDER BY s.id", false},
		{"SELECT name, SUM(flat_bytes) FROM functions f JOIN stacks k ON k.snapshot_id = f.snapshot_id GROUP BY name ORDER BY name", false},
	} {
		t.Run(tt.query, func(t *testing.T) {
			if tt.refused {
				matchState(t, ctx, e, s, r, tt.query)
				return
			}
			matchMariaDB(t, ctx, e, s, r, tt.query, false, true)
		})
	}
}

// A prepared statement (the binary protocol's COM_STMT_PREPARE, and
// PREPARE ... FROM) is refused the same way.
func TestAmbiguousColumnPrepared(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	const q = "SELECT COUNT(node_id) FROM snapshots s LEFT JOIN functions f ON f.snapshot_id = s.id WHERE s.total_bytes > ?"
	_, err := e.Prepare(ctx, s, q)
	var ge *Error
	if !errors.As(err, &ge) || ge.Code != 1052 || ge.State != "23000" || ge.Message != "Column 'node_id' in SELECT is ambiguous" {
		t.Fatalf("Prepare: %v, want ERROR 1052 (23000) Column 'node_id' in SELECT is ambiguous", err)
	}
	_, err = e.Query(ctx, s, "PREPARE st FROM 'SELECT MAX(taken_at) FROM snapshots s JOIN functions f ON f.snapshot_id = s.id'")
	if !errors.As(err, &ge) || ge.Code != 1052 {
		t.Fatalf("PREPARE ... FROM: %v, want ERROR 1052", err)
	}
}
