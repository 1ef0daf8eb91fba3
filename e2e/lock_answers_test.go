package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// wantAnswer fails unless err is the S3 error code with exactly msg and
// the HTTP status.
func wantAnswer(t *testing.T, what string, err error, status int, code, msg string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Errorf("%s: got %v, want HTTP %d %s %q", what, err, status, code, msg)
		return
	}
	_, gotStatus := apiCode(err)
	if gotStatus != status || ae.ErrorCode() != code || ae.ErrorMessage() != msg {
		t.Errorf("%s: got HTTP %d %s %q, want HTTP %d %s %q", what, gotStatus, ae.ErrorCode(), ae.ErrorMessage(), status, code, msg)
	}
}

// Object Lock's answers as AWS gives them, on both stores (versitygw's
// integration suite checks them word for word): which check comes first
// (a missing bucket before the body, a missing object before the bucket's
// lock), S3's words for the store's lock codes, an empty lock
// configuration, a legal hold never set, and a locked version's delete.
func TestLockAnswersAsAWS(t *testing.T) {
	t.Parallel()
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		dir := t.TempDir()
		o.CredentialsFile = writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
			{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
		}})
		p := startS3seal(t, o)
		c := newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
		ctx := ctxT(t)
		plain, locked := aws.String("plain"), aws.String("locked")
		mustCreateBucket(t, c, "plain")
		mustCreateLockedBucket(t, c, *locked)
		until := time.Now().Add(time.Hour)
		retention := &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &until}
		on := &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}
		missing := aws.String("missing")

		// A missing bucket is the first answer, before the (absent) body.
		_, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("nobucket"), Key: missing})
		wantStatus(t, "PutObjectRetention, no bucket", err, 404, "NoSuchBucket")
		_, err = c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String("nobucket"), Key: missing})
		wantStatus(t, "PutObjectLegalHold, no bucket", err, 404, "NoSuchBucket")

		// A missing object comes before the bucket's lock (moto answered
		// 500 for the legal hold).
		_, err = c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: plain, Key: missing})
		wantStatus(t, "GetObjectLegalHold, no object, no lock", err, 404, "NoSuchKey")
		_, err = c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: plain, Key: missing})
		wantStatus(t, "GetObjectRetention, no object, no lock", err, 404, "NoSuchKey")
		_, err = c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: locked, Key: missing, LegalHold: on})
		wantStatus(t, "PutObjectLegalHold, no object", err, 404, "NoSuchKey")
		_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: locked, Key: missing, Retention: retention})
		wantStatus(t, "PutObjectRetention, no object", err, 404, "NoSuchKey")

		// An object in a bucket without Object Lock: S3's words.
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: plain, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
		const noLock = "Bucket is missing Object Lock Configuration"
		_, err = c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: plain, Key: aws.String("k")})
		wantAnswer(t, "GetObjectLegalHold, no lock", err, 400, "InvalidRequest", noLock)
		_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: plain, Key: aws.String("k"), Retention: retention})
		wantAnswer(t, "PutObjectRetention, no lock", err, 400, "InvalidRequest", noLock)
		_, err = c.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: plain})
		wantAnswer(t, "GetObjectLockConfiguration, no lock", err, 404, "ObjectLockConfigurationNotFoundError",
			"Object Lock configuration does not exist for this bucket.")
		_, err = c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: plain})
		wantAnswer(t, "PutObjectLockConfiguration, empty body", err, 400, "MissingRequestBodyError", "Request Body is empty")

		// A multipart upload asking for a lock is judged when created, not
		// at completion (moto never judged it; s3seal keeps the lock until
		// completion).
		_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: plain, Key: aws.String("mp"),
			ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
		wantAnswer(t, "CreateMultipartUpload, lock, no lock", err, 400, "InvalidRequest", "Bucket is missing ObjectLockConfiguration")
		_, err = c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: locked, Key: aws.String("mp"),
			ObjectLockMode: types.ObjectLockModeGovernance})
		wantAnswer(t, "CreateMultipartUpload, mode without date", err, 400, "InvalidArgument",
			"x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied.")
		mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: locked, Key: aws.String("mp"),
			ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn})
		if err != nil {
			t.Fatalf("CreateMultipartUpload, lock, locked bucket: %v", err)
		}
		if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: locked, Key: aws.String("mp"), UploadId: mp.UploadId}); err != nil {
			t.Fatal(err)
		}

		// A version without retention or legal hold.
		put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: locked, Key: aws.String("k"), Body: strings.NewReader("x")})
		if err != nil {
			t.Fatal(err)
		}
		const noConfig = "The specified object does not have a ObjectLock configuration."
		_, err = c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: locked, Key: aws.String("k")})
		wantAnswer(t, "GetObjectLegalHold, never set", err, 404, "NoSuchObjectLockConfiguration", noConfig)
		_, err = c.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: locked, Key: aws.String("k")})
		wantAnswer(t, "GetObjectRetention, never set", err, 404, "NoSuchObjectLockConfiguration", noConfig)

		// An empty versionId names no version (S3's 400; moto answered 500
		// and the retention took it for the current version).
		const emptyVID = "Version id cannot be the empty string"
		_, err = c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: locked, Key: aws.String("k"), VersionId: aws.String(""), LegalHold: on})
		wantAnswer(t, "PutObjectLegalHold, empty versionId", err, 400, "InvalidArgument", emptyVID)
		_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: locked, Key: aws.String("k"), VersionId: aws.String(""), Retention: retention})
		wantAnswer(t, "PutObjectRetention, empty versionId", err, 400, "InvalidArgument", emptyVID)

		// A version under a legal hold is not deleted, in S3's words.
		if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: locked, Key: aws.String("k"), LegalHold: on}); err != nil {
			t.Fatal(err)
		}
		if lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: locked, Key: aws.String("k")}); err != nil ||
			lh.LegalHold == nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
			t.Fatalf("GetObjectLegalHold = %+v, %v", lh, err)
		}
		const protected = "Access Denied because object protected by object lock."
		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: locked, Key: aws.String("k"), VersionId: put.VersionId})
		wantAnswer(t, "DeleteObject, legal hold", err, 403, "AccessDenied", protected)
		off := &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}
		if _, err := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: locked, Key: aws.String("k"), VersionId: put.VersionId, LegalHold: off}); err != nil {
			t.Fatal(err)
		}
		if lh, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: locked, Key: aws.String("k")}); err != nil ||
			lh.LegalHold == nil || lh.LegalHold.Status != types.ObjectLockLegalHoldStatusOff {
			t.Fatalf("GetObjectLegalHold after OFF = %+v, %v", lh, err)
		}

		// A COMPLIANCE retention: extended by anyone, never shortened or
		// changed to GOVERNANCE; its version is not deleted.
		if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: locked, Key: aws.String("k"), Retention: retention}); err != nil {
			t.Fatal(err)
		}
		later := until.Add(time.Hour)
		if _, err := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: locked, Key: aws.String("k"),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeCompliance, RetainUntilDate: &later}}); err != nil {
			t.Errorf("extending a COMPLIANCE retention: %v", err)
		}
		_, err = c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: locked, Key: aws.String("k"),
			Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &later}})
		wantAnswer(t, "COMPLIANCE to GOVERNANCE", err, 403, "AccessDenied", protected)
		_, err = c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: locked, Key: aws.String("k"), VersionId: put.VersionId})
		wantAnswer(t, "DeleteObject, COMPLIANCE", err, 403, "AccessDenied", protected)
	})
}
