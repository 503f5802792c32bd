package relay

import "github.com/heapproxy/heapproxy/internal/mysqlwire"

// The goroutine relay: a session's goroutine moves a forwarded command's
// response from up to client with these, packet by packet, renumbered,
// through the client's write buffer. Each takes the session's status flags
// and returns them as the response left them.

// One relays a single-packet response (OK, ERR, EOF or a string).
func One(client, up *mysqlwire.Conn, status uint16) (uint16, error) {
	head, err := mysqlwire.RelayPacket(client, up)
	if err != nil {
		return status, err
	}
	switch {
	case len(head) == 0:
	case head[0] == mysqlwire.HdrOK:
		status = mysqlwire.OKStatus(head)
	case mysqlwire.IsEOF(head):
		status = mysqlwire.EOFStatus(head)
	}
	return status, nil
}

// Results relays the response to COM_QUERY or COM_STMT_EXECUTE: any number
// of OK packets and result sets (multi-statements, stored procedures),
// LOCAL INFILE exchanges, ending with an ERR or with a status that has no
// SERVER_MORE_RESULTS_EXISTS.
func Results(client, up *mysqlwire.Conn, status uint16) (uint16, error) {
	head, err := mysqlwire.RelayPacket(client, up)
	if err != nil {
		return status, err
	}
	return ResultsFrom(client, up, head, status)
}

// ResultsFrom continues Results after its first packet, head, which the
// caller has already sent to the client, walking the one reply grammar
// (mysqlwire.ResponseParser). Definitions and rows go through RelayUntil's
// fast path; only the packets that end a list are looked at.
func ResultsFrom(client, up *mysqlwire.Conn, head []byte, status uint16) (uint16, error) {
	p := mysqlwire.NewResponseParser(0, status)
	for {
		done, infile := p.Whole(head)
		if err := p.Err(); err != nil {
			return p.Status, err
		}
		if done {
			return p.Status, nil
		}
		var err error
		switch {
		case infile:
			if err := LocalInfile(client, up); err != nil {
				return p.Status, err
			}
			head, err = mysqlwire.RelayPacket(client, up) // the upstream's OK or ERR
		case p.AtStart():
			head, err = mysqlwire.RelayPacket(client, up)
		default: // column definitions or rows, up to the EOF or ERR
			head, err = mysqlwire.RelayUntil(client, up, mysqlwire.EndsRows)
		}
		if err != nil {
			return p.Status, err
		}
	}
}

// Rows relays rows up to and including the closing EOF or ERR.
func Rows(client, up *mysqlwire.Conn, status uint16) (uint16, error) {
	head, err := mysqlwire.RelayUntil(client, up, mysqlwire.EndsRows)
	if err != nil {
		return status, err
	}
	if mysqlwire.IsEOF(head) {
		status = mysqlwire.EOFStatus(head)
	}
	return status, nil
}

// Prepare relays a COM_STMT_PREPARE response: OK with the statement's
// parameter and column definitions, each list closed by an EOF.
func Prepare(client, up *mysqlwire.Conn) error {
	head, err := mysqlwire.RelayPacket(client, up)
	if err != nil {
		return err
	}
	if len(head) < 12 || head[0] != mysqlwire.HdrOK {
		return nil // ERR
	}
	cols := int(head[5]) | int(head[6])<<8
	params := int(head[7]) | int(head[8])<<8
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for range n + 1 { // definitions and their EOF
			if _, err := mysqlwire.RelayPacket(client, up); err != nil {
				return err
			}
		}
	}
	return nil
}

// LocalInfile sends the client the upstream's file request and relays the
// file's packets to the upstream up to the closing empty packet.
func LocalInfile(client, up *mysqlwire.Conn) error {
	if err := client.Flush(); err != nil {
		return err
	}
	for {
		head, err := mysqlwire.RelayPacket(up, client)
		if err != nil {
			return err
		}
		if len(head) == 0 {
			return up.Flush()
		}
	}
}
