package e2e

// Review i10a (fresh-eye attack on the backup-grade features). The tests
// in this file PROVE findings: they FAIL against the current code on
// purpose. Each names the expected behaviour it checks.

import (
	"bytes"
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

// FINDING (fixed; this test now guards it): Object Lock on a multipart object does not
// protect what s3seal needs to read it. A COMPLIANCE retention and a legal
// hold set through s3seal (PutObjectRetention/PutObjectLegalHold; the same
// holds for lock headers on CreateMultipartUpload) lock only the backend
// object; its manifest (.s3seal/manifests/<oid>/<etag>) is written without
// any lock, so anyone with the backend account (the very party COMPLIANCE
// mode protects against) can delete the manifest version permanently while
// the locked data version stays. After that the "immutable" backup can no
// longer be read: s3seal answers InternalError (integrity) once its manifest
// cache is gone (restart).
func TestReviewI10aLockedMultipartManifestUnlocked(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "user", "secret_key": "user-secret-key", "read": []string{"*"}, "write": []string{"*"}},
	}})
	data := filepath.Join(dir, "data")
	p := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds, DataDir: data})
	user := newSDKClient(t, p.Endpoint, "user", "user-secret-key", true)
	be := motoClient(t, m)
	ctx := context.Background()
	b, k := aws.String("worm"), aws.String("backup.tar")
	if _, err := user.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	up, err := user.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	body := bytes.Repeat([]byte("backup-"), (5<<20)/7+200)
	parts := [][]byte{body[:5<<20], body[5<<20:]}
	var done []types.CompletedPart
	for i, pt := range parts {
		out, err := user.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(pt)})
		if err != nil {
			t.Fatal(err)
		}
		done = append(done, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	if _, err := user.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: done}}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	if _, err := user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: k,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &until}}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: k,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
		t.Fatal(err)
	}

	// The backend account tries to destroy the backup.
	vs, err := be.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	var manifests int
	for _, v := range vs.Versions {
		key := aws.ToString(v.Key)
		_, derr := be.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: v.Key, VersionId: v.VersionId})
		switch {
		case key == *k && derr == nil:
			t.Fatalf("the locked data version was deleted; the backend does not enforce the lock")
		case key == *k:
			t.Logf("data version %s: delete refused as it should be (%v)", aws.ToString(v.VersionId), derr)
		case strings.HasPrefix(key, ".s3seal/manifests/") && derr == nil:
			manifests++
			t.Logf("manifest version %s of the locked object deleted permanently: it carried no lock", key)
		}
	}

	// A fresh s3seal (no manifest cache) reads the locked backup.
	p.Stop()
	p2 := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds, DataDir: data, Key: p.Key})
	user2 := newSDKClient(t, p2.Endpoint, "user", "user-secret-key", true)
	out, err := user2.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatalf("EXPECTED the COMPLIANCE-locked, legally held multipart object to stay readable; "+
			"after %d unlocked manifest version(s) were deleted, GET fails: %v", manifests, err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(body))
	}
}
