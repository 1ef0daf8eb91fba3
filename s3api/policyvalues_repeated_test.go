package s3api

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestPolicyConditionJudgesWhatTheOperationReads: a query parameter or a
// header given twice is judged by the policy's conditions as the
// operation reads it, its first value. bob, allowed to list only under
// home/bob/ (s3:prefix), is refused a listing whose first prefix is
// empty and second his; allowed to write only with
// bucket-owner-full-control (s3:x-amz-acl), he is refused a PUT whose
// first x-amz-acl is public-read.
func TestPolicyConditionJudgesWhatTheOperationReads(t *testing.T) {
	url := newTestServer(t, aclCredsAliceAdmin())
	ctx := context.Background()
	alice := sdkClient(url, "alice", "as")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"home/bob/x", "secret/y"} {
		if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	policy := `{"Version":"2012-10-17","Statement":[` +
		`{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"s3:ListBucket","Resource":"arn:aws:s3:::bkt",` +
		`"Condition":{"StringLike":{"s3:prefix":"home/bob/*"}}},` +
		`{"Effect":"Allow","Principal":{"AWS":"222222222222"},"Action":"s3:PutObject","Resource":"arn:aws:s3:::bkt/*",` +
		`"Condition":{"StringEquals":{"s3:x-amz-acl":"bucket-owner-full-control"}}}]}`
	if _, err := alice.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(policy)}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"?list-type=2&prefix=&prefix=home%2Fbob%2F", "?prefix=&prefix=home%2Fbob%2F"} {
		if r, body := doSignedAs(t, "bob", "bs", http.MethodGet, url+"/bkt"+q, nil, ""); r.StatusCode != http.StatusForbidden {
			t.Errorf("bob listing with %s: %d %s, want 403", q, r.StatusCode, body)
		}
	}
	if r, body := doSignedAs(t, "bob", "bs", http.MethodGet, url+"/bkt?list-type=2&prefix=home%2Fbob%2F", nil, ""); r.StatusCode != 200 ||
		strings.Contains(body, "secret/y") {
		t.Errorf("bob listing his prefix: %d %s", r.StatusCode, body)
	}
	h := http.Header{"X-Amz-Acl": {"public-read", "bucket-owner-full-control"}}
	if r, body := doSignedAs(t, "bob", "bs", http.MethodPut, url+"/bkt/o", h, "x"); r.StatusCode != http.StatusForbidden {
		t.Errorf("bob's PUT with x-amz-acl public-read then bucket-owner-full-control: %d %s, want 403", r.StatusCode, body)
	}
	h = http.Header{"X-Amz-Acl": {"bucket-owner-full-control"}}
	if r, body := doSignedAs(t, "bob", "bs", http.MethodPut, url+"/bkt/o", h, "x"); r.StatusCode != 200 {
		t.Errorf("bob's PUT with bucket-owner-full-control: %d %s", r.StatusCode, body)
	}
}
