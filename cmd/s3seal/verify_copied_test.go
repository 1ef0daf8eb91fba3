package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// A bucket whose objects were copied at the store from another bucket (a
// replica, a migration with the store's own tools): verify, with the
// right key, finds none opens. It must not say only that the key is
// wrong, which sends the operator looking for another key: s3seal binds
// each object to its bucket and key, and the copy is named as a cause.
func TestVerifyCommandNamesObjectsCopiedFromAnotherBucket(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "one", "first")
		if err := be.CreateBucket(ctx, "replica"); err != nil {
			t.Fatal(err)
		}
		bi, err := be.HeadObject(ctx, "bkt", "one")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := be.CopyObject(ctx, backend.CopyInput{SrcBucket: "bkt", SrcKey: "one", Bucket: "replica", Key: "one", Meta: bi.Meta}); err != nil {
			t.Fatal(err)
		}
	})
	var out, errOut bytes.Buffer
	code := run([]string{"verify", "--data-dir", dir, "--bucket", "replica"}, env, &out, &errOut)
	got := out.String()
	if code != 1 || !strings.Contains(got, "wrong-key replica/one") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, got, errOut.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if (strings.HasPrefix(line, "wrong-key ") || strings.HasPrefix(line, "no object under")) && !strings.Contains(line, "copied") {
			t.Errorf("the right key over a copy from another bucket, and verify names no copy: %s", line)
		}
	}
}
