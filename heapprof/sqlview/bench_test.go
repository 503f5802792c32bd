package sqlview

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof/snapshot"
)

// benchSource holds 10 snapshots of one node with 1,000 functions each:
// 10,000 function rows, 9,000 diff rows.
func benchSource() *memSource {
	src := &memSource{fns: map[string][]snapshot.Function{}, stk: map[string][]snapshot.Stack{}}
	base := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		id := fmt.Sprintf("heap_profile.10001.%d", i)
		src.snaps = append(src.snaps, snapshot.Snapshot{ID: id, NodeID: 10001, NodeKind: "starrocks", NodeAddr: "10.0.0.1:8040",
			TakenAt: base.Add(time.Duration(i) * time.Hour), TotalBytes: 1 << 30, SamplePeriod: 524288, Format: "jemalloc"})
		fns := make([]snapshot.Function, 1000)
		for j := range fns {
			b := int64(j*1000 + i*j)
			fns[j] = snapshot.Function{SnapshotID: id,
				Name:      fmt.Sprintf("starrocks::vectorized::Function%04d<long, std::allocator<long> >(long const*, unsigned long)", j),
				ShortName: fmt.Sprintf("starrocks::vectorized::Function%04d", j),
				FlatBytes: b, CumBytes: 2 * b, FlatObjects: int64(j), CumObjects: int64(2 * j), FlatPercent: float64(b) / (1 << 30) * 100}
		}
		src.fns[id] = fns
	}
	return src
}

func BenchmarkQuery(b *testing.B) {
	e, s := newTestEngine(b, benchSource())
	for _, bq := range []struct{ name, query string }{
		{"count", "SELECT COUNT(*) FROM heapprof.functions"},
		{"top10 one snapshot", "SELECT name, flat_bytes FROM heapprof.functions WHERE snapshot_id = 'heap_profile.10001.9' ORDER BY flat_bytes DESC LIMIT 10"},
		{"group by name", "SELECT name, MAX(cum_bytes) - MIN(cum_bytes) AS g FROM heapprof.functions GROUP BY name ORDER BY g DESC LIMIT 10"},
		{"join snapshots", "SELECT s.taken_at, SUM(f.flat_bytes) FROM heapprof.snapshots s JOIN heapprof.functions f ON f.snapshot_id = s.id GROUP BY s.taken_at ORDER BY s.taken_at"},
		{"diffs top growing", "SELECT name, SUM(flat_bytes_delta) AS g FROM heapprof.diffs WHERE node_id = 10001 GROUP BY name ORDER BY g DESC LIMIT 10"},
		{"all rows", "SELECT * FROM heapprof.functions"},
		// Comparisons of DOUBLEs and DECIMALs (realcompare.go).
		{"filter double", "SELECT COUNT(*) FROM heapprof.functions WHERE flat_pct > 0.05"},
		{"filter in list", "SELECT COUNT(*) FROM heapprof.functions WHERE flat_pct IN (0.05, 0.5, 5)"},
		{"filter decimal", "SELECT COUNT(*) FROM heapprof.functions WHERE flat_bytes / 1048576 > 0.5"},
		{"filter date text", "SELECT COUNT(*) FROM heapprof.functions WHERE taken_at > '2026-11-20 09:00:00'"},
	} {
		benchQuery(b, e, s, bq.name, bq.query)
	}
}

// BenchmarkUnionChain plans and runs long UNION chains (unions.go):
// MariaDB Connector/ODBC's SQLGetTypeInfo, and 200 literal rows of one
// column type each.
func BenchmarkUnionChain(b *testing.B) {
	e, s := newTestEngine(b, benchSource())
	typeInfo, err := os.ReadFile("testdata/odbc/gettypeinfo.sql")
	if err != nil {
		b.Fatal(err)
	}
	var rows strings.Builder
	for i := range 200 {
		if i > 0 {
			rows.WriteString(" UNION ALL ")
		}
		fmt.Fprintf(&rows, "SELECT 'T%03d' AS a, %d AS b, 'x' AS c, 'y' AS d, 1 AS e, 2 AS f, 3 AS g, 4 AS h, 5 AS i, 6 AS j", i, i%100+1)
	}
	benchQuery(b, e, s, "odbc gettypeinfo", string(typeInfo))
	benchQuery(b, e, s, "200 rows", rows.String())
}

func benchQuery(b *testing.B, e *Engine, s *Session, name, query string) {
	ctx := context.Background()
	b.Run(name, func(b *testing.B) {
		for b.Loop() {
			r, err := e.Query(ctx, s, query)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for {
				_, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				n++
			}
			r.Close()
			if n == 0 {
				b.Fatal("no rows")
			}
		}
	})
}
