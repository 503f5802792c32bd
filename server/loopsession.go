package server

import (
	"net"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// loopSession is a session as an event loop sees it (relay.Session): its
// connections, its routing decision and its status flags, nothing more.
type loopSession struct{ s *session }

func (l loopSession) Client() *mysqlwire.Conn   { return l.s.client }
func (l loopSession) Upstream() *mysqlwire.Conn { return l.s.up }
func (l loopSession) Status() uint16            { return l.s.status }
func (l loopSession) SetStatus(st uint16)       { l.s.status = st }

// Forwards tells whether a COM_QUERY goes upstream unchanged: the same
// routing decision the goroutine makes.
func (l loopSession) Forwards(query []byte) bool {
	_, forward, _ := l.s.route(query)
	return forward
}

// Detach closes the session's own descriptors while a loop relays on
// duplicates, under the lock closeConns takes.
func (l loopSession) Detach() {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	l.s.client.NetConn().Close()
	l.s.up.NetConn().Close()
}

// Reattach gives the session new descriptors, or closes them when
// closeConns ran meanwhile (they are the last ones).
func (l loopSession) Reattach(client, up net.Conn) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for _, x := range []struct {
		p *mysqlwire.Conn
		c net.Conn
	}{{l.s.client, client}, {l.s.up, up}} {
		switch {
		case x.c == nil:
		case l.s.done:
			x.c.Close()
		default:
			x.p.SetConn(x.c)
		}
	}
}
