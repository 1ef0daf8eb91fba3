package e2e

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Object Lock, tags and bucket documents on the embedded default, with
// the Go SDK: the embedded store keeps them (across a restart) and holds
// the lock against s3seal itself, so a locked object is not deleted.
func TestEmbeddedLockTagsSDK(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
	}})
	opts := sealOpts{CredentialsFile: creds, DataDir: filepath.Join(dir, "data")}
	p := startS3seal(t, opts)
	c := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, c, *b)
	_, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1), Years: aws.Int32(1)}}}})
	wantStatus(t, "Days and Years", err, 400, "MalformedXML")
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("backup"), Body: strings.NewReader("precious"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until, Tagging: aws.String("tier=gold&kind=db")}); err != nil {
		t.Fatal(err)
	}
	putObj(t, c, "vault", "plain", []byte("default retention"))
	// A multipart upload carries its tags and legal hold to completion.
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn, Tagging: aws.String("a=1")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	// A copy keeps the source's tags (COPY) or takes the header (REPLACE).
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("vault/backup")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy2"), CopySource: aws.String("vault/backup"),
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("x=y")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(`{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:DeleteObject","Resource":"arn:aws:s3:::vault/*"}]}`)}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: b})
	wantStatus(t, "GetBucketCors of none", err, 404, "NoSuchCORSConfiguration")

	// Everything holds after a restart.
	p.Stop()
	p = startS3seal(t, opts)
	c = newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	head := func(key string) *s3.HeadObjectOutput {
		t.Helper()
		h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(key)})
		if err != nil {
			t.Fatalf("HEAD %s: %v", key, err)
		}
		return h
	}
	if h := head("backup"); aws.ToInt32(h.TagCount) != 2 || h.ObjectLockMode != types.ObjectLockModeCompliance || !aws.ToTime(h.ObjectLockRetainUntilDate).Equal(until) {
		t.Errorf("HEAD backup: tags %v, lock %s until %v", h.TagCount, h.ObjectLockMode, h.ObjectLockRetainUntilDate)
	}
	if h := head("plain"); h.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Errorf("default retention: %s", h.ObjectLockMode)
	}
	if h := head("mp"); h.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn || aws.ToInt32(h.TagCount) != 1 {
		t.Errorf("multipart: hold %s, tags %v", h.ObjectLockLegalHoldStatus, h.TagCount)
	}
	for key, want := range map[string]string{"copy": "kind", "copy2": "x"} {
		tags, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String(key)})
		found := false
		for _, tg := range tags.TagSet {
			found = found || aws.ToString(tg.Key) == want
		}
		if err != nil || !found {
			t.Errorf("tags of %s: %+v, %v (want a tag %s)", key, tags, err, want)
		}
	}
	pol, err := c.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
	if err != nil || !strings.Contains(aws.ToString(pol.Policy), "2012-10-17") {
		t.Errorf("policy after a restart: %v, %v", pol, err)
	}
	ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || ret.Retention.Mode != types.ObjectLockRetentionModeCompliance {
		t.Errorf("GetObjectRetention: %v, %v", ret, err)
	}
	_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("backup"), BypassGovernanceRetention: aws.Bool(true),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	wantStatus(t, "COMPLIANCE to GOVERNANCE", err, 403, "AccessDenied")

	// The locked objects are not deleted, by version or by DeleteObjects.
	for _, key := range []string{"backup", "mp"} {
		in := &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), BypassGovernanceRetention: aws.Bool(true)}
		if vid := aws.ToString(head(key).VersionId); vid != "" {
			in.VersionId = &vid
		}
		_, err := c.DeleteObject(ctx, in)
		if code, _ := apiCode(err); code != "AccessDenied" {
			t.Errorf("delete of locked %s: %v, want AccessDenied", key, err)
		}
	}
	obj := types.ObjectIdentifier{Key: aws.String("backup"), VersionId: head("backup").VersionId}
	free := types.ObjectIdentifier{Key: aws.String("copy2"), VersionId: head("copy2").VersionId} // GOVERNANCE by default: the bypass frees it
	out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, BypassGovernanceRetention: aws.Bool(true), Delete: &types.Delete{Objects: []types.ObjectIdentifier{obj, free}}})
	if err != nil || len(out.Errors) != 1 || aws.ToString(out.Errors[0].Code) != "AccessDenied" || aws.ToString(out.Errors[0].Key) != "backup" || len(out.Deleted) != 1 {
		t.Errorf("DeleteObjects of a locked and a free version: %+v, %v", out, err)
	}
	if got := string(getObj(t, c, "vault", "backup")); got != "precious" {
		t.Fatalf("read back %q", got)
	}
	mp, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Body.Close()
	if got, _ := io.ReadAll(mp.Body); string(got) != "part" {
		t.Fatalf("multipart read back %q", got)
	}
}
