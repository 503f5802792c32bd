package profiling

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/heapproxy/heapproxy/backends"
	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// gatedStore is a real Dir whose background saves wait at a gate until the
// test opens it: a store as slow as the test wants, without sleeping.
type gatedStore struct {
	*snapshot.Dir
	queue  *snapshot.Queue
	gate   chan struct{}
	mu     sync.Mutex
	saved  []string
	errs   []error
	opened sync.Once
}

func newGatedStore(t *testing.T) *gatedStore {
	t.Helper()
	d, err := snapshot.OpenDir(t.TempDir(), snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Dir: d, gate: make(chan struct{})}
	g.queue = snapshot.NewQueue(func(ctx context.Context, s *snapshot.Snapshot, f []snapshot.Function, st []snapshot.Stack) error {
		<-g.gate
		return d.Save(ctx, s, f, st)
	}, 1, 4)
	t.Cleanup(func() { g.open(); g.queue.Close(); d.Close() })
	return g
}

func (g *gatedStore) open() { g.opened.Do(func() { close(g.gate) }) }

func (g *gatedStore) SaveBackground(ctx context.Context, s *snapshot.Snapshot, prepare snapshot.Prepare, done func(error)) error {
	return g.queue.Enqueue(ctx, s, prepare, func(err error) {
		g.mu.Lock()
		if err == nil {
			g.saved = append(g.saved, s.ID)
		} else {
			g.errs = append(g.errs, err)
		}
		g.mu.Unlock()
		done(err)
	})
}

func (g *gatedStore) Get(ctx context.Context, id string) (*snapshot.Snapshot, error) {
	if s, ok, err := g.queue.Lookup(ctx, id); ok {
		return s, err
	}
	return g.Dir.Get(ctx, id)
}

// flush opens the gate and waits until every queued save is done.
func (g *gatedStore) flush(t *testing.T) {
	t.Helper()
	g.open()
	g.queue.Close()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.errs) > 0 {
		t.Fatalf("background saves failed: %v", g.errs)
	}
}

func jenodeService(t *testing.T, st Store) (*Service, backends.Node) {
	t.Helper()
	host, port := runJenode(t, bins.full)
	node := backends.Node{ID: 10007, Kind: backends.StarRocks, Host: host, HTTPPort: port, Binary: bins.full}
	reg := backends.NewRegistry(backends.Options{Timeout: 30 * time.Second})
	reg.Add(node)
	s, err := New(Options{Registry: reg, Store: st, Log: zap.NewNop(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, node
}

// The answer of a statement that dumps to render (dump_dot_snapshot) is
// written while the store has not stored the snapshot yet (its save waits
// at a gate), and list_snapshots() shows the snapshot once it is stored.
func TestAnswerBeforeStore(t *testing.T) {
	for _, c := range []struct {
		name string
		// run is the statement; it returns the snapshot names it made
		// and may render others by name while they are in flight.
		run func(ctx context.Context, s *Service, node backends.Node) (dot string, names []string, err error)
	}{
		{"dump_dot_snapshot", func(ctx context.Context, s *Service, node backends.Node) (string, []string, error) {
			a, err := s.DumpDOT(ctx, node)
			return a.Text, nil, err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			g := newGatedStore(t)
			s, node := jenodeService(t, g)
			dot, names, err := c.run(ctx, s, node)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(dot, "digraph") {
				t.Fatalf("answer is not a graph: %.200q", dot)
			}
			pending := g.queue.Pending()
			if len(pending) == 0 {
				t.Fatal("no save is pending: the answer waited for the store")
			}
			listed, err := s.Snapshots(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			if len(listed) != 0 {
				t.Errorf("list_snapshots shows %d snapshots before any is stored", len(listed))
			}
			g.flush(t)
			listed, err = s.Snapshots(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			if len(listed) != len(pending) {
				t.Errorf("list_snapshots after the saves: %d snapshots, %d were queued", len(listed), len(pending))
			}
			for _, name := range names {
				stored, err := s.StoredDOT(ctx, node, name)
				if err != nil {
					t.Fatalf("to_dot_format(%s) once stored: %v", name, err)
				}
				if !strings.HasPrefix(stored.Text, "digraph") {
					t.Errorf("to_dot_format(%s) once stored: %.200q", name, stored.Text)
				}
			}
		})
	}
}

// snapshot() answers a name once its snapshot is stored: until the gate
// opens it has not answered; then list_snapshots() already shows the name,
// and to_dot_format of it renders.
func TestSnapshotAnswersOnceStored(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	g := newGatedStore(t)
	s, node := jenodeService(t, g)
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		a, err := s.Snapshot(ctx, node)
		done <- result{a.Text, err}
	}()
	for len(g.queue.Pending()) == 0 {
		select {
		case r := <-done:
			t.Fatalf("snapshot() answered %q, %v before its save was even queued", r.name, r.err)
		case <-ctx.Done():
			t.Fatal("the save was never queued")
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case r := <-done:
		t.Fatalf("snapshot() answered %q, %v while its save waits at the gate", r.name, r.err)
	default:
	}
	g.open()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	listed, err := s.Snapshots(ctx, node)
	if err != nil || len(listed) != 1 || listed[0].ID != r.name {
		t.Fatalf("list_snapshots right after snapshot() = %q: %v, %v", r.name, listed, err)
	}
	if d, err := s.StoredDOT(ctx, node, r.name); err != nil || !strings.HasPrefix(d.Text, "digraph") {
		t.Fatalf("to_dot_format(%s): %v %.100q", r.name, err, d.Text)
	}
	g.flush(t)
}

// On the real Dir: the name resolves right after snapshot(), and the
// store's Close saves what is queued (the flush a shutdown does), so a
// reopened store lists every snapshot, whole.
func TestDirCloseFlushes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	d, err := snapshot.OpenDir(dir, snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	s, node := jenodeService(t, d)
	var names []string
	for _, step := range []string{"snapshot", "dump_dot_snapshot", "snapshot"} {
		switch step {
		case "snapshot":
			a, err := s.Snapshot(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StoredDOT(ctx, node, a.Text); err != nil {
				t.Fatalf("to_dot_format(%s) right after snapshot(): %v", a.Text, err)
			}
			fs, err := d.Functions(ctx, a.Text)
			if err != nil || len(fs) == 0 {
				t.Fatalf("functions of %s right after snapshot(): %d rows, %v", a.Text, len(fs), err)
			}
			names = append(names, a.Text)
		case "dump_dot_snapshot":
			if _, err := s.DumpDOT(ctx, node); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d2, err := snapshot.OpenDir(dir, snapshot.Retention{})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	list, err := d2.List(ctx, snapshot.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 {
		t.Fatalf("reopened store lists %d snapshots, want 3", len(list))
	}
	for _, name := range names {
		got, err := d2.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Raw) == 0 || len(got.Profile) == 0 || got.TotalBytes == 0 {
			t.Errorf("%s: raw %d bytes, profile %d bytes, total %d", name, len(got.Raw), len(got.Profile), got.TotalBytes)
		}
	}
	// A closed store refuses new snapshots: the dump fails, it does not
	// vanish silently.
	s2, node2 := jenodeService(t, d)
	if _, err := s2.DumpDOT(ctx, node2); err == nil || !strings.Contains(err.Error(), "store closed") {
		t.Errorf("dump into a closed store: %v", err)
	}
}
