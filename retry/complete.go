package retry

import (
	"context"
	"fmt"

	"github.com/s3seal/s3seal/backend"
)

// Recovered decides, after a retried completion found its upload gone, whether
// the object now at the key is the one this upload assembled: the caller
// HEADs the key and compares what only this upload can have written (an
// identity in the object's metadata, the expected size). An error means it
// could not tell.
type Recovered func(ctx context.Context) (bool, error)

// Complete runs a multipart completion under p. complete makes one attempt.
// A plain retry of a completion is not safe on its own: when an attempt
// assembled the object but its answer was lost (a 200 with <Error> in the
// body, a cut connection), the upload id is gone and the next attempt
// answers NoSuchUpload, or, on Hetzner while the first is still assembling,
// InternalError "This multipart completion is already in progress". On
// those answers to an attempt after the first, Complete asks recovered:
//
//   - yes: the completion succeeded; Complete returns nil.
//   - no, after NoSuchUpload: the failure stands (NoSuchUpload, permanent),
//     unless an earlier attempt stalled (no answer: the store may still be
//     assembling the object): then the outcome is unknown, a transient
//     InternalError, retried while attempts remain.
//   - no, after "already in progress": still transient; retried while
//     attempts remain (the first completion may yet finish).
//   - it cannot tell: the outcome is unknown, reported as a transient
//     InternalError wrapping both errors, and retried while attempts remain.
//
// NoSuchUpload on the first attempt is never recovered: nothing was sent
// before, so the upload did not exist. A nil recovered makes Complete a
// plain DoCall. When attempts run out the error returned is transient,
// never nil.
func Complete(ctx context.Context, p Policy, c Call, complete func(attempt int) error, recovered Recovered) error {
	p = p.withDefaults()
	stalled := false // an earlier attempt got no answer: the store may still be at it
	return DoCall(ctx, p, c, func(attempt int) error {
		err := complete(attempt)
		if backend.IsStall(err) {
			stalled = true
		}
		if err == nil || attempt == 1 || recovered == nil || !(lostUpload(err) || completionInProgress(err)) {
			return err
		}
		ok, rerr := recovered(ctx)
		switch {
		case rerr != nil:
			p.Logger.WarnContext(ctx, "completion outcome unknown: recovery check failed",
				append(c.attrs(attempt, err), "check_error", rerr.Error())...)
			return &backend.Error{Op: c.Operation, Code: "InternalError", StatusCode: 500,
				Message: "the outcome of the completion is unknown",
				Err:     fmt.Errorf("%w; recovery check: %w", err, rerr)}
		case ok:
			p.Logger.WarnContext(ctx, "completion recovered: an earlier attempt assembled the object",
				c.attrs(attempt, err)...)
			return nil
		}
		if stalled && lostUpload(err) {
			// The upload is gone but no object is there yet: an attempt the
			// store never answered may still be assembling it. Unknown, not
			// lost: retried, and a client's retry later finds the object.
			p.Logger.WarnContext(ctx, "completion outcome unknown: the upload is gone, its object not there yet, after an attempt that stalled",
				c.attrs(attempt, err)...)
			return &backend.Error{Op: c.Operation, Code: "InternalError", StatusCode: 500,
				Message: "the outcome of the completion is unknown", Err: err}
		}
		p.Logger.WarnContext(ctx, "completion not recovered: the object at the key is not this upload's",
			c.attrs(attempt, err)...)
		return err
	})
}
