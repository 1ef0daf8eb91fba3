// Package retry owns s3seal's policy for retrying backend calls: which
// failures are transient, how many attempts a call gets and how long it
// waits between them. Object stores such as Ceph RGW and Hetzner sometimes
// answer 200 OK and put an <Error> (InternalError) in the body; the backend
// client reports those as errors with the code from the body, and this
// package treats them like the 5xx they are.
package retry

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// Policy bounds the attempts of one call. The zero value means the
// defaults: 4 attempts, 500 ms first wait, doubling up to 8 s, with jitter.
type Policy struct {
	// Attempts is the total number of tries, the first included. Default 4.
	Attempts int
	// Backoff is the wait after the first failure; it doubles after each
	// further failure up to MaxBackoff. Default 500 ms.
	Backoff time.Duration
	// MaxBackoff caps a single wait. Default 8 s.
	MaxBackoff time.Duration
}

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
	return p
}

// transientCodes are S3 error codes that say "try again": the service
// failed or was overloaded, not the request. InternalError is what RGW and
// Hetzner put in the body of a 200 when a part or completion timed out.
var transientCodes = map[string]bool{
	"InternalError":       true,
	"ServiceUnavailable":  true,
	"SlowDown":            true,
	"RequestTimeout":      true,
	"BadGateway":          true,
	"GatewayTimeout":      true,
	"Throttling":          true,
	"ThrottlingException": true,
}

// Retryable reports whether err is worth another attempt: a transient S3
// code, an HTTP 5xx or 429, or a network failure. Context cancellation and
// deadlines are never retryable.
func Retryable(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var be *backend.Error
	if errors.As(err, &be) {
		if ok, known := transientCodes[be.Code]; known {
			return ok
		}
		if be.StatusCode >= 500 || be.StatusCode == 429 {
			return true
		}
		if be.Code != "" || be.StatusCode != 0 {
			return false
		}
		err = be.Err
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, net.ErrClosed) || isConnReset(err)
}

// Do calls op until it succeeds, fails with an error Retryable rejects, or
// the policy's attempts are spent; it returns op's last error. It waits
// between attempts and gives up early, returning ctx's error, when ctx
// ends. op must be safe to repeat (e.g. it rewinds its body).
func Do(ctx context.Context, p Policy, op func(attempt int) error) error {
	p = p.withDefaults()
	wait := p.Backoff
	var err error
	for attempt := 1; ; attempt++ {
		if err = op(attempt); err == nil || !Retryable(err) || attempt >= p.Attempts {
			return err
		}
		// Full jitter keeps replicas that failed together from retrying
		// together.
		d := wait/2 + rand.N(wait/2+1)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return errors.Join(err, ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, p.MaxBackoff)
	}
}
