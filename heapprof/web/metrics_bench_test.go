package web

import (
	"io"
	"testing"
	"time"
)

// The proxy calls Statement on every client command and ConnOpened and
// ConnClosed on every connection: these must stay cheap, also when all
// sessions count at once.
func BenchmarkMetrics(b *testing.B) {
	benchmarks := []struct {
		name string
		op   func(m *Metrics)
	}{
		{"Statement/forwarded", func(m *Metrics) { m.Statement("forwarded") }},
		{"Statement/local", func(m *Metrics) { m.Statement("local") }},
		{"Statement/uncached", func(m *Metrics) { m.Statement("some_kind") }},
		{"ConnOpenedClosed", func(m *Metrics) { m.ConnOpened(); m.ConnClosed() }},
		{"Error", func(m *Metrics) { m.Error("upstream") }},
		{"Dump", func(m *Metrics) { m.Dump("starrocks", 120*time.Millisecond, nil) }},
	}
	for _, bb := range benchmarks {
		b.Run(bb.name, func(b *testing.B) {
			m := NewMetrics(nil)
			for b.Loop() {
				bb.op(m)
			}
		})
		b.Run(bb.name+"/parallel", func(b *testing.B) {
			m := NewMetrics(nil)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bb.op(m)
				}
			})
		})
	}
}

// BenchmarkMetricsWrite times one scrape's formatting after some traffic.
func BenchmarkMetricsWrite(b *testing.B) {
	m := NewMetrics(nil)
	for _, k := range []string{"forwarded", "local", "admin_execute", "show_backends"} {
		m.Statement(k)
	}
	m.Dump("starrocks", time.Second, nil)
	m.Dump("go", time.Millisecond, nil)
	m.Error("upstream")
	for b.Loop() {
		if err := m.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
