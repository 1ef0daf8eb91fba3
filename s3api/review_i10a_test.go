package s3api

// Review i10a (fresh-eye attack on the backup-grade features). The tests
// in this file PROVE findings: they FAIL against the current code on
// purpose.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// FINDING (fixed; this test now guards it): a POST form with both an "acl" and an
// "x-amz-acl" field (both covered by the policy) is decided by Go map
// order: objectHeader sets both on the one X-Amz-Acl header while ranging
// over a map. For a non-admin credential asking "acl=public-read" with
// "x-amz-acl=private", some uploads are refused (AccessDenied, as the fix
// 31a6b07 intends) and others are stored with the public-read request
// silently dropped. Expected: the same answer every time (refused).
func TestReviewI10aPostAclFieldsNondeterministic(t *testing.T) {
	url, _ := newPostServer(t)
	p := postSigner{ak: postAK, sk: postSK, now: time.Now()}
	b64, sig := p.policy(t, time.Now().Add(time.Hour),
		map[string]string{"bucket": postBucket}, []any{"starts-with", "$key", "up/"},
		[]any{"starts-with", "$acl", ""}, []any{"starts-with", "$x-amz-acl", ""})
	statuses := map[int]int{}
	for i := range 40 {
		fields := append(p.fields(b64, sig), [2]string{"key", fmt.Sprintf("up/acl-%d", i)},
			[2]string{"acl", "public-read"}, [2]string{"x-amz-acl", "private"})
		ct, body := formBody(t, fields, "f.txt", []byte("data"))
		statuses[sendPost(t, url, ct, body).status]++
	}
	if len(statuses) != 1 || statuses[403] != 40 {
		t.Fatalf("EXPECTED every upload asking acl=public-read from a non-admin to be refused (403); got status counts %v "+
			"(204 = stored, the ACL request silently dropped)", statuses)
	}
}

// FINDING (design risk, fixed; this test now guards it): a credential without "admin"
// (a backup writer) can make irreversible, store-enforced decisions that
// DESIGN.md otherwise reserves for admins: it sets the bucket's default
// retention to COMPLIANCE for 100 years (PutObjectLockConfiguration; from
// then on every object, s3seal's own upload state and manifests included,
// is undeletable and billed for a century), and it sends
// x-amz-bypass-governance-retention (PutObjectRetention), a right S3 keeps
// behind its own permission (s3:BypassGovernanceRetention) but which every
// s3seal write credential gets through s3seal's backend credential.
// Expected: AccessDenied for non-admins, as for ?lifecycle or ?policy.
func TestReviewI10aNonAdminIrreversibleLockConfig(t *testing.T) {
	fw := &fakeForwarder{body: "<ObjectLockConfiguration/>"}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	ctx := context.Background()
	user := sdkClient(srv.URL, "user", "us")
	_, err := user.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String("bkt"),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeCompliance, Years: aws.Int32(100)}}}})
	if got, n := fw.last(); err == nil && n > 0 {
		t.Errorf("EXPECTED a non-admin's 100-year COMPLIANCE default retention to be refused; it was forwarded: %s %s?%s %s",
			got.Method, got.Bucket, got.Query.Encode(), got.Body)
	}
	until := time.Now().Add(time.Hour)
	_, err = user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		BypassGovernanceRetention: aws.Bool(true),
		Retention:                 &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	if got, _ := fw.last(); err == nil && got.Header.Get("X-Amz-Bypass-Governance-Retention") == "true" {
		t.Errorf("EXPECTED x-amz-bypass-governance-retention from a non-admin to be refused; it was forwarded with s3seal's backend credential")
	}
}

// FINDING (low, doc overclaim; fixed; this test now guards it): DESIGN.md says forwarded
// answers are checked "so nothing else the backend might say (or hold)
// leaks through", but checkAnswer only looks at the root element's name
// and the body is then relayed byte for byte: a backend can append any
// element (here a stand-in for another object's ciphertext) or a DOCTYPE
// inside a <Tagging> answer and the client receives it.
func TestReviewI10aForwardAnswerRelayedUnfiltered(t *testing.T) {
	smuggled := `<!DOCTYPE Tagging [<!ENTITY a "aaaaaaaa">]><Tagging><TagSet/><Smuggled>U0VBTEVEIENJUEhFUlRFWFQ=</Smuggled></Tagging>`
	fw := &fakeForwarder{body: smuggled}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerWith(t, Config{Credentials: creds, Forwarder: fw})
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/bkt/k?tagging", nil)
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", empty)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "user", SecretAccessKey: "us"},
		req, empty, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	if err == nil && strings.Contains(string(raw), "Smuggled") {
		t.Errorf("EXPECTED only the Tagging document to reach the client; it received the backend's extra content verbatim: %s", raw)
	}
}
