package gzipbomb

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// inflate reads every gzip member of data, counting the bytes and keeping
// the first few.
func inflate(t *testing.T, data []byte) (n int64, head []byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	head = make([]byte, 32)
	k, _ := io.ReadFull(zr, head)
	rest, err := io.Copy(io.Discard, zr)
	if err != nil {
		t.Fatal(err)
	}
	return int64(k) + rest, head[:k]
}

// Each bomb inflates to what it says, starting as it says, and weighs far
// less.
func TestBombs(t *testing.T) {
	for _, c := range []struct {
		name     string
		bomb     []byte
		inflated int64
		head     string
		maxSize  int // bytes the bomb may weigh
	}{
		{"zeros", Zeros(t, "", 64<<20), 64 << 20, "\x00\x00\x00", 128 << 10},
		{"zeros with prefix", Zeros(t, "heap_v2/524288\n", 64<<20), 64 << 20, "heap_v2/524288\n\x00", 128 << 10},
		{"members", Members(t, 1<<20, 64), 64 << 20, "\x00\x00\x00", 128 << 10},
		{"gzip of a string", Gzip(t, []byte("heap_v2/1\n")), 10, "heap_v2/1\n", 64},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, head := inflate(t, c.bomb)
			if n != c.inflated || !bytes.HasPrefix(head, []byte(c.head)) {
				t.Errorf("inflates to %d bytes starting %q, want %d starting %q", n, head, c.inflated, c.head)
			}
			if len(c.bomb) > c.maxSize {
				t.Errorf("weighs %d bytes, want at most %d", len(c.bomb), c.maxSize)
			}
		})
	}
}

// A layer of Gzip around a bomb holds the bomb's bytes.
func TestLayer(t *testing.T) {
	bomb := Zeros(t, "", 1<<20)
	outer := Gzip(t, bomb)
	zr, err := gzip.NewReader(bytes.NewReader(outer))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(inner, bomb) {
		t.Errorf("inner layer: %v, %d bytes equal to the bomb: %v", err, len(inner), bytes.Equal(inner, bomb))
	}
}
