//go:build !linux

package relay

// Loops are Linux-only (epoll); elsewhere every session relays on its
// goroutine.
type Loops struct{}

// NewLoops starts no loops off Linux.
func NewLoops(int, Options) (*Loops, error) { return nil, nil }

// Relay relays nothing off Linux: the session's goroutine serves it.
func (ls *Loops) Relay(Session) (Handback, bool) { return Handback{}, false }

// Close does nothing off Linux.
func (ls *Loops) Close() {}

// Stop does nothing off Linux.
func (ls *Loops) Stop() {}
