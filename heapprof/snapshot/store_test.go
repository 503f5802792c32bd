package snapshot

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// realRows is the symbolized leak profile's encoding and rows, computed once
// and shared read-only by every store test.
type realRows struct {
	raw, proto []byte
	tot        Totals
	period     int64
	funcs      []Function
	stacks     []Stack
}

var (
	rowsOnce sync.Once
	rows     realRows
	rowsErr  error
)

func leakRows(t testing.TB) realRows {
	t.Helper()
	bin, heaps := leakProg(t)
	rowsOnce.Do(func() { rows, rowsErr = loadRows(bin, heaps[0]) })
	if rowsErr != nil {
		t.Fatalf("preparing the leak profile: %v", rowsErr)
	}
	return rows
}

// loadRows parses and symbolizes a jemalloc profile of bin and summarizes it.
func loadRows(bin, heap string) (realRows, error) {
	raw, err := os.ReadFile(heap)
	if err != nil {
		return realRows{}, err
	}
	p, err := heapprof.Parse(raw)
	if err != nil {
		return realRows{}, err
	}
	if err := (&symbolize.Local{Binary: bin}).Symbolize(context.Background(), p); err != nil {
		return realRows{}, err
	}
	s := &Snapshot{ID: "x"}
	funcs, stacks, err := s.Attach(p)
	if err != nil {
		return realRows{}, err
	}
	return realRows{raw: raw, proto: s.Profile, tot: Totals{s.TotalBytes, s.TotalObjects},
		period: s.SamplePeriod, funcs: funcs, stacks: stacks}, nil
}

// newSnap makes a snapshot of node at time at from the real profile; its
// raw dump gets the id appended so every snapshot's bytes differ.
func newSnap(t testing.TB, node int64, at time.Time) (*Snapshot, []Function, []Stack) {
	return snapFrom(leakRows(t), node, at)
}

func snapFrom(r realRows, node int64, at time.Time) (*Snapshot, []Function, []Stack) {
	id := NewID(node, at)
	s := &Snapshot{ID: id, NodeID: node, NodeKind: "starrocks_be", NodeAddr: fmt.Sprintf("10.0.0.%d:8040", node),
		TakenAt: at, Format: "jemalloc", Raw: append(slices.Clip(r.raw), id...), Profile: r.proto,
		TotalBytes: r.tot.Bytes, TotalObjects: r.tot.Objects, SamplePeriod: r.period}
	return s, r.funcs, r.stacks
}

// base is a time with microsecond precision (DATETIME(6)) in UTC.
var base = time.Date(2026, 11, 20, 8, 0, 0, 123456000, time.UTC)

// storeKind opens stores of one kind. reopen, when set, opens the store
// again on the same data after Close.
type storeKind struct {
	name string
	open func(t *testing.T, r Retention) Store
}

func memoryKind() storeKind {
	return storeKind{name: "memory", open: func(t *testing.T, r Retention) Store { return NewMemory(r) }}
}

func dirKind() storeKind {
	return storeKind{name: "dir", open: func(t *testing.T, r Retention) Store {
		d, err := OpenDir(t.TempDir(), r)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}}
}

func TestStoreMemory(t *testing.T) { testStore(t, memoryKind()) }
func TestStoreDir(t *testing.T)    { testStore(t, dirKind()) }

// testStore is the behaviour every Store must have.
func testStore(t *testing.T, k storeKind) {
	ctx := context.Background()
	open := func(t *testing.T, r Retention) Store {
		st := k.open(t, r)
		t.Cleanup(func() { st.Close() })
		return st
	}
	t.Run("round trip", func(t *testing.T) {
		st := open(t, Retention{})
		s, funcs, stacks := newSnap(t, 10001, base)
		if err := st.Save(ctx, s, funcs, stacks); err != nil {
			t.Fatal(err)
		}
		checkSnapshot(t, st, s, funcs, stacks)
	})
	t.Run("not found", func(t *testing.T) {
		st := open(t, Retention{})
		var nf *ErrNotFound
		if _, err := st.Get(ctx, "heap_profile.1.nope"); !errors.As(err, &nf) || nf.ID != "heap_profile.1.nope" {
			t.Errorf("Get: %v", err)
		}
		if _, err := st.Functions(ctx, "heap_profile.1.nope"); !errors.As(err, &nf) {
			t.Errorf("Functions: %v", err)
		}
		if _, err := st.Stacks(ctx, "heap_profile.1.nope"); !errors.As(err, &nf) {
			t.Errorf("Stacks: %v", err)
		}
	})
	t.Run("refused saves", func(t *testing.T) {
		st := open(t, Retention{})
		s, funcs, stacks := newSnap(t, 1, base)
		if err := st.Save(ctx, s, funcs, stacks); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			mod  func(s *Snapshot)
		}{
			{"duplicate id", func(*Snapshot) {}},
			{"empty id", func(s *Snapshot) { s.ID = "" }},
			{"path in id", func(s *Snapshot) { s.ID = "../../etc" }},
			{"dot id", func(s *Snapshot) { s.ID = ".hidden" }},
			{"zero time", func(s *Snapshot) { s.ID += "x"; s.TakenAt = time.Time{} }},
		} {
			s2 := *s
			c.mod(&s2)
			if err := st.Save(ctx, &s2, funcs, stacks); err == nil {
				t.Errorf("%s: Save accepted %q", c.name, s2.ID)
			}
		}
		if l, err := st.List(ctx, Filter{}); err != nil || len(l) != 1 {
			t.Errorf("after refused saves: %d snapshots, %v", len(l), err)
		}
	})
	t.Run("list and filter", func(t *testing.T) {
		st := open(t, Retention{})
		var ids []string // by (node, minute)
		for i := 0; i < 6; i++ {
			node := int64(1 + i%2)
			s, funcs, stacks := newSnap(t, node, base.Add(time.Duration(i)*time.Minute))
			if err := st.Save(ctx, s, funcs, stacks); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		two := int64(2)
		for _, c := range []struct {
			name string
			f    Filter
			want []int // indices into ids, newest first
		}{
			{"all", Filter{}, []int{5, 4, 3, 2, 1, 0}},
			{"node", Filter{NodeID: &two}, []int{5, 3, 1}},
			{"since", Filter{Since: base.Add(3 * time.Minute)}, []int{5, 4, 3}},
			{"until is exclusive", Filter{Until: base.Add(2 * time.Minute)}, []int{1, 0}},
			{"range and node", Filter{NodeID: &two, Since: base.Add(time.Minute), Until: base.Add(4 * time.Minute)}, []int{3, 1}},
			{"limit keeps newest", Filter{Limit: 2}, []int{5, 4}},
			{"nothing", Filter{Since: base.Add(time.Hour)}, nil},
		} {
			got, err := st.List(ctx, c.f)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			var gotIDs, want []string
			for _, s := range got {
				gotIDs = append(gotIDs, s.ID)
				if s.Raw != nil || s.Profile != nil {
					t.Errorf("%s: List returned blobs", c.name)
				}
			}
			for _, i := range c.want {
				want = append(want, ids[i])
			}
			if !slices.Equal(gotIDs, want) {
				t.Errorf("%s: List = %q, want %q", c.name, gotIDs, want)
			}
		}
	})
	t.Run("retention", func(t *testing.T) {
		now := time.Now().UTC().Truncate(time.Microsecond)
		for _, c := range []struct {
			name  string
			r     Retention
			saves []struct {
				node int64
				age  time.Duration
			}
			keep []int // indices of saves kept
		}{
			{"per node", Retention{PerNode: 2}, []struct {
				node int64
				age  time.Duration
			}{{1, 5 * time.Minute}, {1, 4 * time.Minute}, {2, 3 * time.Minute}, {1, 2 * time.Minute}, {1, time.Minute}},
				[]int{4, 3, 2}},
			{"max age", Retention{MaxAge: time.Hour}, []struct {
				node int64
				age  time.Duration
			}{{1, 3 * time.Hour}, {2, 2 * time.Hour}, {1, 30 * time.Minute}, {2, time.Minute}},
				[]int{3, 2}},
			{"both", Retention{PerNode: 1, MaxAge: time.Hour}, []struct {
				node int64
				age  time.Duration
			}{{1, 2 * time.Hour}, {2, 30 * time.Minute}, {2, 20 * time.Minute}, {1, 10 * time.Minute}},
				[]int{3, 2}},
		} {
			t.Run(c.name, func(t *testing.T) {
				st := open(t, c.r)
				var ids []string
				for _, sv := range c.saves {
					s, funcs, stacks := newSnap(t, sv.node, now.Add(-sv.age))
					if err := st.Save(ctx, s, funcs, stacks); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, s.ID)
				}
				got, err := st.List(ctx, Filter{})
				if err != nil {
					t.Fatal(err)
				}
				var gotIDs, want []string
				for _, s := range got {
					gotIDs = append(gotIDs, s.ID)
				}
				for _, i := range c.keep {
					want = append(want, ids[i])
				}
				if !slices.Equal(gotIDs, want) {
					t.Errorf("kept %q, want %q", gotIDs, want)
				}
				for i, id := range ids {
					if slices.Contains(c.keep, i) {
						continue
					}
					var nf *ErrNotFound
					if _, err := st.Get(ctx, id); !errors.As(err, &nf) {
						t.Errorf("dropped %s: Get: %v", id, err)
					}
					if _, err := st.Functions(ctx, id); !errors.As(err, &nf) {
						t.Errorf("dropped %s: Functions: %v", id, err)
					}
					if _, err := st.Stacks(ctx, id); !errors.As(err, &nf) {
						t.Errorf("dropped %s: Stacks: %v", id, err)
					}
				}
			})
		}
	})
	t.Run("concurrent saves", func(t *testing.T) {
		st := open(t, Retention{})
		const workers, each = 6, 4
		var wg sync.WaitGroup
		errs := make(chan error, workers*each)
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					s, funcs, stacks := newSnap(t, int64(w), base.Add(time.Duration(i)*time.Second))
					if err := st.Save(ctx, s, funcs, stacks); err != nil {
						errs <- err
						continue
					}
					if _, err := st.Get(ctx, s.ID); err != nil {
						errs <- err
					}
					if _, err := st.List(ctx, Filter{}); err != nil {
						errs <- err
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		got, err := st.List(ctx, Filter{})
		if err != nil || len(got) != workers*each {
			t.Errorf("after concurrent saves: %d snapshots (want %d), %v", len(got), workers*each, err)
		}
	})
}

// checkSnapshot reads s back from st and compares everything.
func checkSnapshot(t *testing.T, st Store, s *Snapshot, funcs []Function, stacks []Stack) {
	t.Helper()
	ctx := context.Background()
	got, err := st.Get(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Raw, s.Raw) || !bytes.Equal(got.Profile, s.Profile) {
		t.Errorf("Get %s: blobs differ (raw %d/%d, profile %d/%d bytes)", s.ID, len(got.Raw), len(s.Raw), len(got.Profile), len(s.Profile))
	}
	if m1, m2 := meta(got), meta(s); !m1.TakenAt.Equal(m2.TakenAt) || fmt.Sprint(withTime(m1, m2.TakenAt)) != fmt.Sprint(m2) {
		t.Errorf("Get %s:\n got %+v\nwant %+v", s.ID, m1, m2)
	}
	// The stored profile is what go tool pprof opens.
	p, err := profile.ParseData(got.Profile)
	if err != nil {
		t.Errorf("stored profile does not parse: %v", err)
	} else if _, f, _ := Summarize(p); len(f) != len(funcs) {
		t.Errorf("stored profile summarizes to %d functions, want %d", len(f), len(funcs))
	}
	gf, err := st.Functions(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	wf, ws := rowsFor(s.ID, funcs, stacks)
	sortFunctions(wf)
	sortStacks(ws)
	if fmt.Sprint(gf) != fmt.Sprint(wf) {
		t.Errorf("Functions %s:\n got %v\nwant %v", s.ID, gf, wf)
	}
	gs, err := st.Stacks(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(gs) != fmt.Sprint(ws) {
		t.Errorf("Stacks %s:\n got %v\nwant %v", s.ID, gs, ws)
	}
	if len(gf) == 0 || len(gs) == 0 {
		t.Errorf("no rows for %s", s.ID)
	}
}

// withTime replaces TakenAt so that an equal instant in another location
// compares equal.
func withTime(s Snapshot, at time.Time) Snapshot {
	s.TakenAt = at
	return s
}
