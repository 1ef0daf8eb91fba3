package s3api

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// An empty PUT with "Expect: 100-continue" (botocore sends one for every
// PutObject) must get "100 Continue" before its final answer; botocore
// mis-reads the next answer on the connection otherwise.
func TestEmptyBodyExpectContinue(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	// Unsigned: the answer is a 403, which must still come after a 100.
	fmt.Fprintf(c, "PUT /bkt/empty HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nExpect: 100-continue\r\n\r\n")
	br := bufio.NewReader(c)
	first, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.StatusCode != http.StatusContinue {
		t.Fatalf("first answer %d, want 100 Continue", first.StatusCode)
	}
	final, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	final.Body.Close()
	if final.StatusCode != http.StatusForbidden {
		t.Fatalf("final answer %d, want 403", final.StatusCode)
	}
}
