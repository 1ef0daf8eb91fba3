package backend

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Answers that come right at the bounds: each request either succeeds with
// the whole body or fails with a StallError (never the caller's
// cancellation, never a short clean body), and once it is over nothing of
// it is left running: no goroutine, no timer firing later.
func TestWatchdogAtTheBound(t *testing.T) {
	const bound = 40 * time.Millisecond
	body := make([]byte, 64<<10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, _ := strconv.Atoi(r.URL.Query().Get("d"))
		head := r.URL.Query().Get("where") == "head"
		if head {
			time.Sleep(time.Duration(d) * time.Microsecond)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(200)
		_, _ = w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		if !head {
			time.Sleep(time.Duration(d) * time.Microsecond)
		}
		_, _ = w.Write(body[len(body)/2:])
	}))
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := guard(&http.Client{Transport: tr}, Timeouts{Response: bound, Idle: bound})

	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for i := 0; i < 120; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			where := "head"
			if i%2 == 1 {
				where = "body"
			}
			d := int(bound/time.Microsecond) - 4000 + (i%16)*500 // bound-4ms .. bound+3.5ms
			req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL+"/?where="+where+"&d="+strconv.Itoa(d), nil)
			resp, err := c.Do(req)
			n := 0
			if err == nil {
				var b []byte
				b, err = io.ReadAll(resp.Body)
				n = len(b)
				resp.Body.Close()
			}
			switch {
			case err == nil && n == len(body):
			case err != nil && IsStall(err) && !errors.Is(err, context.Canceled):
			default:
				mu.Lock()
				bad = append(bad, where+": "+strconv.Itoa(n)+" bytes, err "+errString(err))
				mu.Unlock()
			}
		}(i)
		if i%8 == 7 {
			wg.Wait()
		}
	}
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
	tr.CloseIdleConnections()
	time.Sleep(4 * bound)
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines left after the requests (%d before):\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
