package s3api

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestAuditPostRefusals: a browser POST upload's refusals before access
// decides are access decisions as a PUT's are (DESIGN.md, The audit
// trail): a signature that does not verify, with the access key the form
// claims, the credential's lists, and the form's signed policy, each a
// deny line.
func TestAuditPostRefusals(t *testing.T) {
	rec := &recordingAuditor{}
	creds := Credentials{
		postAK:   {AccessKey: postAK, SecretKey: postSK, Read: []string{"*"}, Write: []string{"*"}},
		"reader": {AccessKey: "reader", SecretKey: "reader-secret", Read: []string{"*"}},
	}
	url := newTestServerWith(t, Config{Credentials: creds, Audit: rec}).URL
	if _, err := sdkClient(url, postAK, postSK).CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(postBucket)}); err != nil {
		t.Fatal(err)
	}
	rec.take()
	now := time.Now()
	key := [2]string{"key", "up/x"}
	conds := []any{map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"}}
	for _, tc := range []struct {
		name, ak, sk, rule string
		exp                time.Duration
	}{
		{"an expired policy", postAK, postSK, rulePostPolicy, -time.Second},
		{"a wrong secret", postAK, "not-the-secret", ruleSignature, 0},
		{"an unknown access key", "nobody", "x", ruleSignature, 0},
		{"a reader's lists", "reader", "reader-secret", ruleCredLists, 0},
	} {
		p := postSigner{ak: tc.ak, sk: tc.sk, now: now}
		exp := tc.exp
		if exp == 0 {
			exp = time.Hour
		}
		b64, sig := p.policy(t, now.Add(exp), conds...)
		ctype, body := formBody(t, append(p.fields(b64, sig), key), "f", []byte("abc"))
		if r := sendPost(t, url, ctype, body); r.status != 403 {
			t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
		}
		got := rec.take()
		if len(got) != 1 || got[0].Allow || got[0].Rule != tc.rule || got[0].AccessKey != tc.ak || got[0].Bucket != postBucket {
			t.Errorf("%s: the refused POST's lines: %+v, want one deny by %s for %s", tc.name, got, tc.rule, tc.ak)
		}
	}
}

// TestAuditSignatureRefusalSaysWhy: a signature refusal's line says why
// (a wrong signature, an unknown access key), as the log's "access
// refused" does: sigv4's errors are the front's too.
func TestAuditSignatureRefusalSaysWhy(t *testing.T) {
	rec := &recordingAuditor{}
	url := newTestServerWith(t, Config{Credentials: aclCreds(), Audit: rec}).URL
	ctx := context.Background()
	for _, c := range []*s3.Client{sdkClient(url, "bob", "wrong"), sdkClient(url, "nobody", "x")} {
		if _, err := c.ListBuckets(ctx, &s3.ListBucketsInput{}); err == nil {
			t.Fatal("a wrong secret was served")
		}
		got := rec.take()
		if len(got) != 1 || got[0].Rule != ruleSignature || got[0].Reason == "" {
			t.Errorf("a refused signature's line: %+v, want its reason", got)
		}
	}
}
