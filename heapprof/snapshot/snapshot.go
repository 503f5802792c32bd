// Package snapshot keeps the heap profiles heapproxy takes from nodes so
// they can be rendered again (to_dot_format), listed, compared and queried
// by BI tools.
//
// A snapshot is stored with two kinds of rows derived from its symbolized
// profile (see Summarize): one Function row per function (flat and
// cumulative bytes and objects) and one Stack row per distinct call stack.
// Three stores implement Store: Memory (tests), Dir (the
// embedded default: one directory per snapshot, crash safe) and MySQL (any
// MySQL-compatible database shared by several proxies).
package snapshot

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
)

// Snapshot is one dump of one node.
type Snapshot struct {
	// ID names the snapshot; snapshot() prints it and to_dot_format takes it.
	ID       string
	NodeID   int64
	NodeKind string
	NodeAddr string
	TakenAt  time.Time
	// Format is the raw dump's encoding ("jemalloc", "pprof", "dot", ...).
	Format string
	// Raw is the dump as the node sent it.
	Raw []byte
	// Profile is the symbolized profile as gzipped pprof protobuf (opens
	// in `go tool pprof` without the node's binary); empty when the dump
	// could not be parsed (a DOT answer, for instance).
	Profile []byte
	// TotalBytes and TotalObjects are the profile's in-use totals
	// (Summarize), SamplePeriod its sampling period in bytes.
	TotalBytes   int64
	TotalObjects int64
	SamplePeriod int64
}

// FormatDOT is the Format of a snapshot whose node sent only a graph it
// rendered itself (newer Doris BEs): it is listed, but has no Profile and
// no rows. It is the name backends.FormatDOT prints; the store does not
// import backends (imports point down).
const FormatDOT = "dot"

// Function is one function of one snapshot: what it allocated itself (flat:
// it was the innermost frame after the allocator's own frames) and what it
// and its callees allocated (cum: it was anywhere on the stack, counted once
// per stack).
type Function struct {
	SnapshotID string `json:"snapshot_id,omitempty"`
	// Name is the symbolizer's full name (Function.Name in the profile);
	// ShortName is jeprof's ShortFunctionName of it, the node label of the
	// DOT graph and the name jeprof --text prints.
	Name        string `json:"name"`
	ShortName   string `json:"short_name"`
	FlatBytes   int64  `json:"flat_bytes"`
	FlatObjects int64  `json:"flat_objects"`
	CumBytes    int64  `json:"cum_bytes"`
	CumObjects  int64  `json:"cum_objects"`
	// FlatPercent and CumPercent are percentages of the snapshot's
	// TotalBytes.
	FlatPercent float64 `json:"flat_percent"`
	CumPercent  float64 `json:"cum_percent"`
}

// Stack is one distinct call stack of one snapshot.
type Stack struct {
	SnapshotID string `json:"snapshot_id,omitempty"`
	// StackID is a hash of Frames, so the same stack has the same id in
	// every snapshot (BI tools join on it to see a stack grow).
	StackID int64 `json:"stack_id"`
	// Frames are the functions' short names (jeprof's ShortFunctionName,
	// as the DOT graph shows them), root first, joined by ";" (the folded
	// form flame graph tools and jeprof --collapsed use). Full
	// C++ names made stack rows five times larger, and the functions rows
	// keep them.
	Frames  string `json:"frames"`
	Depth   int    `json:"depth"`
	Bytes   int64  `json:"bytes"`
	Objects int64  `json:"objects"`
}

// Totals are a profile's in-use totals.
type Totals struct {
	Bytes   int64
	Objects int64
}

// Store keeps snapshots and their rows. Implementations are safe for
// concurrent use.
type Store interface {
	// Save stores s with its rows atomically: afterwards either all of it
	// is stored or nothing is. The rows' SnapshotID is set to s.ID. Then
	// the store's Retention is applied; a failure there is returned as a
	// *RetentionError (the snapshot itself was saved).
	Save(ctx context.Context, s *Snapshot, funcs []Function, stacks []Stack) error
	// Get returns the snapshot with Raw and Profile, or *ErrNotFound.
	Get(ctx context.Context, id string) (*Snapshot, error)
	// List returns the snapshots matching f without Raw and Profile,
	// newest first (ties by id).
	List(ctx context.Context, f Filter) ([]Snapshot, error)
	// Functions returns the snapshot's function rows, largest flat first.
	Functions(ctx context.Context, id string) ([]Function, error)
	// Stacks returns the snapshot's stack rows, largest first.
	Stacks(ctx context.Context, id string) ([]Stack, error)
	Close() error
}

// Filter selects snapshots for List. The zero value selects all.
type Filter struct {
	// NodeID, when set, selects one node's snapshots.
	NodeID *int64
	// Since and Until bound TakenAt: Since <= TakenAt < Until; a zero
	// time leaves that side open.
	Since, Until time.Time
	// Limit caps the number returned (the newest); 0 means no cap.
	Limit int
}

func (f Filter) match(s *Snapshot) bool {
	if f.NodeID != nil && s.NodeID != *f.NodeID {
		return false
	}
	if !f.Since.IsZero() && s.TakenAt.Before(f.Since) {
		return false
	}
	if !f.Until.IsZero() && !s.TakenAt.Before(f.Until) {
		return false
	}
	return true
}

// Retention says which snapshots a store keeps; it is applied after each
// Save. Zero fields keep everything.
type Retention struct {
	// PerNode keeps each node's newest PerNode snapshots.
	PerNode int
	// MaxAge drops snapshots taken longer ago than MaxAge.
	MaxAge time.Duration
}

// expired returns the ids r drops from metas (any mix of nodes: PerNode
// counts per node), with now as the reference time for MaxAge. It sorts
// metas.
func (r Retention) expired(metas []Snapshot, now time.Time) []string {
	sortNewestFirst(metas)
	perNode := map[int64]int{}
	var out []string
	for _, m := range metas {
		perNode[m.NodeID]++
		switch {
		case r.PerNode > 0 && perNode[m.NodeID] > r.PerNode:
			out = append(out, m.ID)
		case r.MaxAge > 0 && m.TakenAt.Before(now.Add(-r.MaxAge)):
			out = append(out, m.ID)
		}
	}
	return out
}

// RetentionError reports that a snapshot was saved but dropping old
// snapshots failed; the next Save tries again.
type RetentionError struct {
	ID  string
	Err error
}

func (e *RetentionError) Error() string {
	return fmt.Sprintf("snapshot %s saved, but applying retention failed: %v", e.ID, e.Err)
}

func (e *RetentionError) Unwrap() error { return e.Err }

// ErrNotFound is returned for an unknown snapshot id.
type ErrNotFound struct{ ID string }

func (e *ErrNotFound) Error() string { return fmt.Sprintf("snapshot not found: %s", e.ID) }

// NewID names a snapshot like the file a StarRocks BE writes
// (heap_profile.<pid>.<rand>), with the node id and the time instead of the
// pid, and a random tail so two proxies dumping one node in the same
// instant still get distinct ids. Ids of one node sort by time.
func NewID(nodeID int64, at time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24+)
	return "heap_profile." + strconv.FormatInt(nodeID, 10) + "." +
		at.UTC().Format("20060102T150405.000000000Z") + "." + hex.EncodeToString(r[:])
}

// maxIDLen bounds ids: they are directory names and primary keys.
const maxIDLen = 190

// checkID accepts the ids NewID makes and others of the same alphabet; an
// id is a directory name in Dir, so it must not be able to walk elsewhere.
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen || id[0] == '.' {
		return fmt.Errorf("invalid snapshot id %q: 1 to %d characters, not starting with '.'", id, maxIDLen)
	}
	for _, c := range []byte(id) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("invalid snapshot id %q: only letters, digits, '.', '_' and '-'", id)
		}
	}
	return nil
}

// Attach fills s.Profile, the totals and the sample period from the
// symbolized profile p and returns the rows to Save with it.
func (s *Snapshot) Attach(p *profile.Profile) ([]Function, []Stack, error) {
	var buf bytes.Buffer
	if err := heapprof.WriteProto(&buf, p); err != nil {
		return nil, nil, fmt.Errorf("snapshot %s: %w", s.ID, err)
	}
	tot, funcs, stacks := Summarize(p)
	s.Profile = buf.Bytes()
	s.TotalBytes, s.TotalObjects, s.SamplePeriod = tot.Bytes, tot.Objects, p.Period
	return funcs, stacks, nil
}

// meta is s without its blobs, as List returns it.
func meta(s *Snapshot) Snapshot {
	m := *s
	m.Raw, m.Profile = nil, nil
	return m
}

// rowsFor copies the rows, stamped with the snapshot id, so a store never
// shares memory with its caller.
func rowsFor(id string, funcs []Function, stacks []Stack) ([]Function, []Stack) {
	f := slices.Clone(funcs)
	for i := range f {
		f[i].SnapshotID = id
	}
	st := slices.Clone(stacks)
	for i := range st {
		st[i].SnapshotID = id
	}
	return f, st
}

func checkSave(s *Snapshot) error {
	if s == nil {
		return errors.New("save snapshot: nil")
	}
	if err := checkID(s.ID); err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	if s.TakenAt.IsZero() {
		return fmt.Errorf("save snapshot %s: TakenAt is zero", s.ID)
	}
	return nil
}

func sortNewestFirst(s []Snapshot) {
	slices.SortFunc(s, func(a, b Snapshot) int {
		if c := b.TakenAt.Compare(a.TakenAt); c != 0 {
			return c
		}
		if a.ID > b.ID {
			return -1
		} else if a.ID < b.ID {
			return 1
		}
		return 0
	})
}

// sortFunctions orders rows largest flat first, then largest cum, then
// by name, so every store returns the same order.
func sortFunctions(f []Function) {
	slices.SortFunc(f, func(a, b Function) int {
		switch {
		case a.FlatBytes != b.FlatBytes:
			return cmpDesc(a.FlatBytes, b.FlatBytes)
		case a.CumBytes != b.CumBytes:
			return cmpDesc(a.CumBytes, b.CumBytes)
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
}

func sortStacks(s []Stack) {
	slices.SortFunc(s, func(a, b Stack) int {
		switch {
		case a.Bytes != b.Bytes:
			return cmpDesc(a.Bytes, b.Bytes)
		case a.Frames < b.Frames:
			return -1
		case a.Frames > b.Frames:
			return 1
		}
		return 0
	})
}

func cmpDesc(a, b int64) int {
	if a > b {
		return -1
	}
	return 1
}
