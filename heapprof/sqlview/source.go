// Package sqlview serves the heapprof schema (snapshots, functions, stacks,
// diffs) to MySQL clients and BI tools through github.com/dolthub/go-mysql-server.
//
// The tables hold no rows of their own: every scan reads the Source again, so
// the schema always shows what the snapshot store holds now and costs no
// memory between queries.
package sqlview

import (
	"context"
	"time"
)

// Source is what the schema reads. The snapshot store satisfies it through a
// small adapter; sqlview never imports the store so either can change alone.
//
// Implementations must be safe for concurrent use: several connections query
// at once.
type Source interface {
	// Snapshots lists every stored snapshot, in any order.
	Snapshots(ctx context.Context) ([]SnapshotRow, error)
	// Functions returns the per-function totals of one snapshot. An id the
	// store no longer holds (retention dropped it between the listing and
	// this call) should return no rows and no error.
	Functions(ctx context.Context, snapshotID string) ([]FunctionRow, error)
	// Stacks returns the sampled stacks of one snapshot, with the same rule
	// for vanished ids as Functions.
	Stacks(ctx context.Context, snapshotID string) ([]StackRow, error)
}

// SnapshotRow is one dump of one node: a row of heapprof.snapshots.
type SnapshotRow struct {
	ID       string
	NodeID   int64
	NodeKind string
	NodeAddr string
	TakenAt  time.Time
	// TotalBytes and TotalObjects are the profile's in-use totals after
	// jeprof's sampling adjustment.
	TotalBytes   int64
	TotalObjects int64
	// SamplePeriod is the sampling period in bytes (2^lg_prof_sample for
	// jemalloc, MemProfileRate for Go).
	SamplePeriod int64
	Format       string
}

// FunctionRow is one function of one snapshot: a row of heapprof.functions.
// Flat counts memory allocated by the function itself, cum also what its
// callees allocated; percentages are of the snapshot's total bytes.
type FunctionRow struct {
	SnapshotID  string
	Name        string
	FlatBytes   int64
	CumBytes    int64
	FlatObjects int64
	CumObjects  int64
	FlatPct     float64
	CumPct      float64
}

// StackRow is one sampled call stack of one snapshot: a row of heapprof.stacks.
type StackRow struct {
	SnapshotID string
	StackID    int64
	// Frames is the stack as the store renders it; the README documents the
	// folded form (root first, frames separated by ';').
	Frames  string
	Bytes   int64
	Objects int64
}
