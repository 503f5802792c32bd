package web

import (
	"context"
	"errors"
	"testing"
)

func TestViewCacheLRU(t *testing.T) {
	c := newViewCache(2)
	loads := map[string]int{}
	get := func(id string, fail bool) error {
		_, err := c.get(context.Background(), viewKey{id: id}, func() (*view, error) {
			loads[id]++
			if fail {
				return nil, errors.New("store down")
			}
			return &view{}, nil
		})
		return err
	}
	steps := []struct {
		id   string
		fail bool
		want int // loads of id after the step
	}{
		{"a", false, 1},
		{"b", false, 1},
		{"a", false, 1}, // cached; now b is the least recently used
		{"c", false, 1}, // evicts b
		{"a", false, 1},
		{"b", false, 2}, // reloaded; evicts c
		{"c", false, 2},
		{"d", true, 1},  // failed loads are not kept...
		{"d", false, 2}, // ...so the next request tries again
	}
	for i, s := range steps {
		err := get(s.id, s.fail)
		if (err != nil) != s.fail {
			t.Fatalf("step %d (%s): err %v", i, s.id, err)
		}
		if loads[s.id] != s.want {
			t.Errorf("step %d: %s loaded %d times, want %d", i, s.id, loads[s.id], s.want)
		}
	}
	if len(c.entries) != 2 || len(c.recent) != 2 {
		t.Errorf("cache holds %d entries, %d recent; want 2", len(c.entries), len(c.recent))
	}
}

func TestViewCacheCallerGivesUp(t *testing.T) {
	c := newViewCache(2)
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.get(ctx, viewKey{id: "slow"}, func() (*view, error) {
		<-release
		return &view{}, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	close(release)
	// The load went on without the caller; the next one gets its result.
	v, err := c.get(context.Background(), viewKey{id: "slow"}, func() (*view, error) {
		t.Error("loaded twice")
		return nil, nil
	})
	if err != nil || v == nil {
		t.Errorf("second get: %v %v", v, err)
	}
}
