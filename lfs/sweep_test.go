package lfs

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/s3seal/s3seal/sealstore"
)

// TestSweeperSparesLiveProduce: a /lfs/produce streaming a large blob is
// a multipart upload that may live longer than SessionTTL; the sweeper
// (on another replica) must not abort it while parts keep coming, and
// must abort a session nobody came back to (not every upload older than
// the TTL). Real time, with a 2 s session TTL and no grace.
func TestSweeperSparesLiveProduce(t *testing.T) {
	e := newEnv(t)
	short := func(c *Config) { c.SessionTTL, c.SweepGrace, c.Now = 2*time.Second, time.Millisecond, nil }
	_, srv := e.replica(short)
	sweeper, _ := e.replica(short)
	pr, pw := io.Pipe()
	const parts = 4
	data := randBytes(parts*sealstore.MinPartSize+100, 53)
	done := make(chan answer, 1)
	go func() {
		req, _ := http.NewRequest("POST", srv.URL+"/lfs/produce", pr)
		req.Header.Set("X-Kafka-Topic", "orders")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{status: -1, body: []byte(err.Error())}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{status: resp.StatusCode, body: b}
	}()
	// An abandoned session: created, never used.
	if a := doJSON(t, "POST", srv.URL+"/lfs/uploads", map[string]any{"topic": "orders", "size_bytes": 10}); a.status != 200 {
		t.Fatalf("session: %d %s", a.status, a.body)
	}
	swept := 0
	for i := 0; i < parts; i++ { // a part every second, 4 s in all: longer than the TTL
		if _, err := pw.Write(data[i*sealstore.MinPartSize : (i+1)*sealstore.MinPartSize]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		n, err := sweeper.SweepExpired(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		swept += n
	}
	go func() { pw.Write(data[parts*sealstore.MinPartSize:]); pw.Close() }()
	a := <-done
	if a.status != 200 {
		t.Fatalf("the live produce answered %d %s", a.status, a.body)
	}
	if swept != 1 {
		t.Fatalf("swept %d uploads, want the abandoned session's only", swept)
	}
	if _, ups := e.objects(); len(ups) != 0 {
		t.Fatalf("uploads left: %v", ups)
	}
}
