package mysqlwire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// Packet header bytes of the responses the relay has to tell apart.
const (
	HdrOK          = 0x00
	HdrAuthMore    = 0x01
	HdrLocalInfile = 0xFB
	HdrEOF         = 0xFE
	HdrErr         = 0xFF
)

var ErrMalformed = errors.New("malformed packet")

// Greeting is the server's initial handshake (protocol version 10).
type Greeting struct {
	Version  string
	ConnID   uint32
	Salt     []byte
	Caps     uint32
	Charset  uint8
	Status   uint16
	Plugin   string
	mariaExt uint32 // MariaDB's extended capabilities, kept zero towards clients
}

func ParseGreeting(p []byte) (*Greeting, error) {
	if len(p) < 1 || p[0] != 10 {
		return nil, fmt.Errorf("unsupported handshake protocol %v", p[:min(len(p), 1)])
	}
	g := &Greeting{}
	i := bytes.IndexByte(p[1:], 0)
	if i < 0 {
		return nil, ErrMalformed
	}
	g.Version = string(p[1 : 1+i])
	p = p[2+i:]
	if len(p) < 4+8+1+2 {
		return nil, ErrMalformed
	}
	g.ConnID = binary.LittleEndian.Uint32(p)
	g.Salt = append([]byte(nil), p[4:12]...)
	p = p[13:]
	g.Caps = uint32(binary.LittleEndian.Uint16(p))
	p = p[2:]
	if len(p) < 1+2+2+1+10 {
		return g, nil
	}
	g.Charset = p[0]
	g.Status = binary.LittleEndian.Uint16(p[1:])
	g.Caps |= uint32(binary.LittleEndian.Uint16(p[3:])) << 16
	saltLen := int(p[5])
	g.mariaExt = binary.LittleEndian.Uint32(p[12:16])
	p = p[16:]
	if g.Caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		n := max(13, saltLen-8)
		if len(p) < n {
			return nil, ErrMalformed
		}
		part := p[:n]
		if part[len(part)-1] == 0 {
			part = part[:len(part)-1]
		}
		g.Salt = append(g.Salt, part...)
		p = p[n:]
	}
	if g.Caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		if i := bytes.IndexByte(p, 0); i >= 0 {
			p = p[:i]
		}
		g.Plugin = string(p)
	}
	return g, nil
}

func (g *Greeting) Encode() []byte {
	b := []byte{10}
	b = append(b, g.Version...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint32(b, g.ConnID)
	b = append(b, g.Salt[:8]...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(g.Caps))
	b = append(b, g.Charset)
	b = binary.LittleEndian.AppendUint16(b, g.Status)
	b = binary.LittleEndian.AppendUint16(b, uint16(g.Caps>>16))
	b = append(b, byte(len(g.Salt)+1))
	b = append(b, make([]byte, 10)...)
	b = append(b, g.Salt[8:]...)
	b = append(b, 0)
	b = append(b, g.Plugin...)
	return append(b, 0)
}

// HandshakeResponse is the client's HandshakeResponse41.
type HandshakeResponse struct {
	Caps      uint32
	MaxPacket uint32
	Charset   uint8
	User      string
	Auth      []byte
	DB        string
	Plugin    string
	Attrs     []byte // raw, length prefix included
}

// IsSSLRequest tells the truncated response a client sends before TLS.
func IsSSLRequest(p []byte) bool {
	return len(p) == 32 && binary.LittleEndian.Uint32(p)&mysql.CLIENT_SSL != 0
}

func ParseHandshakeResponse(p []byte) (*HandshakeResponse, error) {
	if len(p) < 32 {
		return nil, ErrMalformed
	}
	r := &HandshakeResponse{
		Caps:      binary.LittleEndian.Uint32(p),
		MaxPacket: binary.LittleEndian.Uint32(p[4:]),
		Charset:   p[8],
	}
	if r.Caps&mysql.CLIENT_PROTOCOL_41 == 0 {
		return nil, errors.New("client does not speak protocol 4.1")
	}
	p = p[32:]
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, ErrMalformed
	}
	r.User = string(p[:i])
	p = p[i+1:]
	switch {
	case r.Caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		n, _, k := LenEncInt(p)
		if k == 0 || uint64(len(p)-k) < n {
			return nil, ErrMalformed
		}
		r.Auth = p[k : k+int(n)]
		p = p[k+int(n):]
	case r.Caps&mysql.CLIENT_SECURE_CONNECTION != 0:
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, ErrMalformed
		}
		r.Auth = p[1 : 1+int(p[0])]
		p = p[1+int(p[0]):]
	default:
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return nil, ErrMalformed
		}
		r.Auth = p[:i]
		p = p[i+1:]
	}
	r.Auth = append([]byte(nil), r.Auth...)
	if r.Caps&mysql.CLIENT_CONNECT_WITH_DB != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		r.DB = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if r.Caps&mysql.CLIENT_PLUGIN_AUTH != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		r.Plugin = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if r.Caps&mysql.CLIENT_CONNECT_ATTRS != 0 && len(p) > 0 {
		r.Attrs = append([]byte(nil), p...)
	}
	return r, nil
}

func (r *HandshakeResponse) Encode() []byte {
	b := binary.LittleEndian.AppendUint32(nil, r.Caps)
	b = binary.LittleEndian.AppendUint32(b, r.MaxPacket)
	b = append(b, r.Charset)
	b = append(b, make([]byte, 23)...)
	b = append(b, r.User...)
	b = append(b, 0)
	switch {
	case r.Caps&mysql.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA != 0:
		b = mysql.AppendLengthEncodedInteger(b, uint64(len(r.Auth)))
		b = append(b, r.Auth...)
	case r.Caps&mysql.CLIENT_SECURE_CONNECTION != 0:
		b = append(b, byte(len(r.Auth)))
		b = append(b, r.Auth...)
	default:
		b = append(b, r.Auth...)
		b = append(b, 0)
	}
	if r.Caps&mysql.CLIENT_CONNECT_WITH_DB != 0 {
		b = append(b, r.DB...)
		b = append(b, 0)
	}
	if r.Caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		b = append(b, r.Plugin...)
		b = append(b, 0)
	}
	if r.Caps&mysql.CLIENT_CONNECT_ATTRS != 0 {
		if r.Attrs == nil {
			b = append(b, 0)
		}
		b = append(b, r.Attrs...)
	}
	return b
}

// SSLRequest is the first 32 bytes of a handshake response, sent before TLS.
func SSLRequest(caps, maxPacket uint32, charset uint8) []byte {
	b := binary.LittleEndian.AppendUint32(nil, caps|mysql.CLIENT_SSL)
	b = binary.LittleEndian.AppendUint32(b, maxPacket)
	b = append(b, charset)
	return append(b, make([]byte, 23)...)
}

// ChangeUser is a COM_CHANGE_USER request.
type ChangeUser struct {
	User    string
	Auth    []byte
	DB      string
	Charset uint16
	Plugin  string
	Attrs   []byte
}

func ParseChangeUser(p []byte, caps uint32) (*ChangeUser, error) {
	p = p[1:]
	c := &ChangeUser{}
	i := bytes.IndexByte(p, 0)
	if i < 0 {
		return nil, ErrMalformed
	}
	c.User = string(p[:i])
	p = p[i+1:]
	if caps&mysql.CLIENT_SECURE_CONNECTION != 0 {
		if len(p) < 1 || len(p) < 1+int(p[0]) {
			return nil, ErrMalformed
		}
		c.Auth = append([]byte(nil), p[1:1+int(p[0])]...)
		p = p[1+int(p[0]):]
	} else {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			return nil, ErrMalformed
		}
		c.Auth = append([]byte(nil), p[:i]...)
		p = p[i+1:]
	}
	i = bytes.IndexByte(p, 0)
	if i < 0 {
		i = len(p)
	}
	c.DB = string(p[:i])
	p = p[min(i+1, len(p)):]
	if len(p) >= 2 {
		c.Charset = binary.LittleEndian.Uint16(p)
		p = p[2:]
	}
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 && len(p) > 0 {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			i = len(p)
		}
		c.Plugin = string(p[:i])
		p = p[min(i+1, len(p)):]
	}
	if caps&mysql.CLIENT_CONNECT_ATTRS != 0 && len(p) > 0 {
		c.Attrs = append([]byte(nil), p...)
	}
	return c, nil
}

func (c *ChangeUser) Encode(caps uint32) []byte {
	b := []byte{mysql.COM_CHANGE_USER}
	b = append(b, c.User...)
	b = append(b, 0)
	b = append(b, byte(len(c.Auth)))
	b = append(b, c.Auth...)
	b = append(b, c.DB...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint16(b, c.Charset)
	if caps&mysql.CLIENT_PLUGIN_AUTH != 0 {
		b = append(b, c.Plugin...)
		b = append(b, 0)
	}
	if caps&mysql.CLIENT_CONNECT_ATTRS != 0 && c.Attrs != nil {
		b = append(b, c.Attrs...)
	}
	return b
}

// LenEncInt reads a length-encoded integer at the start of b; size is 0
// when b is cut short. (go-mysql's LengthEncodedInt indexes past the end of
// a short slice, and these bytes come from clients.)
func LenEncInt(b []byte) (v uint64, null bool, size int) {
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

// OKStatus reads the status flags of an OK packet.
func OKStatus(p []byte) uint16 {
	p = p[1:]
	for range 2 { // affected rows, last insert id
		_, _, n := LenEncInt(p)
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

// IsEOF tells an EOF packet from a row that happens to start with 0xFE.
func IsEOF(p []byte) bool { return len(p) > 0 && p[0] == HdrEOF && len(p) < 9 }

func EOFStatus(p []byte) uint16 {
	if len(p) < 5 {
		return 0
	}
	return binary.LittleEndian.Uint16(p[3:])
}

func OKPacket(affected, insertID uint64, status, warnings uint16) []byte {
	b := []byte{HdrOK}
	b = mysql.AppendLengthEncodedInteger(b, affected)
	b = mysql.AppendLengthEncodedInteger(b, insertID)
	b = binary.LittleEndian.AppendUint16(b, status)
	return binary.LittleEndian.AppendUint16(b, warnings)
}

func EOFPacket(status, warnings uint16) []byte {
	b := []byte{HdrEOF}
	b = binary.LittleEndian.AppendUint16(b, warnings)
	return binary.LittleEndian.AppendUint16(b, status)
}

func ErrPacket(e *mysql.MyError) []byte {
	b := []byte{HdrErr}
	b = binary.LittleEndian.AppendUint16(b, e.Code)
	b = append(b, '#')
	state := e.State
	if len(state) != 5 {
		state = mysql.DEFAULT_MYSQL_STATE
	}
	b = append(b, state...)
	return append(b, e.Message...)
}

// ParseErrPacket reads an ERR packet back (for logs and for deciding to
// answer a statement locally after the upstream refused it).
func ParseErrPacket(p []byte) *mysql.MyError {
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
