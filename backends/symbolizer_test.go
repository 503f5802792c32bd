package backends

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// profileFromHeapV2 makes an unsymbolized profile of a heap_v2 dump's
// stacks (addresses only: parsing proper is heapprof's job).
func profileFromHeapV2(t *testing.T, data []byte) *profile.Profile {
	t.Helper()
	p := &profile.Profile{}
	for _, a := range stackAddrs(t, data) {
		v, err := strconv.ParseUint(strings.TrimPrefix(a, "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		p.Location = append(p.Location, &profile.Location{ID: uint64(len(p.Location) + 1), Address: v})
	}
	return p
}

func profileFuncNames(p *profile.Profile) map[string]bool {
	names := map[string]bool{}
	for _, loc := range p.Location {
		for _, l := range loc.Line {
			names[l.Function.Name] = true
		}
	}
	return names
}

// TestRemoteSymbolizer names a real jemalloc dump's addresses through the
// node's /pprof/symbol (POST), and a Go service's through its GET-only
// /debug/pprof/symbol.
func TestRemoteSymbolizer(t *testing.T) {
	ctx := context.Background()
	// StarRocks' SymbolAction answers "0xa<TAB>name" and skips unknown
	// addresses; TiKV's answers "0xa name" and "0xa ??".
	for _, kind := range []Kind{StarRocks, TiKV} {
		t.Run("jemalloc node/"+string(kind), func(t *testing.T) {
			host, port := startJenode(t)
			node := Node{ID: 10001, Kind: kind, Host: host, HTTPPort: port}
			reg := NewRegistry(Options{})
			reg.Add(node)
			nodeHTTP(t, http.MethodPost, node.BaseURL()+"/debug/prof/mem/activate", "")
			nodeHTTP(t, http.MethodGet, node.BaseURL()+"/alloc", "")
			d, err := reg.Dump(ctx, node)
			if err != nil {
				t.Fatal(err)
			}
			p := profileFromHeapV2(t, d.Data)
			sym, err := reg.RemoteSymbolizer(node)
			if err != nil {
				t.Fatal(err)
			}
			if err := sym.Symbolize(ctx, p); err != nil {
				t.Fatal(err)
			}
			names := profileFuncNames(p)
			for _, f := range jenodeFuncs {
				if !names[f] {
					t.Errorf("symbolized profile lacks %s: %v", f, names)
				}
			}
			if names["??"] {
				t.Errorf("\"??\" became a function name")
			}
			unnamed := 0
			for _, loc := range p.Location {
				if len(loc.Line) == 0 {
					unnamed++
				}
			}
			if unnamed == 0 {
				t.Errorf("every address named: expected jemalloc's internal frames to stay unsymbolized")
			}
			if err := p.CheckValid(); err != nil {
				t.Errorf("profile invalid after symbolization: %v", err)
			}
			path := strings.TrimPrefix(reg.drivers[kind].SymbolURL(node), node.BaseURL())
			if got := requestCount(t, node.BaseURL(), path); got != (len(p.Location)+symbolBatch-1)/symbolBatch {
				t.Errorf("%d symbolizer requests for %d addresses", got, len(p.Location))
			}
		})
	}
	t.Run("go service", func(t *testing.T) {
		host, port := startGonode(t)
		node := Node{ID: 20001, Kind: Go, Host: host, HTTPPort: port}
		reg := NewRegistry(Options{})
		reg.Add(node)
		d, err := reg.Dump(ctx, node)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.ParseData(d.Data)
		if err != nil {
			t.Fatal(err)
		}
		// Forget the names the service sent, then ask for them again.
		for _, loc := range p.Location {
			loc.Line = nil
		}
		p.Function = nil
		sym, err := reg.RemoteSymbolizer(node)
		if err != nil {
			t.Fatal(err)
		}
		if err := sym.Symbolize(ctx, p); err != nil {
			t.Fatal(err)
		}
		if !profileFuncNames(p)["main.gonodeRetainBlocks"] {
			t.Errorf("symbolized profile lacks main.gonodeRetainBlocks")
		}
	})
	t.Run("kinds without one", func(t *testing.T) {
		reg := NewRegistry(Options{})
		for _, k := range []Kind{GreptimeDB, Databend, Self} {
			reg.Add(Node{ID: 1, Kind: k, Host: "127.0.0.1", HTTPPort: 1})
			_, err := reg.RemoteSymbolizer(Node{ID: 1})
			wantUnsupported(t, err, k, OpSymbolize)
		}
		if _, err := reg.RemoteSymbolizer(Node{ID: 2}); err == nil || err.Error() != "node not found: 2" {
			t.Errorf("unregistered: %v", err)
		}
	})
}

// Mangled names are demangled, as jeprof's c++filt step does; TiKV's
// inlined frames stay innermost first.
func TestParseSymbolAnswerNames(t *testing.T) {
	for _, c := range []struct {
		body   string
		inline bool
		want   string
	}{
		{"0x10\t_ZN3foo3barEv\n", false, "foo::bar()"},
		{"0x10 plain_c\n", false, "plain_c"},
		{"0x10\tinner--_ZN5outer3runEi\n", true, "inner|outer::run(int)"},
		{"0x10\t??\n", true, ""},
	} {
		names := map[uint64][]string{}
		if err := parseSymbolAnswer([]byte(c.body), c.inline, testBudget(), names); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(names[0x10], "|"); got != c.want {
			t.Errorf("%q: got %q, want %q", c.body, got, c.want)
		}
	}
}
