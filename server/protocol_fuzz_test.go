package server

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
		parseHandshakeResponse(p)
	})
}
