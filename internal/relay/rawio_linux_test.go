package relay

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// tcpPair returns both ends of a loopback TCP connection, the first one
// wrapped by FastConn.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			accepted <- nil
			return
		}
		accepted <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	peer := <-accepted
	if peer == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); peer.Close() })
	fc := FastConn(c)
	if _, ok := fc.(*rawIOConn); !ok {
		t.Fatalf("FastConn(%T) = %T, want *rawIOConn", c, fc)
	}
	return fc, peer
}

// TestRawIOConn checks what the relay relies on: large writes that fill
// the socket buffer complete, reads see the bytes in order and io.EOF at
// the end, deadlines time out as net errors, and a reset peer is an error.
func TestRawIOConn(t *testing.T) {
	t.Run("round trip larger than the socket buffers", func(t *testing.T) {
		c, peer := tcpPair(t)
		want := bytes.Repeat([]byte("0123456789abcdef"), 1<<20) // 16 MiB
		errc := make(chan error, 1)
		go func() {
			_, err := c.Write(want)
			errc <- errors.Join(err, c.(*rawIOConn).CloseWrite())
		}()
		got, err := io.ReadAll(peer)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("write: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("peer read %d bytes, not the %d written", len(got), len(want))
		}
		go func() {
			_, err := peer.Write(want)
			peer.Close()
			errc <- err
		}()
		got, err = io.ReadAll(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err != nil {
			t.Fatalf("peer write: %v", err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("read %d bytes, not the %d the peer wrote", len(got), len(want))
		}
		if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("read after the peer closed = %d, %v; want 0, io.EOF", n, err)
		}
	})
	t.Run("read deadline", func(t *testing.T) {
		c, _ := tcpPair(t)
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("read past the deadline = %v, want a net.Error timeout", err)
		}
		// The connection stays usable after the deadline is lifted.
		c.SetReadDeadline(time.Time{})
	})
	t.Run("reset by peer", func(t *testing.T) {
		c, peer := tcpPair(t)
		peer.(*net.TCPConn).SetLinger(0) // close sends RST
		peer.Close()
		var err error
		for i := 0; i < 100 && err == nil; i++ {
			_, err = c.Write([]byte("x"))
			time.Sleep(time.Millisecond)
		}
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("write to a reset connection = %v, want ECONNRESET or EPIPE", err)
		}
		var oe *net.OpError
		if !errors.As(err, &oe) || oe.Op != "write" {
			t.Fatalf("error %v is not a *net.OpError of write", err)
		}
	})
	t.Run("closed locally", func(t *testing.T) {
		c, _ := tcpPair(t)
		c.Close()
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, net.ErrClosed) {
			t.Fatalf("read after Close = %v, want net.ErrClosed", err)
		}
	})
}
