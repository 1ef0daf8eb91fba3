package e2e

// Review s12 R1: the pre-authentication CORS fetch against a real s3seal
// binary over moto. EXPECTED TO FAIL against the code under review.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// FINDING R1-1 (real binary): anonymous requests with an Origin header,
// and /healthz with one, each make s3seal send a signed GET ?cors to the
// object store, before authentication and outside --max-requests.
func TestR1RealBinaryAnonymousCORSFanout(t *testing.T) {
	moto := startMoto(t)
	target, _ := url.Parse(moto.Endpoint)
	rp := httputil.NewSingleHostReverseProxy(target)
	var cors, inFlight, peak atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("cors") {
			cors.Add(1)
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(300 * time.Millisecond) // a slow store
		}
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	p := startS3seal(t, sealOpts{Backend: &motoServer{Endpoint: proxy.URL}, Args: []string{"--max-requests", "1"}})
	const n = 40
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			method, path := http.MethodOptions, fmt.Sprintf("/anon-%d/k", i)
			switch i % 4 {
			case 1:
				method = http.MethodGet
			case 2:
				method, path = http.MethodGet, "/healthz"
			}
			req, _ := http.NewRequest(method, p.Endpoint+path, nil)
			req.Header.Set("Origin", "http://evil.example")
			req.Header.Set("Access-Control-Request-Method", "GET")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
		}(i)
	}
	wg.Wait()
	t.Logf("%d anonymous requests -> %d signed GET ?cors to the store, %d at once (--max-requests 1)", n, cors.Load(), peak.Load())
	// Fixed by decision: only preflights (unsigned by design) read rules,
	// only of buckets some credential may use, one read per bucket at a
	// time, never more at once than --max-requests.
	if cors.Load() > 1 || peak.Load() > 1 {
		t.Errorf("R1-1: anonymous requests drove %d backend GET ?cors (peak %d concurrent, --max-requests 1)", cors.Load(), peak.Load())
	}
}
