package main

import (
	"errors"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestLFSListenerHeaderBounds: the LFS API's own listener bounds a
// request's header as the S3 API's does: --header-timeout for it to
// arrive (a client that leaves it unfinished is closed at about the
// bound, not after a fixed 30 s) and 64 KiB (+4 KiB) read of it (431
// past, not net/http's default of 1 MiB). Both come before the API key
// is looked at, so they are what an anonymous client can hold.
func TestLFSListenerHeaderBounds(t *testing.T) {
	const bound = time.Second
	_, _, log := startServeWithLog(t, "--header-timeout", bound.String(), "--lfs", "--lfs-dev-kafka", "127.0.0.1:0", "--lfs-listen", "127.0.0.1:0")
	line := regexp.MustCompile(`LFS API listening on http://([0-9.:]+)`)
	var addr string
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := line.FindStringSubmatch(log.String()); m != nil {
			addr = m[1]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the LFS API did not start:\n%s", log.String())
		}
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.Write([]byte("POST /lfs/produce HTTP/1.1\r\nHost: x\r\n"))
	start := time.Now()
	conn.SetReadDeadline(start.Add(5 * bound))
	if _, err := conn.Read(make([]byte, 1)); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("a header left unfinished still holds its connection after %v (--header-timeout %v)", time.Since(start).Round(time.Millisecond), bound)
		}
	}

	big, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(10 * time.Second))
	go big.Write([]byte("GET /lfs/x HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 200<<10) + "\r\n\r\n"))
	buf := make([]byte, 64)
	n, _ := big.Read(buf)
	if !strings.HasPrefix(string(buf[:n]), "HTTP/1.1 431") {
		t.Errorf("a 200 KiB header: answered %q, want 431", buf[:n])
	}
}
