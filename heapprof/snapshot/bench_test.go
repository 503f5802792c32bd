package snapshot

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/heapprof"
	"github.com/heapproxy/heapproxy/heapprof/symbolize"
)

// benchSave measures Save of the leak profile's snapshot with 2 MiB raw.
func benchSave(b *testing.B, st Store) {
	r := leakRows(b)
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Microsecond)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, funcs, stacks := crashSnap(r, NewID(1, at), at.Add(time.Duration(i)*time.Microsecond), loopRaw)
		if err := st.Save(ctx, s, funcs, stacks); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(loopRaw)
}

func BenchmarkSaveDir(b *testing.B) {
	d, err := OpenDir(b.TempDir(), Retention{PerNode: 20})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	benchSave(b, d)
}

func BenchmarkSaveMySQL(b *testing.B) {
	m, err := OpenMySQL(context.Background(), mariaDSN(b, "new"), Retention{PerNode: 20})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Close()
	benchSave(b, m)
}

// BenchmarkSummarize measures the rows of the largest leak profile (three
// rounds of the leak, 1 KiB sampling); bench/snapshot/snapcost measures a
// large generated C++ program's.
func BenchmarkSummarize(b *testing.B) {
	bin, heaps := leakProg(b)
	raw, err := os.ReadFile(heaps[2])
	if err != nil {
		b.Fatal(err)
	}
	p, err := heapprof.Parse(raw)
	if err != nil {
		b.Fatal(err)
	}
	if err := (&symbolize.Local{Binary: bin}).Symbolize(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		Summarize(p)
	}
}
