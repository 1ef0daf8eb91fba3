package crypto

import (
	"context"
	"errors"
	"sync"
	"testing"
)

// TestKeyUses: a keyring WithKeyUses tells of each wrap and unwrap, with
// the master key, the object and the call's context; a failed unwrap is
// told with its error.
func TestKeyUses(t *testing.T) {
	type ctxKey struct{}
	var (
		mu   sync.Mutex
		uses []KeyUse
		ctxs []any
	)
	kr := testKeyring(t, "k1", "k1", "k2").WithKeyUses(func(ctx context.Context, u KeyUse) {
		mu.Lock()
		defer mu.Unlock()
		uses = append(uses, u)
		ctxs = append(ctxs, ctx.Value(ctxKey{}))
	})
	ctx := context.WithValue(context.Background(), ctxKey{}, "req-1")
	dk := testDataKey(t, "uses")
	env, err := kr.Wrap(ctx, dk, "k2", testName, Binding{PlainSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kr.Unwrap(ctx, env, testName); err != nil {
		t.Fatal(err)
	}
	other := Name{Bucket: "bucket", Key: "elsewhere"}
	if _, _, err := kr.Unwrap(ctx, env, other); !errors.Is(err, ErrAuth) {
		t.Fatalf("unwrap under another name: %v", err)
	}
	want := []KeyUse{{Op: "wrap", KeyID: "k2", Name: testName}, {Op: "unwrap", KeyID: "k2", Name: testName}, {Op: "unwrap", KeyID: "k2", Name: other}}
	if len(uses) != len(want) {
		t.Fatalf("uses %+v", uses)
	}
	for i, w := range want {
		u := uses[i]
		if u.Op != w.Op || u.KeyID != w.KeyID || u.Name != w.Name || (u.Err != nil) != (i == 2) || ctxs[i] != "req-1" {
			t.Errorf("use %d: %+v (context %v), want %+v", i, u, ctxs[i], w)
		}
	}
	// The keyring without uses is untouched.
	if _, err := testKeyring(t, "k1", "k1").Wrap(ctx, dk, "", testName, Binding{}); err != nil {
		t.Fatal(err)
	}
}
