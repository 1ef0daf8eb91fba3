package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// toolFixture is an embedded store in a data directory holding bucket
// "bkt", and an environment whose S3SEAL_KEY is the key "default" of the
// store's keyring. fill writes objects before the store is closed.
func toolFixture(t *testing.T, fill func(ctx context.Context, be backend.Store, st *sealstore.Store)) (dir string, env func(string) string) {
	t.Helper()
	dir = t.TempDir()
	emb, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer emb.Close()
	be, err := backend.NewS3(emb.Config())
	if err != nil {
		t.Fatal(err)
	}
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("default", map[string][]byte{"default": key})
	st, _ := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir()})
	ctx := context.Background()
	if err := be.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	fill(ctx, be, st)
	b64 := base64.StdEncoding.EncodeToString(key)
	return dir, func(k string) string {
		if k == "S3SEAL_KEY" {
			return b64
		}
		return ""
	}
}

func putObj(t *testing.T, ctx context.Context, st *sealstore.Store, key, data string) {
	t.Helper()
	if _, err := st.Put(ctx, sealstore.PutInput{Bucket: "bkt", Key: key, Body: strings.NewReader(data), Size: int64(len(data))}); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyCommand: a clean bucket exits 0; a bucket with an object
// without s3seal metadata exits 1 and names it, in text and in JSON;
// without --bucket the exit code is 2.
func TestVerifyCommand(t *testing.T) {
	dir, env := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "a/one", "first")
		putObj(t, ctx, st, "a/two", strings.Repeat("x", 70000))
		if _, err := be.PutObject(ctx, backend.PutInput{Bucket: "bkt", Key: "b/bare", Body: strings.NewReader("raw"), Size: 3}); err != nil {
			t.Fatal(err)
		}
	})
	verifyRun := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append([]string{"verify", "--data-dir", dir}, args...), env, &out, &errOut); code != want {
			t.Fatalf("verify %v: exit %d, want %d: %s%s", args, code, want, out.String(), errOut.String())
		}
		return out.String()
	}
	if out := verifyRun(0, "--bucket", "bkt", "--prefix", "a/", "--deep"); !strings.Contains(out, "2 object(s), ") || !strings.Contains(out, "2 ok, 0 problem(s)") {
		t.Fatalf("clean prefix:\n%s", out)
	}
	if out := verifyRun(1, "--bucket", "bkt"); !strings.Contains(out, "plaintext bkt/b/bare: ") || !strings.Contains(out, "2 ok, 1 problem(s)") {
		t.Fatalf("whole bucket:\n%s", out)
	}
	var rep verifyReport
	if err := json.Unmarshal([]byte(verifyRun(1, "--bucket", "bkt", "--json", "--deep")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Objects != 3 || rep.OK != 2 || len(rep.Problems) != 1 || rep.Problems[0].Key != "b/bare" || rep.Problems[0].Status != "plaintext" || !rep.Deep {
		t.Fatalf("json report: %+v", rep)
	}
	verifyRun(2)
}

// TestVerifyCommandNoSuchBucket: a bucket that does not exist is said to
// be missing, in the summary and in JSON, with exit code 1; the summary
// never reads as a clean check of an empty bucket.
func TestVerifyCommandNoSuchBucket(t *testing.T) {
	dir, env := toolFixture(t, func(context.Context, backend.Store, *sealstore.Store) {})
	var out, errOut bytes.Buffer
	code := run([]string{"verify", "--data-dir", dir, "--bucket", "nosuch"}, env, &out, &errOut)
	if code != 1 || !strings.Contains(out.String(), "bucket nosuch does not exist: nothing checked") || strings.Contains(out.String(), "0 ok") ||
		!strings.Contains(errOut.String(), "bucket nosuch does not exist") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
	}
	out.Reset()
	code = run([]string{"verify", "--data-dir", dir, "--bucket", "nosuch", "--json"}, env, &out, &errOut)
	var rep verifyReport
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || code != 1 || rep.Error != "bucket nosuch does not exist" {
		t.Fatalf("exit %d, %v: %s", code, err, out.String())
	}
}

// TestVerifyCommandWrongKey: run with another key under the id the
// objects were sealed with, verify says each is sealed under a key this
// keyring lacks, not corrupt, and that the keyring is the wrong one.
func TestVerifyCommandWrongKey(t *testing.T) {
	dir, _ := toolFixture(t, func(ctx context.Context, be backend.Store, st *sealstore.Store) {
		putObj(t, ctx, st, "a/one", "first")
		putObj(t, ctx, st, "a/two", "second")
	})
	other, _ := crypto.GenerateKey()
	env := func(k string) string {
		if k == "S3SEAL_KEY" {
			return base64.StdEncoding.EncodeToString(other)
		}
		return ""
	}
	var out, errOut bytes.Buffer
	code := run([]string{"verify", "--data-dir", dir, "--bucket", "bkt"}, env, &out, &errOut)
	got := out.String()
	if code != 1 || !strings.Contains(got, "wrong-key bkt/a/one: sealed under a key this keyring lacks") || strings.Contains(got, "corrupt") ||
		!strings.Contains(got, `no object under master key "default" opens with this keyring (2 object(s)): it is not the key they were sealed with`) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, got, errOut.String())
	}
}
