// Package relay moves a session's forwarded statements between its client
// and its upstream: event loops on epoll for plain-TCP sessions (Loops,
// Linux only), the session's goroutine for everything else (the functions
// of goroutine.go), and the raw non-blocking socket I/O both use. It knows
// nothing of routing, authentication or metrics: a session tells it what
// it needs through Session and Options.
//
// The hand-back protocol, in one place: a session's goroutine hands its two
// sockets to a loop (Relay) between statements; the loop relays whole
// forwarded commands (COM_QUERY the session Forwards, COM_STMT_EXECUTE) and
// their responses, and gives the session back (Handback) with the bytes it
// read but did not relay when anything else comes: another command, a
// command over 64 KiB, a LOCAL INFILE request (the goroutine relays the
// file), upstream bytes nobody asked for, the shutdown, or an error. The
// goroutine unreads those bytes and carries on from exactly there; when
// the handback happened inside a response (MidReply) both sides continue
// at Seq.
package relay

import (
	"net"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// Session is what a loop needs of a session.
type Session interface {
	Client() *mysqlwire.Conn
	Upstream() *mysqlwire.Conn
	// Detach closes the session's own descriptors of its two sockets (the
	// loop relays on duplicates), under whatever guards them.
	Detach()
	// Reattach gives the session new descriptors of its sockets (nil
	// where one could not be made); a session that ended meanwhile closes
	// them.
	Reattach(client, up net.Conn)
	// Forwards tells whether a COM_QUERY text goes to the upstream
	// unchanged.
	Forwards(query []byte) bool
	// Status and SetStatus are the session's server status flags, which
	// each relayed response updates.
	Status() uint16
	SetStatus(uint16)
}

// Options are what loops need of the server.
type Options struct {
	// Closing tells that the server shuts down: idle sessions go back.
	Closing func() bool
	// Forwarded counts one statement a loop relayed.
	Forwarded func()
	// LogError reports a loop that stopped.
	LogError func(error)
}

// Handback is what a session's goroutine gets when a loop is done with it.
type Handback struct {
	Client   []byte // client bytes read but not relayed, from a command's start
	Up       []byte // upstream bytes read but not relayed (unsolicited)
	Infile   bool   // a LOCAL INFILE request was relayed: the goroutine relays the file
	MidReply bool   // the handback happened inside a response
	Seq      uint8  // sequence number after the last relayed packet (MidReply)
	Err      error
	UpErr    bool // Err is the upstream's
}
