//go:build !linux

package relay

import "net"

// FastConn is the identity off Linux; see rawio_linux.go.
func FastConn(c net.Conn) net.Conn { return c }

func ShutdownConn(net.Conn) {}

func IsRawConn(net.Conn) bool { return false }
