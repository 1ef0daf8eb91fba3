package retry

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

type recorder struct {
	mu     sync.Mutex
	events []string
	times  []time.Duration // of each attempt
}

func (r *recorder) add(kind, op, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, kind+" "+op+" "+what)
}
func (r *recorder) Attempt(op, outcome string, d time.Duration) {
	r.add("attempt", op, outcome)
	r.mu.Lock()
	r.times = append(r.times, d)
	r.mu.Unlock()
}
func (r *recorder) Retry(op, cause string)  { r.add("retry", op, cause) }
func (r *recorder) GiveUp(op, cause string) { r.add("giveup", op, cause) }

func TestObserverCountsRetriesAndGiveUpsByCause(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Backoff: time.Millisecond, Observer: rec}
	errs := []error{
		&backend.Error{Op: "PutObject", Code: "SlowDown", StatusCode: 503},
		fmt.Errorf("put: %w", syscall.ECONNRESET),
		&backend.Error{Op: "PutObject", StatusCode: 502},
	}
	err := DoCall(context.Background(), p, Call{Operation: "PutObject"}, func(attempt int) error { return errs[attempt-1] })
	if err == nil {
		t.Fatal("DoCall succeeded")
	}
	want := []string{
		"attempt PutObject SlowDown", "retry PutObject SlowDown",
		"attempt PutObject connection", "retry PutObject connection",
		"attempt PutObject http_502", "giveup PutObject http_502",
	}
	if !slices.Equal(rec.events, want) {
		t.Fatalf("events\n got %q\nwant %q", rec.events, want)
	}

	rec.events = nil
	_ = DoCall(context.Background(), p, Call{Operation: "HeadObject"}, func(int) error {
		return &backend.Error{Op: "HeadObject", Code: "AccessDenied", StatusCode: 403}
	})
	_ = DoCall(context.Background(), p, Call{Operation: "HeadObject"}, func(int) error { return nil })
	if want := []string{"attempt HeadObject error", "attempt HeadObject ok"}; !slices.Equal(rec.events, want) {
		t.Fatalf("events %q, want %q", rec.events, want)
	}
}

// A refusal that ends a call whose client has gone is counted as
// "canceled", not as the refusal's outcome: the client leaving is not a
// backend failure for the error rate.
func TestObserverCountsRefusalAfterCancelAsCanceled(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Backoff: time.Millisecond, Observer: rec}
	ctx, cancel := context.WithCancel(context.Background())
	denied := &backend.Error{Op: "PutObject", Code: "AccessDenied", StatusCode: 403}
	err := DoCall(ctx, p, Call{Operation: "PutObject"}, func(int) error {
		cancel()
		return denied
	})
	if err != denied {
		t.Fatalf("DoCall returned %v", err)
	}
	if want := []string{"attempt PutObject canceled"}; !slices.Equal(rec.events, want) {
		t.Fatalf("events %q, want %q", rec.events, want)
	}
}

// TestObserverCountsAnswersApartFromErrors: a 404 (a HEAD of a key not
// there yet, before a write) and a conditional request whose condition
// does not hold (304, 412) are answers of normal traffic, not failures:
// they are counted as "not_found" and "condition_failed", never "error",
// so an error-rate alert does not fire on them. They are not retried.
func TestObserverCountsAnswersApartFromErrors(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Backoff: time.Millisecond, Observer: rec}
	for _, e := range []*backend.Error{
		{Op: "HeadObject", Code: "NotFound", StatusCode: 404},
		{Op: "GetObject", Code: "NoSuchKey", StatusCode: 404},
		{Op: "ListParts", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "GetObject", Code: "NotModified", StatusCode: 304},
		{Op: "CopyObject", Code: "PreconditionFailed", StatusCode: 412},
		{Op: "PutObject", Code: "AccessDenied", StatusCode: 403},
	} {
		if err := DoCall(context.Background(), p, Call{Operation: e.Op}, func(int) error { return e }); err != e {
			t.Fatalf("%s: DoCall returned %v", e.Code, err)
		}
	}
	want := []string{
		"attempt HeadObject not_found", "attempt GetObject not_found", "attempt ListParts not_found",
		"attempt GetObject condition_failed", "attempt CopyObject condition_failed", "attempt PutObject error",
	}
	if !slices.Equal(rec.events, want) {
		t.Fatalf("events\n got %q\nwant %q", rec.events, want)
	}
}

// TestObserverCountsVanishedBucketAndUploadAsErrors: a 404 that is a
// failure, not an answer of normal traffic, counts as "error": the
// bucket gone (deleted, or an endpoint or path-style setting that
// points elsewhere answers NoSuchBucket to every request, which would
// otherwise leave the error rate at zero) and an upload gone under a
// part or a completion (the client's data is lost). A ListParts or an
// abort answering NoSuchUpload (gc and rewrap ask to learn that an
// upload is over; an abort retried) stays "not_found", as does a
// HeadBucket's NoSuchBucket (CreateBucket asks before it creates).
func TestObserverCountsVanishedBucketAndUploadAsErrors(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Backoff: time.Millisecond, Observer: rec}
	for _, e := range []*backend.Error{
		{Op: "ListObjects", Code: "NoSuchBucket", StatusCode: 404},
		{Op: "PutObject", Code: "NoSuchBucket", StatusCode: 404},
		{Op: "GetObject", Code: "NoSuchBucket", StatusCode: 404},
		{Op: "UploadPart", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "UploadPartCopy", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "CompleteMultipartUpload", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "ListParts", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "AbortMultipartUpload", Code: "NoSuchUpload", StatusCode: 404},
		{Op: "HeadBucket", Code: "NoSuchBucket", StatusCode: 404},
	} {
		_ = DoCall(context.Background(), p, Call{Operation: e.Op}, func(int) error { return e })
	}
	want := []string{
		"attempt ListObjects error", "attempt PutObject error", "attempt GetObject error",
		"attempt UploadPart error", "attempt UploadPartCopy error", "attempt CompleteMultipartUpload error",
		"attempt ListParts not_found", "attempt AbortMultipartUpload not_found",
		"attempt HeadBucket not_found",
	}
	if !slices.Equal(rec.events, want) {
		t.Fatalf("events\n got %q\nwant %q", rec.events, want)
	}
}

// Each attempt is reported with its own duration, the time op took, not
// the time of the call so far.
func TestObserverTimesEachAttempt(t *testing.T) {
	rec := &recorder{}
	p := Policy{Attempts: 3, Backoff: 10 * time.Millisecond, Observer: rec}
	took := []time.Duration{100 * time.Millisecond, 0, 50 * time.Millisecond}
	err := DoCall(context.Background(), p, Call{Operation: "UploadPart"}, func(attempt int) error {
		time.Sleep(took[attempt-1])
		if attempt < 3 {
			return &backend.Error{Op: "UploadPart", Code: "SlowDown", StatusCode: 503}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"attempt UploadPart SlowDown", "retry UploadPart SlowDown",
		"attempt UploadPart SlowDown", "retry UploadPart SlowDown", "attempt UploadPart ok"}
	if !slices.Equal(rec.events, want) || len(rec.times) != 3 {
		t.Fatalf("events %q, times %v", rec.events, rec.times)
	}
	// The second attempt returns at once: were the first one's 100 ms
	// counted in it, it would report more.
	if d := rec.times; d[0] < took[0] || d[1] >= took[0] || d[2] < took[2] {
		t.Fatalf("attempts reported %v; op took %v", d, took)
	}
}

func TestCause(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&backend.Error{Code: "InternalError", StatusCode: 200}, "InternalError"},
		{&backend.Error{Code: "BadGatewayish", StatusCode: 502}, "http_502"},
		{fmt.Errorf("x: %w", syscall.ECONNREFUSED), "connection"},
		{fmt.Errorf("x: %w", syscall.ETIMEDOUT), "timeout"},
	} {
		if got := Cause(c.err); got != c.want {
			t.Errorf("Cause(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
