package relay

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// rawIOConn reads and writes a TCP connection with raw system calls on its
// non-blocking socket, waiting for readiness through Go's netpoller as the
// net package does (deadlines included).
//
// Why: the net package's reads and writes enter the scheduler's syscall
// state. On loopback, a write also runs the receiver's TCP processing and
// its wake-up, so it takes tens of microseconds; the runtime's monitor
// then finds the P "in a syscall", hands it to another thread and keeps
// polling every 20 µs. Profiled under sysbench that monitor, its sleeps
// and the hand-offs took ~20% of heapproxy's CPU (bench/proxy/README.md).
// A non-blocking socket call never blocks, which is what RawSyscall asks.
type rawIOConn struct {
	*net.TCPConn
	rc syscall.RawConn
}

// FastConn returns c with raw reads and writes when it is a TCP
// connection, else c itself.
func FastConn(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	return &rawIOConn{TCPConn: tc, rc: rc}
}

func (c *rawIOConn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)))
			switch e {
			case syscall.EINTR:
				continue
			case syscall.EAGAIN:
				return false // wait until readable
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil:
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *rawIOConn) Write(p []byte) (int, error) {
	var n int
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for n < len(p) {
			r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p[n])), uintptr(len(p)-n))
			switch e {
			case 0:
				n += int(r)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false // the socket buffer is full: wait until writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return n, c.opError("write", err)
	case errno != 0:
		return n, c.opError("write", errno)
	}
	return n, nil
}

// opError wraps a failed call the way the net package does, so callers
// see the same errors: deadlines come from RawConn already as a
// *net.OpError whose Timeout() is true; an errno becomes an
// *os.SyscallError inside one (errors.Is(err, syscall.ECONNRESET) holds).
func (c *rawIOConn) opError(op string, err error) error {
	if _, ok := err.(*net.OpError); ok {
		return err
	}
	if errno, ok := err.(syscall.Errno); ok {
		err = os.NewSyscallError(op, errno)
	}
	return &net.OpError{Op: op, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// ShutdownConn shuts a raw connection's socket down in both directions,
// which reaches every descriptor of it (an event loop holds a duplicate).
func ShutdownConn(c net.Conn) {
	if rc, ok := c.(*rawIOConn); ok {
		rc.CloseRead()
		rc.CloseWrite()
	}
}

// IsRawConn tells a plain TCP connection with raw I/O (not TLS) apart.
func IsRawConn(c net.Conn) bool {
	_, ok := c.(*rawIOConn)
	return ok
}
