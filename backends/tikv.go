package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// DefaultTiKVHeapWindow is how long TiKV 7.4 and 5.2 or older sample the
// heap before answering a dump: their /debug/pprof/heap activates
// profiling for ?seconds= (TiKV's default, 10), then dumps.
const DefaultTiKVHeapWindow = 10 * time.Second

// tikvConfigMaxBytes bounds TiKV's GET /config answer (the whole config as
// JSON, tens of KB).
const tikvConfigMaxBytes = 4 << 20

// tikvHeapSwitch is the config item that switches heap profiling on TiKV
// 7.5+ (src/config/mod.rs MemoryConfig, serde kebab-case).
const tikvHeapSwitch = "memory.enable-heap-profiling"

// tikvDriver: the TiKV status server (src/server/status_server/mod.rs and
// profile.rs). What each release serves (sources in README.md):
//   - 7.5+: GET/POST /config memory.enable-heap-profiling is the switch (on
//     by default); /debug/pprof/heap dumps at once (?seconds is ignored);
//     heap_activate answers "Already in Heap Profiling" while profiling is on
//     (7.5) or 410 (7.6+).
//   - 7.4 and 5.2 or older: /debug/pprof/heap?seconds=N activates profiling,
//     waits N s, deactivates and dumps; no switch (heap_activate starts
//     periodic dumps to the node's disk instead, and on 7.4 blocks the
//     windowed dump with "Already in Profiling").
//   - 5.3 to 7.3 (LTS 6.5.x, 7.1.x): no heap route at all (404).
//
// The driver never calls heap_activate/heap_deactivate.
type tikvDriver struct {
	c *caller
	// window is the ?seconds= of a dump (DefaultTiKVHeapWindow).
	window time.Duration
}

// windowSeconds is the dump window in whole seconds, at least 1, and short
// enough to leave the node time to answer within the call's timeout.
func (d tikvDriver) windowSeconds() int {
	w := d.window
	if w <= 0 {
		w = DefaultTiKVHeapWindow
	}
	if limit := d.c.timeout - 5*time.Second; w > limit {
		w = d.c.timeout / 2
	}
	return max(1, int((w+time.Second-1)/time.Second))
}

// tikvConfig is what GET /config says about heap profiling.
type tikvConfig struct {
	// hasSwitch: memory.enable-heap-profiling exists (7.5+).
	hasSwitch bool
	on        bool
	// release says which releases a node without the switch can be.
	release string
}

// config reads the node's config (GET /config, served by every release
// heapproxy knows) for memory.enable-heap-profiling; without it, it learns
// from /engine_type (7.1+) which releases the node can be.
func (d tikvDriver) config(ctx context.Context, n Node, op string) (tikvConfig, error) {
	const path = "/config"
	c := *d.c
	c.maxBytes = min(c.maxBytes, tikvConfigMaxBytes)
	a, err := c.do(ctx, n, op, http.MethodGet, path, nil)
	if err != nil {
		return tikvConfig{}, err
	}
	if a.status == http.StatusNotFound {
		return tikvConfig{}, &UnsupportedError{Kind: TiKV, Op: op, Reason: "the node answers GET /config with HTTP 404 " +
			snippet(a.body) + ", which no TiKV status server does (every release serves its config there, and the switch " +
			tikvHeapSwitch + " on 7.5+): is http_port the TiKV status port (status-addr, 20180 by default)?"}
	}
	if a.status != http.StatusOK {
		return tikvConfig{}, &NodeError{Node: n, Op: op, Err: a.statusErr(http.MethodGet, path)}
	}
	var cfg struct {
		Memory *struct {
			EnableHeapProfiling *bool `json:"enable-heap-profiling"`
		} `json:"memory"`
	}
	if err := json.Unmarshal(a.body, &cfg); err != nil {
		return tikvConfig{}, badAnswer(n, op, http.MethodGet, path, "TiKV's config as a JSON object", a.body)
	}
	if cfg.Memory != nil && cfg.Memory.EnableHeapProfiling != nil {
		return tikvConfig{hasSwitch: true, on: *cfg.Memory.EnableHeapProfiling, release: "7.5 or newer"}, nil
	}
	// /engine_type arrived in 7.1 (src/server/status_server/mod.rs).
	release := "7.0 or older"
	c.maxBytes = 4 << 10
	if a, err := c.do(ctx, n, op, http.MethodGet, "/engine_type", nil); err == nil && a.status == http.StatusOK {
		release = "7.1 to 7.4"
	}
	return tikvConfig{release: release}, nil
}

// noSwitch is the UnsupportedError of a release before 7.5.
func (d tikvDriver) noSwitch(op string, cfg tikvConfig) error {
	return &UnsupportedError{Kind: TiKV, Op: op, Reason: fmt.Sprintf("this TiKV is %s (its GET /config has no %s, "+
		"added in TiKV 7.5), and releases before 7.5 have no switch heapproxy can use: 7.4 and 5.2 or older profile only "+
		"while a dump runs (heapproxy's dump asks /debug/pprof/heap?seconds=%d), 5.3 to 7.3 (LTS 6.5.x, 7.1.x included) send "+
		"no heap profile over HTTP at all. heapproxy does not call /debug/pprof/heap_activate, which on these releases writes "+
		"a heap dump to the node's disk every 60 s until heap_deactivate (and on 7.4 makes /debug/pprof/heap answer "+
		"\"Already in Profiling\"); TiKV 7.5+ switches with %s", cfg.release, tikvHeapSwitch, d.windowSeconds(), tikvHeapSwitch)}
}

// set switches memory.enable-heap-profiling (7.5+) with POST /config, a
// flat JSON object of "module.item": value (decode_json). persist=false:
// the change lasts until the node restarts, as StarRocks' enable_prof does,
// and is not written to the node's config file.
func (d tikvDriver) set(ctx context.Context, n Node, op string, on bool) error {
	cfg, err := d.config(ctx, n, op)
	if err != nil {
		return err
	}
	if !cfg.hasSwitch {
		return d.noSwitch(op, cfg)
	}
	const path = "/config?persist=false"
	body, err := json.Marshal(map[string]bool{tikvHeapSwitch: on})
	if err != nil {
		return &NodeError{Node: n, Op: op, Err: fmt.Errorf("POST %s: %w", path, err)}
	}
	a, err := d.c.do(ctx, n, op, http.MethodPost, path, body)
	if err != nil {
		return err
	}
	if a.status != http.StatusOK {
		return &NodeError{Node: n, Op: op, Err: a.statusErr(http.MethodPost, path)}
	}
	return nil
}

func (d tikvDriver) Enable(ctx context.Context, n Node) error {
	return d.set(ctx, n, OpEnable, true)
}

func (d tikvDriver) Disable(ctx context.Context, n Node) error {
	return d.set(ctx, n, OpDisable, false)
}

// Status reads memory.enable-heap-profiling (7.5+). On 7.5, a
// heap_deactivate by someone else leaves it true while dumps are refused
// (the dump's error says how to recover).
func (d tikvDriver) Status(ctx context.Context, n Node) (bool, error) {
	cfg, err := d.config(ctx, n, OpStatus)
	if err != nil {
		return false, err
	}
	if !cfg.hasSwitch {
		return false, d.noSwitch(OpStatus, cfg)
	}
	return cfg.on, nil
}

// Dump asks /debug/pprof/heap?seconds=N: 7.5+ ignore seconds and dump at
// once, 7.4 and 5.2 or older sample for N seconds first (5.2 refuses the
// route without a query), 5.3 to 7.3 answer 404.
func (d tikvDriver) Dump(ctx context.Context, n Node) (*Dump, error) {
	path := "/debug/pprof/heap?seconds=" + strconv.Itoa(d.windowSeconds())
	a, err := d.c.do(ctx, n, OpDump, http.MethodGet, path, nil)
	if err != nil {
		return nil, err
	}
	if a.status >= 200 && a.status <= 299 {
		return jemallocAnswer(n, http.MethodGet, path, a.body)
	}
	se := a.statusErr(http.MethodGet, path)
	switch {
	case a.status == http.StatusNotFound:
		se.Hint = missingRouteHint(TiKV, path)
	case bytes.Contains(a.body, []byte("heap profiling is not activated")):
		se.Hint = "TiKV 7.5 refuses dumps while " + tikvHeapSwitch + " is false, and also after a GET " +
			"/debug/pprof/heap_deactivate, which leaves the config true: disable_prof() then enable_prof() switches it back on"
	case bytes.Contains(a.body, []byte("Already in Profiling")):
		se.Hint = "TiKV 7.4 and 5.2 or older run one profile at a time: a CPU profile, or the periodic heap dumps " +
			"GET /debug/pprof/heap_activate started, is running on the node (GET /debug/pprof/heap_deactivate stops those)"
	}
	return nil, &NodeError{Node: n, Op: OpDump, Err: se}
}

func (d tikvDriver) SymbolURL(n Node) string { return n.BaseURL() + "/debug/pprof/symbol" }
