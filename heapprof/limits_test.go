package heapprof

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heapproxy/heapproxy/internal/gzipbomb"
)

// TestParseLimitBombs feeds real gzip bombs (1 GiB inflated) to
// ParseLimit with an 8 MiB limit and checks that they fail with
// ErrTooLarge while the heap grows by a bounded amount, never by the
// inflated size. Before ParseLimit, a gzip inside gzip reached
// profile.ParseData and was inflated whole.
func TestParseLimitBombs(t *testing.T) {
	const (
		limit    = 8 << 20
		inflated = 1 << 30
		// ReadAll of up to limit bytes doubles its buffer: 2*limit, plus
		// the bufio and flate windows.
		maxGrowth = 4*limit + 8<<20
	)
	bomb := gzipbomb.Zeros(t, "", inflated)
	v2Bomb := gzipbomb.Zeros(t, "heap_v2/524288\n", inflated) // one endless line
	// The inner bomb is ~1 MB: under the limit once the outer layer is off.
	nested := gzipbomb.Gzip(t, bomb)
	triple := gzipbomb.Gzip(t, nested)
	concat := append(append([]byte{}, bomb[:len(bomb):len(bomb)]...), bomb...)
	for _, c := range []struct {
		name string
		data []byte
		want error // nil: any error wrapping ErrTooLarge
		msg  string
	}{
		{name: "single gzip bomb", data: bomb},
		{name: "nested gzip bomb", data: nested},
		{name: "concatenated gzip members", data: concat},
		{name: "heap_v2 gzip bomb", data: v2Bomb, msg: "line longer than"},
		{name: "three gzip layers", data: triple, msg: "nested gzip layers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if len(c.data) > limit {
				t.Fatalf("bomb of %d bytes is not under the limit compressed", len(c.data))
			}
			var err error
			growth := heapPeak(func() { _, err = ParseLimit(context.Background(), c.data, limit) })
			switch {
			case c.msg != "":
				if err == nil || !bytes.Contains([]byte(err.Error()), []byte(c.msg)) {
					t.Errorf("ParseLimit(%d-byte bomb) = %v, want an error naming %q", len(c.data), err, c.msg)
				}
			case !errors.Is(err, ErrTooLarge):
				t.Errorf("ParseLimit(%d-byte bomb) = %v, want ErrTooLarge", len(c.data), err)
			}
			t.Logf("%d bytes compressed: heap grew %.1f MB; %v", len(c.data), float64(growth)/1e6, err)
			if growth > maxGrowth {
				t.Errorf("heap grew %d bytes parsing a bomb, bound %d", growth, maxGrowth)
			}
		})
	}
}

// TestParseLimitSizes checks the limit on plain and gzipped input at and
// just over the limit, and that ParseReader keeps MaxProfileBytes.
func TestParseLimitSizes(t *testing.T) {
	good := []byte(goodV2)
	n := int64(len(good))
	for _, c := range []struct {
		name    string
		data    []byte
		limit   int64
		tooBig  bool
		wantErr bool
	}{
		{name: "plain at limit", data: good, limit: n},
		{name: "plain over limit", data: good, limit: n - 1, tooBig: true, wantErr: true},
		{name: "gzip inflating to the limit", data: gzipbomb.Gzip(t, good), limit: n},
		{name: "gzip inflating over the limit", data: gzipbomb.Gzip(t, good), limit: n - 1, tooBig: true, wantErr: true},
		{name: "nested gzip at limit", data: gzipbomb.Gzip(t, gzipbomb.Gzip(t, good)), limit: n},
		{name: "nested gzip over limit", data: gzipbomb.Gzip(t, gzipbomb.Gzip(t, good)), limit: n - 1, tooBig: true, wantErr: true},
		{name: "zero limit is MaxProfileBytes", data: gzipbomb.Gzip(t, good), limit: 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := ParseLimit(context.Background(), c.data, c.limit)
			if (err != nil) != c.wantErr || errors.Is(err, ErrTooLarge) != c.tooBig {
				t.Fatalf("ParseLimit(limit %d) = %v, want error %v (too large %v)", c.limit, err, c.wantErr, c.tooBig)
			}
			if err == nil && len(p.Sample) == 0 {
				t.Error("no samples")
			}
		})
	}
}

// TestParseLimitContext: an ended context stops parsing with its error.
func TestParseLimitContext(t *testing.T) {
	data := genHeapV2(2000, 64, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"heap_v2", data},
		{"gzip heap_v2", gzipbomb.Gzip(t, data)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := ParseLimit(ctx, c.data, 0); !errors.Is(err, context.Canceled) {
				t.Errorf("ParseLimit with a canceled context = %v", err)
			}
			dctx, dcancel := context.WithTimeout(context.Background(), time.Nanosecond)
			defer dcancel()
			<-dctx.Done()
			if _, err := ParseReaderLimit(dctx, bytes.NewReader(c.data), 0); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("ParseReaderLimit past its deadline = %v", err)
			}
		})
	}
}
