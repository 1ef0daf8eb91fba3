package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Timeouts bound how long one backend request may wait on a store that
// stopped moving. None of them bounds a request that makes progress: a
// multi-GB part upload or GET on a slow link runs as long as bytes move.
// A zero field is off.
type Timeouts struct {
	// Connect bounds the TCP connection and the TLS handshake.
	Connect time.Duration
	// Response bounds the wait for the response headers once the request,
	// body included, is sent.
	Response time.Duration
	// Idle bounds the time no byte of the request body is taken by the
	// store, and the time one read of the response body waits for a byte.
	// Time s3seal itself spends (its client's upload is slow, its
	// client's download is slow) does not count.
	Idle time.Duration
}

// DefaultTimeouts are the bounds `s3seal serve` uses unless told
// otherwise: a store that accepts connections and stops answering costs a
// request at most about 2 x 20 s (one attempt and one retry; see
// retry.Policy.StallAttempts) before the client gets 503.
var DefaultTimeouts = Timeouts{Connect: 5 * time.Second, Response: 20 * time.Second, Idle: 20 * time.Second}

// StallError is a backend request cut because the store stopped moving:
// no response headers within Timeouts.Response, or no byte of a body
// within Timeouts.Idle. It is a net.Error whose Timeout is true.
type StallError struct {
	Phase string // "response headers", "request body" or "response body"
	After time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("the object store stalled: no %s for %v", e.Phase, e.After)
}

// Timeout reports true: a stall is a timeout (net.Error).
func (e *StallError) Timeout() bool { return true }

// Temporary reports true (net.Error).
func (e *StallError) Temporary() bool { return true }

var _ net.Error = (*StallError)(nil)

// IsStall reports whether err is (or wraps) a StallError.
func IsStall(err error) bool {
	var se *StallError
	return errors.As(err, &se)
}

// newHTTPClient is the backend's HTTP client: the SDK's, with the connect
// bound on its dialer and TLS handshake, inside a stall guard.
func newHTTPClient(t Timeouts) aws.HTTPClient {
	c := awshttp.NewBuildableClient()
	if t.Connect > 0 {
		c = c.WithDialerOptions(func(d *net.Dialer) { d.Timeout = t.Connect }).
			WithTransportOptions(func(tr *http.Transport) { tr.TLSHandshakeTimeout = t.Connect })
	}
	return guard(c, t)
}

// guard wraps next so that its requests end with a StallError when the
// store stops moving (t.Response, t.Idle); next when both are off.
func guard(next aws.HTTPClient, t Timeouts) aws.HTTPClient {
	if t.Response <= 0 && t.Idle <= 0 {
		return next
	}
	return &stallGuard{next: next, t: t}
}

type stallGuard struct {
	next aws.HTTPClient
	t    Timeouts
}

// Do sends req under a watchdog. The watchdog runs while the request body
// waits to be taken by the transport (Idle), from the body's end to the
// response headers (Response), and during each read of the response body
// (Idle); it cancels the request with a StallError as the cause when one
// of those lasts too long.
func (g *stallGuard) Do(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{cancel: cancel}
	req = req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = g.sending(req.Body, req.ContentLength, w)
		if get := req.GetBody; get != nil {
			req.GetBody = func() (io.ReadCloser, error) {
				b, err := get()
				if err != nil || b == http.NoBody {
					return b, err
				}
				return g.sending(b, req.ContentLength, w), nil
			}
		}
	} else {
		w.arm(g.t.Response, &StallError{Phase: "response headers", After: g.t.Response})
	}
	resp, err := g.next.Do(req)
	w.answer()
	if err != nil {
		cancel(nil)
		return nil, stallCause(ctx, err)
	}
	resp.Body = &receiving{rc: resp.Body, w: w, idle: g.t.Idle, ctx: ctx}
	return resp, nil
}

// sending wraps a request body: between two reads (the transport waiting
// for the store to take bytes) the Idle watchdog runs; after its last byte
// the Response one does.
func (g *stallGuard) sending(rc io.ReadCloser, size int64, w *watchdog) io.ReadCloser {
	s := &sendingBody{rc: rc, size: size, w: w, t: g.t}
	w.armSending(g.t.Idle, &StallError{Phase: "request body", After: g.t.Idle})
	return s
}

// stallCause is err, or the StallError that cut the request.
func stallCause(ctx context.Context, err error) error {
	var se *StallError
	if errors.As(context.Cause(ctx), &se) {
		return fmt.Errorf("%w (%v)", se, err)
	}
	return err
}

// watchdog cancels a request when the timer it holds fires.
type watchdog struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	timer  *time.Timer
	// answered is set once the response headers came: the request body's
	// reads (the transport may go on sending after an early answer) no
	// longer move the watchdog.
	answered bool
}

// arm (re)starts the watchdog: the request is cancelled with cause after
// d unless arm or disarm is called first. d <= 0 disarms.
func (w *watchdog) arm(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.set(d, cause)
}

// armSending is arm for the request body's reads: nothing once answered.
func (w *watchdog) armSending(d time.Duration, cause error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.answered {
		w.set(d, cause)
	}
}

// answer stops the watchdog for good of the sending side.
func (w *watchdog) answer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answered = true
	w.set(0, nil)
}

func (w *watchdog) set(d time.Duration, cause error) {
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
	if d > 0 {
		w.timer = time.AfterFunc(d, func() { w.cancel(cause) })
	}
}

func (w *watchdog) disarm() { w.arm(0, nil) }

type sendingBody struct {
	rc   io.ReadCloser
	size int64 // -1 when unknown
	sent int64
	w    *watchdog
	t    Timeouts
}

func (s *sendingBody) Read(p []byte) (int, error) {
	// The time spent in this read is s3seal's (its source is slow): the
	// store is not waiting for anything.
	s.w.armSending(0, nil)
	n, err := s.rc.Read(p)
	s.sent += int64(n)
	if err != nil || (s.size >= 0 && s.sent >= s.size) {
		s.w.armSending(s.t.Response, &StallError{Phase: "response headers", After: s.t.Response})
	} else {
		s.w.armSending(s.t.Idle, &StallError{Phase: "request body", After: s.t.Idle})
	}
	return n, err
}

func (s *sendingBody) Close() error { return s.rc.Close() }

type receiving struct {
	rc   io.ReadCloser
	w    *watchdog
	idle time.Duration
	ctx  context.Context
}

func (r *receiving) Read(p []byte) (int, error) {
	r.w.arm(r.idle, &StallError{Phase: "response body", After: r.idle})
	n, err := r.rc.Read(p)
	r.w.disarm()
	if err != nil && err != io.EOF {
		err = stallCause(r.ctx, err)
	}
	return n, err
}

// Close ends the request: its context is released.
func (r *receiving) Close() error {
	r.w.disarm()
	err := r.rc.Close()
	r.w.cancel(nil)
	return err
}
