// Package sqlview serves the heapprof schema (snapshots, functions, stacks,
// diffs) to MySQL clients and BI tools through github.com/dolthub/go-mysql-server.
//
// The tables hold no rows of their own: every scan reads the Source again, so
// the schema always shows what the snapshot store holds now and costs no
// memory between queries. The rows are the store's own types
// (snapshot.Snapshot, snapshot.Function, snapshot.Stack): a snapshot.Store is
// a Source as it is.
package sqlview

import (
	"context"
	"errors"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// Source is what the schema reads: the methods of snapshot.Store it uses,
// so the server passes its store and tests pass fixed rows.
//
// Implementations must be safe for concurrent use: several connections query
// at once.
type Source interface {
	// List lists the stored snapshots. The schema asks for all of them
	// (the zero Filter) and orders them itself.
	List(ctx context.Context, f snapshot.Filter) ([]snapshot.Snapshot, error)
	// Functions returns the per-function totals of one snapshot. An id the
	// store no longer holds (retention dropped it between the listing and
	// this call) is a *snapshot.ErrNotFound, which the schema shows as no
	// rows.
	Functions(ctx context.Context, snapshotID string) ([]snapshot.Function, error)
	// Stacks returns the sampled stacks of one snapshot, with the same rule
	// for vanished ids as Functions.
	Stacks(ctx context.Context, snapshotID string) ([]snapshot.Stack, error)
}

var _ Source = snapshot.Store(nil)

// gone reports whether err says the snapshot is no longer stored: a
// statement lists the snapshots once, and retention may drop one before
// its rows are read.
func gone(err error) bool {
	var nf *snapshot.ErrNotFound
	return errors.As(err, &nf)
}
