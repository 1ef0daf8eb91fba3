package e2e

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestLockedMultipartManifestSurvivesBackendDelete: Object Lock on a
// multipart object protects what s3seal needs to read it. A COMPLIANCE
// retention and a legal hold set through s3seal
// (PutObjectRetention/PutObjectLegalHold; the same holds for lock headers
// on CreateMultipartUpload) must lock its manifest
// (.s3seal/manifests/<oid>/<etag>) as well as the data: otherwise anyone
// with the backend account (the very party COMPLIANCE mode protects
// against) could delete the manifest version permanently while the locked
// data version stays, and the "immutable" backup would no longer read
// (InternalError, integrity) once s3seal's manifest cache is gone. The
// backend account deletes every version it can; a fresh s3seal still
// reads the object.
func TestLockedMultipartManifestSurvivesBackendDelete(t *testing.T) {
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
	mustCreateLockedBucket(t, user, *b)
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
		if key != *k && !strings.HasPrefix(key, ".s3seal/manifests/") {
			// The backup is its data and its manifest; the bucket's
			// owner document gone would make a young bucket pending
			// (SlowDown) rather than test the manifest.
			continue
		}
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
		t.Fatalf("the COMPLIANCE-locked, legally held multipart object does not stay readable: "+
			"after %d unlocked manifest version(s) were deleted, GET fails: %v", manifests, err)
	}
	got, _ := io.ReadAll(out.Body)
	out.Body.Close()
	if !bytes.Equal(got, body) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(body))
	}
}

// TestLockedMultipartCompletionRetryMoto: a retried completion sets the
// lock its manifest carries, or fails. The end-to-end form of sealstore's
// test of a locked completion retried, with the real binary. moto drops
// the lock of CreateMultipartUpload at completion, so s3seal sets it
// afterwards (PUT ?retention by version id); the store answers that PUT
// with a 500 (every time: s3seal's own backend retries absorb a single
// one). s3seal answers the completion with an error, and a retry (503
// "Please try again", as every client's retryer sends it) that goes
// through the "completed before" recovery must not answer 200 for an
// unlocked, deletable version: it fails while the store refuses the
// lock, and once the store takes it again the version is locked.
func TestLockedMultipartCompletionRetryMoto(t *testing.T) {
	var failed atomic.Int32
	var refuse atomic.Bool
	refuse.Store(true)
	store := motoBehindHandler(t, startMoto(t), func(w http.ResponseWriter, r *http.Request, forward func()) {
		if r.Method == http.MethodPut && r.URL.Query().Has("retention") && !strings.HasPrefix(r.URL.Path, "/vault/.s3seal") &&
			refuse.Load() && failed.Add(1) > 0 {
			w.WriteHeader(500)
			_, _ = w.Write([]byte(`<?xml version="1.0"?><Error><Code>InternalError</Code><Message>injected</Message></Error>`))
			return
		}
		forward()
	})
	p := startS3seal(t, sealOpts{Backend: store})
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("backup")
	mustCreateLockedBucket(t, c, *b)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k,
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	complete := func() (*s3.CompleteMultipartUploadOutput, error) {
		return c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
			MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	}
	_, err = complete()
	if err == nil {
		t.Fatal("first completion answered success though its lock step failed")
	}
	// newSDKClient has retries off; the SDK's default retryer (and the
	// aws CLI, rclone, restic) retries a 500 like this one.
	t.Logf("first completion: %v (retrying, as every client's default retryer does)", err)
	if _, err = complete(); err == nil {
		t.Fatal("retried completion answered success while the store still refuses the lock")
	}
	refuse.Store(false)
	done, err := complete()
	if err != nil {
		t.Fatalf("retried completion, the store taking the lock again: %v", err)
	}
	vid := aws.ToString(done.VersionId)
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: &vid})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("retention PUTs failed: %d; completion OK, version %s: lock mode %q until %v", failed.Load(), vid, h.ObjectLockMode, h.ObjectLockRetainUntilDate)
	if h.ObjectLockMode != types.ObjectLockModeCompliance {
		_, derr := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &vid})
		t.Fatalf("CompleteMultipartUpload answered 200 but the version has no COMPLIANCE lock; DeleteObject of it through s3seal: err=%v", derr)
	}
}

// TestDefaultRetentionLocksMultipartMoto: the completion of a multipart
// upload sets the bucket's default retention, on the manifest first. In
// front of moto, which applies a bucket's default retention (GOVERNANCE,
// 1 day here) only at PutObject and drops locks at completion, what a
// multipart upload writes must be locked as what PutObject writes is:
// otherwise every large file of a backup tool (aws s3 cp, rclone, restic
// packs over the multipart threshold) is unlocked, and a writer without
// the bypass deletes the version (aws CLI `s3 cp` of 20 MB, then
// `s3api delete-objects` as a non-admin).
func TestDefaultRetentionLocksMultipartMoto(t *testing.T) {
	m := startMoto(t)
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
		{"access_key": "writer", "secret_key": "writer-secret-key", "read": []string{"*"}, "write": []string{"*"}},
	}})
	p := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds})
	admin := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	c := newSDKClient(t, p.Endpoint, "writer", "writer-secret-key", true)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, admin, *b)
	if _, err := admin.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	single, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("small"), Body: strings.NewReader("small")})
	if err != nil {
		t.Fatal(err)
	}
	if h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("small"), VersionId: single.VersionId}); err != nil || h.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Fatalf("PutObject did not get the default retention: %v %v", h, err)
	}
	k := aws.String("pack")
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: done.VersionId})
	if err != nil {
		t.Fatal(err)
	}
	if h.ObjectLockMode != types.ObjectLockModeGovernance {
		_, derr := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: done.VersionId})
		t.Fatalf("multipart version in a bucket with default GOVERNANCE retention has lock mode %q; DeleteObject of it by a non-admin writer: err=%v", h.ObjectLockMode, derr)
	}
}

// TestLockedUploadAcrossRestartEmbedded: a multipart
// upload created with COMPLIANCE + legal hold on the embedded default,
// s3seal restarted with the same data dir before the part and the
// completion: the completed version is locked, and stays so after another
// restart.
func TestLockedUploadAcrossRestartEmbedded(t *testing.T) {
	opts := sealOpts{DataDir: filepath.Join(t.TempDir(), "d")}
	p := startS3seal(t, opts)
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("pack")
	mustCreateLockedBucket(t, c, *b)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	up, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k,
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until, ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	p = startS3seal(t, opts)
	c = newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	part, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	done, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}})
	if err != nil {
		t.Fatal(err)
	}
	p.Stop()
	p = startS3seal(t, opts)
	c = newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: done.VersionId})
	if err != nil || h.ObjectLockMode != types.ObjectLockModeCompliance || h.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn ||
		!aws.ToTime(h.ObjectLockRetainUntilDate).Equal(until) {
		t.Fatalf("after restarts: %+v %v", h, err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: done.VersionId}); err == nil {
		t.Fatal("locked version deleted")
	}
}
