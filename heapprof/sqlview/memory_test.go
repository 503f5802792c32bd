package sqlview

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// runtimeMem is a reading of the Go heap.
type runtimeMem struct {
	heapAlloc  uint64
	totalAlloc uint64
}

func (m *runtimeMem) read() {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m.heapAlloc, m.totalAlloc = ms.HeapAlloc, ms.TotalAlloc
}

// settledHeap is the live heap after garbage collection.
func settledHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtimeMem
	m.read()
	return m.heapAlloc
}

// peakHeap samples the heap every few milliseconds until stop is called and
// returns the largest reading.
func peakHeap() (stop func() uint64) {
	done := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var top uint64
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtimeMem
			m.read()
			top = max(top, m.heapAlloc)
			select {
			case <-done:
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(done); return <-peak }
}

// manyFunctions is one snapshot with n functions: the red team's ~340 rows.
func manyFunctions(n int) *memSource {
	src := &memSource{fns: map[string][]snapshot.Function{}, stk: map[string][]snapshot.Stack{}}
	src.snaps = []snapshot.Snapshot{{ID: "heap_profile.1.0", NodeID: 1, NodeKind: "go", NodeAddr: "127.0.0.1:6060",
		TakenAt: time.Date(2026, 11, 20, 8, 0, 0, 0, time.UTC), TotalBytes: 1 << 30, SamplePeriod: 524288, Format: "go"}}
	for i := range n {
		// A Go function: its full name is its short name (receiver kept).
		name := fmt.Sprintf("github.com/example/service/pkg.(*Handler).Func%04d", i)
		src.fns["heap_profile.1.0"] = append(src.fns["heap_profile.1.0"], snapshot.Function{SnapshotID: "heap_profile.1.0",
			Name: name, ShortName: name, FlatBytes: int64(i) << 10, CumBytes: int64(i) << 12})
	}
	return src
}

func newLimitedEngine(t *testing.T, src Source, opts Options) *Engine {
	t.Helper()
	e, err := NewWithOptions(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func newSession(t *testing.T, e *Engine, id uint32) *Session {
	t.Helper()
	s, err := e.NewSession(context.Background(), "bi", "127.0.0.1:1", id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drain reads a statement's rows to the end.
func drain(ctx context.Context, e *Engine, s *Session, q string) (int, error) {
	r, err := e.Query(ctx, s, q)
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		_, err := r.Next()
		if errors.Is(err, io.EOF) {
			return n, r.Close()
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

const crossJoin3 = "FROM heapprof.functions a, heapprof.functions b, heapprof.functions c"

// TestCrossJoinStopsOnCancel: the red team's three-way cross join over 340
// rows (39 million rows) stops within a second of its context's cancel,
// in the text and the prepared path, and leaves no goroutine or heap
// behind.
func TestCrossJoinStopsOnCancel(t *testing.T) {
	e := newLimitedEngine(t, manyFunctions(340), Options{})
	for _, tc := range []struct {
		name, q  string
		prepared bool
	}{
		{"count", "SELECT COUNT(*) " + crossJoin3, false},
		{"rows", "SELECT a.name, b.name, c.name " + crossJoin3, false},
		{"group by", "SELECT a.name, COUNT(*) " + crossJoin3 + " GROUP BY a.name", false},
		{"order by limit", "SELECT a.name, b.name, c.name " + crossJoin3 + " ORDER BY a.flat_bytes + b.flat_bytes + c.flat_bytes DESC LIMIT 10", false},
		{"prepared count", "SELECT COUNT(*) " + crossJoin3 + " WHERE a.flat_bytes >= ?", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, e, 1)
			goroutines := runtime.NumGoroutine()
			heapBefore := settledHeap()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				if !tc.prepared {
					_, err := drain(ctx, e, s, tc.q)
					done <- err
					return
				}
				p, err := e.Prepare(ctx, s, tc.q)
				if err != nil {
					done <- err
					return
				}
				defer e.ClosePrepared(s, p)
				r, err := e.Execute(ctx, s, p, []any{int64(0)})
				if err != nil {
					done <- err
					return
				}
				defer r.Close()
				for err == nil {
					_, err = r.Next()
				}
				done <- err
			}()
			time.Sleep(300 * time.Millisecond) // let it run
			cancel()
			select {
			case err := <-done:
				var me *Error
				if !errors.As(err, &me) || me.Code != 1317 {
					t.Errorf("canceled statement: %v, want ERROR 1317", err)
				}
			case <-time.After(time.Second):
				t.Fatal("statement still running a second after cancel")
			}
			// Goroutines and heap settle.
			deadline := time.Now().Add(5 * time.Second)
			for runtime.NumGoroutine() > goroutines && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := runtime.NumGoroutine(); n > goroutines {
				t.Errorf("goroutines: %d before, %d after", goroutines, n)
			}
			if after := settledHeap(); after > heapBefore+8<<20 {
				t.Errorf("heap after the canceled statement: %d bytes, %d before", after, heapBefore)
			}
			if e.sqlMemory.Load() != 0 {
				t.Errorf("engine still charged %d bytes", e.sqlMemory.Load())
			}
			if _, err := drain(context.Background(), e, s, "SELECT COUNT(*) FROM heapprof.functions"); err != nil {
				t.Errorf("session after cancel: %v", err)
			}
		})
	}
}

// TestStatementMemoryLimit: statements that would hold the whole cross
// join fail with 1038 once they hold MaxStatementMemory, and the heap
// never grows far beyond it (without the limit a sort of the three-way
// join holds gigabytes).
func TestStatementMemoryLimit(t *testing.T) {
	const limit = 16 << 20
	e := newLimitedEngine(t, manyFunctions(340), Options{MaxStatementMemory: limit})
	for _, tc := range []struct{ name, q string }{
		{"order by", "SELECT a.name, b.name, c.name " + crossJoin3 + " ORDER BY a.flat_bytes + b.flat_bytes + c.flat_bytes"},
		{"group by", "SELECT a.name, b.name, c.name, COUNT(*) " + crossJoin3 + " GROUP BY a.name, b.name, c.name"},
		{"distinct", "SELECT DISTINCT a.name, b.name, c.name " + crossJoin3},
		{"window", "SELECT a.name, ROW_NUMBER() OVER (ORDER BY a.flat_bytes + b.flat_bytes + c.flat_bytes) " + crossJoin3},
		{"in subquery", "SELECT COUNT(*) FROM heapprof.functions WHERE CONCAT(name, 1) IN (SELECT CONCAT(a.name, b.name, c.name) " + crossJoin3 + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, e, 2)
			before := settledHeap()
			stop := peakHeap()
			_, err := drain(context.Background(), e, s, tc.q)
			peak := stop()
			var me *Error
			if !errors.As(err, &me) || me.Code != 1038 || me.State != "HY001" {
				t.Fatalf("got %v, want ERROR 1038 (HY001)", err)
			}
			for _, want := range []string{fmt.Sprint(limit), "sql.max_statement_memory"} {
				if !strings.Contains(me.Message, want) {
					t.Errorf("message %q does not name %q", me.Message, want)
				}
			}
			// The estimate is of the values; allow the slices' growth and
			// the collector's headroom on top.
			if grown := int64(peak) - int64(before); grown > 6*limit {
				t.Errorf("heap grew by %d MB during the statement, limit %d MB", grown>>20, limit>>20)
			}
			t.Logf("heap peak %d MB above the %d MB before (limit %d MB)", (int64(peak)-int64(before))>>20, before>>20, limit>>20)
			if e.sqlMemory.Load() != 0 {
				t.Errorf("engine still charged %d bytes", e.sqlMemory.Load())
			}
			if _, err := drain(context.Background(), e, s, "SELECT COUNT(*) FROM heapprof.functions"); err != nil {
				t.Errorf("session after the limit: %v", err)
			}
		})
	}
}

// TestTotalMemoryLimit: two sessions each within MaxStatementMemory, but
// together beyond MaxTotalMemory: the second fails with 1041 while the
// first holds its sorted rows, and runs once the first is closed.
func TestTotalMemoryLimit(t *testing.T) {
	q := "SELECT a.name, b.name FROM heapprof.functions a, heapprof.functions b ORDER BY a.name DESC, b.name"
	// What one statement holds, measured on an engine without limits.
	probe := newLimitedEngine(t, manyFunctions(340), Options{})
	pr, err := probe.Query(context.Background(), newSession(t, probe, 1), q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pr.Next(); err != nil {
		t.Fatal(err)
	}
	one := probe.sqlMemory.Load()
	pr.Close()
	// Room for one, not for two.
	e := newLimitedEngine(t, manyFunctions(340), Options{MaxStatementMemory: 2 * one, MaxTotalMemory: one * 3 / 2})
	s1, s2 := newSession(t, e, 1), newSession(t, e, 2)
	r1, err := e.Query(context.Background(), s1, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Next(); err != nil { // sorts: holds 115,600 rows
		t.Fatal(err)
	}
	held := e.sqlMemory.Load()
	t.Logf("first statement holds %d MB", held>>20)
	_, err = drain(context.Background(), e, s2, q)
	var me *Error
	if !errors.As(err, &me) || me.Code != 1041 || me.State != "HY000" || !strings.Contains(me.Message, "sql.max_total_memory") {
		t.Fatalf("second statement: %v, want ERROR 1041 (HY000) naming sql.max_total_memory", err)
	}
	if got := e.sqlMemory.Load(); got != held {
		t.Errorf("after the failed statement the engine holds %d, want the first's %d", got, held)
	}
	r1.Close()
	if n, err := drain(context.Background(), e, s2, q); err != nil || n != 340*340 {
		t.Errorf("second statement after the first closed: %d rows, %v", n, err)
	}
	if e.sqlMemory.Load() != 0 {
		t.Errorf("engine still charged %d bytes", e.sqlMemory.Load())
	}
}

// TestTopNDoesNotBuffer: ORDER BY ... LIMIT keeps LIMIT rows (go-mysql-
// server's TopN), so it runs under a budget the full sort exceeds, and the
// heap stays small.
func TestTopNDoesNotBuffer(t *testing.T) {
	const limit = 4 << 20
	e := newLimitedEngine(t, manyFunctions(600), Options{MaxStatementMemory: limit})
	s := newSession(t, e, 3)
	join := " FROM heapprof.functions a, heapprof.functions b ORDER BY a.flat_bytes * 7 + b.flat_bytes DESC"
	for _, tc := range []struct {
		name, q string
		rows    int
	}{
		{"limit", "SELECT a.name, b.name" + join + " LIMIT 10", 10},
		{"limit offset", "SELECT a.name, b.name" + join + " LIMIT 10 OFFSET 20", 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The join makes 360,000 rows of garbage: collect it early, so
			// the peak measures what the statement holds, not how far the
			// collector lagged behind on a loaded machine.
			defer debug.SetGCPercent(debug.SetGCPercent(10))
			before := settledHeap()
			stop := peakHeap()
			n, err := drain(context.Background(), e, s, tc.q)
			peak := stop()
			if err != nil || n != tc.rows {
				t.Fatalf("%d rows, %v", n, err)
			}
			if grown := int64(peak) - int64(before); grown > 24<<20 {
				t.Errorf("heap grew by %d MB for a top-%d of 360,000 rows", grown>>20, tc.rows)
			}
			t.Logf("heap peak %d KB above before", (int64(peak)-int64(before))>>10)
		})
	}
	// The same without LIMIT sorts 360,000 rows: beyond the budget.
	_, err := drain(context.Background(), e, s, "SELECT a.name, b.name"+join)
	var me *Error
	if !errors.As(err, &me) || me.Code != 1038 {
		t.Errorf("full sort: %v, want ERROR 1038", err)
	}
}

// TestConcurrentBudgets: concurrent statements release what they charged.
func TestConcurrentBudgets(t *testing.T) {
	e := newLimitedEngine(t, manyFunctions(100), Options{})
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := e.NewSession(context.Background(), "bi", "127.0.0.1:1", uint32(10+i))
			if err != nil {
				t.Error(err)
				return
			}
			for range 5 {
				if _, err := drain(context.Background(), e, s, "SELECT a.name, b.name FROM heapprof.functions a, heapprof.functions b ORDER BY 1, 2"); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if e.sqlMemory.Load() != 0 {
		t.Errorf("engine still charged %d bytes", e.sqlMemory.Load())
	}
}
