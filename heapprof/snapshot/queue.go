package snapshot

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
)

// SaveFunc saves a snapshot with its rows: a Store's Save.
type SaveFunc func(ctx context.Context, s *Snapshot, funcs []Function, stacks []Stack) error

// Prepare completes a queued snapshot before it is saved (snapshot.Attach:
// the protobuf, the totals) and returns its rows. It runs on the queue's
// worker, with the queue's context.
type Prepare func(ctx context.Context, s *Snapshot) ([]Function, []Stack, error)

// Queue saves snapshots in the background, so that whoever took a dump can
// answer before its snapshot is written. At most Limit snapshots are queued
// or being saved; Enqueue waits for room when the queue is full (within its
// ctx). Until its save returns, a queued snapshot is found by Lookup (Dir
// and MySQL look there first in Get, Functions and Stacks), so a name handed
// out resolves at once; List shows it once it is stored. Close flushes:
// it waits until every queued snapshot is saved (or its save failed). A
// crash loses the snapshots still queued, each whole: the store's Save is
// atomic.
type Queue struct {
	save    SaveFunc
	workers int
	room    chan struct{} // a token per queued or running save
	work    chan *queued
	ctx     context.Context // the saves' context; never cancelled
	wg      sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	inflight map[string]*queued
}

type queued struct {
	snap    *Snapshot
	prepare Prepare
	done    func(error)
	ready   chan struct{} // closed when prepare has returned
	// Set before ready is closed, read-only afterwards.
	funcs  []Function
	stacks []Stack
	err    error
}

// DefaultQueueLimit is how many snapshots a store's Queue holds (queued or
// being saved) before Enqueue waits: two per CPU.
func DefaultQueueLimit() int { return 2 * runtime.NumCPU() }

// NewQueue returns a Queue saving with save on workers goroutines (at least
// one), holding at most limit snapshots (at least workers).
func NewQueue(save SaveFunc, workers, limit int) *Queue {
	workers = max(workers, 1)
	limit = max(limit, workers)
	q := &Queue{save: save, workers: workers, room: make(chan struct{}, limit),
		work: make(chan *queued, limit), ctx: context.Background(), inflight: map[string]*queued{}}
	for range workers {
		q.wg.Go(q.run)
	}
	return q
}

// Limit is how many snapshots the queue holds before Enqueue waits.
func (q *Queue) Limit() int { return cap(q.room) }

// Enqueue queues s for saving and returns once it is queued: at once while
// there is room, else when a save ends (or with ctx's error). prepare (may
// be nil) runs before the save; done (may be nil) is called with the save's
// result. The queue owns s and its blobs from now on.
func (q *Queue) Enqueue(ctx context.Context, s *Snapshot, prepare Prepare, done func(error)) error {
	if err := checkSave(s); err != nil {
		return err
	}
	select {
	case q.room <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("queue snapshot %s: all %d places of the save queue stayed busy: %w", s.ID, cap(q.room), context.Cause(ctx))
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		<-q.room
		return fmt.Errorf("queue snapshot %s: store closed", s.ID)
	}
	if _, dup := q.inflight[s.ID]; dup {
		<-q.room
		return fmt.Errorf("queue snapshot %s: already queued", s.ID)
	}
	e := &queued{snap: s, prepare: prepare, done: done, ready: make(chan struct{})}
	q.inflight[s.ID] = e
	q.work <- e // never blocks: room bounds what work holds
	return nil
}

func (q *Queue) run() {
	for e := range q.work {
		err := q.saveOne(e)
		q.mu.Lock()
		// Removed only after the save returned: by then the store has
		// it, so a lookup finds it in one place or the other.
		delete(q.inflight, e.snap.ID)
		q.mu.Unlock()
		<-q.room
		if e.done != nil {
			e.done(err)
		}
	}
}

func (q *Queue) saveOne(e *queued) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("save snapshot %s: panic: %v", e.snap.ID, r)
		}
		select {
		case <-e.ready:
		default:
			e.err = err
			close(e.ready)
		}
	}()
	if e.prepare != nil {
		funcs, stacks, err := e.prepare(q.ctx, e.snap)
		if err != nil {
			return fmt.Errorf("prepare snapshot %s: %w", e.snap.ID, err)
		}
		e.funcs, e.stacks = funcs, stacks
	}
	close(e.ready)
	return q.save(q.ctx, e.snap, e.funcs, e.stacks)
}

// lookup returns the queued snapshot id once prepared; ok is false when
// it is not queued.
func (q *Queue) lookup(ctx context.Context, id string) (e *queued, ok bool, err error) {
	q.mu.Lock()
	e, ok = q.inflight[id]
	q.mu.Unlock()
	if !ok {
		return nil, false, nil
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, true, fmt.Errorf("snapshot %s: waiting for it to be prepared: %w", id, context.Cause(ctx))
	}
	if e.err != nil {
		return nil, true, fmt.Errorf("snapshot %s: %w", id, e.err)
	}
	return e, true, nil
}

// Lookup returns a queued snapshot (with Raw and Profile, shared: read
// them only), waiting for its Prepare; ok is false when id is not queued.
func (q *Queue) Lookup(ctx context.Context, id string) (s *Snapshot, ok bool, err error) {
	e, ok, err := q.lookup(ctx, id)
	if !ok || err != nil {
		return nil, ok, err
	}
	c := *e.snap
	return &c, true, nil
}

// LookupFunctions returns a queued snapshot's function rows, largest flat
// first (Store.Functions' order).
func (q *Queue) LookupFunctions(ctx context.Context, id string) ([]Function, bool, error) {
	e, ok, err := q.lookup(ctx, id)
	if !ok || err != nil {
		return nil, ok, err
	}
	f, _ := rowsFor(id, e.funcs, nil)
	sortFunctions(f)
	return f, true, nil
}

// LookupStacks returns a queued snapshot's stack rows, largest first.
func (q *Queue) LookupStacks(ctx context.Context, id string) ([]Stack, bool, error) {
	e, ok, err := q.lookup(ctx, id)
	if !ok || err != nil {
		return nil, ok, err
	}
	_, st := rowsFor(id, nil, e.stacks)
	sortStacks(st)
	return st, true, nil
}

// Pending lists the ids queued or being saved.
func (q *Queue) Pending() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	ids := make([]string, 0, len(q.inflight))
	for id := range q.inflight {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Close refuses new snapshots and waits until every queued one is saved
// (flush). It is safe to call more than once.
func (q *Queue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.work)
	}
	q.mu.Unlock()
	q.wg.Wait()
}
