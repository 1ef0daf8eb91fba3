package backend

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A burst of concurrent requests leaves its connections idle for the
// next burst: the second burst of 40 HEADs opens no new connection to the
// store (with the SDK's default of 10 idle per host it opened 30).
func TestBurstsReuseConnections(t *testing.T) {
	var opened atomic.Int64
	gate := make(chan struct{})
	var inFlight sync.WaitGroup
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inFlight.Done()
		<-gate // hold every request until the whole burst is in flight
		w.Header().Set("ETag", `"e"`)
		w.Header().Set("Content-Length", "0")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	st, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "ak", SecretKey: "sk", PathStyle: true, Timeouts: DefaultTimeouts})
	must(t, err)
	const burst = 40
	for round := range 2 {
		gate = make(chan struct{})
		inFlight.Add(burst)
		var done sync.WaitGroup
		for i := range burst {
			done.Add(1)
			go func() {
				defer done.Done()
				if _, err := st.HeadObject(context.Background(), "b", "k"); err != nil {
					t.Errorf("round %d, HEAD %d: %v", round, i, err)
				}
			}()
		}
		inFlight.Wait()
		close(gate)
		done.Wait()
		time.Sleep(50 * time.Millisecond) // let the connections go idle
		if round == 0 && opened.Load() != burst {
			t.Fatalf("first burst opened %d connections, want %d", opened.Load(), burst)
		}
	}
	if n := opened.Load(); n != burst {
		t.Fatalf("two bursts of %d opened %d connections: the second did not reuse the first's", burst, n)
	}
}
