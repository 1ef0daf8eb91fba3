package s3api

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// transferGuard enforces a minimum transfer rate on one request: its body
// and its response must each move at least minBytes within every timeout
// that s3seal spends waiting on the client. Time the server spends between
// reads or between writes (a backend call, a long copy that sends
// keep-alive whitespace now and then) does not count, so only a slow
// client is cut, never a slow server.
//
// It works through http.ResponseController's read and write deadlines,
// which net/http applies to the connection (HTTP/1.1) or to the stream
// (HTTP/2): a deadline is armed for what is left of the current window
// before a read or write blocks, and the window starts over once minBytes
// have moved. Deadlines are only re-armed when they are off by more than a
// sixteenth of the timeout, so a fast transfer costs about one deadline
// update per window, not one per read.
type transferGuard struct {
	rc       *http.ResponseController
	timeout  time.Duration
	minBytes int64
	remote   string
	read     window
	write    window
}

// window is one direction's progress within the current window.
type window struct {
	set    func(time.Time) error
	moved  int64         // bytes moved in the current window
	waited time.Duration // time blocked on the client in the current window
	armed  time.Time     // the deadline in force; zero: none
}

// newTransferGuard starts guarding one request. A timeout <= 0 disables it.
// It clears a write deadline left on the connection by the request before.
func newTransferGuard(w http.ResponseWriter, r *http.Request, timeout time.Duration, minBytes int64) *transferGuard {
	if timeout <= 0 {
		return nil
	}
	g := &transferGuard{rc: http.NewResponseController(w), timeout: timeout, minBytes: max(minBytes, 1), remote: r.RemoteAddr}
	g.read.set, g.write.set = g.rc.SetReadDeadline, g.rc.SetWriteDeadline
	_ = g.write.set(time.Time{})
	return g
}

// begin arms the deadline for one blocking read or write at now.
func (g *transferGuard) begin(d *window, now time.Time) {
	want := now.Add(g.timeout - d.waited)
	if diff := want.Sub(d.armed); d.armed.IsZero() || diff > g.timeout/16 || diff < -g.timeout/16 {
		_ = d.set(want)
		d.armed = want
	}
}

// end records one read or write that moved n bytes and blocked since start.
func (g *transferGuard) end(d *window, n int, start time.Time) {
	d.waited += time.Since(start)
	d.moved += int64(n)
	if d.moved >= g.minBytes {
		d.moved, d.waited = 0, 0
	}
}

// disarm removes a direction's deadline.
func (g *transferGuard) disarm(d *window) {
	if !d.armed.IsZero() {
		_ = d.set(time.Time{})
		d.armed = time.Time{}
	}
}

// timedOut reports err as RequestTimeout when a deadline cut it.
func (g *transferGuard) timedOut(err error, what string) error {
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	slog.Info("client too slow, request cut", "remote", g.remote, "direction", what,
		"min_bytes", g.minBytes, "timeout", g.timeout)
	return s3err.New(s3err.RequestTimeout, "")
}

// body wraps a request body.
func (g *transferGuard) body(b io.ReadCloser) io.ReadCloser {
	if g == nil || b == nil || b == http.NoBody {
		return b
	}
	return &guardedBody{ReadCloser: b, g: g}
}

// writer wraps a response writer.
func (g *transferGuard) writer(w http.ResponseWriter) http.ResponseWriter {
	if g == nil {
		return w
	}
	return &guardedWriter{ResponseWriter: w, g: g, chunk: int(min(g.minBytes, 64<<10))}
}

// finish runs when the handler returns. net/http then discards what is
// left of an unread body (up to 256 KiB) and only then flushes the end of
// the response: the discard gets one more timeout, the flush another, so
// neither can hang on a stalled client. A body that already failed keeps
// its expired deadline, so the discard fails at once.
func (g *transferGuard) finish(b io.ReadCloser) {
	if g == nil {
		return
	}
	now, flush := time.Now(), g.timeout
	if gb, ok := b.(*guardedBody); ok && !gb.eof && !gb.failed {
		_ = g.read.set(now.Add(g.timeout))
		flush += g.timeout
	}
	_ = g.write.set(now.Add(flush))
}

type guardedBody struct {
	io.ReadCloser
	g      *transferGuard
	eof    bool // the body ended; no deadline in force
	failed bool // a read failed
}

func (b *guardedBody) Read(p []byte) (int, error) {
	if b.eof {
		return b.ReadCloser.Read(p)
	}
	start := time.Now()
	b.g.begin(&b.g.read, start)
	n, err := b.ReadCloser.Read(p)
	b.g.end(&b.g.read, n, start)
	if err == io.EOF {
		// HTTP/1.1 watches the connection for a close once the body has
		// ended; a deadline left in force would cancel the request.
		b.eof = true
		b.g.disarm(&b.g.read)
	} else if err != nil {
		b.failed = true
	}
	return n, b.g.timedOut(err, "request body")
}

type guardedWriter struct {
	http.ResponseWriter
	g     *transferGuard
	chunk int // largest single write, so that progress is seen
}

func (w *guardedWriter) Write(p []byte) (int, error) {
	total := 0
	for len(p) > 0 {
		c := p[:min(len(p), w.chunk)]
		start := time.Now()
		w.g.begin(&w.g.write, start)
		n, err := w.ResponseWriter.Write(c)
		w.g.end(&w.g.write, n, start)
		total += n
		p = p[n:]
		if err != nil {
			return total, w.g.timedOut(err, "response")
		}
	}
	return total, nil
}

// FlushError flushes under the same deadline (http.ResponseController
// finds it here).
func (w *guardedWriter) FlushError() error {
	start := time.Now()
	w.g.begin(&w.g.write, start)
	err := http.NewResponseController(w.ResponseWriter).Flush()
	w.g.end(&w.g.write, 0, start)
	return w.g.timedOut(err, "response")
}

func (w *guardedWriter) Flush() { _ = w.FlushError() }

// Unwrap lets http.ResponseController reach the connection.
func (w *guardedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
