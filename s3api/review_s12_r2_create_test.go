package s3api

// Review s12 R2 (FAILS on purpose: a finding).

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/s3seal/s3seal/backend"
)

// r2TagFailForwarder stands for a store that creates buckets (the
// embedded store behind the server) but fails PUT ?tagging (a store
// without bucket tags, or a transient 5xx).
type r2TagFailForwarder struct{ be backend.Store }

func (f *r2TagFailForwarder) Forward(ctx context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	if in.Method == http.MethodPut && in.Key == "" && len(in.Query) == 0 {
		if err := f.be.CreateBucket(ctx, in.Bucket); err != nil {
			return nil, err
		}
		return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
	}
	if in.Query.Has("tagging") {
		return nil, &backend.Error{Code: "NotImplemented", StatusCode: 501, Message: "no bucket tags here"}
	}
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}}, nil
}

// TestR2FixedLockedCreateBucketTagFailure200: CreateBucket with Object Lock
// (or a canned ACL) and tags. createLockedBucket (protect.go) writes the
// 200 itself; createBucket then tags the bucket, and when that fails,
// configureNewBucket DELETES the bucket and writeError can no longer
// change the status ("superfluous WriteHeader"): the client reads HTTP 200
// (with an <Error> body), the bucket does not exist. Expected: a 4xx/5xx,
// or 200 and the bucket there. (The Go SDK happens to read the 200's
// <Error> body as a failure and retries; a client that goes by the status
// line, as this raw request does, sees success.)
func TestR2FixedLockedCreateBucketTagFailure200(t *testing.T) {
	fw := &r2TagFailForwarder{}
	creds := Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerOver(t, Config{Credentials: creds, Forwarder: fw}, func(be backend.Store) backend.Store { fw.be = be; return be })
	ctx := context.Background()
	for name, hdr := range map[string][2]string{
		"locked": {"X-Amz-Bucket-Object-Lock-Enabled", "true"},
		"acl":    {"X-Amz-Acl", "public-read"},
	} {
		bucket := "r2-" + name + "-tagged"
		body := `<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Tags><Tag><Key>team</Key><Value>a</Value></Tag></Tags></CreateBucketConfiguration>`
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/"+bucket, strings.NewReader(body))
		req.Header.Set(hdr[0], hdr[1])
		req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
		if err := v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		headErr := fw.be.HeadBucket(ctx, bucket)
		t.Logf("%s: CreateBucket answered %d %q; store HeadBucket: %v", name, resp.StatusCode, b, headErr)
		if resp.StatusCode == 200 && headErr != nil {
			t.Errorf("%s: CreateBucket answered 200 but the bucket is gone (%v)", name, headErr)
		}
	}
}
