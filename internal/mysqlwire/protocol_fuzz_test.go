package mysqlwire

import (
	"encoding/binary"
	"testing"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// A handshake response is the first thing an unauthenticated client sends:
// any bytes give a response or an error, never a panic.
func FuzzHandshakeResponse(f *testing.F) {
	caps := uint32(mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_SECURE_CONNECTION | mysql.CLIENT_PLUGIN_AUTH |
		mysql.CLIENT_CONNECT_WITH_DB | mysql.CLIENT_CONNECT_ATTRS)
	head := func(c uint32) []byte {
		b := binary.LittleEndian.AppendUint32(nil, c)
		return append(b, make([]byte, 28)...)
	}
	f.Add(append(head(caps), "root\x00\x14aaaaaaaaaaaaaaaaaaaa\x00mysql_native_password\x00\x00"...))
	// Length-encoded auth data cut after its 0xfc prefix.
	f.Add(append(head(caps|mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA), "root\x00\xfc"...))
	f.Add(append(head(caps), "root\x00\x00db\x00plugin\x00\xfd\x01"...))
	f.Fuzz(func(t *testing.T, p []byte) {
		ParseHandshakeResponse(p)
	})
}

// COM_CHANGE_USER comes from an authenticated client, the greeting and
// ERR packets from the upstream: any bytes parse or fail, never panic.
func FuzzPeerPackets(f *testing.F) {
	f.Add(uint8(0), []byte("\x11app\x00\x14aaaaaaaaaaaaaaaaaaaat\x00\x21\x00mysql_native_password\x00"))
	f.Add(uint8(1), []byte("\x0a10.11.6-MariaDB\x00\x01\x00\x00\x00abcdefgh\x00\xfe\xf7\x2d\x02\x00\xff\x81\x15\x00\x00\x00\x00\x00\x00\x1d\x00\x00\x00ijklmnopqrst\x00mysql_native_password\x00"))
	f.Add(uint8(2), []byte("\xff\x7a\x04#42S02Table 't.x' doesn't exist"))
	f.Fuzz(func(t *testing.T, which uint8, p []byte) {
		switch which % 3 {
		case 0:
			if len(p) > 0 { // readCommand refuses empty packets
				ParseChangeUser(p, uint32(mysql.CLIENT_SECURE_CONNECTION|mysql.CLIENT_PLUGIN_AUTH|mysql.CLIENT_CONNECT_ATTRS))
			}
		case 1:
			if g, err := ParseGreeting(p); err == nil && len(g.Salt) >= 8 {
				g.Encode()
			}
		case 2:
			ParseErrPacket(p)
		}
	})
}

// The event loops find where an upstream response ends by feeding its
// bytes to a responseParser as they arrive: any bytes, in any pieces, end
// it, fail it or wait for more, never panic.
func FuzzResponseParser(f *testing.F) {
	ok := []byte{7, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0}
	f.Add(ok, uint8(3))
	rs := []byte{1, 0, 0, 1, 1, 5, 0, 0, 2, 3, 'd', 'e', 'f', 5, 0, 0, 3, 0xfe, 0, 0, 2, 0, 2, 0, 0, 4, 1, 'x', 5, 0, 0, 5, 0xfe, 0, 0, 2, 0}
	f.Add(rs, uint8(1))
	f.Add([]byte{3, 0, 0, 1, 0xfc, 0x01}, uint8(2))
	f.Fuzz(func(t *testing.T, b []byte, chunk uint8) {
		p := ResponseParser{seq: 1} // as an event loop starts one
		step := int(chunk%16) + 1
		for len(b) > 0 && p.err == nil {
			n, done, _ := p.Feed(b[:min(step, len(b))])
			if done {
				return
			}
			if n == 0 {
				return
			}
			b = b[n:]
		}
	})
}
