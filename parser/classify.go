// Package parser classifies the statements heapproxy sees in COM_QUERY and
// parses the ones it answers itself: ADMIN EXECUTE with its HeapProf script,
// SHOW BACKENDS / SHOW COMPUTE NODES, and the session statements the embedded
// mode answers without an upstream.
//
// Classification is on every query's path, so it first looks at the leading
// keywords with a small lexer that does not allocate; only statements that
// may be answered locally are handed to the TiDB parser.
package parser

import (
	"errors"
	"strconv"
	"sync"

	tidb "github.com/pingcap/tidb/pkg/parser"
	// The TiDB parser needs a value-expression driver or it panics on literals.
	_ "github.com/pingcap/tidb/pkg/parser/test_driver"
)

// Kind is what heapproxy does with a statement.
type Kind int

const (
	// Forward is anything heapproxy does not answer itself.
	Forward Kind = iota
	// AdminExecute is ADMIN EXECUTE ON <target> '<script>'; see Statement.Admin.
	AdminExecute
	// ShowBackends is SHOW BACKENDS.
	ShowBackends
	// ShowComputeNodes is SHOW COMPUTE NODES.
	ShowComputeNodes
	// Set is SET NAMES / SET CHARACTER SET / SET var = ...; see Statement.Set.
	Set
	// LocalSelect is a SELECT of only system variables, known functions and
	// literals with no FROM; see Statement.Select.
	LocalSelect
	// ShowWarnings is SHOW WARNINGS (or SHOW ERRORS; see Statement.Show).
	ShowWarnings
	// ShowDatabases is SHOW DATABASES / SHOW SCHEMAS [LIKE 'pattern'].
	ShowDatabases
	// ShowVariables is SHOW [GLOBAL|SESSION] VARIABLES [LIKE 'pattern'].
	ShowVariables
	// Use is USE db; see Statement.DB.
	Use
	// Begin is BEGIN [WORK] or START TRANSACTION ...
	Begin
	// Commit is COMMIT [WORK].
	Commit
	// Rollback is ROLLBACK [WORK].
	Rollback
	// Kill is KILL [CONNECTION | QUERY] <id>; see Statement.Kill.
	Kill
	// ShowFrontends is SHOW FRONTENDS.
	ShowFrontends
)

var kindNames = [...]string{
	Forward: "Forward", AdminExecute: "AdminExecute", ShowBackends: "ShowBackends",
	ShowComputeNodes: "ShowComputeNodes", Set: "Set", LocalSelect: "LocalSelect",
	ShowWarnings: "ShowWarnings", ShowDatabases: "ShowDatabases", ShowVariables: "ShowVariables",
	Use: "Use", Begin: "Begin", Commit: "Commit", Rollback: "Rollback", Kill: "Kill",
	ShowFrontends: "ShowFrontends",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Statement is a classified statement. Kind says which of the other fields is set.
type Statement struct {
	Kind Kind
	// Admin is set for AdminExecute.
	Admin *AdminExecuteStmt
	// Select is set for LocalSelect.
	Select *Select
	// Set holds the assignments of a Set statement, in order.
	Set []Assignment
	// Show is set for ShowWarnings, ShowDatabases and ShowVariables.
	Show *Show
	// DB is the database of Use.
	DB string
	// Kill is set for Kill.
	Kill *KillStmt
}

// KillStmt is KILL [CONNECTION | QUERY] id.
type KillStmt struct {
	ID uint32
	// Query is true for KILL QUERY: the statement ends, the session stays.
	Query bool
}

// The statements without parts are shared: classifying a forwarded query
// must not allocate. Callers must not modify the Statement Classify returns.
var (
	stmtForward          = &Statement{Kind: Forward}
	stmtShowBackends     = &Statement{Kind: ShowBackends}
	stmtShowComputeNodes = &Statement{Kind: ShowComputeNodes}
	stmtShowFrontends    = &Statement{Kind: ShowFrontends}
	stmtBegin            = &Statement{Kind: Begin}
	stmtCommit           = &Statement{Kind: Commit}
	stmtRollback         = &Statement{Kind: Rollback}
)

// maxLocalSelect bounds the SELECTs handed to the TiDB parser: those heapproxy
// can answer are short, and a long FROM-less SELECT (a big literal) should
// not be parsed twice on its way upstream.
const maxLocalSelect = 4096

// Classifier classifies statements, reusing TiDB parser instances (they are
// not safe for concurrent use, so each call takes one from a pool).
// The zero value is ready to use; a Classifier is safe for concurrent use.
type Classifier struct {
	pool sync.Pool
}

// NewClassifier returns a Classifier.
func NewClassifier() *Classifier { return &Classifier{} }

// Classify classifies one COM_QUERY text. It returns an *Error only for
// malformed statements of heapproxy's own grammar (ADMIN EXECUTE, SHOW
// BACKENDS, SHOW COMPUTE NODES); anything else it cannot classify is Forward,
// so the upstream answers it. The returned Statement must not be modified.
func (c *Classifier) Classify(sql string) (*Statement, error) {
	return classify(sql, c.parse)
}

// Classify is Classifier.Classify with a fresh TiDB parser for each statement
// that needs one.
func Classify(sql string) (*Statement, error) {
	return classify(sql, func(sql string) (*Statement, error) {
		node, err := parseOne(tidb.New(), sql)
		return fromTiDB(node, err, sql), nil
	})
}

// ClassifyOwn classifies a query for a session with an upstream, where
// heapproxy answers only ADMIN EXECUTE HeapProf, SHOW BACKENDS and SHOW
// COMPUTE NODES, and reads KILL (relayed, then heapproxy's own statement
// of that connection stopped): everything else is Forward from its leading
// keywords alone, without the TiDB parser (a pool's "SELECT 1" ping costs
// no parse).
func (c *Classifier) ClassifyOwn(sql string) (*Statement, error) {
	l := lexer{src: sql}
	first := l.next()
	if first.kind != tokWord || !(keyword(first.text, "ADMIN") || keyword(first.text, "SHOW") || keyword(first.text, "KILL")) {
		return stmtForward, nil
	}
	return classify(sql, func(string) (*Statement, error) { return stmtForward, nil })
}

func (c *Classifier) parse(sql string) (*Statement, error) {
	p, _ := c.pool.Get().(*tidb.Parser)
	if p == nil {
		p = tidb.New()
	}
	node, err := parseOne(p, sql)
	if !errors.Is(err, errParserPanic) {
		c.pool.Put(p)
	}
	return fromTiDB(node, err, sql), nil
}

// classify looks at the leading keywords and calls parse (the TiDB parser)
// only for statements that may be answered locally.
func classify(sql string, parse func(string) (*Statement, error)) (*Statement, error) {
	l := lexer{src: sql}
	first := l.next()
	if first.kind != tokWord {
		return stmtForward, nil
	}
	w := first.text
	switch {
	case keyword(w, "SELECT"):
		if len(sql) > maxLocalSelect || hasFrom(&l) {
			return stmtForward, nil
		}
		return parse(sql)
	case keyword(w, "ADMIN"):
		t := l.next()
		if t.kind != tokWord || !keyword(t.text, "EXECUTE") {
			return stmtForward, nil
		}
		a, err := parseAdminExecute(&l)
		if err != nil {
			return nil, err
		}
		return &Statement{Kind: AdminExecute, Admin: a}, nil
	case keyword(w, "SHOW"):
		return classifyShow(&l, sql, parse)
	case keyword(w, "SET"), keyword(w, "USE"):
		return parse(sql)
	case keyword(w, "BEGIN"):
		return simpleTxn(&l, stmtBegin), nil
	case keyword(w, "COMMIT"):
		return simpleTxn(&l, stmtCommit), nil
	case keyword(w, "ROLLBACK"):
		return simpleTxn(&l, stmtRollback), nil
	case keyword(w, "KILL"):
		return classifyKill(&l), nil
	case keyword(w, "START"):
		t := l.next()
		if t.kind == tokWord && keyword(t.text, "TRANSACTION") {
			// The characteristics (READ ONLY, WITH CONSISTENT SNAPSHOT)
			// matter only upstream, which gets the statement as written.
			return stmtBegin, nil
		}
	}
	return stmtForward, nil
}

// IsShowWarnings tells SHOW WARNINGS and SHOW ERRORS (with an optional
// LIMIT) from other statements by their keywords alone, so a session can
// answer them with warnings of its own in front of an upstream.
func IsShowWarnings(sql string) bool {
	l := lexer{src: sql}
	if t := l.next(); t.kind != tokWord || !keyword(t.text, "SHOW") {
		return false
	}
	t := l.next()
	return t.kind == tokWord && (keyword(t.text, "WARNINGS") || keyword(t.text, "ERRORS"))
}

// IsShowGrants tells SHOW GRANTS [FOR ...]: a question about the session's
// own rights, which every user may ask.
func IsShowGrants(sql string) bool {
	l := lexer{src: sql}
	if t := l.next(); t.kind != tokWord || !keyword(t.text, "SHOW") {
		return false
	}
	t := l.next()
	return t.kind == tokWord && keyword(t.text, "GRANTS")
}

// IsShowProcesslist tells SHOW [FULL] PROCESSLIST.
func IsShowProcesslist(sql string) bool {
	l := lexer{src: sql}
	if t := l.next(); t.kind != tokWord || !keyword(t.text, "SHOW") {
		return false
	}
	t := l.next()
	if t.kind == tokWord && keyword(t.text, "FULL") {
		t = l.next()
	}
	return t.kind == tokWord && keyword(t.text, "PROCESSLIST")
}

// classifyKill reads KILL [CONNECTION | QUERY] <id>; other forms (MariaDB's
// KILL USER, KILL QUERY ID, HARD/SOFT) are forwarded.
func classifyKill(l *lexer) *Statement {
	k := &KillStmt{}
	t := l.next()
	if t.kind == tokWord {
		switch {
		case keyword(t.text, "QUERY"):
			k.Query = true
		case keyword(t.text, "CONNECTION"):
		default:
			return stmtForward
		}
		t = l.next()
	}
	if t.kind != tokNumber {
		return stmtForward
	}
	id, err := strconv.ParseUint(t.text, 10, 32)
	if err != nil || expectEnd(l, "") != nil {
		return stmtForward
	}
	k.ID = uint32(id)
	return &Statement{Kind: Kill, Kill: k}
}

// hasFrom reports whether the rest of a SELECT has the keyword FROM outside
// literals and comments, which makes it a query for the upstream.
func hasFrom(l *lexer) bool {
	for {
		t := l.next()
		switch {
		case t.kind == tokEOF:
			return false
		case t.kind == tokWord && keyword(t.text, "FROM"):
			return true
		}
	}
}

// simpleTxn accepts "<keyword> [WORK] [;]" as st; other forms (AND CHAIN,
// TO SAVEPOINT, ...) are forwarded.
func simpleTxn(l *lexer, st *Statement) *Statement {
	save := l.pos
	if t := l.next(); t.kind != tokWord || !keyword(t.text, "WORK") {
		l.pos = save
	}
	if expectEnd(l, "") != nil {
		return stmtForward
	}
	return st
}

func classifyShow(l *lexer, sql string, parse func(string) (*Statement, error)) (*Statement, error) {
	t := l.next()
	if t.kind != tokWord {
		return stmtForward, nil
	}
	w := t.text
	switch {
	case keyword(w, "BACKENDS"):
		if err := expectEnd(l, "SHOW BACKENDS: expected end of statement"); err != nil {
			return nil, err
		}
		return stmtShowBackends, nil
	case keyword(w, "FRONTENDS"):
		if err := expectEnd(l, "SHOW FRONTENDS: expected end of statement"); err != nil {
			return nil, err
		}
		return stmtShowFrontends, nil
	case keyword(w, "COMPUTE"):
		t = l.next()
		if t.kind != tokWord || !keyword(t.text, "NODES") {
			return nil, errorf(t.pos, "SHOW COMPUTE NODES: expected NODES after SHOW COMPUTE, got %s", quoteFound(t.text))
		}
		if err := expectEnd(l, "SHOW COMPUTE NODES: expected end of statement"); err != nil {
			return nil, err
		}
		return stmtShowComputeNodes, nil
	case keyword(w, "WARNINGS"), keyword(w, "ERRORS"), keyword(w, "DATABASES"), keyword(w, "SCHEMAS"),
		keyword(w, "VARIABLES"), keyword(w, "GLOBAL"), keyword(w, "SESSION"), keyword(w, "LOCAL"):
		return parse(sql)
	}
	return stmtForward, nil
}
