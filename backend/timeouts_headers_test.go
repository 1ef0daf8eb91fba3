package backend

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"testing"
	"time"
)

// A store that drips its status line and headers a byte at a time, each
// byte well within the idle bound, still answers no headers within the
// response bound: the request is cut as a stall after about Response.
func TestHeadersDrippedAreBounded(t *testing.T) {
	addr := storeByHand(t, func(conn net.Conn) {
		_, _ = http.ReadRequest(bufio.NewReader(conn))
		answer := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX-Pad: " + string(make([]byte, 200)) + "\r\n\r\n"
		for i := 0; i < len(answer); i++ {
			if _, err := conn.Write([]byte{answer[i]}); err != nil {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := guard(&http.Client{Transport: tr}, Timeouts{Response: 300 * time.Millisecond, Idle: 300 * time.Millisecond})
	start := time.Now()
	req, _ := http.NewRequestWithContext(context.Background(), "HEAD", "http://"+addr+"/bkt/k", nil)
	resp, err := c.Do(req)
	d := time.Since(start)
	if err == nil {
		resp.Body.Close()
	}
	if !IsStall(err) || d > time.Second {
		t.Fatalf("headers dripped: %v after %v, want a stall after about 300ms", err, d)
	}
}
