//go:build !linux

package server

import "net"

// fastConn is the identity off Linux; see rawio_linux.go.
func fastConn(c net.Conn) net.Conn { return c }

func shutdownConn(net.Conn) {}

func isRawConn(net.Conn) bool { return false }
