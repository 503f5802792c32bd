package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Packet header bytes of the responses the relay has to tell apart.
const (
	hdrOK          = 0x00
	hdrAuthMore    = 0x01
	hdrLocalInfile = 0xFB
	hdrEOF         = 0xFE
	hdrErr         = 0xFF
)

// passThroughPlugin is a plugin name no server implements: naming it in the
// handshake response makes the upstream answer with an AuthSwitchRequest
// carrying its own salt, which the client then answers directly.
const passThroughPlugin = "heapproxy_pass_through"

// proxyCaps are the capabilities heapproxy can relay. DEPRECATE_EOF is left
// out so every result set ends in an EOF packet the relay can find, COMPRESS
// and QUERY_ATTRIBUTES because they change the framing the proxy peeks at.
const proxyCaps = mysql.CLIENT_LONG_PASSWORD | mysql.CLIENT_FOUND_ROWS | mysql.CLIENT_LONG_FLAG |
	mysql.CLIENT_CONNECT_WITH_DB | mysql.CLIENT_ODBC | mysql.CLIENT_LOCAL_FILES |
	mysql.CLIENT_IGNORE_SPACE | mysql.CLIENT_PROTOCOL_41 | mysql.CLIENT_INTERACTIVE |
	mysql.CLIENT_IGNORE_SIGPIPE | mysql.CLIENT_TRANSACTIONS | mysql.CLIENT_SECURE_CONNECTION |
	mysql.CLIENT_MULTI_STATEMENTS | mysql.CLIENT_MULTI_RESULTS | mysql.CLIENT_PS_MULTI_RESULTS |
	mysql.CLIENT_PLUGIN_AUTH | mysql.CLIENT_CONNECT_ATTRS | mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA |
	mysql.CLIENT_CAN_HANDLE_EXPIRED_PASSWORDS | mysql.CLIENT_SESSION_TRACK

var errMalformed = errors.New("malformed packet")

// greeting is the server's initial handshake (protocol version 10).
type greeting struct {
	version  string
	connID   uint32
	salt     []byte
	caps     uint32
	charset  uint8
	status   uint16
	plugin   string
	mariaExt uint32 // MariaDB's extended capabilities, kept zero towards clients
}

func parseGreeting(p []byte) (*greeting, error) {
	if len(p) < 1 || p[0] != 10 {
		return nil, fmt.Errorf("unsupported handshake protocol %v", p[:min(len(p), 1)])
	}
	g := &greeting{}
	i := bytes.IndexByte(p[1:], 0)
	if i < 0 {
		return nil, errMalformed
	}
	g.version = string(p[1 : 1+i])
	p = p[2+i:]
	if len(p) < 4+8+1+2 {
		return nil, errMalformed
	}
	g.connID = binary.LittleEndian.Uint32(p)
	g.salt = append([]byte(nil), p[4:12]...)
	p = p[13:]
	g.caps = uint32(binary.LittleEndian.Uint16(p))
	p = p[2:]
	if len(p) < 1+2+2+1+10 {
		return g, nil
	}
	g.charset = p[0]
	g.status = binary.LittleEndian.Uint16(p[1:])
	g.caps |= uint32(binary.LittleEndian.Uint16(p[3:])) << 16
	saltLen := int(p[5])
	g.mariaExt = binary.LittleEndian.Uint32(p[12:16])
	p = p[16:]
	if g.caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		n := max(13, saltLen-8)
		if len(p) < n {
			return nil, errMalformed
		}
		part := p[:n]
		if part[len(part)-1] == 0 {
			part = part[:len(part)-1]
		}
		g.salt = append(g.salt, part...)
		p = p[n:]
	}
	if g.caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		if i := bytes.IndexByte(p, 0); i >= 0 {
			p = p[:i]
		}
		g.plugin = string(p)
	}
	return g, nil
}

func (g *greeting) encode() []byte {
	b := []byte{10}
	b = append(b, g.version...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, g.connID)
	b = append(b, g.salt[:8]...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(g.caps))
	b = append(b, g.charset)
	b = binary.LittleEndian.AppendUint16(b, g.status)
	b = binary.LittleEndian.AppendUint16(b, uint16(g.caps>>16))
	b = append(b, byte(len(g.salt)+1))
	b = append(b, make([]byte, 10)...)
	b = append(b, g.salt[8:]...)
	b = append(b, 0)
	b = append(b, g.plugin...)
	return append(b, 0)
}

// handshakeResponse is the client's HandshakeResponse41.
type handshakeResponse struct {
	caps      uint32
	maxPacket uint32
	charset   uint8
	user      string
	auth      []byte
	db        string
	plugin    string
	attrs     []byte // raw, length prefix included
}

// isSSLRequest tells the truncated response a client sends before TLS.
func isSSLRequest(p []byte) bool {
	return len(p) == 32 && binary.LittleEndian.Uint32(p)&mysql.CLIENT_SSL != 0
}

func parseHandshakeResponse(p []byte) (*handshakeResponse, error) {
	if len(p) < 32 {
		return nil, errMalformed
	}
	r := &handshakeResponse{
		caps:      binary.LittleEndian.Uint32(p),
		maxPacket: binary.LittleEndian.Uint32(p[4:]),
		charset:   p[8],
	}
	if r.caps&mysql.CLIENT_PROTOCOL_41 == 0 {
		return nil, errors.New("client does not speak protocol 4.1")
	}
	p = p[32:]
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, errMalformed
	}
	r.user = string(p[:i])
	p = p[i+1:]
	switch {
	case r.caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		n, _, k := lenEncInt(p)
		if k == 0 || uint64(len(p)-k) < n {
			return nil, errMalformed
		}
		r.auth = p[k : k+int(n)]
		p = p[k+int(n):]
	case r.caps&mysql.CLIENT_SECURE_CONNECTION != 0:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, errMalformed
		}
		r.auth = p[1 : 1+int(p[0])]
		p = p[1+int(p[0]):]
	default:
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return nil, errMalformed
		}
		r.auth = p[:i]
		p = p[i+1:]
	}
	r.auth = append([]byte(nil), r.auth...)
	if r.caps&mysql.CLIENT_CONNECT_WITH_DB != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		r.db = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if r.caps&mysql.CLIENT_PLUGIN_AUTH != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		r.plugin = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if r.caps&mysql.CLIENT_CONNECT_ATTRS != 0 && len(p) > 0 {
		r.attrs = append([]byte(nil), p...)
	}
	return r, nil
}

func (r *handshakeResponse) encode() []byte {
	b := binary.LittleEndian.AppendUint32(nil, r.caps)
	b = binary.LittleEndian.AppendUint32(b, r.maxPacket)
	b = append(b, r.charset)
	b = append(b, make([]byte, 23)...)
	b = append(b, r.user...)
	b = append(b, 0)
	switch {
	case r.caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		b = mysql.AppendLengthEncodedInteger(b, uint64(len(r.auth)))
		b = append(b, r.auth...)
	case r.caps&mysql.CLIENT_SECURE_CONNECTION != 0:
		b = append(b, byte(len(r.auth)))
		b = append(b, r.auth...)
	default:
		b = append(b, r.auth...)
		b = append(b, 0)
	}
	if r.caps&mysql.CLIENT_CONNECT_WITH_DB != 0 {
		b = append(b, r.db...)
		b = append(b, 0)
	}
	if r.caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		b = append(b, r.plugin...)
		b = append(b, 0)
	}
	if r.caps&mysql.CLIENT_CONNECT_ATTRS != 0 {
		if r.attrs == nil {
			b = append(b, 0)
		}
		b = append(b, r.attrs...)
	}
	return b
}

// sslRequest is the first 32 bytes of a handshake response, sent before TLS.
func sslRequest(caps, maxPacket uint32, charset uint8) []byte {
	b := binary.LittleEndian.AppendUint32(nil, caps|mysql.CLIENT_SSL)
	b = binary.LittleEndian.AppendUint32(b, maxPacket)
	b = append(b, charset)
	return append(b, make([]byte, 23)...)
}

// changeUser is a COM_CHANGE_USER request.
type changeUser struct {
	user    string
	auth    []byte
	db      string
	charset uint16
	plugin  string
	attrs   []byte
}

func parseChangeUser(p []byte, caps uint32) (*changeUser, error) {
	p = p[1:]
	c := &changeUser{}
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, errMalformed
	}
	c.user = string(p[:i])
	p = p[i+1:]
	if caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, errMalformed
		}
		c.auth = append([]byte(nil), p[1:1+int(p[0])]...)
		p = p[1+int(p[0]):]
	} else {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return nil, errMalformed
		}
		c.auth = append([]byte(nil), p[:i]...)
		p = p[i+1:]
	}
	i = bytes.IndexByte(p, 0)
	if i < 0 {
		i = len(p)
	}
	c.db = string(p[:i])
	p = p[min(i+1, len(p)):]
	if len(p) >= 2 {
		c.charset = binary.LittleEndian.Uint16(p)
		p = p[2:]
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		c.plugin = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if caps&mysql.CLIENT_CONNECT_ATTRS != 0 && len(p) > 0 {
		c.attrs = append([]byte(nil), p...)
	}
	return c, nil
}

func (c *changeUser) encode(caps uint32) []byte {
	b := []byte{mysql.COM_CHANGE_USER}
	b = append(b, c.user...)
	b = append(b, 0)
	b = append(b, byte(len(c.auth)))
	b = append(b, c.auth...)
	b = append(b, c.db...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, c.charset)
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		b = append(b, c.plugin...)
		b = append(b, 0)
	}
	if caps&mysql.CLIENT_CONNECT_ATTRS != 0 && c.attrs != nil {
		b = append(b, c.attrs...)
	}
	return b
}

// lenEncInt reads a length-encoded integer at the start of b; size is 0
// when b is cut short. (go-mysql's LengthEncodedInt indexes past the end of
// a short slice, and these bytes come from clients.)
func lenEncInt(b []byte) (v uint64, null bool, size int) {
	if len(b) == 0 {
		return 0, false, 0
	}
	switch b[0] {
	case 0xfb:
		return 0, true, 1
	case 0xfc:
		size = 3
	case 0xfd:
		size = 4
	case 0xfe:
		size = 9
	default:
		return uint64(b[0]), false, 1
	}
	if len(b) < size {
		return 0, false, 0
	}
	for i := size - 1; i >= 1; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v, false, size
}

// okStatus reads the status flags of an OK packet.
func okStatus(p []byte) uint16 {
	p = p[1:]
	for range 2 { // affected rows, last insert id
		_, _, n := lenEncInt(p)
		if n == 0 || n > len(p) {
			return 0
		}
		p = p[n:]
	}
	if len(p) < 2 {
		return 0
	}
	return binary.LittleEndian.Uint16(p)
}

// isEOF tells an EOF packet from a row that happens to start with 0xFE.
func isEOF(p []byte) bool { return len(p) > 0 && p[0] == hdrEOF && len(p) < 9 }

func eofStatus(p []byte) uint16 {
	if len(p) < 5 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[3:])
}

func okPacket(affected, insertID uint64, status, warnings uint16) []byte {
	b := []byte{hdrOK}
	b = mysql.AppendLengthEncodedInteger(b, affected)
	b = mysql.AppendLengthEncodedInteger(b, insertID)
	b = binary.LittleEndian.AppendUint16(b, status)
	return binary.LittleEndian.AppendUint16(b, warnings)
}

func eofPacket(status, warnings uint16) []byte {
	b := []byte{hdrEOF}
	b = binary.LittleEndian.AppendUint16(b, warnings)
	return binary.LittleEndian.AppendUint16(b, status)
}

func errPacket(e *mysql.MyError) []byte {
	b := []byte{hdrErr}
	b = binary.LittleEndian.AppendUint16(b, e.Code)
	b = append(b, '#')
	state := e.State
	if len(state) != 5 {
		state = mysql.DEFAULT_MYSQL_STATE
	}
	b = append(b, state...)
	return append(b, e.Message...)
}

// parseErrPacket reads an ERR packet back (for logs and for deciding to
// answer a statement locally after the upstream refused it).
func parseErrPacket(p []byte) *mysql.MyError {
	e := &mysql.MyError{}
	if len(p) < 3 {
		return e
	}
	e.Code = binary.LittleEndian.Uint16(p[1:])
	p = p[3:]
	if len(p) >= 6 && p[0] == '#' {
		e.State = string(p[1:6])
		p = p[6:]
	}
	e.Message = string(p)
	return e
}
