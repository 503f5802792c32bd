package mysqlwire

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
)

// MaxPayload is the largest payload of one physical packet; a logical packet
// of this size or more continues in the next physical packet.
const MaxPayload = 1<<24 - 1

// InspectLimit is how much of a relayed packet is kept for inspection. Status
// packets (OK, ERR, EOF) and column counts are far smaller; rows larger than
// this are streamed through without being held.
const InspectLimit = 64 << 10

// Buffer sizes per connection (a session has two connections): large
// enough that a result set goes out in few writes, small enough that ten
// thousand sessions stay under a gigabyte.
const (
	readBufferSize  = 16 << 10
	writeBufferSize = 32 << 10
)

// Conn frames MySQL packets over one buffered connection. Reads and
// writes share one sequence counter, as the protocol does. Writes are
// buffered: callers flush once a response is complete, which turns thousands
// of row packets into a few large writes.
type Conn struct {
	conn net.Conn
	src  io.Reader // what r reads: conn, or a prefixedConn in front of it
	r    *bufio.Reader
	w    *bufio.Writer
	seq  uint8
	buf  []byte // reused for inspected packets
}

func NewConn(c net.Conn) *Conn {
	return &Conn{
		conn: c,
		src:  c,
		r:    bufio.NewReaderSize(c, readBufferSize),
		w:    bufio.NewWriterSize(c, writeBufferSize),
	}
}

// Upgrade wraps the transport in TLS. Bytes of the TLS handshake the peer
// sent right behind its SSL request may already sit in the read buffer, so
// the TLS layer reads through it.
func (p *Conn) Upgrade(wrap func(net.Conn) *tls.Conn) (*tls.Conn, error) {
	tc := wrap(&bufferedConn{Conn: p.conn, r: p.r})
	if err := tc.Handshake(); err != nil {
		return nil, err
	}
	p.conn, p.src = tc, tc
	p.r = bufio.NewReaderSize(tc, readBufferSize)
	p.w.Reset(tc)
	return tc, nil
}

// bufferedConn reads what a bufio.Reader holds before the connection.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

func (p *Conn) ResetSeq() { p.seq = 0 }

// SetConn replaces the connection (the same socket under a new
// descriptor, after an event loop); nothing may be buffered.
func (p *Conn) SetConn(c net.Conn) {
	p.conn, p.src = c, c
	p.r.Reset(c)
	p.w.Reset(c)
}

// TakeBuffered returns the bytes read from the connection but not yet
// consumed, and forgets them: an event loop relays from there on.
func (p *Conn) TakeBuffered() []byte {
	var b []byte
	if pc, ok := p.src.(*prefixedConn); ok {
		b = pc.rest
		pc.rest = nil
	}
	if n := p.r.Buffered(); n > 0 {
		head, _ := p.r.Peek(n)
		b = append(append([]byte(nil), head...), b...)
		p.r.Discard(n)
	}
	if p.src != p.conn {
		p.src = p.conn
		p.r.Reset(p.conn)
	}
	return b
}

// Unread makes b the next bytes read (an event loop's unrelayed input).
func (p *Conn) Unread(b []byte) {
	if len(b) == 0 {
		return
	}
	rest := p.TakeBuffered()
	p.src = &prefixedConn{Conn: p.conn, rest: append(b, rest...)}
	p.r.Reset(p.src)
}

// prefixedConn reads rest before the connection.
type prefixedConn struct {
	net.Conn
	rest []byte
}

func (c *prefixedConn) Read(b []byte) (int, error) {
	if len(c.rest) == 0 {
		return c.Conn.Read(b)
	}
	n := copy(b, c.rest)
	c.rest = c.rest[n:]
	return n, nil
}

func (p *Conn) ReadHeader() (int, error) {
	var h [4]byte
	if _, err := io.ReadFull(p.r, h[:]); err != nil {
		return 0, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if h[3] != p.seq {
		return 0, fmt.Errorf("packet sequence %d, expected %d", h[3], p.seq)
	}
	p.seq++
	return n, nil
}

func (p *Conn) WriteHeader(n int) error {
	h := [4]byte{byte(n), byte(n >> 8), byte(n >> 16), p.seq}
	p.seq++
	_, err := p.w.Write(h[:])
	return err
}

// ReadPacket reads one logical packet of at most limit bytes. The returned
// slice is valid until the next read.
func (p *Conn) ReadPacket(limit int) ([]byte, error) {
	p.buf = p.buf[:0]
	for {
		n, err := p.ReadHeader()
		if err != nil {
			return nil, err
		}
		if len(p.buf)+n > limit {
			return nil, fmt.Errorf("packet larger than %d bytes", limit)
		}
		start := len(p.buf)
		p.buf = append(p.buf, make([]byte, n)...)
		if _, err := io.ReadFull(p.r, p.buf[start:]); err != nil {
			return nil, err
		}
		if n < MaxPayload {
			return p.buf, nil
		}
	}
}

// WritePacket buffers one logical packet, split into physical packets.
func (p *Conn) WritePacket(data []byte) error {
	for {
		n := min(len(data), MaxPayload)
		if err := p.WriteHeader(n); err != nil {
			return err
		}
		if _, err := p.w.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
		if n < MaxPayload {
			return nil
		}
	}
}

func (p *Conn) Flush() error { return p.w.Flush() }

// keptBufferSize bounds the packet buffer a connection keeps between
// commands: a larger one, grown for one big packet, is dropped once that
// command is done, so an idle session holds kilobytes whatever it sent.
const keptBufferSize = 64 << 10

// ReleaseLargeBuffer drops a packet buffer grown past keptBufferSize.
func (p *Conn) ReleaseLargeBuffer() {
	if cap(p.buf) > keptBufferSize {
		p.buf = nil
	}
}

// RelayPacket copies one logical packet from src to dst, renumbering it for
// dst's sequence. It returns the packet's payload when it is small enough to
// inspect, otherwise its first inspectLimit bytes; large packets (rows with
// big BLOBs, 16 MiB continuations) are streamed and never held whole.
func RelayPacket(dst, src *Conn) ([]byte, error) {
	var head []byte
	for first := true; ; first = false {
		n, err := src.ReadHeader()
		if err != nil {
			return nil, err
		}
		if err := dst.WriteHeader(n); err != nil {
			return nil, err
		}
		keep := 0
		if first {
			keep = min(n, InspectLimit)
			if cap(src.buf) < keep {
				src.buf = make([]byte, keep)
			}
			head = src.buf[:keep]
			if _, err := io.ReadFull(src.r, head); err != nil {
				return nil, err
			}
			if _, err := dst.w.Write(head); err != nil {
				return nil, err
			}
		}
		if rest := int64(n - keep); rest > 0 {
			if _, err := io.CopyN(dst.w, src.r, rest); err != nil {
				return nil, err
			}
		}
		if n < MaxPayload {
			return head, nil
		}
	}
}

// RelayUntil relays packets from src to dst up to and including the first
// one for which end(payload) is true, and returns that packet's head as
// relayPacket does. While both sides' sequence numbers agree (no renumbering
// needed, the usual case), runs of whole packets already in src's read
// buffer are checked in place and copied with one write: a result set's
// rows cost a header check each instead of four buffered copies.
func RelayUntil(dst, src *Conn, end func(payload []byte) bool) ([]byte, error) {
	for {
		if dst.seq == src.seq {
			head, found, err := relayBuffered(dst, src, end)
			if err != nil || found {
				return head, err
			}
		}
		// Nothing whole is buffered (or a packet is large): one packet
		// the slow way, which also waits for more input.
		head, err := RelayPacket(dst, src)
		if err != nil {
			return nil, err
		}
		if end(head) {
			return head, nil
		}
	}
}

// relayBuffered copies the whole packets at the front of src's read buffer
// to dst, stopping after the first one end accepts (found) or at the first
// incomplete or large packet. The sequence numbers of both sides must be
// equal on entry; the packets keep theirs.
func relayBuffered(dst, src *Conn, end func(payload []byte) bool) (head []byte, found bool, err error) {
	buf, _ := src.r.Peek(src.r.Buffered())
	off, seq := 0, src.seq
	for off+4 <= len(buf) {
		n := int(buf[off]) | int(buf[off+1])<<8 | int(buf[off+2])<<16
		if n >= InspectLimit || off+4+n > len(buf) {
			break
		}
		if buf[off+3] != seq {
			return nil, false, fmt.Errorf("packet sequence %d, expected %d", buf[off+3], seq)
		}
		payload := buf[off+4 : off+4+n]
		off += 4 + n
		seq++
		if end(payload) {
			// Kept past the Discard below: src's buffer is reused by the next read.
			head = append(src.buf[:0], payload...)
			src.buf = head
			found = true
			break
		}
	}
	if off == 0 {
		return nil, false, nil
	}
	if _, err := dst.w.Write(buf[:off]); err != nil {
		return nil, false, err
	}
	src.seq, dst.seq = seq, seq
	_, err = src.r.Discard(off)
	return head, found, err
}

// EndsRows tells the EOF or ERR that closes a list of rows (or of column
// definitions) from the rows themselves.
func EndsRows(p []byte) bool { return IsEOF(p) || len(p) > 0 && p[0] == HdrErr }

// NetConn is the connection the packets travel on (TLS after Upgrade).
func (p *Conn) NetConn() net.Conn { return p.conn }

// Buffered is how many bytes were read from the connection but not yet
// consumed.
func (p *Conn) Buffered() int { return p.r.Buffered() }

// Peek returns the next n bytes without consuming them, reading as needed:
// a session peeks to learn that its client went away, and what the client
// sent meanwhile stays for the next read.
func (p *Conn) Peek(n int) ([]byte, error) { return p.r.Peek(n) }

// SetSeq sets the sequence number of the next packet (after an event loop
// relayed part of a response).
func (p *Conn) SetSeq(seq uint8) { p.seq = seq }

// ReadCommand reads the first physical packet of a client command, after
// resetting the sequence; more tells that continuation packets follow
// unread (a command of 16 MiB or more). The data is valid until the next
// read.
func (p *Conn) ReadCommand() (data []byte, more bool, err error) {
	p.ResetSeq()
	n, err := p.ReadHeader()
	if err != nil {
		return nil, false, err
	}
	if cap(p.buf) < n {
		p.buf = make([]byte, n)
	}
	data = p.buf[:n]
	if _, err := io.ReadFull(p.r, data); err != nil {
		return nil, false, err
	}
	return data, n == MaxPayload, nil
}

// WritePhysical writes one physical packet whose header says n payload
// bytes, of which data is the start (the rest comes from CopyPayload).
func (p *Conn) WritePhysical(n int, data []byte) error {
	if err := p.WriteHeader(n); err != nil {
		return err
	}
	_, err := p.w.Write(data)
	return err
}

// CopyContinuation streams the remaining physical packets of a large
// logical packet from src to dst, renumbered.
func CopyContinuation(dst, src *Conn) error {
	for {
		n, err := src.ReadHeader()
		if err != nil {
			return err
		}
		if err := dst.WriteHeader(n); err != nil {
			return err
		}
		if _, err := io.CopyN(dst.w, src.r, int64(n)); err != nil {
			return err
		}
		if n < MaxPayload {
			return nil
		}
	}
}

// DiscardContinuation skips the remaining physical packets of a large
// logical packet.
func (p *Conn) DiscardContinuation() error {
	for {
		n, err := p.ReadHeader()
		if err != nil {
			return err
		}
		if _, err := p.r.Discard(n); err != nil {
			return err
		}
		if n < MaxPayload {
			return nil
		}
	}
}
