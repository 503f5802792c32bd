package web

import (
	"context"
	"fmt"
	"sync"
)

// viewCache keeps the most recently used views and loads each one once,
// however many requests ask for it at the same time.
type viewCache struct {
	max int

	mu      sync.Mutex
	entries map[viewKey]*cacheEntry
	recent  []viewKey // loaded entries, least recently used first
}

type cacheEntry struct {
	ready chan struct{} // closed when v/err are set
	v     *view
	err   error
}

func newViewCache(max int) *viewCache {
	return &viewCache{max: max, entries: map[viewKey]*cacheEntry{}}
}

// get returns the view for key, loading it with load if needed. load runs
// in its own goroutine so that a caller who gives up (ctx) does not fail
// the others waiting for the same view.
func (c *viewCache) get(ctx context.Context, key viewKey, load func() (*view, error)) (*view, error) {
	c.mu.Lock()
	e, ok := c.entries[key]
	if ok {
		c.touch(key)
	} else {
		e = &cacheEntry{ready: make(chan struct{})}
		c.entries[key] = e
		go c.fill(key, e, load)
	}
	c.mu.Unlock()
	select {
	case <-e.ready:
		return e.v, e.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *viewCache) fill(key viewKey, e *cacheEntry, load func() (*view, error)) {
	v, err := func() (v *view, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("load view %s: panic: %v", key, r)
			}
		}()
		return load()
	}()
	c.mu.Lock()
	e.v, e.err = v, err
	if err != nil {
		// Not kept: the next request tries again (the store may recover).
		delete(c.entries, key)
	} else {
		c.recent = append(c.recent, key)
		for len(c.recent) > c.max {
			delete(c.entries, c.recent[0])
			c.recent = c.recent[1:]
		}
	}
	c.mu.Unlock()
	close(e.ready)
}

// touch marks a loaded key as just used; the caller holds c.mu.
func (c *viewCache) touch(key viewKey) {
	for i, k := range c.recent {
		if k == key {
			c.recent = append(append(c.recent[:i:i], c.recent[i+1:]...), key)
			return
		}
	}
}
