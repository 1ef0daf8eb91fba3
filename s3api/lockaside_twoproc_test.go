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
// once during is done.
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

// TestLockConfigAsideBucketKeptFromOtherProcess: while one s3seal
// process has a bucket's documents set aside for its Object Lock
// configuration, another process in front of the same store finds the
// bucket without an owner; a credential of another account whose lists
// reach the bucket only through "*" must still not delete it (nor keep a
// grant past the change), and the bucket keeps its owner.
func TestLockConfigAsideBucketKeptFromOtherProcess(t *testing.T) {
	be, kr := embeddedStore(t), testKeyring()
	creds := aclCreds()
	a := creds["alice"]
	a.Admin = true
	creds["alice"] = a
	fw := &emptyBucketLockStore{inside: make(chan struct{}), during: make(chan struct{})}
	serve := func() *httptest.Server {
		st, err := sealstore.New(be, kr, sealstore.Options{SpoolDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(New(Config{Credentials: creds, Store: st, Forwarder: fw}))
		t.Cleanup(srv.Close)
		return srv
	}
	one, two := serve(), serve()
	ctx := context.Background()
	alice, bob := sdkClient(one.URL, "alice", "as"), sdkClient(two.URL, "bob", "bs")
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
	_, _ = bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantFullControl: aws.String(`id="b0b"`)})
	if _, err := bob.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: b}); err == nil {
		t.Errorf("another account deleted the bucket through another process while its documents were out")
	}
	close(fw.during)
	if err := <-done; err != nil {
		t.Errorf("PutObjectLockConfiguration: %v", err)
	}
	// Past the other process's cache.
	fresh, err := sealstore.New(be, kr, sealstore.Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if d, ok, err := fresh.BucketDoc(ctx, "bkt", "owner"); !ok || err != nil || !strings.Contains(string(d), "a11ce") {
		t.Errorf("owner after: %q %v %v", d, ok, err)
	}
	srv := httptest.NewServer(New(Config{Credentials: creds, Store: fresh, Forwarder: fw}))
	defer srv.Close()
	if _, err := sdkClient(srv.URL, "bob", "bs").ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("bob listing alice's bucket after: %v, want AccessDenied", err)
	}
}
