package snapshot

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory keeps snapshots in memory, for tests. It implements Store and is safe for concurrent use.
type Memory struct {
	retention Retention
	now       func() time.Time

	mu    sync.Mutex
	snaps map[string]*memEntry
}

type memEntry struct {
	snap   Snapshot
	funcs  []Function
	stacks []Stack
}

var _ Store = (*Memory)(nil)

// NewMemory returns an empty in-memory store applying r after each Save
// (Retention{PerNode: 16} keeps what the placeholder NewMemory(16) kept).
func NewMemory(r Retention) *Memory {
	return &Memory{retention: r, now: time.Now, snaps: map[string]*memEntry{}}
}

// Save implements Store.
func (m *Memory) Save(_ context.Context, s *Snapshot, funcs []Function, stacks []Stack) error {
	if err := checkSave(s); err != nil {
		return err
	}
	e := &memEntry{snap: *s}
	e.snap.Raw, e.snap.Profile = slices.Clone(s.Raw), slices.Clone(s.Profile)
	e.funcs, e.stacks = rowsFor(s.ID, funcs, stacks)
	sortFunctions(e.funcs)
	sortStacks(e.stacks)

	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.snaps[s.ID]; dup {
		return fmt.Errorf("save snapshot %s: already exists", s.ID)
	}
	m.snaps[s.ID] = e
	metas := make([]Snapshot, 0, len(m.snaps))
	for _, e := range m.snaps {
		metas = append(metas, meta(&e.snap))
	}
	for _, id := range m.retention.expired(metas, m.now()) {
		delete(m.snaps, id)
	}
	return nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, id string) (*Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.snaps[id]
	if !ok {
		return nil, &ErrNotFound{ID: id}
	}
	s := e.snap
	s.Raw, s.Profile = slices.Clone(s.Raw), slices.Clone(s.Profile)
	return &s, nil
}

// List implements Store.
func (m *Memory) List(_ context.Context, f Filter) ([]Snapshot, error) {
	m.mu.Lock()
	out := []Snapshot{}
	for _, e := range m.snaps {
		if f.match(&e.snap) {
			out = append(out, meta(&e.snap))
		}
	}
	m.mu.Unlock()
	sortNewestFirst(out)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// Functions implements Store.
func (m *Memory) Functions(_ context.Context, id string) ([]Function, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.snaps[id]
	if !ok {
		return nil, &ErrNotFound{ID: id}
	}
	return slices.Clone(e.funcs), nil
}

// Stacks implements Store.
func (m *Memory) Stacks(_ context.Context, id string) ([]Stack, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.snaps[id]
	if !ok {
		return nil, &ErrNotFound{ID: id}
	}
	return slices.Clone(e.stacks), nil
}

// Close implements Store; there is nothing to release.
func (m *Memory) Close() error { return nil }
