//go:build !linux

package backend

import "net"

// sendQueue is not known off Linux: progress is what the transport takes.
func sendQueue(net.Conn) func() (int, bool) { return nil }
