// Package retry owns s3seal's policy for retrying backend calls: which
// failures are transient (Retryable), how many attempts a call gets and how
// long it waits between them (Policy), the retrying Store, the hook for
// recovering a multipart completion whose answer was lost (Complete), and
// a reader that resumes a broken source read (ResumingReader).
//
// Object stores such as Ceph RGW and Hetzner sometimes answer 200 OK and
// put an <Error> (InternalError) in the body; the backend client reports
// those as errors with the code from the body, and this package treats them
// like the 5xx they are.
package retry

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Policy bounds the attempts of one call. The zero value means the
// defaults: 4 attempts, 500 ms first wait, doubling up to 8 s, full jitter,
// events to slog.Default().
type Policy struct {
	// Attempts is the total number of tries, the first included. Default 4.
	Attempts int
	// Backoff is the ceiling of the wait after the first failure; it
	// doubles after each further failure up to MaxBackoff. The actual wait
	// is drawn uniformly from [0, ceiling] (full jitter). Default 500 ms.
	Backoff time.Duration
	// MaxBackoff caps the ceiling of a single wait. Default 8 s.
	MaxBackoff time.Duration
	// DownAttempts bounds the attempts of a call that find the store not
	// there: a stall (backend.StallError: the store stopped moving and the
	// backend's Timeouts cut the request, a whole timeout each) or a
	// refused connection (nothing listens: the store is down or
	// restarting). A call gives up after this many of them, however many
	// Attempts remain, and the client, which retries a 503 itself, hears
	// so soon. Default 2 (one retry).
	DownAttempts int
	// Logger receives an event for each retry, recovery and give-up.
	// Default slog.Default().
	Logger *slog.Logger
	// Observer, when set, is told of every attempt, retry and give-up
	// (metrics). Default: none.
	Observer Observer
}

// Observer counts what DoCall does. Its methods must be safe for
// concurrent use and return quickly.
type Observer interface {
	// Attempt reports one attempt of the operation, its outcome ("ok";
	// "not_found" or "condition_failed": answers of normal traffic, see
	// refusalOutcome; "error": the backend refused the request otherwise,
	// not retried; "canceled"; or the Cause of a transient failure) and
	// how long it took: from
	// sending it to the store's answer (for a GET, its headers; the body
	// streams on afterwards), backoff waits not included.
	Attempt(operation, outcome string, d time.Duration)
	// Retry reports a transient failure that is retried, by Cause.
	Retry(operation, cause string)
	// GiveUp reports a transient failure that ends the call: attempts
	// spent, or the client gone while waiting (cause "canceled").
	GiveUp(operation, cause string)
}

type nopObserver struct{}

func (nopObserver) Attempt(string, string, time.Duration) {}
func (nopObserver) Retry(string, string)                  {}
func (nopObserver) GiveUp(string, string)                 {}

func (p Policy) withDefaults() Policy {
	if p.Attempts <= 0 {
		p.Attempts = 4
	}
	if p.Backoff <= 0 {
		p.Backoff = 500 * time.Millisecond
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = 8 * time.Second
	}
	if p.DownAttempts <= 0 {
		p.DownAttempts = 2
	}
	if p.MaxBackoff < p.Backoff {
		p.MaxBackoff = p.Backoff
	}
	if p.Logger == nil {
		p.Logger = slog.Default()
	}
	if p.Observer == nil {
		p.Observer = nopObserver{}
	}
	return p
}

// ceiling is the upper bound of the wait after the given failed attempt
// (1-based): Backoff doubled attempt-1 times, capped at MaxBackoff.
func (p Policy) ceiling(attempt int) time.Duration {
	d := p.Backoff
	for i := 1; i < attempt && d < p.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, p.MaxBackoff)
}

// delay draws the wait after the given failed attempt uniformly from
// [0, ceiling] (full jitter): replicas that failed together do not retry
// together.
func (p Policy) delay(attempt int) time.Duration { return rand.N(p.ceiling(attempt) + 1) }

// wait sleeps a full-jitter backoff after the given failed attempt, or
// returns ctx's error as soon as ctx ends.
func (p Policy) wait(ctx context.Context, attempt int) error {
	t := time.NewTimer(p.delay(attempt))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Call names a backend call in log events. Empty fields are left out.
type Call struct {
	Operation    string
	Bucket, Key  string
	UploadID     string
	Part         int32
	SourceBucket string // copies: the object read
	SourceKey    string
}

func (c Call) attrs(attempt int, cause error) []any {
	a := []any{"operation", c.Operation}
	if c.Bucket != "" {
		a = append(a, "bucket", c.Bucket)
	}
	if c.Key != "" {
		a = append(a, "key", c.Key)
	}
	if c.UploadID != "" {
		a = append(a, "upload_id", c.UploadID)
	}
	if c.Part != 0 {
		a = append(a, "part", c.Part)
	}
	if c.SourceBucket != "" || c.SourceKey != "" {
		a = append(a, "source_bucket", c.SourceBucket, "source_key", c.SourceKey)
	}
	a = append(a, "attempt", attempt)
	if cause != nil {
		a = append(a, "cause", cause.Error())
	}
	return a
}

// Do calls op until it succeeds, fails with an error Retryable rejects, or
// the policy's attempts are spent; it returns op's last error, so when
// retries run out the error is a transient one. It waits between attempts
// and gives up at once, returning op's error joined with ctx's, when ctx
// ends. op must be safe to repeat (e.g. it rewinds its body).
func Do(ctx context.Context, p Policy, op func(attempt int) error) error {
	return DoCall(ctx, p, Call{Operation: "backend call"}, op)
}

// DoCall is Do with the call named in the log events it emits: one per
// retry (Warn, "retrying backend call"), and one when it gives up on a
// transient failure (Error, "backend call failed after retries").
func DoCall(ctx context.Context, p Policy, c Call, op func(attempt int) error) error {
	p = p.withDefaults()
	downs := 0
	for attempt := 1; ; attempt++ {
		start := time.Now()
		err := op(attempt)
		d := time.Since(start)
		if storeDown(err) {
			downs++
		}
		switch {
		case err == nil:
			p.Observer.Attempt(c.Operation, "ok", d)
			return nil
		case ctx.Err() != nil && !Retryable(err):
			p.Observer.Attempt(c.Operation, "canceled", d)
			return err
		case !Retryable(err):
			p.Observer.Attempt(c.Operation, refusalOutcome(c.Operation, err), d)
			return err
		}
		cause := Cause(err)
		p.Observer.Attempt(c.Operation, cause, d)
		if ctx.Err() != nil {
			p.Observer.GiveUp(c.Operation, "canceled")
			return errors.Join(err, ctx.Err())
		}
		if attempt >= p.Attempts || downs >= p.DownAttempts {
			p.Observer.GiveUp(c.Operation, cause)
			p.Logger.ErrorContext(ctx, "backend call failed after retries", c.attrs(attempt, err)...)
			return err
		}
		p.Observer.Retry(c.Operation, cause)
		p.Logger.WarnContext(ctx, "retrying backend call", c.attrs(attempt, err)...)
		if werr := p.wait(ctx, attempt); werr != nil {
			p.Observer.GiveUp(c.Operation, "canceled")
			p.Logger.WarnContext(ctx, "backend call abandoned: client gone", c.attrs(attempt, err)...)
			return errors.Join(err, werr)
		}
	}
}
