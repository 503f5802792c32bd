//go:build !linux

package server

// Event loops are Linux-only (epoll); elsewhere every session relays on its
// goroutine.
type eventLoops struct{}

func newEventLoops(int, func(error)) (*eventLoops, error) { return nil, nil }

func (ls *eventLoops) relay(*session) (handback, bool) { return handback{}, false }
func (ls *eventLoops) close()                          {}
func (ls *eventLoops) stop()                           {}
