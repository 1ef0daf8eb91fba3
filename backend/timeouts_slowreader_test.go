package backend

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// A store that takes an upload steadily, a bite far more often than the
// idle bound, is moving: the upload must not be cut as a stall ("a part
// upload on a slow link runs as long as bytes move"), whatever the socket
// buffers between the transport's writes and the store's reads hide.
func TestUploadTakenATrickleAtATime(t *testing.T) {
	addr := storeByHand(t, func(conn net.Conn) {
		br := bufio.NewReaderSize(conn, 4096)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		buf := make([]byte, 16<<10)
		for {
			if _, err := io.ReadFull(req.Body, buf); err != nil {
				break
			}
			time.Sleep(50 * time.Millisecond) // 320 KiB/s, a read every 50 ms
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	for _, size := range []int{4 << 20, 64 << 20} {
		t.Run(fmt.Sprint(size>>20, "MiB"), func(t *testing.T) { uploadTrickled(t, addr, size) })
	}
}

// uploadTrickled PUTs size bytes to the trickling store at addr.
func uploadTrickled(t *testing.T, addr string, size int) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	// The kernel passes a slow reader's progress on in bursts (a window
	// update every ~90 KiB, here every ~0.3 s): the bound must exceed that.
	c := guard(&http.Client{Transport: tr}, Timeouts{Response: time.Second, Idle: time.Second})
	body := make([]byte, size)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "PUT", "http://"+addr+"/bkt/k", bytes.NewReader(body))
	start := time.Now()
	resp, err := c.Do(req)
	d := time.Since(start)
	if err == nil {
		resp.Body.Close()
	}
	t.Logf("%v after %v", err, d)
	if err != nil && (IsStall(err) || !errors.Is(err, context.DeadlineExceeded)) {
		// Still going when the test's own 5 s ran out is fine.
		t.Fatalf("an upload the store takes 16 KiB every 50 ms (idle bound 1 s): %v after %v, want it done (it needs about %v)", err, d, time.Duration(size/(16<<10))*50*time.Millisecond)
	}
}
