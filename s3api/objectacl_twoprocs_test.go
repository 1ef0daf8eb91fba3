package s3api

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/sealstore"
)

// TestOverwriteThroughAnotherProcessDropsTheRecord: two s3seal processes
// in front of one store. An account writes an object with an ACL record
// through one; the bucket owner overwrites it through the other, whose
// documents, read a moment before, do not yet say that the bucket has
// object records. The record of the replaced object does not outlive
// the overwrite: the writer cannot read the owner's new content, through
// either process, then or later.
func TestOverwriteThroughAnotherProcessDropsTheRecord(t *testing.T) {
	be := embeddedStore(t)
	kr := testKeyring()
	server := func() string {
		st, err := sealstore.New(be, kr, sealstore.Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(New(Config{Credentials: aclCreds(), Store: st}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	p1, p2 := server(), server()
	ctx := context.Background()
	alice1, alice2, bob1 := sdkClient(p1, "alice", "as"), sdkClient(p2, "alice", "as"), sdkClient(p1, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice1.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice1.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	// The second process reads the bucket's documents.
	if _, err := alice2.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("other"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob1.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice2.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	if out, err := bob1.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err == nil {
		body, _ := io.ReadAll(out.Body)
		t.Errorf("bob read the bucket owner's overwrite made through another process: %q", body)
	}
}
