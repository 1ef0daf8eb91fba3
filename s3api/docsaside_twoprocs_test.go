package s3api

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// emptyBucketLockStore refuses the first Object Lock configuration as moto
// does for a bucket holding objects (InvalidBucket), and takes the next
// once during is closed, having closed inside.
type emptyBucketLockStore struct {
	calls  int
	inside chan struct{}
	during chan struct{}
}

func (f *emptyBucketLockStore) Forward(ctx context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	if _, ok := in.Query["object-lock"]; !ok || in.Method != "PUT" {
		return &backend.RawResponse{StatusCode: 200}, nil
	}
	f.calls++
	if f.calls == 1 {
		return nil, &backend.Error{Op: "PutObjectLockConfiguration", Code: "InvalidBucket", StatusCode: 400, Message: "Bucket needs to be empty"}
	}
	close(f.inside)
	<-f.during
	return &backend.RawResponse{StatusCode: 200}, nil
}

// TestDocumentsAsideKeptFromOtherProcess: while one s3seal process has a
// bucket's documents set aside for its Object Lock configuration (a store
// that wants the bucket empty, as moto), another process in front of the
// same store does not take the bucket for one without an owner: a
// credential of another account whose lists reach it only through "*"
// can neither delete it, grant itself its ACL, nor write to it (503
// SlowDown, which clients retry), and the bucket keeps its owner.
func TestDocumentsAsideKeptFromOtherProcess(t *testing.T) {
	be, kr := embeddedStore(t), testKeyring()
	creds := aclCredsAliceAdmin()
	fw := &emptyBucketLockStore{inside: make(chan struct{}), during: make(chan struct{})}
	serve := func() *httptest.Server {
		st, err := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir(), Settings: fw})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(New(Config{Credentials: creds, Store: st}))
		t.Cleanup(srv.Close)
		return srv
	}
	one, two := serve(), serve()
	ctx := context.Background()
	alice := sdkClient(one.URL, "alice", "as")
	// bob's answers are read as they come: SlowDown is not retried here.
	bob := s3.New(sdkClient(two.URL, "bob", "bs").Options(), func(o *s3.Options) { o.RetryMaxAttempts = 1 })
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := alice.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b,
			ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled}})
		done <- err
	}()
	<-fw.inside
	if _, err := bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantFullControl: aws.String(`id="b0b"`)}); errCode(err) != "SlowDown" {
		t.Errorf("another account's PutBucketAcl through another process while the documents were out: %v, want SlowDown", err)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); errCode(err) != "SlowDown" {
		t.Errorf("another account's PutObject through another process while the documents were out: %v, want SlowDown", err)
	}
	if _, err := bob.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err == nil {
		t.Errorf("another account deleted the bucket through another process while its documents were out")
	}
	close(fw.during)
	if err := <-done; err != nil {
		t.Errorf("PutObjectLockConfiguration: %v", err)
	}
	// Past the other process's cache.
	fresh, err := sealstore.New(sealstore.Direct(be), kr, sealstore.Options{SpoolDir: t.TempDir(), Settings: fw})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := fresh.BucketDoc(ctx, "bkt", "owner"); !ok || err != nil || !strings.Contains(string(d), "a11ce") {
		t.Errorf("owner after: %q %v %v", d, ok, err)
	}
	srv := httptest.NewServer(New(Config{Credentials: creds, Store: fresh}))
	defer srv.Close()
	if _, err := sdkClient(srv.URL, "bob", "bs").ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("bob listing alice's bucket after: %v, want AccessDenied", err)
	}
	if _, err := sdkClient(srv.URL, "alice", "as").PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("alice writing once the documents are back (the marker gone): %v", err)
	}
	uploads, err := sdkClient(srv.URL, "alice", "as").ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(uploads.Uploads) != 0 {
		t.Errorf("uploads shown after: %+v, %v; want none (the marker is s3seal's)", uploads, err)
	}
}
