package web

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/pprof/profile"
)

// largeProfile builds a heap profile of the size the project benchmarks
// jeprof on (issue 4: 39,538 stacks over 8,499 PCs): stacks of depth 8 to
// 40 over nfunc functions, deterministic.
func largeProfile(b *testing.B, nstacks, nfunc int) []byte {
	b.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}},
		PeriodType: &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:     524288,
	}
	m := &profile.Mapping{ID: 1, Start: 0x400000, Limit: 0x8000000, File: "/opt/starrocks/lib/starrocks_be",
		HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*profile.Mapping{m}
	for i := range nfunc {
		f := &profile.Function{ID: uint64(i + 1), Name: fmt.Sprintf("starrocks::Module%d::Func%d(int)", i%97, i),
			SystemName: fmt.Sprintf("starrocks::Module%d::Func%d(int)", i%97, i), Filename: fmt.Sprintf("/src/be/m%d.cpp", i%97)}
		p.Function = append(p.Function, f)
		p.Location = append(p.Location, &profile.Location{ID: uint64(i + 1), Mapping: m, Address: 0x400000 + uint64(i)*16,
			Line: []profile.Line{{Function: f, Line: int64(i%500 + 1)}}})
	}
	for range nstacks {
		depth := 8 + r.IntN(33)
		locs := make([]*profile.Location, depth)
		// A walk down a call graph where each function calls 4 others, so
		// stacks share callers and edges as real programs' do.
		f := r.IntN(8)
		for d := depth - 1; d >= 0; d-- {
			locs[d] = p.Location[f]
			f = (f*7 + (1+r.IntN(4))*13 + 1) % nfunc
		}
		n := int64(1 + r.IntN(100))
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{n, n * int64(64+r.IntN(1<<16))}})
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkLargeProfile times, on a profile of the size above, the first
// request of a view (store read, parse, pprof setup) and each page after.
func BenchmarkLargeProfile(b *testing.B) {
	data := largeProfile(b, 39538, 8499)
	b.Logf("profile: %d bytes gzipped", len(data))
	store := &memStore{profiles: map[string][]byte{"big": data}}
	fetch := func(b *testing.B, srv *httptest.Server, page string) {
		resp, err := http.Get(srv.URL + "/snapshots/big/" + page)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", page, resp.StatusCode)
		}
		b.SetBytes(n)
	}
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			h, err := New(Options{Store: store})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(h)
			fetch(b, srv, "top")
			srv.Close()
		}
	})
	h, err := New(Options{Store: store})
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	fetch(b, srv, "top")
	for _, page := range []string{"top", "graph", "flamegraph", "peek?f=" + url.QueryEscape(`Func1\(`), "source?f=" + url.QueryEscape(`Func1\(`)} {
		b.Run(page, func(b *testing.B) {
			for b.Loop() {
				fetch(b, srv, page)
			}
		})
	}
}
