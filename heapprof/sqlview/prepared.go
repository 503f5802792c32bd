package sqlview

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Prepared is a statement parsed once and run many times with values for
// its ? markers: what the binary protocol's COM_STMT_PREPARE makes. It
// belongs to the Session that prepared it.
type Prepared struct {
	query string        // as the engine's statement cache keys it
	stmt  ast.Statement // parsed once; each execution plans it with its values
	// Params is the number of ? markers.
	Params int
	// Columns are the result's columns as far as they are known before
	// the values are (nil for statements that answer OK).
	Columns []Column
	// What parsing noted that Execute's plan does not show.
	notes parseNotes
}

// Decimal is an exact number in decimal text, as the binary protocol sends
// DECIMAL values; Execute binds it as a number, not a string.
type Decimal string

// Prepare parses query and plans it without values, as MySQL does at
// COM_STMT_PREPARE: syntax errors, unknown tables and columns and writes
// fail here.
func (e *Engine) Prepare(ctx context.Context, s *Session, query string) (_ *Prepared, err error) {
	if s == nil {
		return nil, errors.New("sqlview: nil Session")
	}
	sctx, b := e.newContext(ctx, s, query)
	defer b.release() // planning only: nothing stays charged
	defer e.recoverPanic(sctx, b, &err)
	stmt, err := e.parse(sctx, s, query)
	if errors.Is(err, ast.ErrEmpty) {
		return nil, &Error{Code: mysql.EREmptyQuery, State: mysql.SSClientError, Message: "Query was empty"}
	}
	if err != nil {
		return nil, err
	}
	// The parser names the n-th ? marker :vn; a rewrite may copy one
	// (WITH ROLLUP's levels), which binds the same value.
	markers := map[string]bool{}
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		if v, ok := node.(*ast.SQLVal); ok && v.Type == ast.ValArg && strings.HasPrefix(string(v.Val), ":v") {
			markers[string(v.Val)] = true
		}
		return true, nil
	}, stmt)
	params := len(markers)
	// The engine caches the parsed statement under the session and the
	// query text as QueryWithBindings trims it; Execute finds it there,
	// ClosePrepared and CloseSession drop it.
	key := sql.RemoveSpaceAndDelimiter(query, ';')
	node, err := e.gms.PrepareParsedQuery(sctx, key, key, stmt)
	if err != nil {
		return nil, toError(err)
	}
	if s.prepared == nil {
		s.prepared = make(map[string]int)
	}
	s.prepared[key]++
	p := &Prepared{query: key, stmt: stmt, Params: params}
	if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok {
		p.notes = m.parseNotes
	}
	if schema := node.Schema(); len(schema) > 0 && !types.IsOkResultSchema(schema) {
		// Prepare binds without the analyzer: the columns come from the
		// same type rules Execute's plan gets (SUM/AVG as DECIMAL).
		if p.Columns, err = e.preparedColumns(sctx, node); err != nil {
			return nil, toError(err)
		}
	}
	return p, nil
}

// Execute runs p with args for its ? markers, in order. An arg is nil
// (NULL), int64, uint64, float64, Decimal, string or []byte.
func (e *Engine) Execute(ctx context.Context, s *Session, p *Prepared, args []any) (_ *Result, err error) {
	if len(args) != p.Params {
		return nil, &Error{Code: mysql.ERWrongArguments, State: mysql.SSUnknownSQLState,
			Message: fmt.Sprintf("Incorrect arguments to EXECUTE: the statement has %d ? markers, %d values were sent", p.Params, len(args))}
	}
	bindings := make(map[string]ast.Expr, len(args))
	for i, a := range args {
		expr, err := argExpr(a)
		if err != nil {
			return nil, &Error{Code: mysql.ERWrongArguments, State: mysql.SSUnknownSQLState,
				Message: fmt.Sprintf("Incorrect arguments to EXECUTE: value %d: %v", i+1, err)}
		}
		bindings["v"+strconv.Itoa(i+1)] = expr
	}
	sctx, b := e.newContext(ctx, s, p.query)
	defer e.recoverPanic(sctx, b, &err)
	if m, ok := sctx.Value(metaKey{}).(*stmtMeta); ok {
		m.parseNotes = p.notes
	}
	return e.run(sctx, b, p.query, p.stmt, bindings)
}

// argExpr is the literal a binds as.
func argExpr(a any) (ast.Expr, error) {
	switch v := a.(type) {
	case nil:
		return &ast.NullVal{}, nil
	case int64:
		return ast.NewIntVal(strconv.AppendInt(nil, v, 10)), nil
	case uint64:
		return ast.NewIntVal(strconv.AppendUint(nil, v, 10)), nil
	case float64:
		// In exponent form, so it reads back as a DOUBLE, not a DECIMAL.
		return ast.NewFloatVal(strconv.AppendFloat(nil, v, 'e', -1, 64)), nil
	case Decimal:
		return ast.NewFloatVal([]byte(v)), nil
	case string:
		return ast.NewStrVal([]byte(v)), nil
	case []byte:
		return ast.NewStrVal(v), nil
	}
	return nil, fmt.Errorf("unsupported type %T", a)
}

// ClosePrepared forgets p (COM_STMT_CLOSE); statements of s prepared
// from the same text stay.
func (e *Engine) ClosePrepared(s *Session, p *Prepared) {
	if s.prepared[p.query]--; s.prepared[p.query] <= 0 {
		delete(s.prepared, p.query)
		e.gms.PreparedDataCache.UncacheStmt(s.base.ID(), p.query)
	}
}

// CloseSession forgets everything s prepared; call it when its connection
// ends.
func (e *Engine) CloseSession(s *Session) {
	s.prepared = nil
	e.gms.CloseSession(s.base.ID())
}

// preparedText puts in p the text its PREPARE plans, before the guard reads
// it: for PREPARE s FROM @v the variable's text as it is now (MySQL reads
// the variable at PREPARE), and assignments inside expressions as the
// engine reads them (assign.go).
func preparedText(sctx *sql.Context, p *ast.Prepare) {
	if name, ok := strings.CutPrefix(p.Expr, "@"); ok {
		if _, v, err := sctx.GetUserVariable(sctx, strings.Trim(name, "`")); err == nil {
			switch t := v.(type) {
			case string:
				p.Expr = t
			case []byte:
				p.Expr = string(t)
			}
		}
	}
	if _, err := ast.Parse(p.Expr); err != nil {
		if rewritten, ok := rewriteAssignments(p.Expr); ok {
			p.Expr = rewritten
		}
	}
}

// plannablePrepared is plannable for the text p prepares, which is planned
// at PREPARE; a text whose UNION chains were lined up is written back.
func (e *Engine) plannablePrepared(sctx *sql.Context, p *ast.Prepare) error {
	if strings.HasPrefix(p.Expr, "@") {
		return nil // not a string: go-mysql-server's error
	}
	inner, err := ast.Parse(p.Expr)
	if err != nil {
		return nil // go-mysql-server reports the syntax error
	}
	changed, err := e.plannable(sctx, inner)
	if changed && err == nil {
		p.Expr = ast.String(inner)
	}
	return err
}
