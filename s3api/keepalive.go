package s3api

import (
	"encoding/xml"
	"net/http"
	"sync"
	"time"
)

// keepAlive answers a slow operation (CompleteMultipartUpload, copies of
// large objects) the way S3 does: when the result has not come after
// Delay, it sends 200 and the XML declaration, then a space every Interval,
// so clients with idle timeouts keep waiting; the result, or an <Error>
// element, follows in the same body. Results that come before Delay are
// answered normally, with their own status.
type keepAlive struct {
	w    http.ResponseWriter
	r    *http.Request
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	started bool
	stopped bool
	// extra are response headers set by finish when the status line has
	// not gone out yet (x-amz-version-id); only the handler touches it.
	extra map[string]string
}

func (s *Server) startKeepAlive(req *request) *keepAlive {
	k := &keepAlive{w: req.w, r: req.r, done: make(chan struct{})}
	delay, interval := s.cfg.KeepAliveDelay, s.cfg.KeepAliveInterval
	k.wg.Add(1)
	go func() {
		defer k.wg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		for {
			select {
			case <-k.done:
				return
			case <-t.C:
			}
			if !k.tick() {
				return
			}
			t.Reset(interval)
		}
	}()
	return k
}

// tick sends the status line and declaration the first time, a space
// after; it reports false once the body can take no more.
func (k *keepAlive) tick() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.stopped {
		return false
	}
	var err error
	if !k.started {
		k.started = true
		k.w.Header().Set("Content-Type", "application/xml")
		k.w.WriteHeader(http.StatusOK)
		_, err = k.w.Write([]byte(xml.Header))
	} else {
		_, err = k.w.Write([]byte(" "))
	}
	if err == nil {
		err = http.NewResponseController(k.w).Flush()
	}
	return err == nil
}

// finish stops the keep-alive and answers: v with status 200, or err. Once
// the status line went out, an error becomes an <Error> element in the
// 200 body; the handler then returns nil.
func (k *keepAlive) finish(v any, err error) error {
	k.mu.Lock()
	k.stopped = true
	started := k.started
	k.mu.Unlock()
	close(k.done)
	k.wg.Wait()
	if !started {
		for name, val := range k.extra {
			k.w.Header().Set(name, val)
		}
		if err != nil {
			return err
		}
		writeXML(k.w, http.StatusOK, v)
		return nil
	}
	if err != nil {
		v = errorElement(k.w, k.r, err)
	}
	out, merr := xml.Marshal(v)
	if merr != nil {
		return merr
	}
	_, _ = k.w.Write(out)
	return nil
}
