package retry

import (
	"context"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/internal/faultproxy"
)

// A store that sends a listing's headers and then stops mid-body stalled:
// the error is a stall (retried once, then given up), and its Cause, the
// metrics label, is "stall", not the status of the headers that came.
func TestCauseOfBodyStallAfterHeaders(t *testing.T) {
	fp, st := proxied(t, backend.Timeouts{Response: 300 * time.Millisecond, Idle: 300 * time.Millisecond})
	for i := 0; i < 3; i++ {
		if _, err := st.PutObject(context.Background(), backend.PutInput{Bucket: "bkt", Key: string(rune('a' + i))}); err != nil {
			t.Fatal(err)
		}
	}
	for _, op := range []faultproxy.Op{faultproxy.ListObjects, faultproxy.Other} {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.ListObjects, Fault: faultproxy.ForwardThenStallBody},
			faultproxy.Rule{Op: faultproxy.Other, Fault: faultproxy.ForwardThenStallBody})
		var err error
		switch op {
		case faultproxy.ListObjects:
			_, err = st.ListObjects(context.Background(), backend.ListInput{Bucket: "bkt"})
		default: // a Forward: GET ?cors
			_, err = st.Forward(context.Background(), backend.RawRequest{Method: "GET", Bucket: "bkt", Query: map[string][]string{"versioning": {""}}})
		}
		if err == nil {
			t.Fatalf("%s stalled mid-body: no error", op)
		}
		if !backend.IsStall(err) {
			t.Errorf("%s stalled mid-body: %v is not a stall", op, err)
		}
		if c := Cause(err); c != "stall" {
			t.Errorf("%s stalled mid-body: Cause %q, want \"stall\" (err %v)", op, c, err)
		}
		if !Retryable(err) {
			t.Errorf("%s stalled mid-body: not retryable", op)
		}
	}
}
