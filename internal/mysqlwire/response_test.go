package mysqlwire

import (
	"bytes"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// The event loops' response parser must end a response exactly where
// relayResultsFrom does, however the bytes are cut into reads.
func TestResponseParserEnds(t *testing.T) {
	more := uint16(mysql.SERVER_MORE_RESULTS_EXISTS)
	cursor := uint16(mysql.SERVER_STATUS_CURSOR_EXISTS)
	Column := []byte("\x03def\x00\x01t\x01t\x01a\x01a\x0c\x3f\x00\x0b\x00\x00\x00\x03\x00\x00\x00\x00\x00")
	bigRow := bytes.Repeat([]byte{'x'}, MaxPayload+10) // two physical packets
	resultSet := func(status uint16, rows ...[]byte) [][]byte {
		pk := [][]byte{{1}, Column, EOFPacket(status&^more, 0)}
		pk = append(pk, rows...)
		return append(pk, EOFPacket(status, 0))
	}
	tests := []struct {
		name    string
		packets [][]byte
		status  uint16
		infile  bool
	}{
		{"ok", [][]byte{OKPacket(1, 0, 2, 0)}, 2, false},
		{"error", [][]byte{ErrPacket(mysql.NewError(1064, "syntax"))}, 7, false},
		{"result set", resultSet(2, []byte("\x011"), []byte{0xfe, 1, 2, 3, 4, 5, 6, 7, 8, 9}), 2, false},
		{"empty row value", resultSet(2, []byte{0}), 2, false},
		{"error among rows", append(resultSet(2, []byte("\x011"))[:4], ErrPacket(mysql.NewError(1317, "interrupted"))), 2, false},
		{"multi results", append(append([][]byte{OKPacket(0, 0, 2|more, 0)}, resultSet(2|more)...), OKPacket(0, 0, 2, 0)), 2, false},
		{"cursor", [][]byte{{1}, Column, EOFPacket(2|cursor, 0)}, 2 | cursor, false},
		{"16 MiB row", resultSet(2, bigRow), 2, false},
		{"local infile", [][]byte{append([]byte{HdrLocalInfile}, "/tmp/f"...)}, 7, true},
	}
	for _, tt := range tests {
		var stream []byte
		seq := uint8(1)
		for _, p := range tt.packets {
			stream, seq = appendPacket(stream, p, seq)
		}
		whole := len(stream)
		stream = append(stream, 0xAA, 0xBB) // not the response's
		for _, chunk := range []int{1, 3, 4096, len(stream)} {
			if chunk < 4096 && whole > 1<<20 {
				continue // byte by byte through 16 MiB is slow, not different
			}
			p := ResponseParser{seq: 1, Status: 7}
			fed, done, infile := 0, false, false
			for fed < len(stream) && !done && !infile {
				n, d, in := p.Feed(stream[fed:min(fed+chunk, len(stream))])
				if p.err != nil {
					t.Fatalf("%s, chunks of %d: %v", tt.name, chunk, p.err)
				}
				fed, done, infile = fed+n, d, in
			}
			if fed != whole || done == tt.infile || infile != tt.infile || p.Status != tt.status {
				t.Errorf("%s, chunks of %d: ended at %d of %d (done %v, infile %v, status %#x); want the end, infile %v, status %#x",
					tt.name, chunk, fed, whole, done, infile, p.Status, tt.infile, tt.status)
			}
		}
	}
}

func TestResponseParserSequence(t *testing.T) {
	p := ResponseParser{seq: 1}
	b, _ := appendPacket(nil, OKPacket(0, 0, 2, 0), 3)
	p.Feed(b)
	if p.err == nil {
		t.Fatal("a packet out of sequence was accepted")
	}
}

// appendPacket frames a payload as the upstream would, splitting it into
// physical packets of at most maxPayload bytes; it returns the next
// sequence number.
func appendPacket(b, payload []byte, seq uint8) ([]byte, uint8) {
	for {
		n := min(len(payload), MaxPayload)
		b = append(b, byte(n), byte(n>>8), byte(n>>16), seq)
		b = append(b, payload[:n]...)
		payload = payload[n:]
		seq++
		if n < MaxPayload {
			return b, seq
		}
	}
}
