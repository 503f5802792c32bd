package backends

import (
	"context"
	"net/http"
	"testing"
)

// BenchmarkDump measures a whole dump round trip (prof.dump on the node,
// HTTP, checks) against the real jemalloc node.
func BenchmarkDump(b *testing.B) {
	for _, kind := range []Kind{StarRocks, GreptimeDB} {
		b.Run(string(kind), func(b *testing.B) {
			host, port := startJenode(b)
			node := Node{ID: 1, Kind: kind, Host: host, HTTPPort: port}
			reg := NewRegistry(Options{})
			reg.Add(node)
			for _, path := range []string{"/debug/prof/mem/activate"} {
				req, _ := http.NewRequest(http.MethodPost, node.BaseURL()+path, nil)
				if resp, err := http.DefaultClient.Do(req); err != nil {
					b.Fatal(err)
				} else {
					resp.Body.Close()
				}
			}
			if resp, err := http.Get(node.BaseURL() + "/alloc"); err != nil {
				b.Fatal(err)
			} else {
				resp.Body.Close()
			}
			ctx := context.Background()
			b.ResetTimer()
			var size int
			for b.Loop() {
				d, err := reg.Dump(ctx, node)
				if err != nil {
					b.Fatal(err)
				}
				size = len(d.Data)
			}
			b.ReportMetric(float64(size), "bytes/dump")
		})
	}
}
