package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestReviewS11cRetentionDateFormats (fixed: s3seal forwards the date it
// judged, in UTC, so moto reads it). Retention dates in odd but valid RFC 3339 forms (offsets, fractions,
// year 9999), set through s3seal: afterwards the object still reads, its
// retention is reported, it cannot be shortened and a delete of the
// version is refused, all held. But s3seal forwards the client's date text
// verbatim (before the fix); moto can parse only ...Z forms when it checks the lock, so a
// delete of a version whose date has an offset is answered 503
// ServiceUnavailable "Please try again" instead of 403 AccessDenied.
func TestReviewS11cRetentionDateFormats(t *testing.T) {
	for _, store := range []string{"embedded", "moto"} {
		t.Run(store, func(t *testing.T) {
			o := sealOpts{DataDir: filepath.Join(t.TempDir(), "d")}
			if store == "moto" {
				o.Backend = startMoto(t)
			}
			p := startS3seal(t, o)
			c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
			ctx := context.Background()
			b := aws.String("vault")
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
				t.Fatal(err)
			}
			rs := newRawSigner(t, p)
			for i, date := range []string{"2099-01-01T00:00:00+02:00", "2099-01-01T00:00:00.5Z", "2099-01-01T00:00:00.123456789-11:30", "9999-12-31T23:59:59Z"} {
				key := "k" + string(rune('0'+i))
				put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("data")})
				if err != nil {
					t.Fatal(err)
				}
				vid := aws.ToString(put.VersionId)
				body := []byte(`<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>COMPLIANCE</Mode><RetainUntilDate>` + date + `</RetainUntilDate></Retention>`)
				sum := sha256.Sum256(body)
				req, _ := rs.signedPut("/vault/"+key+"?retention=&versionId="+vid, http.Header{"Content-Type": {"application/xml"}}, hex.EncodeToString(sum[:]), int64(len(body)), time.Now())
				r := rs.send(req, body)
				if r.Status != 200 {
					t.Logf("%s: PUT retention %d %s", date, r.Status, r.Body)
					continue
				}
				g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err != nil {
					t.Errorf("%s: GET after retention: %v", date, err)
				} else {
					d, _ := io.ReadAll(g.Body)
					g.Body.Close()
					t.Logf("%s: GET ok %q mode %s until %v", date, d, g.ObjectLockMode, aws.ToTime(g.ObjectLockRetainUntilDate))
				}
				ret, err := c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err != nil {
					t.Errorf("%s: GetObjectRetention: %v", date, err)
				} else {
					t.Logf("%s: retention %s %v", date, ret.Retention.Mode, aws.ToTime(ret.Retention.RetainUntilDate))
				}
				sooner := time.Now().Add(time.Hour)
				_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String(key), VersionId: &vid,
					Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &sooner}})
				if err == nil {
					t.Errorf("%s: COMPLIANCE shortened to %v", date, sooner)
				}
				_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key), VersionId: &vid})
				if err == nil {
					t.Errorf("%s: locked version deleted", date)
				} else if !strings.Contains(err.Error(), "StatusCode: 403") || !strings.Contains(err.Error(), "AccessDenied") {
					t.Errorf("%s: delete of the locked version refused with %v; want 403 AccessDenied (a 503 \"Please try again\" makes clients retry a delete that can never succeed)", date, err)
				}
			}
		})
	}
}

// TestReviewS11cDefaultRetentionCopyAndMissingMoto (fixed: s3seal answers
// 404 from its own HEAD). In front of moto with a default retention: a CopyObject's new version
// gets the default (held); a PutObjectRetention naming a version that does
// not exist should be NoSuchVersion (404) but was 503 "Please try again"
// after s3seal's retries: retentionRule's HEAD found nothing and passes
// the request on "for the store to name what is missing", and moto answers
// it with a 500.
func TestReviewS11cDefaultRetentionCopyAndMissingMoto(t *testing.T) {
	m := startMoto(t)
	creds := writeJSON(t, t.TempDir(), "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true}}})
	p := startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds})
	c := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	ctx := context.Background()
	b := aws.String("vault")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled, Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{
			Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("src"), Body: strings.NewReader("small")}); err != nil {
		t.Fatal(err)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("dst"), CopySource: aws.String("vault/src")})
	if err != nil {
		t.Fatal(err)
	}
	h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("dst"), VersionId: cp.VersionId})
	if err != nil || h.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Errorf("copy's version lock %q, %v; want the default GOVERNANCE", h.ObjectLockMode, err)
	}
	until := time.Now().Add(48 * time.Hour)
	_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("dst"), VersionId: aws.String("00000000-0000-0000-0000-000000000000"),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}})
	if err == nil || !strings.Contains(err.Error(), "StatusCode: 404") || !strings.Contains(err.Error(), "NoSuchVersion") {
		t.Errorf("PutObjectRetention of a missing version: %v; want 404 NoSuchVersion", err)
	}
}

// TestReviewS11cConditionalDeleteLocked (probe): conditional deletes
// (If-Match on DeleteObject, ETag in DeleteObjects) of a COMPLIANCE
// version whose ETag matches are refused, on both stores, and the version
// stays; a conditional delete of a missing version answers success.
func TestReviewS11cConditionalDeleteLocked(t *testing.T) {
	for _, store := range []string{"embedded", "moto"} {
		t.Run(store, func(t *testing.T) {
			o := sealOpts{DataDir: filepath.Join(t.TempDir(), "d")}
			if store == "moto" {
				o.Backend = startMoto(t)
			}
			p := startS3seal(t, o)
			c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
			ctx := context.Background()
			b, k := aws.String("vault"), aws.String("k")
			if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
				t.Fatal(err)
			}
			until := time.Now().Add(time.Hour)
			put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("data"),
				ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: put.VersionId, IfMatch: put.ETag})
			if err == nil {
				t.Errorf("conditional DeleteObject of a locked version succeeded")
			}
			out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: []types.ObjectIdentifier{
				{Key: k, VersionId: put.VersionId, ETag: put.ETag}}}})
			if err != nil || len(out.Deleted) != 0 || len(out.Errors) != 1 {
				t.Errorf("conditional DeleteObjects of a locked version: %+v %v", out, err)
			}
			if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: put.VersionId}); err != nil {
				t.Errorf("locked version gone: %v", err)
			}
			_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("missing"), IfMatch: aws.String("*")})
			t.Logf("conditional delete of a missing key: %v", err)
		})
	}
}

// TestReviewS11cLockedUploadAcrossRestartEmbedded (probe): a multipart
// upload created with COMPLIANCE + legal hold on the embedded default,
// s3seal restarted with the same data dir before the part and the
// completion: the completed version is locked, and stays so after another
// restart.
func TestReviewS11cLockedUploadAcrossRestartEmbedded(t *testing.T) {
	opts := sealOpts{DataDir: filepath.Join(t.TempDir(), "d")}
	p := startS3seal(t, opts)
	c := newSDKClient(t, p.Endpoint, p.AccessKey, p.SecretKey, true)
	ctx := context.Background()
	b, k := aws.String("vault"), aws.String("pack")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
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
