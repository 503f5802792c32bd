// Package gzipbomb builds gzip bombs for tests: small, valid gzip streams
// that inflate to far more than they weigh, layered or concatenated as a
// hostile node's answer or profile file might be, so the tests of every
// reader that must bound what it inflates build them one way.
package gzipbomb

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// Gzip compresses data as one gzip member at the best compression: one
// more layer around a bomb (or around a real profile).
func Gzip(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Zeros is one gzip member inflating to n bytes: prefix, then zeros,
// compressed about a thousandfold. It is written a MiB at a time, so n
// may be far larger than the test should hold.
func Zeros(t testing.TB, prefix string, n int) []byte {
	t.Helper()
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write([]byte(prefix)); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for left := n - len(prefix); left > 0; left -= len(chunk) {
		if _, err := zw.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Members is a multi-member gzip stream inflating to members*memberSize
// zero bytes: one member of memberSize zeros, repeated (gzip readers read
// every member of a stream, as gunzip does).
func Members(t testing.TB, memberSize, members int) []byte {
	t.Helper()
	return bytes.Repeat(Gzip(t, make([]byte, memberSize)), members)
}
