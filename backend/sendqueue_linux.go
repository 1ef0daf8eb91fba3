package backend

import (
	"crypto/tls"
	"net"
	"syscall"
	"unsafe"
)

// sendQueue returns a function giving the bytes the kernel still holds to
// send on c (not yet acknowledged by the peer), or nil when c is not a TCP
// connection it can ask.
func sendQueue(c net.Conn) func() (int, bool) {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return func() (int, bool) {
		var n int32
		var errno syscall.Errno
		if err := raw.Control(func(fd uintptr) {
			_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCOUTQ, uintptr(unsafe.Pointer(&n)))
		}); err != nil || errno != 0 {
			return 0, false
		}
		return int(n), true
	}
}
