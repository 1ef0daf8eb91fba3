package lfs

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// Requests served at once are bounded, as the S3 API's are: each held
// produce keeps a goroutine, a broker connection and a spool; past
// MaxInFlight a request waits InFlightWait, then gets 503 proxy_busy
// without a broker connection. A freed slot serves the next request.
func TestInFlightBounded(t *testing.T) {
	e := newEnv(t)
	_, srv := e.replica(func(c *Config) { c.MaxInFlight, c.InFlightWait = 2, 200*time.Millisecond })
	var writers []*io.PipeWriter
	done := make(chan answer, 2)
	for range 2 {
		pr, pw := io.Pipe()
		writers = append(writers, pw)
		t.Cleanup(func() { pw.CloseWithError(io.ErrUnexpectedEOF) })
		go func() {
			req, _ := http.NewRequest("POST", srv.URL+"/lfs/produce", pr)
			req.ContentLength = 1000
			req.Header.Set("X-Kafka-Topic", "held")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				done <- answer{body: []byte(err.Error())}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			done <- answer{status: resp.StatusCode, body: b}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.prod.mu.Lock()
		n := e.prod.connects
		e.prod.mu.Unlock()
		if n == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d held produces connected, want 2", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	wantError(t, produce(t, srv.URL, "third", []byte("x"), nil), 503, "proxy_busy")
	if took := time.Since(start); took < 150*time.Millisecond || took > 3*time.Second {
		t.Fatalf("the third request was answered after %s, want about InFlightWait", took)
	}
	e.prod.mu.Lock()
	n := e.prod.connects
	e.prod.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d broker sessions, want 2", n)
	}
	for _, pw := range writers {
		pw.Write(make([]byte, 1000))
		pw.Close()
	}
	for range 2 {
		if a := <-done; a.status != 200 {
			t.Fatalf("held produce: %d %s", a.status, a.body)
		}
	}
	if a := produce(t, srv.URL, "fourth", []byte("x"), nil); a.status != 200 {
		t.Fatalf("after the slots were freed: %d %s", a.status, a.body)
	}
}
