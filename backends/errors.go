package backends

import (
	"errors"
	"fmt"
	"strconv"
)

// UnsupportedError says that a kind of node cannot do an operation, and why,
// in words a user can act on.
type UnsupportedError struct {
	Kind   Kind
	Op     string
	Reason string
}

func (e *UnsupportedError) Error() string {
	var what string
	switch e.Op {
	case OpEnable:
		what = "enable heap profiling"
	case OpDisable:
		what = "disable heap profiling"
	case OpStatus:
		what = "report whether heap profiling is on"
	case OpDump:
		what = "send its heap profile"
	case OpSymbolize:
		what = "name addresses"
	default:
		what = e.Op
	}
	return fmt.Sprintf("%s node cannot %s: %s", e.Kind, what, e.Reason)
}

// NodeError is a failed call to a node: it names the node, its address, the
// operation and the cause.
type NodeError struct {
	Node Node
	Op   string
	Err  error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("node %d (%s at %s): %s: %v", e.Node.ID, e.Node.Kind, e.Node.Addr(), e.Op, e.Err)
}

func (e *NodeError) Unwrap() error { return e.Err }

// NodeNotFoundError is an id no registered or discovered node has. Its
// message is StarRocks 3.x's.
type NodeNotFoundError struct {
	ID int64
	// DiscoverErr is why discovery on the miss failed, if it did.
	DiscoverErr error
}

func (e *NodeNotFoundError) Error() string {
	return "node not found: " + strconv.FormatInt(e.ID, 10)
}

func (e *NodeNotFoundError) Unwrap() error { return e.DiscoverErr }

// ForwardToFE reports whether err is a StarRocks BE/CN's missing HTTP switch
// for prof.active: on StarRocks 3.1.6+ the upstream FE's own ADMIN EXECUTE
// does that operation, so a proxy in front of a StarRocks FE can forward the
// statement instead of failing.
func ForwardToFE(err error) bool {
	var u *UnsupportedError
	if !errors.As(err, &u) || u.Kind != StarRocks {
		return false
	}
	return u.Op == OpEnable || u.Op == OpDisable || u.Op == OpStatus
}
