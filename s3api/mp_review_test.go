package s3api

// Regression tests for findings of a hostile review of multipart.

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// backendAssemblesSlowly models a backend whose completion takes a while
// (S3 assembling a large object): the first CompleteMultipartUpload it
// receives is executed by the backend even if s3seal's side gives up (the
// request is already at the store), and finishes only after the next
// ListParts (the client's retry) has been served.
type backendAssemblesSlowly struct {
	backend.Store
	completes, listParts atomic.Int32
	retryListed          chan struct{}
	firstDone            chan struct{}
}

func (b *backendAssemblesSlowly) ListParts(ctx context.Context, in backend.ListPartsInput) (backend.ListPartsOutput, error) {
	out, err := b.Store.ListParts(ctx, in)
	if b.listParts.Add(1) == 2 {
		close(b.retryListed)
	}
	return out, err
}

func (b *backendAssemblesSlowly) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	if b.completes.Add(1) == 1 {
		select {
		case <-b.retryListed:
		case <-time.After(10 * time.Second):
		}
		time.Sleep(100 * time.Millisecond)
		defer close(b.firstDone)
		return b.Store.CompleteMultipartUpload(context.Background(), in)
	}
	<-b.firstDone // the retry reaches the store after the first finished
	return b.Store.CompleteMultipartUpload(ctx, in)
}

// TestSDKRetryOfSlowCompletionKeepsManifest: the Go SDK, with an HTTP
// client timeout shorter than the backend's assembly, retries
// CompleteMultipartUpload. The backend completes the first request; the
// retry's backend completion answers NoSuchUpload on its first attempt.
// s3seal used to delete .s3seal/manifests/<oid> then, the manifest of the
// object now at the key, which no other process could read any more.
func TestSDKRetryOfSlowCompletionKeepsManifest(t *testing.T) {
	var be *backendAssemblesSlowly
	srv := newTestServerOver(t, Config{Credentials: SingleCredential("ak", "sk"),
		KeepAliveDelay: time.Minute, KeepAliveInterval: time.Minute},
		func(s backend.Store) backend.Store {
			be = &backendAssemblesSlowly{Store: s, retryListed: make(chan struct{}), firstDone: make(chan struct{})}
			return be
		})
	ctx := context.Background()
	c := s3.New(s3.Options{
		BaseEndpoint: aws.String(srv.URL), Region: "us-east-1", UsePathStyle: true,
		Credentials: sdkClient(srv.URL, "ak", "sk").Options().Credentials,
		HTTPClient:  &http.Client{Timeout: 400 * time.Millisecond},
	})
	b, k := aws.String("bkt"), aws.String("obj")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(1),
		Body: bytes.NewReader(randData(1000, 1))})
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: cr.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}})
	time.Sleep(time.Second) // let the first completion's handler finish
	t.Logf("SDK completion: %v (backend completions: %d, ListParts: %d)", cerr, be.completes.Load(), be.listParts.Load())
	obj, err := be.Store.HeadObject(ctx, "bkt", "obj")
	if err != nil {
		t.Fatalf("no object at the key: %v", err)
	}
	out, err := be.Store.ListObjects(ctx, backend.ListInput{Bucket: "bkt", V2: true, Prefix: ".s3seal/manifests/"})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("object at the key: %d bytes, oid %s; manifests: %d", obj.Size, obj.Meta["s3seal-oid"], len(out.Entries))
	if len(out.Entries) == 0 {
		t.Errorf("the object at the key has no manifest left: a SDK retry of a slow completion deleted it")
	}
}

// TestListPartsMaxPartsZero: ListParts with max-parts=0 returns no part and
// IsTruncated true, as S3 (it used to return every part).
func TestListPartsMaxPartsZero(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	b, k := aws.String("bkt"), aws.String("k")
	c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b})
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	for n := int32(1); n <= 3; n++ {
		if _, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: cr.UploadId, PartNumber: aws.Int32(n),
			Body: bytes.NewReader([]byte("x"))}); err != nil {
			t.Fatal(err)
		}
	}
	lp, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: b, Key: k, UploadId: cr.UploadId, MaxParts: aws.Int32(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("max-parts=0: %d parts, MaxParts %d, IsTruncated %v", len(lp.Parts), aws.ToInt32(lp.MaxParts), aws.ToBool(lp.IsTruncated))
	if len(lp.Parts) != 0 || !aws.ToBool(lp.IsTruncated) {
		t.Errorf("max-parts=0 returned %d parts, IsTruncated %v", len(lp.Parts), aws.ToBool(lp.IsTruncated))
	}
}
