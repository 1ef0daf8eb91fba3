package s3api

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Forwarded answers are re-encoded from what s3seal decoded: a lifecycle
// configuration keeps every element of its rules, as a client reads them;
// extra content is gone. (ACLs, kept by s3seal since issue 22, are not
// forwarded.)
func TestForwardedAnswersReencoded(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	c := sdkClient(srv.URL, "admin", "as")
	fw.body = `<LifecycleConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><!-- c --><Rule><ID>r</ID>
<Filter><And><Prefix>logs/</Prefix><ObjectSizeGreaterThan>100</ObjectSizeGreaterThan></And></Filter><Status>Enabled</Status>
<NoncurrentVersionExpiration><NoncurrentDays>30</NoncurrentDays><NewerNoncurrentVersions>2</NewerNoncurrentVersions></NoncurrentVersionExpiration>
</Rule></LifecycleConfiguration>`
	lc, err := c.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	if len(lc.Rules) != 1 || lc.Rules[0].Filter == nil || lc.Rules[0].Filter.And == nil || aws.ToString(lc.Rules[0].Filter.And.Prefix) != "logs/" ||
		aws.ToInt64(lc.Rules[0].Filter.And.ObjectSizeGreaterThan) != 100 || lc.Rules[0].Status != types.ExpirationStatusEnabled ||
		aws.ToInt32(lc.Rules[0].NoncurrentVersionExpiration.NewerNoncurrentVersions) != 2 {
		t.Fatalf("lifecycle read back as %+v", lc.Rules)
	}
	fw.body = `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention><Mode>GOVERNANCE</Mode><Days>3</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	lk, err := c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: aws.String("bkt")})
	if err != nil || aws.ToInt32(lk.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 3 {
		t.Fatalf("lock configuration read back as %+v, %v", lk, err)
	}
}

// As s3-tests test_put_obj_with_tags: a tag set comes back ordered by key
// whatever order the store keeps (moto keeps the order written).
func TestTagSetSortedByKey(t *testing.T) {
	fw := &fakeForwarder{body: `<Tagging><TagSet><Tag><Key>foo</Key><Value>bar</Value></Tag><Tag><Key>bar</Key><Value></Value></Tag></TagSet></Tagging>`}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	c := sdkClient(srv.URL, "user", "us")
	out, err := c.GetObjectTagging(context.Background(), &s3.GetObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TagSet) != 2 || aws.ToString(out.TagSet[0].Key) != "bar" || aws.ToString(out.TagSet[0].Value) != "" ||
		aws.ToString(out.TagSet[1].Key) != "foo" {
		t.Fatalf("tag set %+v, want bar, foo", out.TagSet)
	}
}

// A forwarded answer reaches the client as the document s3seal read, so
// nothing else the backend might say (or hold) leaks through: an element
// a backend appends (here a stand-in for another object's ciphertext) or
// a DOCTYPE inside a <Tagging> answer is not relayed.
func TestForwardedAnswerKeepsOnlyTheDocument(t *testing.T) {
	smuggled := `<!DOCTYPE Tagging [<!ENTITY a "aaaaaaaa">]><Tagging><TagSet/><Smuggled>U0VBTEVEIENJUEhFUlRFWFQ=</Smuggled></Tagging>`
	fw := &fakeForwarder{body: smuggled}
	creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
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
		t.Errorf("want only the Tagging document to reach the client; it received the backend's extra content verbatim: %s", raw)
	}
}
