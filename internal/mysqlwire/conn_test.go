package mysqlwire

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// BenchmarkRelayRows relays a 100-row result (120-byte rows, then EOF)
// from a buffered upstream to a client: the per-row cost of the relay,
// without the sockets.
func BenchmarkRelayRows(b *testing.B) {
	var src bytes.Buffer
	row := bytes.Repeat([]byte{'x'}, 120)
	seq := byte(0)
	for range 100 {
		src.Write([]byte{byte(len(row)), 0, 0, seq})
		src.Write(row)
		seq++
	}
	src.Write([]byte{5, 0, 0, seq, HdrEOF, 0, 0, 2, 0})
	data := src.Bytes()
	b.SetBytes(int64(len(data)))
	r := bytes.NewReader(data)
	up := &Conn{r: bufio.NewReaderSize(r, readBufferSize)}
	client := &Conn{w: bufio.NewWriterSize(io.Discard, writeBufferSize)}
	for b.Loop() {
		r.Reset(data)
		up.r.Reset(r)
		up.seq, client.seq = 0, 0
		head, err := RelayUntil(client, up, EndsRows)
		if err != nil || !IsEOF(head) {
			b.Fatalf("relay: %v, last packet % x", err, head)
		}
		client.Flush()
	}
}

// TestRelayUntil relays rows of every size class (empty, small, at the
// inspect limit, a 16 MiB continuation) with the two sides' sequence
// numbers equal (copied in runs) and apart (renumbered packet by packet),
// through a small read buffer so runs break at every boundary.
func TestRelayUntil(t *testing.T) {
	payloads := [][]byte{{}, []byte("row"), bytes.Repeat([]byte{'a'}, InspectLimit-1),
		bytes.Repeat([]byte{'b'}, InspectLimit), bytes.Repeat([]byte{'c'}, MaxPayload+10), []byte("last row")}
	var in bytes.Buffer
	w := &Conn{w: bufio.NewWriter(&in)}
	for _, p := range payloads {
		w.WritePacket(p)
	}
	w.WritePacket([]byte{HdrEOF, 0, 0, 2, 0})
	w.WritePacket([]byte("next response"))
	w.Flush()
	for _, clientSeq := range []uint8{0, 7} {
		up := &Conn{r: bufio.NewReaderSize(bytes.NewReader(in.Bytes()), 100)}
		var out bytes.Buffer
		client := &Conn{w: bufio.NewWriter(&out), seq: clientSeq}
		head, err := RelayUntil(client, up, EndsRows)
		if err != nil {
			t.Fatalf("client seq %d: %v", clientSeq, err)
		}
		client.Flush()
		if !IsEOF(head) {
			t.Fatalf("client seq %d: relay stopped at % x, want the EOF", clientSeq, head[:min(len(head), 8)])
		}
		var want bytes.Buffer
		ww := &Conn{w: bufio.NewWriter(&want), seq: clientSeq}
		for _, p := range payloads {
			ww.WritePacket(p)
		}
		ww.WritePacket([]byte{HdrEOF, 0, 0, 2, 0})
		ww.Flush()
		if !bytes.Equal(out.Bytes(), want.Bytes()) {
			t.Fatalf("client seq %d: relayed %d bytes, want %d (the same packets, numbered from %d)", clientSeq, out.Len(), want.Len(), clientSeq)
		}
		// The next response is left unread, with its sequence number.
		if p, err := up.ReadPacket(64); err != nil || string(p) != "next response" {
			t.Fatalf("client seq %d: after the relay the upstream reads %q, %v", clientSeq, p, err)
		}
	}
}
