package s3api

// REVIEW i10d (proving tests; they FAIL against the current code on purpose).

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/backend"
)

// awsDenyStore answers every request as AWS S3 answers a denied one since
// 2024: a 403 AccessDenied whose message names the caller's ARN, and so
// the backend account id.
const leakedAccount = "123456789012"

func awsDenyStore(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		_, _ = io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code>`+
			`<Message>User: arn:aws:iam::`+leakedAccount+`:user/s3seal-backend is not authorized to perform: s3:GetObjectAcl on resource: "arn:aws:s3:::bkt/k" because no identity-based policy allows the s3:GetObjectAcl action</Message>`+
			`<RequestId>R</RequestId><HostId>H</HostId></Error>`)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// TestReviewI10dForwardedErrorLeaksAccount: a non-admin reader's GET ?acl
// (and a writer's owner-only PUT ?acl, which s3seal answers by a GET ?acl
// of its own) get the store's 4xx message verbatim (forwardErr), while
// every other path blanks AccessDenied's message (fromBackend). On AWS
// that message names the backend account (and IAM user).
func TestReviewI10dForwardedErrorLeaksAccount(t *testing.T) {
	store := awsDenyStore(t)
	fw, err := backend.NewS3(backend.S3Config{Endpoint: store.URL, AccessKey: "a", SecretKey: "s", PathStyle: true, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	creds := Credentials{
		"reader": {AccessKey: "reader", SecretKey: "rs", Read: []string{"*"}},
		"writer": {AccessKey: "writer", SecretKey: "ws", Read: []string{"*"}, Write: []string{"*"}},
	}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	reader, writer := sdkClient(srv.URL, "reader", "rs"), sdkClient(srv.URL, "writer", "ws")
	b, k := aws.String("bkt"), aws.String("k")
	check := func(what string, err error) {
		t.Helper()
		var ae smithy.APIError
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		msg := err.Error()
		if errors.As(err, &ae) {
			msg = ae.ErrorMessage()
		}
		if strings.Contains(msg, leakedAccount) {
			t.Errorf("%s: a non-admin learns the backend account id: %q", what, msg)
		}
	}
	_, err = reader.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k})
	check("reader GET object ?acl", err)
	_, err = reader.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	check("reader GET bucket ?acl", err)
	_, err = writer.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: "private"})
	check("writer owner-only PUT object ?acl", err)
	_, err = reader.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k})
	check("reader GET ?tagging", err)
}
