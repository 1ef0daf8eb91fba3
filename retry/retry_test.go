package retry

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

func TestRetryable(t *testing.T) {
	opErr := func(err error) error { return &net.OpError{Op: "read", Net: "tcp", Err: err} }
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		// Transient S3 answers.
		{"500 InternalError", &backend.Error{Code: "InternalError", StatusCode: 500}, true},
		{"200 with InternalError body", &backend.Error{Code: "InternalError", StatusCode: 200, Message: "The server did not respond in time."}, true},
		{"200 with unknown <Error> code", &backend.Error{Code: "Whatever", StatusCode: 200}, true},
		{"200 answer cut short", &backend.Error{Code: "OK", StatusCode: 200, Err: io.ErrUnexpectedEOF}, true},
		{"SlowDown", &backend.Error{Code: "SlowDown", StatusCode: 503}, true},
		{"ServiceUnavailable", &backend.Error{Code: "ServiceUnavailable", StatusCode: 503}, true},
		{"RequestTimeout 400", &backend.Error{Code: "RequestTimeout", StatusCode: 400}, true},
		{"502 without code", &backend.Error{Code: "BadGateway", StatusCode: 502}, true},
		{"504 unknown code", &backend.Error{Code: "Whatever", StatusCode: 504}, true},
		{"500 unknown code", &backend.Error{Code: "Whatever", StatusCode: 500}, true},
		{"429", &backend.Error{Code: "TooManyRequests", StatusCode: 429}, true},
		// The status decides alone: a code in neither list.
		{"429 unknown code", &backend.Error{Code: "Whatever", StatusCode: 429}, true},
		{"429 without code", &backend.Error{StatusCode: 429}, true},
		{"in progress", &backend.Error{Code: "InternalError", StatusCode: 200, Message: "This multipart completion is already in progress"}, true},
		// Permanent S3 answers, whatever the status line said.
		{"AccessDenied", &backend.Error{Code: "AccessDenied", StatusCode: 403}, false},
		{"NoSuchBucket", &backend.Error{Code: "NoSuchBucket", StatusCode: 404}, false},
		{"NoSuchKey", &backend.Error{Code: "NoSuchKey", StatusCode: 404}, false},
		{"NoSuchUpload", &backend.Error{Code: "NoSuchUpload", StatusCode: 404}, false},
		{"NoSuchUpload in a 200 body", &backend.Error{Code: "NoSuchUpload", StatusCode: 200}, false},
		{"InvalidPart", &backend.Error{Code: "InvalidPart", StatusCode: 400}, false},
		{"InvalidPartOrder", &backend.Error{Code: "InvalidPartOrder", StatusCode: 400}, false},
		{"EntityTooSmall", &backend.Error{Code: "EntityTooSmall", StatusCode: 400}, false},
		{"PreconditionFailed", &backend.Error{Code: "PreconditionFailed", StatusCode: 412}, false},
		{"BadDigest", &backend.Error{Code: "BadDigest", StatusCode: 400}, false},
		{"NotImplemented 501", &backend.Error{Code: "NotImplemented", StatusCode: 501}, false},
		{"unknown 400", &backend.Error{Code: "Whatever", StatusCode: 400}, false},
		// Transport failures, bare and as the SDK wraps them.
		{"reset", &backend.Error{Op: "PutObject", Err: fmt.Errorf("write: %w", syscall.ECONNRESET)}, true},
		{"reset in OpError", &backend.Error{Op: "PutObject", Err: opErr(os.NewSyscallError("read", syscall.ECONNRESET))}, true},
		{"refused", &backend.Error{Op: "PutObject", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}, true},
		{"broken pipe", fmt.Errorf("send: %w", syscall.EPIPE), true},
		{"EOF", &backend.Error{Op: "GetObject", Err: &url.Error{Op: "Get", URL: "http://x", Err: io.EOF}}, true},
		{"unexpected EOF", &backend.Error{Op: "GetObject", Err: io.ErrUnexpectedEOF}, true},
		{"timeout", &backend.Error{Op: "HeadObject", Err: timeoutErr{}}, true},
		{"closed", fmt.Errorf("x: %w", net.ErrClosed), true},
		{"DNS temporary", &net.DNSError{Err: "server misbehaving", IsTemporary: true}, true},
		{"DNS no such host", &net.DNSError{Err: "no such host", IsNotFound: true}, false},
		{"bad certificate", &url.Error{Op: "Get", URL: "https://x", Err: x509.UnknownAuthorityError{}}, false},
		{"canceled", &backend.Error{Op: "PutObject", Err: context.Canceled}, false},
		{"deadline", context.DeadlineExceeded, false},
		{"plain error", errors.New("boom"), false},
		{"wrapped code", fmt.Errorf("complete: %w", &backend.Error{Code: "InternalError"}), true},
		{"wrapped permanent", fmt.Errorf("complete: %w", &backend.Error{Code: "AccessDenied", StatusCode: 403}), false},
	}
	for _, c := range cases {
		if got := Retryable(c.err); got != c.want {
			t.Errorf("%s: Retryable = %v, want %v", c.name, got, c.want)
		}
	}
}

// A failed certificate check is not retried even where the error chain
// also holds a network operation error, which alone would be transient (a
// dialer or proxy that does the TLS handshake reports it so): each kind of
// certificate failure on its own decides.
func TestRetryableCertificateFailureInNetworkError(t *testing.T) {
	dial := func(err error) error {
		return &backend.Error{Op: "PutObject", Err: &url.Error{Op: "Put", URL: "https://x", Err: &net.OpError{Op: "dial", Net: "tcp", Err: err}}}
	}
	if !Retryable(dial(errors.New("handshake interrupted"))) {
		t.Fatal("a dial error without a certificate failure is not transient")
	}
	for name, err := range map[string]error{
		"unknown authority":   x509.UnknownAuthorityError{},
		"invalid certificate": x509.CertificateInvalidError{Reason: x509.Expired},
		"hostname mismatch":   x509.HostnameError{Certificate: &x509.Certificate{}, Host: "s3.example"},
		"verification failed": &tls.CertificateVerificationError{Err: errors.New("chain rejected")},
	} {
		if Retryable(dial(err)) {
			t.Errorf("%s: Retryable = true, want false", name)
		}
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

var fast = Policy{Attempts: 4, Backoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}

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

// A MaxBackoff below Backoff does not shorten the first wait: the cap is
// raised to Backoff, and every ceiling is Backoff.
func TestMaxBackoffBelowBackoffIsRaised(t *testing.T) {
	p := Policy{Backoff: 200 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}.withDefaults()
	for _, attempt := range []int{1, 2, 5} {
		if got := p.ceiling(attempt); got != 200*time.Millisecond {
			t.Errorf("ceiling(%d) = %v, want 200ms", attempt, got)
		}
	}
}

func TestBackoffIsFullJitterUnderACappedCeiling(t *testing.T) {
	p := Policy{Backoff: 100 * time.Millisecond, MaxBackoff: 300 * time.Millisecond}.withDefaults()
	for attempt, want := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 300 * time.Millisecond, 9: 300 * time.Millisecond} {
		if got := p.ceiling(attempt); got != want {
			t.Errorf("ceiling(%d) = %v, want %v", attempt, got, want)
		}
	}
	// Full jitter: draws spread over all of [0, ceiling].
	var lo, hi int
	for range 1000 {
		d := p.delay(2)
		if d < 0 || d > 200*time.Millisecond {
			t.Fatalf("delay %v outside [0, 200ms]", d)
		}
		if d < 20*time.Millisecond {
			lo++
		}
		if d > 180*time.Millisecond {
			hi++
		}
	}
	if lo == 0 || hi == 0 {
		t.Fatalf("1000 draws: %d under 10%% and %d over 90%% of the ceiling, want both", lo, hi)
	}
}

// logTo returns a policy like fast whose events go to buf as JSON lines.
func logTo(buf *bytes.Buffer) Policy {
	p := fast
	p.Logger = slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return p
}

func TestDoCallLogsRetriesAndGiveUp(t *testing.T) {
	var buf bytes.Buffer
	c := Call{Operation: "UploadPart", Bucket: "b", Key: "k", UploadID: "u1", Part: 7}
	err := DoCall(context.Background(), logTo(&buf), c, func(int) error {
		return &backend.Error{Code: "InternalError", StatusCode: 200, Message: "The server did not respond in time."}
	})
	if backend.ErrorCode(err) != "InternalError" {
		t.Fatalf("err = %v", err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != fast.Attempts {
		t.Fatalf("%d events, want %d retries + 1 give-up:\n%s", len(lines), fast.Attempts-1, buf.String())
	}
	for i, l := range lines {
		for _, f := range []string{`"operation":"UploadPart"`, `"bucket":"b"`, `"key":"k"`, `"upload_id":"u1"`, `"part":7`,
			fmt.Sprintf(`"attempt":%d`, i+1), `"cause":"backend : InternalError (200): The server did not respond in time."`} {
			if !strings.Contains(l, f) {
				t.Errorf("event %d lacks %s: %s", i+1, f, l)
			}
		}
	}
	if !strings.Contains(lines[len(lines)-1], "failed after retries") {
		t.Errorf("last event is not the give-up: %s", lines[len(lines)-1])
	}
}

// A store that stalls or refuses connections costs a call DownAttempts
// attempts, however many Attempts the policy allows; other transient
// failures between them do not count.
func TestDownAttemptsBoundTheCall(t *testing.T) {
	stall := &backend.Error{Op: "HeadObject", Err: &backend.StallError{Phase: "response headers", After: time.Second}}
	refused := &backend.Error{Op: "HeadObject", Err: &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}
	slow := &backend.Error{Code: "SlowDown", StatusCode: 503}
	if !Retryable(stall) || Cause(stall) != "stall" {
		t.Fatalf("a stall: Retryable %v, Cause %q", Retryable(stall), Cause(stall))
	}
	for _, c := range []struct {
		name    string
		errs    []error // op's answers in turn; nil: success
		stalls  int
		calls   int
		succeed bool
	}{
		{"two stalls end it", []error{stall, stall, nil}, 0, 2, false},
		{"one stall is retried", []error{stall, nil}, 0, 2, true},
		{"stalls between other failures", []error{stall, slow, slow, stall, nil}, 0, 4, false},
		{"three allowed", []error{stall, stall, nil}, 3, 3, true},
		{"two refusals end it", []error{refused, refused, nil}, 0, 2, false},
		{"a stall and a refusal", []error{slow, stall, refused, nil}, 0, 3, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			p := Policy{Attempts: 10, Backoff: time.Millisecond, DownAttempts: c.stalls, Logger: slog.New(slog.DiscardHandler)}
			err := Do(context.Background(), p, func(int) error {
				calls++
				return c.errs[calls-1]
			})
			if calls != c.calls || (err == nil) != c.succeed {
				t.Fatalf("%d calls, err %v; want %d calls, success %v", calls, err, c.calls, c.succeed)
			}
		})
	}
}
