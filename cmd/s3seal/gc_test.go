package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/backend/embedded"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// TestGCCommand leaves a crash's remains in an embedded store (a backend
// upload without state, a manifest whose object was deleted around
// s3seal), then drives s3seal gc: a dry run lists them and removes
// nothing, --delete removes them, and a last run finds nothing.
func TestGCCommand(t *testing.T) {
	dir := t.TempDir()
	emb, err := embedded.Start(dir)
	if err != nil {
		t.Fatal(err)
	}
	be, err := backend.NewS3(emb.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key, _ := crypto.GenerateKey()
	kr, _ := crypto.NewKeyring("k", map[string][]byte{"k": key})
	st, _ := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir()})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(be.CreateBucket(ctx, "bkt"))
	id, err := st.CreateMultipart(ctx, sealstore.CreateMultipartInput{Bucket: "bkt", Key: "obj"})
	must(err)
	pi, err := st.UploadPart(ctx, sealstore.UploadPartInput{Bucket: "bkt", Key: "obj", UploadID: id, PartNumber: 1, Body: strings.NewReader("data"), Size: 4})
	must(err)
	_, err = st.CompleteMultipart(ctx, sealstore.CompleteInput{Bucket: "bkt", Key: "obj", UploadID: id, ExpectSize: -1,
		Parts: []sealstore.CompletePart{{PartNumber: 1, ETag: pi.ETag}}})
	must(err)
	must(be.DeleteObject(ctx, "bkt", "obj")) // around s3seal: the manifest stays
	_, err = be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: "bkt", Key: "bare"})
	must(err)
	must(emb.Close())

	gcRun := func(args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append([]string{"gc", "--data-dir", dir, "--min-age", "0s"}, args...), func(string) string { return "" }, &out, &errOut); code != 0 {
			t.Fatalf("gc %v: exit %d: %s", args, code, errOut.String())
		}
		return out.String()
	}
	dry := gcRun()
	if !strings.Contains(dry, "would remove manifest bkt/.s3seal/manifests/") || !strings.Contains(dry, "would remove upload bkt/bare (upload ") ||
		!strings.Contains(dry, "2 to remove in 1 bucket(s); run again with --delete") {
		t.Fatalf("dry run:\n%s", dry)
	}
	if again := gcRun(); again != dry {
		t.Fatalf("a dry run changed something:\n%s\nthen\n%s", dry, again)
	}
	if del := gcRun("--delete"); !strings.Contains(del, "2 removed in 1 bucket(s)") {
		t.Fatalf("delete:\n%s", del)
	}
	if last := gcRun(); !strings.Contains(last, "0 to remove in 1 bucket(s)") {
		t.Fatalf("after delete:\n%s", last)
	}
	var errOut bytes.Buffer
	if code := run([]string{"gc", "--data-dir", dir, "--min-age", "-1s"}, func(string) string { return "" }, &bytes.Buffer{}, &errOut); code != 2 {
		t.Fatalf("negative --min-age: exit %d", code)
	}
}

// TestGCCommandNoSuchBucket: a bucket that does not exist is said to be
// missing, in the summary too, with exit code 1, and not counted among the
// buckets collected.
func TestGCCommandNoSuchBucket(t *testing.T) {
	dir, _ := toolFixture(t, func(context.Context, backend.Store, *sealstore.Store) {})
	for _, del := range [][]string{nil, {"--delete"}} {
		var out, errOut bytes.Buffer
		code := run(append([]string{"gc", "--data-dir", dir, "--bucket", "nosuch,bkt"}, del...), func(string) string { return "" }, &out, &errOut)
		if code != 1 || !strings.Contains(out.String(), " in 1 bucket(s); bucket nosuch does not exist") ||
			!strings.Contains(errOut.String(), "gc of bucket nosuch: bucket nosuch does not exist") {
			t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", del, code, out.String(), errOut.String())
		}
	}
}
