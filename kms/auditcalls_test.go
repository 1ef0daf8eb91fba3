package kms_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/kms"
)

// TestAuditCalls: every call to the key service, and only the calls
// (not the keys opened from the cache), is told with its operation, key
// and outcome, and the context of the request that made it.
func TestAuditCalls(t *testing.T) {
	type ctxKey struct{}
	f := newFake()
	s, _ := kms.NewService(kms.Options{}, f)
	var (
		mu    sync.Mutex
		calls []string
	)
	s.AuditCalls(func(ctx context.Context, op, keyID, outcome string) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, strings.Join([]string{op, keyID, outcome, ctx.Value(ctxKey{}).(string)}, " "))
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "req-1")
	_, sealed, id, err := s.NewKey(ctx, req("b", "k", false))
	if err != nil {
		t.Fatal(err)
	}
	r := req("b", "k", false)
	r.KeyID = id
	for range 2 {
		if _, err := s.OpenKey(ctx, r, sealed); err != nil {
			t.Fatal(err)
		}
	}
	f.fail = kms.Disabled
	if _, _, _, err := s.NewKey(ctx, req("b", "k2", false)); err == nil {
		t.Fatal("a disabled key made a key")
	}
	want := "generate fake:k ok req-1|decrypt fake:canonical-k ok req-1|generate fake:k disabled req-1"
	if got := strings.Join(calls, "|"); got != want {
		t.Fatalf("calls told:\n%s\nwant\n%s", got, want)
	}
}
