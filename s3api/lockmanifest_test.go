package s3api

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// manifestRefuser is a Forwarder that records requests and, when refuse
// is set, refuses every request to a manifest as a store refuses
// shortening a COMPLIANCE retention.
type manifestRefuser struct {
	mu     sync.Mutex
	keys   []string
	refuse bool
}

func (f *manifestRefuser) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	if lockProbe(in) {
		return lockEnabledAnswer(), nil
	}
	if in.Key == "" {
		// The bucket's own documents (lifecycle rules for
		// x-amz-expiration): none, and not an object's request.
		return &backend.RawResponse{StatusCode: 404, Header: http.Header{}}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys = append(f.keys, in.Key)
	if f.refuse && strings.HasPrefix(in.Key, ".s3seal/manifests/") {
		return nil, &backend.Error{Op: "Forward PUT", Code: "AccessDenied", StatusCode: 403, Message: "Access Denied because object protected by object lock."}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

// TestRetentionLocksManifestFirst: PutObjectRetention and
// PutObjectLegalHold on a multipart object go to its manifest first, then
// to the object; a refusal on the manifest is the client's answer and the
// object's request is never sent. A single-part object has no manifest.
func TestRetentionLocksManifestFirst(t *testing.T) {
	fw := &manifestRefuser{}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	c := sdkClient(srv.URL, "user", "us")
	b, k := aws.String("bkt"), aws.String("mp")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	pt, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: pt.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("single"), Body: strings.NewReader("y")}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour)
	retention := func(key string) error {
		_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &until}})
		return err
	}
	sent := func() []string {
		fw.mu.Lock()
		defer fw.mu.Unlock()
		out := fw.keys
		fw.keys = nil
		return out
	}
	if err := retention("mp"); err != nil {
		t.Fatal(err)
	}
	if got := sent(); len(got) != 2 || !strings.HasPrefix(got[0], ".s3seal/manifests/") || got[1] != "mp" {
		t.Fatalf("retention sent to %q, want the manifest, then the object", got)
	}
	if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: k,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
		t.Fatal(err)
	}
	if got := sent(); len(got) != 2 || !strings.HasPrefix(got[0], ".s3seal/manifests/") || got[1] != "mp" {
		t.Fatalf("legal hold sent to %q, want the manifest, then the object", got)
	}
	if err := retention("single"); err != nil {
		t.Fatal(err)
	}
	if got := sent(); len(got) != 1 || got[0] != "single" {
		t.Fatalf("retention of a single-part object sent to %q", got)
	}
	fw.refuse = true
	if err := retention("mp"); apiCode(err) != "AccessDenied" {
		t.Fatalf("retention refused on the manifest answered %v, want AccessDenied", err)
	}
	if got := sent(); len(got) != 1 || !strings.HasPrefix(got[0], ".s3seal/manifests/") {
		t.Fatalf("after the manifest's refusal the request went to %q; the object must be left alone", got)
	}
}
