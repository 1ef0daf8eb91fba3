package retry

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// runComplete drives Complete over the fake's completion; the recovery
// check answers whether the fake assembled the object.
func runComplete(t *testing.T, p Policy, f *fakeMultipart) (checks int, err error) {
	t.Helper()
	complete := func(int) error {
		_, err := f.CompleteMultipartUpload(context.Background(), backend.CompleteMultipartInput{})
		return err
	}
	recovered := func(context.Context) (bool, error) {
		checks++
		return f.object, nil
	}
	err = Complete(context.Background(), p, Call{Operation: "CompleteMultipartUpload", Bucket: "b", Key: "k", UploadID: "u1"},
		complete, recovered)
	return checks, err
}

func TestCompleteTransientInternalErrorRetried(t *testing.T) {
	f := &fakeMultipart{completeErrs: []error{errInternal200, errInternal200}}
	checks, err := runComplete(t, fast, f)
	if err != nil || f.completes != 3 || checks != 0 {
		t.Fatalf("err=%v completes=%d checks=%d, want success on the 3rd attempt without a check", err, f.completes, checks)
	}
}

func TestCompleteAccessDeniedNotRetried(t *testing.T) {
	f := &fakeMultipart{completeErrs: []error{errAccessDenied}}
	checks, err := runComplete(t, fast, f)
	if !errors.Is(err, errAccessDenied) || f.completes != 1 || checks != 0 {
		t.Fatalf("err=%v completes=%d checks=%d", err, f.completes, checks)
	}
}

func TestCompleteNoSuchUploadAfterAssemblyRecovered(t *testing.T) {
	// Attempt 1 assembled the object but its answer was a 200 with
	// <Error>; attempt 2 finds the upload gone.
	f := &fakeMultipart{completeErrs: []error{errInternal200, errNoSuchUpload}, assembled: []bool{true}}
	var buf bytes.Buffer
	checks, err := runComplete(t, logTo(&buf), f)
	if err != nil || f.completes != 2 || checks != 1 {
		t.Fatalf("err=%v completes=%d checks=%d, want recovered", err, f.completes, checks)
	}
	if !strings.Contains(buf.String(), "completion recovered") || !strings.Contains(buf.String(), `"upload_id":"u1"`) {
		t.Fatalf("no recovery event:\n%s", buf.String())
	}
}

func TestCompleteNoSuchUploadWithoutAssemblyFails(t *testing.T) {
	f := &fakeMultipart{completeErrs: []error{errInternal200, errNoSuchUpload}}
	checks, err := runComplete(t, fast, f)
	if !errors.Is(err, errNoSuchUpload) || f.completes != 2 || checks != 1 {
		t.Fatalf("err=%v completes=%d checks=%d, want NoSuchUpload after one check", err, f.completes, checks)
	}
}

func TestCompleteNoSuchUploadOnFirstAttemptNotRecovered(t *testing.T) {
	// Nothing was sent before: even an object at the key (someone else's,
	// or an older one) is not this upload's.
	f := &fakeMultipart{completeErrs: []error{errNoSuchUpload}, object: true}
	checks, err := runComplete(t, fast, f)
	if !errors.Is(err, errNoSuchUpload) || f.completes != 1 || checks != 0 {
		t.Fatalf("err=%v completes=%d checks=%d", err, f.completes, checks)
	}
}

func TestCompleteInProgressRecoveredOrRetried(t *testing.T) {
	// Hetzner: the retry runs while attempt 1 still assembles.
	f := &fakeMultipart{completeErrs: []error{errInternal200, errInProgress}, assembled: []bool{true}}
	if checks, err := runComplete(t, fast, f); err != nil || checks != 1 || f.completes != 2 {
		t.Fatalf("assembled: err=%v checks=%d completes=%d", err, checks, f.completes)
	}
	// Not assembled yet: still transient, so the next attempt runs.
	f = &fakeMultipart{completeErrs: []error{errInternal200, errInProgress}}
	if checks, err := runComplete(t, fast, f); err != nil || checks != 1 || f.completes != 3 {
		t.Fatalf("not yet assembled: err=%v checks=%d completes=%d", err, checks, f.completes)
	}
}

// Only Hetzner's InternalError says a completion is in progress: a
// refusal with another code is not recovered, whatever its message, even
// with an object at the key.
func TestCompleteInProgressMessageUnderAnotherCodeNotRecovered(t *testing.T) {
	denied := &backend.Error{Op: "CompleteMultipartUpload", Code: "AccessDenied", StatusCode: 403,
		Message: "This multipart completion is already in progress"}
	f := &fakeMultipart{completeErrs: []error{errInternal200, denied}, assembled: []bool{true}}
	checks, err := runComplete(t, fast, f)
	if !errors.Is(err, denied) || checks != 0 || f.completes != 2 {
		t.Fatalf("err=%v checks=%d completes=%d, want AccessDenied without a check", err, checks, f.completes)
	}
}

func TestCompleteRetriesRunOutWithTransientError(t *testing.T) {
	f := &fakeMultipart{completeErrs: []error{errInternal200, errInternal200, errInternal200, errInternal200, nil}}
	_, err := runComplete(t, fast, f)
	if err == nil || !Retryable(err) || backend.ErrorCode(err) != "InternalError" || f.completes != fast.Attempts {
		t.Fatalf("err=%v completes=%d, want a transient InternalError after %d attempts", err, f.completes, fast.Attempts)
	}
}

func TestCompleteCheckFailureIsTransient(t *testing.T) {
	f := &fakeMultipart{completeErrs: []error{errInternal200, errNoSuchUpload, errNoSuchUpload, errNoSuchUpload}}
	headErr := &backend.Error{Op: "HeadObject", Code: "ServiceUnavailable", StatusCode: 503}
	err := Complete(context.Background(), fast, Call{Operation: "CompleteMultipartUpload"}, func(int) error {
		_, err := f.CompleteMultipartUpload(context.Background(), backend.CompleteMultipartInput{})
		return err
	}, func(context.Context) (bool, error) { return false, headErr })
	if !Retryable(err) || backend.ErrorCode(err) != "InternalError" || !errors.Is(err, headErr) || !errors.Is(err, errNoSuchUpload) {
		t.Fatalf("err=%v, want a transient InternalError wrapping both", err)
	}
	if f.completes != fast.Attempts {
		t.Fatalf("completes=%d, want the check retried to the bound", f.completes)
	}
}

// An attempt the store never answered (a stall) may still be assembling
// the object: a later NoSuchUpload without the object is an unknown
// outcome, retried (and found recovered once the object is there), never
// NoSuchUpload to the client.
func TestCompleteNoSuchUploadAfterStallIsUnknown(t *testing.T) {
	stall := &backend.Error{Op: "CompleteMultipartUpload", Err: &backend.StallError{Phase: "response headers"}}
	// The object shows up only after the third attempt's check.
	f := &fakeMultipart{completeErrs: []error{stall, errNoSuchUpload, errNoSuchUpload, errNoSuchUpload}, assembled: []bool{false, false, true}}
	checks, err := runComplete(t, fast, f)
	if err != nil || f.completes != 3 || checks != 2 {
		t.Fatalf("err=%v completes=%d checks=%d, want recovered at the 3rd attempt", err, f.completes, checks)
	}
	// Never there: a transient error when attempts run out, not NoSuchUpload.
	f = &fakeMultipart{completeErrs: []error{stall, errNoSuchUpload, errNoSuchUpload, errNoSuchUpload}}
	_, err = runComplete(t, fast, f)
	if err == nil || errors.Is(err, errNoSuchUpload) && backend.ErrorCode(err) == "NoSuchUpload" || !Retryable(err) {
		t.Fatalf("err=%v, want a transient outcome-unknown error", err)
	}
}
