package relay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/go-mysql-org/go-mysql/mysql"

	"github.com/heapproxy/heapproxy/internal/mysqlwire"
)

// Loops relay the forwarded statements of plain-TCP sessions the way
// HAProxy does: one thread per loop waits on epoll for all its sessions'
// sockets and moves each response from the upstream to the client as it
// arrives, parsing only packet headers to know where a response ends.
//
// Why: with a goroutine per session, every statement parks and wakes that
// goroutine twice through Go's netpoller and scheduler, which on a busy
// machine means futex sleeps and wake-ups of other threads; under sysbench
// that cost ~20% more CPU per query than HAProxy (bench/proxy/README.md).
// A loop thread handles whatever is ready without waking anyone.
//
// A session is in a loop only between statements it forwards unchanged
// (COM_QUERY that the parser does not intercept, COM_STMT_EXECUTE). Any
// other command, TLS, an idle timeout, or an error sends it back to its
// goroutine with the bytes read so far (handback), and the goroutine's
// code, which handles every command, takes over (Handback).
type Loops struct {
	loops []*eventLoop
	mu    sync.Mutex
	next  int
}

type eventLoop struct {
	epfd, wakefd int
	opt          Options

	mu      sync.Mutex
	inbox   []*loopSession
	closing bool // hand idle sessions back (server shutdown)
	stopped bool // exit: the server has no sessions left

	sides map[int32]*loopSide // by (duplicated) descriptor
	buf   []byte              // read buffer shared by the loop's sessions
}

// loopCommandLimit is the largest command packet a loop forwards; larger
// ones (big INSERTs, 16 MiB continuations) go back to the goroutine, which
// streams them.
const loopCommandLimit = 64 << 10

// loopYieldEvery is how often a busy loop yields to the scheduler: half of
// the runtime's 10 ms forced-preemption period.
const loopYieldEvery = 5 * time.Millisecond

// NewLoops starts n loops; n <= 0 starts none (every session stays on its
// goroutine), and the nil *Loops relays nothing.
func NewLoops(n int, opt Options) (*Loops, error) {
	if n <= 0 {
		return nil, nil
	}
	ls := &Loops{}
	for range n {
		l, err := newEventLoop(opt)
		if err != nil {
			ls.Stop()
			return nil, err
		}
		ls.loops = append(ls.loops, l)
		go l.run()
	}
	return ls, nil
}

func newEventLoop(opt Options) (*eventLoop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	r, _, errno := syscall.Syscall(syscall.SYS_EVENTFD2, 0, syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if errno != 0 {
		syscall.Close(epfd)
		return nil, fmt.Errorf("eventfd2: %w", errno)
	}
	wakefd := int(r)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(wakefd)}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, wakefd, &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(wakefd)
		return nil, fmt.Errorf("epoll_ctl eventfd: %w", err)
	}
	return &eventLoop{epfd: epfd, wakefd: wakefd, opt: opt,
		sides: map[int32]*loopSide{}, buf: make([]byte, 64<<10)}, nil
}

// Close asks every loop to hand its idle sessions back and to stop taking
// new ones; busy sessions come back when their statement is done.
func (ls *Loops) Close() { ls.tell(func(l *eventLoop) { l.closing = true }) }

// Stop hands every session back, busy ones with an error, and ends the
// loops once they have none.
func (ls *Loops) Stop() { ls.tell(func(l *eventLoop) { l.stopped = true }) }

// tell changes every loop's state and wakes it to act on it.
func (ls *Loops) tell(change func(*eventLoop)) {
	if ls == nil {
		return
	}
	for _, l := range ls.loops {
		l.mu.Lock()
		change(l)
		l.mu.Unlock()
		l.wake()
	}
}

// loopSession is a session while a loop relays for it.
type loopSession struct {
	s      Session
	client loopSide
	up     loopSide
	cmd    []byte // client bytes not yet forwarded (a partial command, or a pipelined one)
	busy   bool   // a forwarded command's response is under way
	resp   mysqlwire.ResponseParser
	done   chan Handback
	back   bool // handing back: waiting for pending writes, then leaving
	hb     Handback
}

// loopSide is one socket of a loop session, under a duplicate descriptor
// the loop owns, so the session's goroutine may close its own at any time.
type loopSide struct {
	ls       *loopSession
	fd       int
	readable bool   // an edge said so and no read has hit EAGAIN since
	pending  []byte // bytes for this socket that a write could not take yet
}

func (side *loopSide) isClient() bool { return side == &side.ls.client }

// Relay hands the session to a loop and waits until the loop hands it
// back. ok is false when the session cannot go to a loop (the caller
// serves the command itself).
func (ls *Loops) Relay(s Session) (hb Handback, ok bool) {
	if ls == nil {
		return hb, false
	}
	client, up := s.Client(), s.Upstream()
	cfd, err := dupFD(client.NetConn())
	if err != nil {
		return hb, false
	}
	ufd, err := dupFD(up.NetConn())
	if err != nil {
		syscall.Close(cfd)
		return hb, false
	}
	lsess := &loopSession{s: s, done: make(chan Handback, 1), cmd: client.TakeBuffered()}
	lsess.client = loopSide{ls: lsess, fd: cfd}
	lsess.up = loopSide{ls: lsess, fd: ufd}
	// The loop owns the sockets now. Closing the goroutine's descriptors
	// takes them out of Go's netpoller, which would otherwise wake a
	// thread for every packet the loop relays.
	s.Detach()
	ls.mu.Lock()
	l := ls.loops[ls.next%len(ls.loops)]
	ls.next++
	ls.mu.Unlock()
	l.mu.Lock()
	l.inbox = append(l.inbox, lsess)
	l.mu.Unlock()
	l.wake()
	hb = <-lsess.done
	// Back on the goroutine: the sockets get descriptors of Go's again.
	c, cerr := socketConn(cfd)
	u, uerr := socketConn(ufd)
	s.Reattach(c, u)
	if err := errors.Join(cerr, uerr); err != nil && hb.Err == nil {
		hb.Err = err
	}
	return hb, true
}

// socketConn makes a net.Conn of a loop's descriptor, which it closes.
func socketConn(fd int) (net.Conn, error) {
	f := os.NewFile(uintptr(fd), "socket")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		return nil, fmt.Errorf("back from the event loop: %w", err)
	}
	return FastConn(c), nil
}

// dupFD duplicates a raw TCP connection's descriptor.
func dupFD(c any) (int, error) {
	rc, ok := c.(*rawIOConn)
	if !ok {
		return -1, errors.New("not a raw TCP connection")
	}
	fd := -1
	var derr error
	err := rc.rc.Control(func(s uintptr) {
		fd, derr = syscall.Dup(int(s))
		if derr == nil {
			syscall.CloseOnExec(fd)
		}
	})
	if err != nil {
		return -1, err
	}
	return fd, derr
}

func (l *eventLoop) wake() {
	one := [8]byte{1}
	syscall.Write(l.wakefd, one[:])
}

func (l *eventLoop) run() {
	// The loop blocks in epoll_wait; on its own thread it keeps its place
	// and needs no hand-off when it wakes. Unlocked, it moved between
	// threads 1.5-2 times per relayed query and made 0.75-0.91 of this
	// QPS (bench/proxy/README.md, sessions 14-15).
	runtime.LockOSThread()
	events := make([]syscall.EpollEvent, 256)
	yielded := time.Now()
	for {
		// A goroutine that never reschedules looks stuck to the runtime:
		// every 10 ms sysmon takes its P (retake in Go 1.26's
		// runtime/proc.go) and starts polling again every 20 µs instead
		// of backing off; its wake-ups delayed one query in twenty by
		// ~20 µs. Yielding before the loop looks stuck keeps sysmon
		// asleep (bench/proxy/README.md, session 15).
		if now := time.Now(); now.Sub(yielded) >= loopYieldEvery {
			runtime.Gosched()
			yielded = now
		}
		n, err := syscall.EpollWait(l.epfd, events, -1)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			l.opt.LogError(fmt.Errorf("event loop: epoll_wait: %w", err))
			return
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == l.wakefd {
				if l.takeInbox() {
					syscall.Close(l.epfd)
					syscall.Close(l.wakefd)
					return
				}
				continue
			}
			side := l.sides[ev.Fd]
			if side == nil {
				continue
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 {
				side.readable = true
			}
			if ev.Events&(syscall.EPOLLOUT|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && len(side.pending) > 0 {
				if err := l.flush(side); err != nil {
					l.fail(side.ls, err, !side.isClient())
					continue
				}
			}
			l.step(side.ls)
		}
	}
}

// takeInbox registers the sessions handed to the loop and, on shutdown,
// hands back the idle ones. It reports whether the loop should exit.
func (l *eventLoop) takeInbox() (stop bool) {
	var b [8]byte
	syscall.Read(l.wakefd, b[:])
	l.mu.Lock()
	inbox, closing, stopped := l.inbox, l.closing, l.stopped
	l.inbox = nil
	l.mu.Unlock()
	for _, ls := range inbox {
		ok := true
		for _, side := range []*loopSide{&ls.client, &ls.up} {
			ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | epollET, Fd: int32(side.fd)}
			if err := syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, side.fd, &ev); err != nil {
				ok = false
				break
			}
			l.sides[int32(side.fd)] = side
		}
		if !ok {
			l.handBack(ls) // nothing read yet: the goroutine carries on
			continue
		}
		// Bytes the goroutine had buffered may hold a whole command.
		ls.client.readable = true
		l.step(ls)
	}
	if closing || stopped {
		for _, side := range l.sides {
			switch ls := side.ls; {
			case !side.isClient() || ls.back:
			case !ls.busy:
				l.handBack(ls)
			case stopped:
				l.fail(ls, errors.New("heapproxy is shutting down"), false)
			}
		}
	}
	return stopped && len(l.sides) == 0
}

// step moves a session's bytes as far as they go without waiting.
func (l *eventLoop) step(ls *loopSession) {
	for !ls.back {
		progress := false
		if ls.busy {
			if len(ls.client.pending) == 0 && ls.up.readable {
				// Upstream to client, while the client takes what it gets.
				n, err := l.read(&ls.up)
				if err != nil {
					l.fail(ls, err, true)
					return
				}
				if n > 0 {
					progress = true
					if err := l.relayResponse(ls, l.buf[:n]); err != nil {
						l.fail(ls, err, false)
						return
					}
				}
			}
		} else {
			if l.opt.Closing() {
				l.handBack(ls)
				return
			}
			if len(ls.cmd) <= 4 || len(ls.cmd) < 4+mysqlwire.PacketLen(ls.cmd) {
				if !ls.client.readable {
					return
				}
				n, err := l.read(&ls.client)
				if err != nil {
					ls.hb.Err = err
					l.handBack(ls)
					return
				}
				if n > 0 {
					ls.cmd = append(ls.cmd, l.buf[:n]...)
					progress = true
				}
			}
			if len(ls.cmd) > 4 {
				n := mysqlwire.PacketLen(ls.cmd)
				if n >= loopCommandLimit || ls.cmd[3] != 0 || n == 0 || !ls.forwards(ls.cmd[4:min(len(ls.cmd), 4+n)], len(ls.cmd) >= 4+n) {
					l.handBack(ls)
					return
				}
				if len(ls.cmd) >= 4+n {
					if err := l.forward(ls, 4+n); err != nil {
						l.fail(ls, err, true)
						return
					}
					progress = true
				}
			}
		}
		if !progress {
			return
		}
	}
}

// forwards tells whether the command (whole, or its start) is one a loop
// relays: one whose response relayResults would relay unchanged.
func (ls *loopSession) forwards(payload []byte, whole bool) bool {
	switch payload[0] {
	case mysql.COM_STMT_EXECUTE:
		return true
	case mysql.COM_QUERY:
		if !whole {
			return true
		}
		return ls.s.Forwards(payload[1:])
	}
	return false
}

// forward sends the command at the front of ls.cmd (n bytes with its
// header) to the upstream and starts reading its response.
func (l *eventLoop) forward(ls *loopSession, n int) error {
	l.opt.Forwarded()
	ls.busy = true
	ls.resp = mysqlwire.NewResponseParser(1, ls.s.Status())
	err := l.write(&ls.up, ls.cmd[:n]) // write copies what it cannot send
	// The buffer serves the next command (pipelined bytes move to its
	// front); one grown by a large command is not kept.
	ls.cmd = ls.cmd[:copy(ls.cmd, ls.cmd[n:])]
	if len(ls.cmd) == 0 && cap(ls.cmd) > 4<<10 {
		ls.cmd = nil
	}
	return err
}

// relayResponse writes b, upstream bytes of the response under way, to
// the client, and notes where the response ends.
func (l *eventLoop) relayResponse(ls *loopSession, b []byte) error {
	n, done, infile := ls.resp.Feed(b)
	if err := l.write(&ls.client, b[:n]); err != nil {
		return err
	}
	if ls.resp.Err() != nil {
		return ls.resp.Err()
	}
	if !done && !infile {
		return nil
	}
	ls.busy = false
	ls.s.SetStatus(ls.resp.Status)
	if n < len(b) {
		// The upstream sent more than the response: the goroutine reads it
		// as it would have.
		ls.hb.Up = append([]byte(nil), b[n:]...)
		l.handBack(ls)
		return nil
	}
	if infile {
		ls.hb.Infile, ls.hb.MidReply, ls.hb.Seq = true, true, ls.resp.Seq()
		l.handBack(ls)
	}
	return nil
}

// read reads what the socket has into l.buf; 0 bytes with no error means
// it has nothing now.
func (l *eventLoop) read(side *loopSide) (int, error) {
	for {
		r, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(side.fd), uintptr(unsafe.Pointer(&l.buf[0])), uintptr(len(l.buf)))
		switch e {
		case 0:
			if r == 0 {
				return 0, io.EOF
			}
			if int(r) < len(l.buf) {
				side.readable = false // drained: the next byte raises an edge
			}
			return int(r), nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			side.readable = false
			return 0, nil
		default:
			return 0, fmt.Errorf("read: %w", e)
		}
	}
}

// write writes b to the socket, keeping what it does not take for the
// next EPOLLOUT.
func (l *eventLoop) write(side *loopSide, b []byte) error {
	if len(side.pending) > 0 {
		side.pending = append(side.pending, b...)
		return nil
	}
	for len(b) > 0 {
		r, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(side.fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
		switch e {
		case 0:
			b = b[r:]
		case syscall.EINTR:
		case syscall.EAGAIN:
			side.pending = append([]byte(nil), b...)
			return nil
		default:
			return fmt.Errorf("write: %w", e)
		}
	}
	return nil
}

// flush writes pending bytes after an EPOLLOUT; a handback waiting for
// them completes.
func (l *eventLoop) flush(side *loopSide) error {
	b := side.pending
	side.pending = nil
	if err := l.write(side, b); err != nil {
		return err
	}
	if ls := side.ls; ls.back && len(ls.client.pending) == 0 && len(ls.up.pending) == 0 {
		l.leave(ls)
	}
	return nil
}

// fail hands a session back with an error; upErr says whose.
func (l *eventLoop) fail(ls *loopSession, err error, upErr bool) {
	ls.hb.Err, ls.hb.UpErr = err, upErr
	if ls.busy {
		ls.hb.MidReply, ls.hb.Seq = true, ls.resp.Seq()
	}
	ls.client.pending, ls.up.pending = nil, nil // the session ends: unsent bytes go nowhere
	l.handBack(ls)
}

// handBack returns the session to its goroutine once its pending writes
// are out.
func (l *eventLoop) handBack(ls *loopSession) {
	if ls.back {
		return
	}
	ls.back = true
	ls.hb.Client = ls.cmd
	if len(ls.client.pending) == 0 && len(ls.up.pending) == 0 {
		l.leave(ls)
	}
}

func (l *eventLoop) leave(ls *loopSession) {
	for _, side := range []*loopSide{&ls.client, &ls.up} {
		if l.sides[int32(side.fd)] == side {
			syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, side.fd, nil)
			delete(l.sides, int32(side.fd))
		}
	}
	ls.done <- ls.hb // relay turns the descriptors back into connections
}

// epollET is EPOLLET as the uint32 epoll_event wants (package syscall
// declares it negative).
const epollET = 1 << 31
