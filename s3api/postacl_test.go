package s3api

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestPostObjectDecidedByOwnerAndACL: a browser POST is decided as a
// PutObject: another account's signed form into a bucket it does not own
// is refused, an unsigned one (anonymous served) goes where the bucket
// grants everyone WRITE and nowhere else.
func TestPostObjectDecidedByOwnerAndACL(t *testing.T) {
	creds := aclCreds()
	creds[postAK] = Credential{AccessKey: postAK, SecretKey: postSK, Read: []string{"*"}, Write: []string{"*"}}
	srv := newTestServerWith(t, Config{Credentials: creds, AllowAnonymous: true})
	ctx := context.Background()
	alice := sdkClient(srv.URL, "alice", "as")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(postBucket)}); err != nil {
		t.Fatal(err)
	}
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour), map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", ""})
	ct, body := formBody(t, append(p.fields(b64, sig), [2]string{"key", "signed"}), "f", []byte("data"))
	if res := sendPost(t, srv.URL, ct, body); res.status != http.StatusForbidden {
		t.Errorf("another account's signed POST into a private bucket: %d %s, want 403", res.status, res.body)
	}
	ct, body = formBody(t, [][2]string{{"key", "anon"}}, "f", []byte("data"))
	if res := sendPost(t, srv.URL, ct, body); res.status != http.StatusForbidden {
		t.Errorf("anonymous POST into a private bucket: %d %s, want 403", res.status, res.body)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String(postBucket), ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	if res := sendPost(t, srv.URL, ct, body); res.status != http.StatusNoContent {
		t.Errorf("anonymous POST into a public-read-write bucket: %d %s, want 204", res.status, res.body)
	}
	if _, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(postBucket), Key: aws.String("anon")}); err != nil {
		t.Errorf("the anonymous upload: %v", err)
	}
}
