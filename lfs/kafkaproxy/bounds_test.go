package kafkaproxy

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// rawRequest writes a request of the given size whose body starts with
// api key key, and reports whether the listener closed the connection
// without answering.
func rawRequest(t *testing.T, addr string, key int16, size int, send int) (closed bool) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	hdr := make([]byte, 4+8)
	binary.BigEndian.PutUint32(hdr, uint32(size))
	binary.BigEndian.PutUint16(hdr[4:], uint16(key))
	if _, err := nc.Write(hdr[:min(len(hdr), 4+send)]); err != nil {
		return true
	}
	if send > 8 {
		_, _ = nc.Write(make([]byte, send-8))
	}
	_ = nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = io.ReadFull(nc, make([]byte, 4))
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

// Requests past their bounds close the connection before their body is
// read: past --lfs-kafka-max-request, anything but a Produce past 8 MiB,
// anything past 64 KiB before SASL authentication.
func TestRequestBounds(t *testing.T) {
	h := newHarness(t, 1, func(c *Config) { c.MaxRequest = 16 << 20 })
	if !rawRequest(t, h.addr, kmsg.Produce.Int16(), 16<<20+1, 0) {
		t.Fatal("a request past the maximum was not closed")
	}
	if !rawRequest(t, h.addr, kmsg.Metadata.Int16(), 9<<20, 2<<20) {
		t.Fatal("a 9 MiB Metadata request was not closed")
	}
	sasl := newHarness(t, 1, withSASL("PLAIN"))
	if !rawRequest(t, sasl.addr, kmsg.SASLAuthenticate.Int16(), 65<<10, 0) {
		t.Fatal("a 65 KiB request before authentication was not closed")
	}
}

// A client that announces a large request and sends part of it holds
// only the room of what it sent: other clients are served meanwhile.
func TestStalledRequestHoldsWhatItSent(t *testing.T) {
	h := newHarness(t, 1, func(c *Config) { c.MaxRequest, c.MaxInFlight = 8<<20, 1 })
	var conns []net.Conn
	for range 4 {
		nc, err := net.Dial("tcp", h.addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		hdr := make([]byte, 4+1024)
		binary.BigEndian.PutUint32(hdr, 8<<20)
		binary.BigEndian.PutUint16(hdr[4:], uint16(kmsg.Produce.Int16()))
		if _, err := nc.Write(hdr); err != nil {
			t.Fatal(err)
		}
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := produceOne(t, h.client(), "stalled"); err != nil {
		t.Fatalf("a producer beside four stalled requests: %v", err)
	}
}

// Connections that send a request's length and nothing more hold no room
// in the budget: with as many of them as the budget has megabytes (each
// announcing a large Produce), and as many again announcing requests
// before SASL authentication, a producer is still served.
func TestLengthOnlyRequestsHoldNoRoom(t *testing.T) {
	for _, authed := range []bool{true, false} {
		edit := func(c *Config) { c.MaxRequest, c.MaxInFlight, c.Wait = 8<<20, 1, time.Second }
		size := uint32(8 << 20)
		if !authed {
			edit = func(c *Config) {
				withSASL("PLAIN")(c)
				c.MaxRequest, c.MaxInFlight, c.Wait = 8<<20, 1, time.Second
			}
			size = 64 << 10
		}
		h := newHarness(t, 1, edit)
		n := int(int64(8<<20) / int64(min(size, 1<<20)))
		var conns []net.Conn
		for range n + 1 {
			nc, err := net.Dial("tcp", h.addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, nc)
			if _, err := nc.Write(binary.BigEndian.AppendUint32(nil, size)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(300 * time.Millisecond)
		cl := h.client()
		if !authed {
			cl = h.client(kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()))
		}
		err := produceOne(t, cl, "a-length-only")
		for _, c := range conns {
			c.Close()
		}
		if err != nil {
			t.Fatalf("authenticated %v: a producer beside %d connections that sent only a length: %v", authed, n+1, err)
		}
	}
}
