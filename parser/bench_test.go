package parser

import "testing"

// BenchmarkClassify measures the hot path: a forwarded query, as sysbench sends them.
func BenchmarkClassify(b *testing.B) {
	for _, bm := range []struct{ name, sql string }{
		{"point_select", "SELECT c FROM sbtest1 WHERE id=4993"},
		{"range", "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 4993 AND 5092 ORDER BY c"},
		{"commented", "/* app=web */ SELECT c FROM sbtest1 WHERE id=4993"},
		{"insert", "INSERT INTO sbtest1 (id, k, c, pad) VALUES (1, 2, '3', '4')"},
		{"begin", "BEGIN"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				st, err := Classify(bm.sql)
				if err != nil || st.Kind == AdminExecute {
					b.Fatal(st, err)
				}
			}
		})
	}
	b.Run("local_select_pooled", func(b *testing.B) {
		c := NewClassifier()
		b.ReportAllocs()
		for b.Loop() {
			if st, err := c.Classify("SELECT @@version_comment LIMIT 1"); err != nil || st.Kind != LocalSelect {
				b.Fatal(st, err)
			}
		}
	})
	b.Run("admin_execute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if st, err := Classify("ADMIN EXECUTE ON 10001 'System.print(HeapProf.getInstance().dump_dot_snapshot())'"); err != nil || st.Kind != AdminExecute {
				b.Fatal(st, err)
			}
		}
	})
}

// With an upstream, a FROM-less SELECT (a pool's ping) is forwarded from
// its keywords alone: no TiDB parse.
func BenchmarkClassifyOwnPing(b *testing.B) {
	c := NewClassifier()
	for _, f := range []struct {
		name     string
		classify func(string) (*Statement, error)
	}{{"Classify", c.Classify}, {"ClassifyOwn", c.ClassifyOwn}} {
		b.Run(f.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := f.classify("SELECT 1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
