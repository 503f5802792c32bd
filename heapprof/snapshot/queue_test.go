package snapshot

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// backgroundStore is what Dir and MySQL add to Store.
type backgroundStore interface {
	Store
	SaveBackground(ctx context.Context, s *Snapshot, prepare Prepare, done func(error)) error
	Queue() *Queue
}

// A snapshot queued with SaveBackground resolves at once (Get, Functions,
// Stacks, while Prepare has not filled its profile when SaveBackground
// returns), and List shows it once stored; both stores.
func TestSaveBackgroundVisible(t *testing.T) {
	for _, c := range []struct {
		name string
		open func(t *testing.T) backgroundStore
	}{
		{"dir", func(t *testing.T) backgroundStore {
			d, err := OpenDir(t.TempDir(), Retention{})
			if err != nil {
				t.Fatal(err)
			}
			return d
		}},
		{"mysql", func(t *testing.T) backgroundStore {
			m, err := OpenMySQL(context.Background(), mariaDSN(t, "new"), Retention{})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			st := c.open(t)
			defer st.Close()
			r := leakRows(t)
			at := time.Now().UTC().Truncate(time.Microsecond)
			want, funcs, stacks := snapFrom(r, 3, at)
			// What the capture hands over: no profile, no totals yet.
			queued := *want
			queued.Profile, queued.TotalBytes, queued.TotalObjects, queued.SamplePeriod = nil, 0, 0, 0
			gate := make(chan struct{})
			prepare := func(_ context.Context, s *Snapshot) ([]Function, []Stack, error) {
				s.Profile, s.TotalBytes, s.TotalObjects, s.SamplePeriod = want.Profile, want.TotalBytes, want.TotalObjects, want.SamplePeriod
				return funcs, stacks, nil
			}
			done := make(chan error, 1)
			// The first save is held at the gate, so the second stays
			// queued while the test looks.
			blocker, _, _ := snapFrom(r, 4, at)
			if err := st.SaveBackground(ctx, blocker, func(context.Context, *Snapshot) ([]Function, []Stack, error) {
				<-gate
				return funcs, stacks, nil
			}, nil); err != nil {
				t.Fatal(err)
			}
			for range st.Queue().Limit() - 2 { // fill the queue but one place
				s, _, _ := snapFrom(r, 5, time.Now().UTC())
				if err := st.SaveBackground(ctx, s, func(context.Context, *Snapshot) ([]Function, []Stack, error) {
					<-gate
					return funcs, stacks, nil
				}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.SaveBackground(ctx, &queued, prepare, func(err error) { done <- err }); err != nil {
				t.Fatal(err)
			}
			// Queued: resolvable, not listed. Get waits for Prepare (run
			// by a worker) before it answers.
			list, err := st.List(ctx, Filter{NodeID: &want.NodeID})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 0 {
				t.Errorf("List shows %d snapshots before any is stored", len(list))
			}
			full, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			// Every place taken: one more waits, here until its ctx ends.
			extra, _, _ := snapFrom(r, 6, at)
			if err := st.SaveBackground(full, extra, nil, nil); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("SaveBackground into a full queue: %v, want it to wait until ctx ended", err)
			}
			close(gate)
			checkSnapshot(t, st, want, funcs, stacks) // from the queue or the store
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			list, err = st.List(ctx, Filter{NodeID: &want.NodeID})
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 1 || list[0].ID != want.ID {
				t.Errorf("List after the save: %v", list)
			}
			checkSnapshot(t, st, want, funcs, stacks) // from the store
		})
	}
}

// Queue contracts on a save function the test controls.
func TestQueue(t *testing.T) {
	r := leakRows(t)
	for _, c := range []struct {
		name string
		run  func(t *testing.T, q *Queue, release chan struct{}, saved func() []string)
	}{
		{"close flushes every queued save", func(t *testing.T, q *Queue, release chan struct{}, saved func() []string) {
			var ids []string
			for i := range q.Limit() {
				s, _, _ := snapFrom(r, int64(i), time.Now().UTC())
				if err := q.Enqueue(context.Background(), s, nil, nil); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, s.ID)
			}
			go close(release)
			q.Close()
			if !sameSet(saved(), ids) {
				t.Errorf("after Close: saved %q, queued %q", saved(), ids)
			}
			s, _, _ := snapFrom(r, 1, time.Now().UTC())
			if err := q.Enqueue(context.Background(), s, nil, nil); err == nil || !strings.Contains(err.Error(), "store closed") {
				t.Errorf("Enqueue after Close: %v", err)
			}
		}},
		{"a failed prepare is the save's error and the lookup's", func(t *testing.T, q *Queue, release chan struct{}, saved func() []string) {
			close(release)
			s, _, _ := snapFrom(r, 1, time.Now().UTC())
			done := make(chan error, 1)
			boom := errors.New("boom")
			if err := q.Enqueue(context.Background(), s, func(context.Context, *Snapshot) ([]Function, []Stack, error) {
				return nil, nil, boom
			}, func(err error) { done <- err }); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := q.Lookup(context.Background(), s.ID); ok && !errors.Is(err, boom) {
				t.Errorf("Lookup of a failed snapshot: %v", err)
			}
			if err := <-done; !errors.Is(err, boom) {
				t.Errorf("done: %v", err)
			}
			q.Close()
			if len(saved()) != 0 {
				t.Errorf("saved %q", saved())
			}
		}},
		{"a duplicate id is refused", func(t *testing.T, q *Queue, release chan struct{}, saved func() []string) {
			s, _, _ := snapFrom(r, 1, time.Now().UTC())
			if err := q.Enqueue(context.Background(), s, nil, nil); err != nil {
				t.Fatal(err)
			}
			if err := q.Enqueue(context.Background(), s, nil, nil); err == nil || !strings.Contains(err.Error(), "already queued") {
				t.Errorf("second Enqueue: %v", err)
			}
			close(release)
			q.Close()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var mu sync.Mutex
			var saved []string
			q := NewQueue(func(_ context.Context, s *Snapshot, _ []Function, _ []Stack) error {
				<-release
				mu.Lock()
				saved = append(saved, s.ID)
				mu.Unlock()
				return nil
			}, 2, 4)
			c.run(t, q, release, func() []string {
				mu.Lock()
				defer mu.Unlock()
				return append([]string(nil), saved...)
			})
		})
	}
}
