package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

func TestRetryable(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"200 with InternalError body", &backend.Error{Code: "InternalError", StatusCode: 500}, true},
		{"SlowDown", &backend.Error{Code: "SlowDown", StatusCode: 503}, true},
		{"RequestTimeout", &backend.Error{Code: "RequestTimeout", StatusCode: 400}, true},
		{"unknown 502", &backend.Error{Code: "Whatever", StatusCode: 502}, true},
		{"429", &backend.Error{StatusCode: 429}, true},
		{"NoSuchKey", &backend.Error{Code: "NoSuchKey", StatusCode: 404}, false},
		{"AccessDenied", &backend.Error{Code: "AccessDenied", StatusCode: 403}, false},
		{"NoSuchUpload", &backend.Error{Code: "NoSuchUpload", StatusCode: 404}, false},
		{"BadDigest", &backend.Error{Code: "BadDigest", StatusCode: 400}, false},
		{"transport reset", &backend.Error{Op: "PutObject", Err: fmt.Errorf("write: %w", syscall.ECONNRESET)}, true},
		{"transport refused", &backend.Error{Op: "PutObject", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{"cut response", &backend.Error{Op: "GetObject", Err: io.ErrUnexpectedEOF}, true},
		{"canceled", &backend.Error{Op: "PutObject", Err: context.Canceled}, false},
		{"deadline", context.DeadlineExceeded, false},
		{"plain error", errors.New("boom"), false},
		{"wrapped code", fmt.Errorf("complete: %w", &backend.Error{Code: "InternalError"}), true},
	}
	for _, c := range cases {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("%s: Retryable = %v, want %v", c.name, got, c.want)
		}
	}
}

var fast = Policy{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}

func TestDoRetriesTransientUntilSuccess(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast, func(attempt int) error {
		calls++
		if attempt != calls {
			t.Fatalf("attempt %d on call %d", attempt, calls)
		}
		if calls < 3 {
			return &backend.Error{Code: "InternalError", StatusCode: 200}
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("err=%v calls=%d, want nil after 3 calls", err, calls)
	}
}

func TestDoStopsAtAttemptBound(t *testing.T) {
	calls := 0
	want := &backend.Error{Code: "SlowDown", StatusCode: 503}
	err := Do(context.Background(), fast, func(int) error { calls++; return want })
	if calls != 4 || !errors.Is(err, want) {
		t.Fatalf("calls=%d err=%v, want 4 calls and the last error", calls, err)
	}
}

func TestDoDoesNotRetryPermanent(t *testing.T) {
	calls := 0
	err := Do(context.Background(), fast, func(int) error {
		calls++
		return &backend.Error{Code: "AccessDenied", StatusCode: 403}
	})
	if calls != 1 || backend.ErrorCode(err) != "AccessDenied" {
		t.Fatalf("calls=%d err=%v", calls, err)
	}
}

func TestDoEndsWaitOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	slow := Policy{Attempts: 10, Backoff: time.Hour, MaxBackoff: time.Hour}
	calls := 0
	done := make(chan error)
	go func() {
		done <- Do(ctx, slow, func(int) error { calls++; return &backend.Error{Code: "InternalError"} })
	}()
	time.Sleep(10 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || backend.ErrorCode(err) != "InternalError" || calls != 1 {
			t.Fatalf("err=%v calls=%d", err, calls)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Do kept waiting after cancel")
	}
}

func TestPolicyDefaults(t *testing.T) {
	p := Policy{}.withDefaults()
	if p.Attempts != 4 || p.Backoff != 500*time.Millisecond || p.MaxBackoff != 8*time.Second {
		t.Fatalf("defaults = %+v", p)
	}
}
