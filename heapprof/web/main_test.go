package web

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// Two real heap profiles of this test process, taken in TestMain: the
// first after allocFirst kept 8 MiB, the second after allocSecond kept
// 12 MiB more. Written once, read only.
var (
	profFirst, profSecond []byte
)

// allocFirst and allocSecond are the known call stacks the views must show.
//
//go:noinline
func allocFirst() [][]byte { return allocChunks(8) }

//go:noinline
func allocSecond() [][]byte { return allocChunks(12) }

//go:noinline
func allocChunks(mb int) [][]byte {
	out := make([][]byte, 0, mb)
	for range mb {
		out = append(out, make([]byte, 1<<20))
	}
	return out
}

func heapProfile() ([]byte, error) {
	runtime.GC()
	var buf bytes.Buffer
	if err := pprof.Lookup("heap").WriteTo(&buf, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func TestMain(m *testing.M) {
	// Every allocation sampled: the profiles then hold exactly what was
	// allocated, and the diff has exactly allocSecond's growth.
	runtime.MemProfileRate = 1
	first := allocFirst()
	var err error
	if profFirst, err = heapProfile(); err != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", err)
		os.Exit(1)
	}
	second := allocSecond()
	if profSecond, err = heapProfile(); err != nil {
		fmt.Fprintln(os.Stderr, "heap profile:", err)
		os.Exit(1)
	}
	runtime.KeepAlive(first)
	runtime.KeepAlive(second)
	runtime.MemProfileRate = 512 << 10
	os.Exit(m.Run())
}

// memStore is a small Store over a map, answering as a snapshot.Store
// does. Unlike one it takes any id (the escaping tests use hostile ones),
// holds profiles it does not list, and counts reads. An id it neither
// lists nor has a profile for is unknown.
type memStore struct {
	mu       sync.Mutex
	entries  []snapshot.Snapshot // as List returns them: no Raw, no Profile
	profiles map[string][]byte
	reads    map[string]int
}

func (s *memStore) List(context.Context, snapshot.Filter) ([]snapshot.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.entries), nil
}

func (s *memStore) Get(_ context.Context, id string) (*snapshot.Snapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads = map[string]int{}
	}
	s.reads[id]++
	p, ok := s.profiles[id]
	sn := snapshot.Snapshot{ID: id, Profile: p}
	if i := slices.IndexFunc(s.entries, func(e snapshot.Snapshot) bool { return e.ID == id }); i >= 0 {
		sn, ok = s.entries[i], true
		sn.Profile = p
	}
	if !ok {
		return nil, &snapshot.ErrNotFound{ID: id}
	}
	return &sn, nil
}

// formatOf is a test snapshot's Format: a graph the node rendered, or a
// profile.
func formatOf(noProfile bool) string {
	if noProfile {
		return snapshot.FormatDOT
	}
	return "pprof"
}

const (
	idFirst  = "heap_profile.10001.20261122T100000.000000000Z"
	idSecond = "heap_profile.10001.20261122T110000.000000000Z"
	idOther  = "heap_profile.10002.20261122T103000.000000000Z"
)

func testStore() *memStore {
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return &memStore{
		entries: []snapshot.Snapshot{
			{ID: idSecond, NodeID: 10001, NodeKind: "starrocks", NodeAddr: "10.0.0.1:8040", TakenAt: t0.Add(time.Hour), TotalBytes: 20 << 20},
			{ID: idFirst, NodeID: 10001, NodeKind: "starrocks", NodeAddr: "10.0.0.1:8040", TakenAt: t0, TotalBytes: 8 << 20},
			{ID: idOther, NodeID: 10002, NodeKind: "go", NodeAddr: "10.0.0.2:6060", TakenAt: t0.Add(30 * time.Minute), TotalBytes: 1536 << 10},
		},
		profiles: map[string][]byte{idFirst: profFirst, idSecond: profSecond, idOther: profFirst},
	}
}

func newTestServer(t *testing.T, opts Options) (*httptest.Server, *Handler) {
	t.Helper()
	if opts.Store == nil {
		opts.Store = testStore()
	}
	h, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, h
}

// get fetches url without following redirects.
func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{
		Timeout:       60 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read %s: %v", url, err)
	}
	return resp, string(body)
}

func mustContain(t *testing.T, what, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("%s: missing %q", what, s)
		}
	}
}
