package mysqlwire

import (
	"fmt"

	"github.com/go-mysql-org/go-mysql/mysql"
)

// ResponseParser is the one grammar of a response to COM_QUERY or
// COM_STMT_EXECUTE: OK packets and result sets while
// SERVER_MORE_RESULTS_EXISTS is set, LOCAL INFILE requests, ending with an
// ERR or a final status. The event loops feed it the relayed bytes (feed:
// they never hold a whole packet); the goroutine relay hands it the
// packets that can change its state (whole). A protocol fix is made here.
type ResponseParser struct {
	state  int    // respFirst, respColumns or respRows
	seq    uint8  // sequence number the next packet must have
	Status uint16 // the session's status after the packets seen so far
	err    error

	hdr    [4]byte
	hdrN   int  // bytes of hdr seen
	remain int  // payload bytes of the current physical packet still to come
	cont   bool // the current physical packet continues a logical packet of 16 MiB or more
	head   [32]byte
	headN  int // bytes of head seen
	plen   int // the logical packet's first physical length
}

const (
	respFirst = iota
	respColumns
	respRows
)

// Feed consumes relayed bytes. It returns how many belong to the response
// (all of b unless the response ended inside it), whether the response is
// complete, and whether it stopped after a LOCAL INFILE request (the
// client's file comes next). A protocol error sets p.err.
func (p *ResponseParser) Feed(b []byte) (n int, done, infile bool) {
	for n < len(b) {
		if p.remain == 0 && p.hdrN < 4 {
			k := copy(p.hdr[p.hdrN:], b[n:])
			p.hdrN += k
			n += k
			if p.hdrN < 4 {
				return n, false, false
			}
			if p.hdr[3] != p.seq {
				p.err = fmt.Errorf("packet sequence %d, expected %d", p.hdr[3], p.seq)
				return n, false, false
			}
			p.seq++
			p.remain = PacketLen(p.hdr[:])
			if !p.cont {
				p.plen, p.headN = p.remain, 0
			}
			if p.remain > 0 {
				continue
			}
		} else {
			k := min(p.remain, len(b)-n)
			if !p.cont && p.headN < len(p.head) {
				p.headN += copy(p.head[p.headN:], b[n:n+k])
			}
			p.remain -= k
			n += k
			if p.remain > 0 {
				return n, false, false
			}
		}
		// A physical packet is complete.
		p.hdrN = 0
		if PacketLen(p.hdr[:]) == MaxPayload {
			p.cont = true // its logical packet goes on
			continue
		}
		wasCont := p.cont
		p.cont = false
		if wasCont {
			continue // the end of a big row or definition: never a status
		}
		if done, infile := p.packet(p.head[:min(p.headN, p.plen)]); done || infile || p.err != nil {
			return n, done, infile
		}
	}
	return n, false, false
}

// Whole steps the walk over one logical packet whose head the goroutine
// relay read (all of it when shorter than inspectLimit). Column
// definitions and rows between may be skipped: they never change the state.
func (p *ResponseParser) Whole(head []byte) (done, infile bool) {
	p.plen = len(head)
	return p.packet(head)
}

// packet steps the walk over one whole logical packet (its first bytes).
func (p *ResponseParser) packet(head []byte) (done, infile bool) {
	if len(head) == 0 {
		p.err = fmt.Errorf("empty response packet from upstream")
		return false, false
	}
	switch p.state {
	case respFirst:
		switch head[0] {
		case HdrOK:
			p.Status = OKStatus(head)
			return p.Status&mysql.SERVER_MORE_RESULTS_EXISTS == 0, false
		case HdrErr:
			return true, false
		case HdrLocalInfile:
			return false, true
		}
		if _, _, k := LenEncInt(head); k == 0 {
			p.err = fmt.Errorf("bad column count packet % x", head[:min(len(head), 8)])
			return false, false
		}
		p.state = respColumns
	case respColumns, respRows:
		if head[0] == HdrErr {
			if p.state == respColumns {
				// A definition starts with its catalog's length, never
				// 0xff: an ERR here breaks the protocol.
				p.err = fmt.Errorf("expected EOF after the column definitions, got ERR")
				return false, false
			}
			return true, false
		}
		if !IsEOF(head) || p.plen >= 9 {
			return false, false
		}
		p.Status = EOFStatus(head)
		if p.state == respColumns && p.Status&mysql.SERVER_STATUS_CURSOR_EXISTS == 0 {
			p.state = respRows
			return false, false
		}
		p.state = respFirst
		return p.Status&mysql.SERVER_MORE_RESULTS_EXISTS == 0, false
	}
	return false, false
}

// PacketLen reads the payload length from a packet header.
func PacketLen(h []byte) int { return int(h[0]) | int(h[1])<<8 | int(h[2])<<16 }

// NewResponseParser starts the walk of a response whose first packet
// carries sequence number seq, the session's status flags being status.
func NewResponseParser(seq uint8, status uint16) ResponseParser {
	return ResponseParser{seq: seq, Status: status}
}

// Err is the protocol error the walk found, if any.
func (p *ResponseParser) Err() error { return p.err }

// Seq is the sequence number the next packet must have.
func (p *ResponseParser) Seq() uint8 { return p.seq }

// AtStart tells that the next packet starts a result (OK, ERR, LOCAL
// INFILE request or column count), not a list of definitions or rows.
func (p *ResponseParser) AtStart() bool { return p.state == respFirst }
