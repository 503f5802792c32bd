package sqlview

import (
	"fmt"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Functions nested in one another.
//
// Three of go-mysql-server v0.20.0's expressions ask a child the same
// question twice: IFNULL's and NULLIF's Type ask types.IsNull(child),
// which is child.Type(), and then child.Type() again
// (expression/function/ifnull.go, nullif.go); unary minus asks its
// child's type twice (expression/arithmetic.go, UnaryMinus.Type); NULLIF's
// Eval also evaluates its first argument twice. Nested in one another,
// every level doubles the work: IFNULL(IFNULL(...)) 25 deep took 5.6 s to
// plan, 50 deep never finished, and planning, which no KILL, timeout or
// hang-up reaches, kept both cores busy after the client had gone. The
// planner (and heapprof's own rules, which look for these types) builds
// them as they are, so they are bounded instead: at most
// maxDoublingDepth of them on any path from an expression down to its
// leaves, about 2^16 times one level's work. MariaDB 10.11 answers nested
// IFNULL and unary minus at once, and doubles per level of NULLIF itself
// (22 levels: 38 ms, 40: never).
//
// heapprof's own functions did the same and now ask each argument once:
// ROUND and TRUNCATE (decimalRound.Type), GREATEST and LEAST of decimals
// (extremum.Type), CONCAT_WS's result length (charLength). Of every
// built-in function nested 16 deep in its first argument over an
// integer, text, datetime, decimal and double column, none now takes more
// than 3 ms to plan.
const maxDoublingDepth = 16

// doublingKinds are the expressions counted against maxDoublingDepth, in
// the order an error names them.
var doublingKinds = [...]string{"IFNULL", "NULLIF", "unary minus"}

// doubling is n's bit among doublingKinds (0 for other nodes).
func doubling(n ast.SQLNode) uint8 {
	switch x := n.(type) {
	case *ast.FuncExpr:
		switch x.Name.Lowered() {
		case "ifnull":
			return 1 << 0
		case "nullif":
			return 1 << 1
		}
	case *ast.UnaryExpr:
		if x.Operator == ast.UMinusStr {
			return 1 << 2
		}
	}
	return 0
}

// checkDoublingDepth refuses a statement with more than maxDoublingDepth
// doubling expressions nested on one path.
func checkDoublingDepth(stmt ast.Statement) error {
	var found error
	// seen holds the bits of the doubling expressions above node.
	var visit func(node ast.SQLNode, depth int, seen uint8)
	visit = func(node ast.SQLNode, depth int, seen uint8) {
		_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
			if found != nil {
				return false, found
			}
			bit := doubling(n)
			if bit == 0 || n == node {
				return true, nil
			}
			if depth+1 > maxDoublingDepth {
				var names []string
				for i, k := range doublingKinds {
					if (seen|bit)&(1<<i) != 0 {
						names = append(names, k)
					}
				}
				found = errUnsupported(fmt.Sprintf("%s nested more than %d deep: go-mysql-server v0.20.0 takes twice as long "+
					"to plan each level deeper; use COALESCE(a, b, c, ...) for a chain of IFNULLs, CASE for NULLIFs, "+
					"and multiply by -1 or cancel pairs of signs", strings.Join(names, " and "), maxDoublingDepth))
				return false, found
			}
			visit(n, depth+1, seen|bit)
			return false, nil
		}, node)
	}
	visit(stmt, 0, 0)
	return found
}
