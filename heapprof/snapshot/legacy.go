package snapshot

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory keeps the newest snapshots in memory, at most PerNode per node.
//
// Deprecated: the placeholder server/admin.go still uses; it is replaced by
// the Store-implementing memory store.
type Memory struct {
	PerNode int

	mu    sync.Mutex
	byID  map[string]*Snapshot
	order map[int64][]string // per node, oldest first
}

// NewMemory returns an empty in-memory store keeping perNode snapshots per node.
func NewMemory(perNode int) *Memory {
	return &Memory{PerNode: perNode, byID: map[string]*Snapshot{}, order: map[int64][]string{}}
}

// Save stores s, dropping the node's oldest snapshot beyond PerNode.
func (m *Memory) Save(_ context.Context, s *Snapshot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.byID[s.ID]; dup {
		return fmt.Errorf("snapshot %s already exists", s.ID)
	}
	m.byID[s.ID] = s
	ids := append(m.order[s.NodeID], s.ID)
	for m.PerNode > 0 && len(ids) > m.PerNode {
		delete(m.byID, ids[0])
		ids = ids[1:]
	}
	m.order[s.NodeID] = ids
	return nil
}

// Get returns the snapshot with the id.
func (m *Memory) Get(_ context.Context, id string) (*Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.byID[id]
	if !ok {
		return nil, &ErrNotFound{ID: id}
	}
	return s, nil
}

// List returns a node's snapshots, oldest first.
func (m *Memory) List(_ context.Context, nodeID int64) ([]*Snapshot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*Snapshot, 0, len(m.order[nodeID]))
	for _, id := range m.order[nodeID] {
		out = append(out, m.byID[id])
	}
	slices.SortStableFunc(out, func(a, b *Snapshot) int { return a.TakenAt.Compare(b.TakenAt) })
	return out, nil
}
