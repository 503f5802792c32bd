package sqlview

import (
	"context"
	"testing"
)

// TestIntFunctionDefinitionsMatchMariaDB: integer functions of strings,
// and MIN/MAX of integer expressions, have MariaDB's column definitions
// (ASCII was a TINYINT, INSTR 10 long, MAX(LENGTH(x)) an INT where
// MariaDB says BIGINT), alone, in arithmetic and under a UNION.
func TestIntFunctionDefinitionsMatchMariaDB(t *testing.T) {
	ctx := context.Background()
	e, s := newFixtureEngine(t)
	r := refConn(t)
	defs := newRefFields(t)
	for _, q := range []string{
		"SELECT INSTR(id, 'a'), ASCII(id), STRCMP(id, 'x'), ORD(id), LOCATE('a', id), POSITION('a' IN id), FIELD(id, 'a'), FIND_IN_SET('a', id), BIT_LENGTH(id) FROM snapshots ORDER BY id",
		"SELECT INSTR(id, 'a') + 1, ASCII(id) * 2, STRCMP(id, 'x') - 1 FROM snapshots ORDER BY id",
		"SELECT MAX(HOUR(taken_at)), MAX(node_id + 1), MAX(LENGTH(id)), MIN(YEAR(taken_at)), MAX(1), MAX(CHAR_LENGTH(id)), MAX(INSTR(id, 'a')), MAX(MONTH(taken_at)), MIN(DAY(taken_at)), MAX(WEEK(taken_at)), MAX(TO_DAYS(taken_at)), MIN(node_id) FROM snapshots",
		"SELECT ASCII(id) FROM snapshots UNION SELECT LENGTH(id) FROM snapshots ORDER BY 1",
	} {
		t.Run(q, func(t *testing.T) {
			matchMariaDB(t, ctx, e, s, r, q, false, true)
			matchDefs(t, ctx, e, s, defs, q)
		})
	}
}
