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
}

func (r *recorder) add(kind, op, what string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, kind+" "+op+" "+what)
}
func (r *recorder) Attempt(op, outcome string) { r.add("attempt", op, outcome) }
func (r *recorder) Retry(op, cause string)     { r.add("retry", op, cause) }
func (r *recorder) GiveUp(op, cause string)    { r.add("giveup", op, cause) }

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
		return &backend.Error{Op: "HeadObject", Code: "NoSuchKey", StatusCode: 404}
	})
	_ = DoCall(context.Background(), p, Call{Operation: "HeadObject"}, func(int) error { return nil })
	if want := []string{"attempt HeadObject error", "attempt HeadObject ok"}; !slices.Equal(rec.events, want) {
		t.Fatalf("events %q, want %q", rec.events, want)
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
