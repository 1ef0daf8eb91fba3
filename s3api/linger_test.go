package s3api

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// TestRefusalReachesASendingClient: a client that sends a large body
// without waiting (as aws-sdk-go-v2 does, whatever its Expect header says)
// and only then reads, gets the refusal given before its body was read,
// not a reset. Without the linger net/http closes the connection with the
// body unread, and the client's last writes or its read meet the reset.
func TestRefusalReachesASendingClient(t *testing.T) {
	creds := Credentials{"ro": {AccessKey: "ro", SecretKey: "sr", Read: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds})
	const size = 8 << 20
	for i := range 5 {
		conn := rawPut(t, srv, "ro", "sr", "/bkt/k", size)
		sent := make(chan error, 1)
		go func() {
			_, err := conn.Write(bytes.Repeat([]byte{'x'}, size))
			sent <- err
		}()
		if err := <-sent; err != nil {
			t.Fatalf("attempt %d: sending the body: %v", i, err)
		}
		code, body, err := readStatus(conn, 3*time.Second)
		if err != nil || code != http.StatusForbidden {
			t.Fatalf("attempt %d: refused PUT: %d %q (%v), want 403", i, code, body, err)
		}
		conn.Close()
	}
}
