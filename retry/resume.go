package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// OpenAt opens the source at byte offset off, for reading to its end.
type OpenAt func(ctx context.Context, off int64) (io.ReadCloser, error)

// ResumingReader reads size bytes of a source (the object an UploadPartCopy
// or CopyObject reads) and, when a read fails with a transient error (a cut
// connection, a reset, a timeout, a body that ends early), opens the source
// again at the offset that failed and carries on, so the bytes delivered
// are exactly the source's. Opens that fail transiently are retried the
// same way. The policy bounds the attempts at one offset: the count starts
// over whenever a read made progress, so a long copy survives several
// unrelated cuts while a source that keeps failing at the same place is
// given up after Attempts tries. The caller must make open read the same
// object version each time (e.g. If-Match on the ETag seen first).
type ResumingReader struct {
	ctx  context.Context
	p    Policy
	c    Call
	open OpenAt
	size int64

	off      int64
	rc       io.ReadCloser
	failures int   // consecutive failed attempts at off
	downs    int   // of those, attempts that found the store not there (storeDown)
	err      error // sticky
}

// NewResumingReader returns a reader of size bytes from open, retried
// under p; c names the call in log events. It opens nothing until the
// first Read. Close it when done.
func NewResumingReader(ctx context.Context, p Policy, c Call, size int64, open OpenAt) *ResumingReader {
	return &ResumingReader{ctx: ctx, p: p.withDefaults(), c: c, open: open, size: size}
}

// Offset is the number of bytes delivered so far.
func (r *ResumingReader) Offset() int64 { return r.off }

func (r *ResumingReader) Read(b []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.off >= r.size {
		r.closeBody()
		return 0, io.EOF
	}
	if int64(len(b)) > r.size-r.off {
		b = b[:r.size-r.off]
	}
	for {
		if r.rc == nil {
			rc, err := r.open(r.ctx, r.off)
			if err != nil {
				if err = r.failed(err); err != nil {
					return 0, err
				}
				continue
			}
			r.rc = rc
		}
		n, err := r.rc.Read(b)
		r.off += int64(n)
		if n > 0 {
			r.failures, r.downs = 0, 0
		}
		switch {
		case err == nil:
			return n, nil
		case errors.Is(err, io.EOF) && r.off >= r.size:
			r.closeBody()
			if n == 0 {
				return 0, io.EOF
			}
			return n, nil // the next Read reports EOF
		case errors.Is(err, io.EOF):
			err = fmt.Errorf("source ended at byte %d of %d: %w", r.off, r.size, io.ErrUnexpectedEOF)
		}
		r.closeBody()
		if err = r.failed(err); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// failed counts a failed attempt at r.off and waits before the next one;
// it returns nil to go on, or the error that ends the read.
func (r *ResumingReader) failed(err error) error {
	r.failures++
	if storeDown(err) {
		r.downs++
	}
	c := r.c
	attempt := r.failures
	switch {
	case !Retryable(err):
		r.err = err
	case r.ctx.Err() != nil:
		r.err = errors.Join(err, r.ctx.Err())
	case r.failures >= r.p.Attempts || storeDown(err) && r.downs >= r.p.DownAttempts:
		r.p.Observer.GiveUp(c.Operation, Cause(err))
		r.p.Logger.ErrorContext(r.ctx, "source read failed after retries",
			append(c.attrs(attempt, err), "offset", r.off)...)
		r.err = err
	default:
		r.p.Observer.Retry(c.Operation, Cause(err))
		r.p.Logger.WarnContext(r.ctx, "resuming source read",
			append(c.attrs(attempt, err), "offset", r.off)...)
		if werr := r.p.wait(r.ctx, attempt); werr != nil {
			r.err = errors.Join(err, werr)
		}
	}
	return r.err
}

func (r *ResumingReader) closeBody() {
	if r.rc != nil {
		_ = r.rc.Close()
		r.rc = nil
	}
}

// Close closes the source body that is open, if any.
func (r *ResumingReader) Close() error {
	r.closeBody()
	if r.err == nil {
		r.err = errors.New("retry: read after Close")
	}
	return nil
}
