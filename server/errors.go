package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/sqlview"
)

// errorPacket is the one mapping from the errors of heapproxy's own work to
// MySQL error packets; fallback is the code of an error none of these
// rules names (its SQLSTATE is HY000):
//   - *mysql.MyError: sent as it is;
//   - *sqlview.Error (the heapprof SQL engine): its code and SQLSTATE;
//   - *backends.UnsupportedError (an operation a kind of node cannot do):
//     1235 (42000), saying why;
//   - anything else: fallback, with the error's text.
//
// A statement stopped from outside (KILL, the client gone, the shutdown, its
// timeout) is told by its context: see interrupted.
func errorPacket(err error, fallback uint16) *mysql.MyError {
	var me *mysql.MyError
	var se *sqlview.Error
	var unsupported *backends.UnsupportedError
	switch {
	case errors.As(err, &me):
		return me
	case errors.As(err, &se):
		return &mysql.MyError{Code: se.Code, State: se.State, Message: se.Message}
	case errors.As(err, &unsupported):
		return mysql.NewError(mysql.ER_NOT_SUPPORTED_YET, err.Error())
	}
	return &mysql.MyError{Code: fallback, State: "HY000", Message: err.Error()}
}

// adminError is a HeapProf failure as StarRocks' FE sends it: every user
// error 1064 (HY000), except what a kind of node cannot do (1235).
func adminError(err error) *mysql.MyError { return errorPacket(err, mysql.ER_PARSE_ERROR) }

// sqlError carries the engine's MySQL code and SQLSTATE to the client.
func sqlError(err error) *mysql.MyError { return errorPacket(err, mysql.ER_UNKNOWN_ERROR) }

// statementError is the packet for a statement that failed: MySQL's
// interruption errors when ctx was stopped, else the engine's own.
func statementError(ctx context.Context, err error) *mysql.MyError {
	if e := interrupted(ctx); e != nil {
		return e
	}
	return sqlError(err)
}

// interrupted is the error MySQL sends for a statement stopped before it
// finished, or nil when ctx was not stopped.
func interrupted(ctx context.Context) *mysql.MyError {
	if ctx.Err() == nil {
		return nil
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errKilled), errors.Is(cause, errClientGone), errors.Is(cause, errShutdown):
		return &mysql.MyError{Code: mysql.ER_QUERY_INTERRUPTED, State: "70100",
			Message: fmt.Sprintf("Query execution was interrupted: %v", cause)}
	case errors.Is(cause, context.DeadlineExceeded):
		return &mysql.MyError{Code: 3024, State: "HY000",
			Message: "Query execution was interrupted, maximum statement execution time exceeded (heapproxy's timeouts.admin)"}
	}
	return nil
}

// upstreamUnavailable is a login that could not reach the upstream.
func upstreamUnavailable(addr string, err error) *mysql.MyError {
	return &mysql.MyError{Code: mysql.ER_UNKNOWN_ERROR, State: "08S01",
		Message: fmt.Sprintf("heapproxy cannot reach upstream %s: %v", addr, err)}
}
