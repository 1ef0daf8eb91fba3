package backend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Timeouts bound how long one backend request may wait on a store that
// stopped moving. None of them bounds a request that makes progress: a
// multi-GB part upload or GET on a slow link runs as long as bytes move.
// A zero duration is off.
type Timeouts struct {
	// Connect bounds the TCP connection and the TLS handshake.
	Connect time.Duration
	// Response bounds the wait for the response headers once the store
	// holds the whole request (the kernel's send queue has drained).
	Response time.Duration
	// Idle bounds the store's time without progress: MinBytes of a
	// request body taken by the store (read by the transport, or drained
	// from the kernel's send queue), or of a response body delivered.
	// Time s3seal itself spends (its client's upload is slow, its
	// client's download is slow) does not count.
	Idle time.Duration
	// MinBytes is the progress Idle asks for: a store that moves fewer
	// bytes in every Idle of its own time (one byte just within each
	// Idle, forever) is stalled too. 0 or less: 1.
	MinBytes int64
}

// DefaultTimeouts are the bounds `s3seal serve` uses unless told
// otherwise: a store that accepts connections and stops answering costs a
// request at most about 2 x 20 s (one attempt and one retry; see
// retry.Policy.DownAttempts), and all of a client request's backend calls
// together 50 s (WithStallBudget), before the client gets 503; a store must move at least 16 KiB in every 20 s of its time (as
// s3seal's clients must, --transfer-min-bytes).
var DefaultTimeouts = Timeouts{Connect: 5 * time.Second, Response: 20 * time.Second, Idle: 20 * time.Second, MinBytes: 16 << 10}

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

// idleConns is how many idle connections to the store the backend client
// keeps. The SDK keeps 10 per host; s3seal talks to one host with up to
// --max-requests requests at once (multipart uploads send parts in
// parallel, a listing HEADs 16 objects at a time), so after every burst
// past 10 the SDK closed connections it needed again a moment later, each
// a new TCP (and TLS) handshake with the store.
const idleConns = 128

// newHTTPClient is the backend's HTTP client: the SDK's, keeping idleConns
// idle connections, with the connect bound on its dialer and TLS
// handshake, inside a stall guard.
func newHTTPClient(t Timeouts) aws.HTTPClient {
	c := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns, tr.MaxIdleConnsPerHost = idleConns, idleConns
	})
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
	if t.MinBytes <= 0 {
		t.MinBytes = 1
	}
	return &stallGuard{next: next, t: t}
}

type stallGuard struct {
	next aws.HTTPClient
	t    Timeouts
}

type budgetKey struct{}

// stallBudget is the store's time without progress that the backend
// requests made under one context may cost together.
type stallBudget struct {
	mu    sync.Mutex
	set   bool
	full  time.Duration
	left  time.Duration
	moved int64 // bytes the store moved since the last stall
}

// budgetRefill is the progress that gives a request its whole stall budget
// back: a request that moves data (a long copy, a big GET) is healthy, and
// a stall or two far apart must not end it.
const budgetRefill = 1 << 20

// take returns what is left, first setting it to full.
func (b *stallBudget) take(full time.Duration) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.set {
		b.set, b.full, b.left = true, full, full
	}
	return b.left
}

func (b *stallBudget) spend(d time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.left -= d
	b.moved = 0
}

// progress counts n bytes the store moved; budgetRefill of them refill.
func (b *stallBudget) progress(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.moved += n; b.moved >= budgetRefill && b.set {
		b.left, b.moved = b.full, 0
	}
}

// WithStallBudget bounds the time without progress that all the backend
// requests made under ctx may cost together: 2.5 times the larger of the
// Response and Idle bounds (50 s with the defaults). Each stall spends
// its length; a request's bounds shrink to what is left, and once nothing
// is, a further request fails at once with a StallError instead of waiting
// on the store again. Every MiB the store moves (read, or drained from the
// send queue) gives the whole budget back. s3api gives each client request one, so a request
// whose backend calls each stall (a completion makes several, and checks
// the store's work after the last) is answered within the budget and the
// retries' backoffs, whatever it asks.
func WithStallBudget(ctx context.Context) context.Context {
	return context.WithValue(ctx, budgetKey{}, &stallBudget{})
}

// Do sends req under a watchdog that cancels it, with a StallError as the
// cause, when the store holds it up too long: while the store takes no
// more of the request body, from the whole request to the response
// headers, and while a read of the response body waits (see Timeouts).
func (g *stallGuard) Do(req *http.Request) (*http.Response, error) {
	t := g.t
	budget, _ := req.Context().Value(budgetKey{}).(*stallBudget)
	if budget != nil {
		left := budget.take(5 * max(t.Response, t.Idle) / 2)
		if left <= 0 {
			return nil, &StallError{Phase: "answer: the store stalled on this client request for its whole budget", After: 0}
		}
		t.Response, t.Idle = min(t.Response, left), min(t.Idle, left)
	}
	ctx, cancel := context.WithCancelCause(req.Context())
	w := &watchdog{cancel: cancel, t: t, budget: budget}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{GotConn: func(ci httptrace.GotConnInfo) { w.setConn(ci.Conn) }})
	req = req.WithContext(ctx)
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = &sendingBody{rc: req.Body, size: req.ContentLength, w: w}
		if get := req.GetBody; get != nil {
			req.GetBody = func() (io.ReadCloser, error) {
				b, err := get()
				if err != nil || b == http.NoBody {
					return b, err
				}
				return &sendingBody{rc: b, size: req.ContentLength, w: w}, nil
			}
		}
		w.sending(phaseBody)
	} else {
		w.sending(phaseHeaders)
	}
	resp, err := g.next.Do(req)
	w.answer()
	if err != nil {
		cancel(nil)
		return nil, stallCause(ctx, err)
	}
	resp.Body = &receiving{rc: resp.Body, w: w, ctx: ctx}
	return resp, nil
}

// stallCause is err, or the StallError that cut the request.
func stallCause(ctx context.Context, err error) error {
	var se *StallError
	if errors.As(context.Cause(ctx), &se) {
		return fmt.Errorf("%w (%v)", se, err)
	}
	return err
}

// The phases in which the store holds a request up.
const (
	phaseBody     = "request body"     // the store takes no more of it
	phaseHeaders  = "response headers" // the whole request sent, no answer
	phaseResponse = "response body"    // a read of the answer waits
)

// watchdog cancels one request whose store stops moving. While the
// request is being sent it ticks every quarter of its bound and looks for
// progress: bytes the transport took from the body, or bytes the kernel's
// send queue drained (socket buffers hold megabytes a slow store takes
// long after the transport handed them over). Once answered it counts
// the store's time during reads of the response body.
type watchdog struct {
	cancel context.CancelCauseFunc
	t      Timeouts
	budget *stallBudget // the client request's, or nil

	mu       sync.Mutex
	timer    *time.Timer
	gen      uint64 // which arming the timer belongs to
	phase    string
	answered bool
	queue    func() (int, bool) // the connection's unsent bytes, when known
	lastQ    int                // the queue at the last progress
	moved    int64              // bytes of progress since the last
	progress time.Time          // when the store last made MinBytes of progress
	used     time.Duration      // phaseResponse: the store's time in this window
	since    time.Time          // phaseResponse: when the running read began
	inSource bool               // the transport is reading the request body's source
}

// setConn learns the request's connection, for its send queue.
func (w *watchdog) setConn(c net.Conn) {
	q := sendQueue(c)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.queue = q
	if n, ok := w.sendQueueLocked(); ok {
		w.lastQ = n
	}
}

func (w *watchdog) sendQueueLocked() (int, bool) {
	if w.queue == nil {
		return 0, false
	}
	return w.queue()
}

// limit is the bound of the current phase.
func (w *watchdog) limit() time.Duration {
	if w.phase == phaseHeaders {
		return w.t.Response
	}
	return w.t.Idle
}

// sending enters a phase of sending (the body, or waiting for the
// headers once it is all handed over): progress starts anew.
func (w *watchdog) sending(phase string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answered {
		return
	}
	w.phase, w.progress, w.moved, w.inSource = phase, time.Now(), 0, false
	if n, ok := w.sendQueueLocked(); ok {
		w.lastQ = n
	}
	w.tickLocked()
}

// fromSource notes the transport waiting on the request body's source
// (s3seal's client uploading slowly, say): that time is not the store's.
func (w *watchdog) fromSource() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inSource = true
}

// took notes n body bytes the transport took: progress of the store.
func (w *watchdog) took(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inSource = false
	if w.answered || n <= 0 {
		return
	}
	w.moved += int64(n)
	if w.moved >= w.t.MinBytes {
		w.progress, w.moved = time.Now(), 0
	}
}

// tickLocked arms the next look at the sending side's progress.
func (w *watchdog) tickLocked() {
	w.stopLocked()
	d := w.limit()
	if d <= 0 {
		return
	}
	gen := w.gen
	w.timer = time.AfterFunc(d/4, func() { w.tick(gen) })
}

func (w *watchdog) tick(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if gen != w.gen || w.answered {
		return
	}
	if n, ok := w.sendQueueLocked(); ok {
		if n < w.lastQ {
			w.moved += int64(w.lastQ - n)
			w.budgetProgress(int64(w.lastQ - n))
		}
		w.lastQ = n
		if w.moved >= w.t.MinBytes || (n == 0 && w.moved > 0) {
			// The queue drained by MinBytes, or to its end: the store
			// took them; for the headers, its bound counts from here.
			w.progress, w.moved = time.Now(), 0
		}
	}
	if w.inSource {
		// The transport waits on s3seal's own source, not on the store.
		w.progress, w.moved = time.Now(), 0
	}
	if time.Since(w.progress) >= w.limit() {
		w.stallLocked(&StallError{Phase: w.phase, After: w.limit()})
		return
	}
	w.tickLocked()
}

// answer ends the sending side: the transport's further reads of the
// request body (it may go on sending after an early answer) no longer
// count, and the watchdog waits for reads of the response body.
func (w *watchdog) answer() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.answered, w.phase, w.used, w.moved = true, phaseResponse, 0, 0
	w.stopLocked()
}

// reading starts a read of the response body: the store's time runs.
func (w *watchdog) reading() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
	if w.t.Idle <= 0 {
		return
	}
	w.since = time.Now()
	gen := w.gen
	left := max(w.t.Idle-w.used, time.Millisecond)
	w.timer = time.AfterFunc(left, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if gen == w.gen {
			w.stallLocked(&StallError{Phase: phaseResponse, After: w.t.Idle})
		}
	})
}

// read ends a read that delivered n bytes: the store's time stops, and a
// window that moved MinBytes starts anew.
func (w *watchdog) read(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopLocked()
	w.used += time.Since(w.since)
	w.moved += int64(n)
	w.budgetProgress(int64(n))
	if w.moved >= w.t.MinBytes {
		w.used, w.moved = 0, 0
	}
}

func (w *watchdog) budgetProgress(n int64) {
	if w.budget != nil && n > 0 {
		w.budget.progress(n)
	}
}

func (w *watchdog) stallLocked(cause *StallError) {
	if w.budget != nil {
		w.budget.spend(cause.After)
	}
	w.cancel(cause)
}

// stopLocked stops the timer; a callback already running sees a new gen.
func (w *watchdog) stopLocked() {
	w.gen++
	if w.timer != nil {
		w.timer.Stop()
		w.timer = nil
	}
}

// release stops the watchdog and the request's context.
func (w *watchdog) release() {
	w.mu.Lock()
	w.stopLocked()
	w.mu.Unlock()
	w.cancel(nil)
}

type sendingBody struct {
	rc   io.ReadCloser
	size int64 // -1 when unknown
	sent int64
	w    *watchdog
}

func (s *sendingBody) Read(p []byte) (int, error) {
	s.w.fromSource()
	n, err := s.rc.Read(p)
	s.sent += int64(n)
	s.w.took(n)
	if err != nil || (s.size >= 0 && s.sent >= s.size) {
		s.w.sending(phaseHeaders)
	}
	return n, err
}

func (s *sendingBody) Close() error { return s.rc.Close() }

type receiving struct {
	rc  io.ReadCloser
	w   *watchdog
	ctx context.Context
}

func (r *receiving) Read(p []byte) (int, error) {
	r.w.reading()
	n, err := r.rc.Read(p)
	r.w.read(n)
	if err != nil && err != io.EOF {
		err = stallCause(r.ctx, err)
	}
	return n, err
}

// Close ends the request: its watchdog and context are released.
func (r *receiving) Close() error {
	err := r.rc.Close()
	r.w.release()
	return err
}
