package main

import (
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestHeaderTimeoutOverTLS: --header-timeout bounds the wait for a
// request's header on a TLS listener too, whatever protocol the client
// negotiates there (ALPN h2 or http/1.1): a client that leaves its header
// unfinished has its connection closed at about the bound, not kept until
// the idle timeout (2 minutes).
func TestHeaderTimeoutOverTLS(t *testing.T) {
	const bound = time.Second
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	s := httptest.NewUnstartedServer(h)
	s.Config = newAPIServer(h, bound, log.New(io.Discard, "", 0), &tls.Config{MinVersion: tls.VersionTLS12})
	s.EnableHTTP2 = true
	s.StartTLS()
	t.Cleanup(s.Close)
	conn, err := tls.Dial("tcp", s.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	proto := conn.ConnectionState().NegotiatedProtocol
	if proto == "h2" {
		// The preface, empty SETTINGS, and a HEADERS frame of stream 1
		// without END_HEADERS (":method: GET"), never continued.
		conn.Write([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
		conn.Write([]byte{0, 0, 0, 4, 0, 0, 0, 0, 0})
		conn.Write([]byte{0, 0, 1, 1, 0, 0, 0, 0, 1, 0x82})
	} else {
		conn.Write([]byte("GET /bkt/k HTTP/1.1\r\nHost: x\r\n"))
	}
	start := time.Now()
	conn.SetReadDeadline(start.Add(5 * bound))
	buf := make([]byte, 4096)
	for {
		if _, err := conn.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("over %s, a header left unfinished still holds its connection after %v (bound %v)", proto, time.Since(start).Round(time.Millisecond), bound)
			}
			return // closed
		}
	}
}
