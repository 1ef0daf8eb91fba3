package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/internal/faultproxy"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestListingError200: a flaky store answers ListObjectVersions (and
// ListObjectsV2) with 200 and an <Error> body ("The server did not respond
// in time", as RGW does on a timeout). The client gets an error it
// retries, never a listing with no entries and IsTruncated false, which
// would tell a sync or prune tool that the bucket is empty.
func TestListingError200(t *testing.T) {
	t.Parallel()
	_, fp := motoBehindProxy(t)
	const b = "listerr200"
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	for _, k := range []string{"a", "b", "a"} {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: bytes.NewReader([]byte("x" + k))}); err != nil {
			t.Fatal(err)
		}
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.ListObjects, Fault: faultproxy.ForwardThenErrorInBody})
	lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
	if err == nil {
		t.Errorf("ListObjectVersions with the store's 200 <Error>: no error, %d versions, %d markers, truncated %v (want an error; there are 3 versions)",
			len(lv.Versions), len(lv.DeleteMarkers), aws.ToBool(lv.IsTruncated))
	}
	l2, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(b)})
	if err == nil {
		t.Errorf("ListObjectsV2 with the store's 200 <Error>: no error, %d keys, truncated %v (want an error; there are 2 keys)",
			len(l2.Contents), aws.ToBool(l2.IsTruncated))
	}
	fp.Reset()
	// DeleteObjects with version ids, the store answering 200 <Error>
	// without deleting: the client must not be told a version is gone.
	lv, err = c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
	if err != nil {
		t.Fatal(err)
	}
	var ids []types.ObjectIdentifier
	for _, v := range lv.Versions {
		ids = append(ids, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
	}
	fp.Inject(faultproxy.Rule{Op: faultproxy.DeleteObjects, Fault: faultproxy.ErrorInBody},
		faultproxy.Rule{Op: faultproxy.DeleteObject, Fault: faultproxy.ErrorInBody})
	do, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{Objects: ids}})
	if err == nil {
		t.Logf("DeleteObjects: %d deleted, %d errors", len(do.Deleted), len(do.Errors))
		if len(do.Deleted)+len(do.Errors) != len(ids) {
			t.Errorf("DeleteObjects answered for %d of %d versions", len(do.Deleted)+len(do.Errors), len(ids))
		}
		fp.Reset()
		after, _ := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		if after != nil && len(do.Deleted) > 0 && len(after.Versions) == len(ids) {
			t.Errorf("DeleteObjects reported %d versions deleted, none was (store answered 200 <Error> without doing it)", len(do.Deleted))
		}
	}
}

// TestForwardedPutError200: a flaky store answers a forwarded PUT
// ?retention, ?legal-hold or ?tagging with 200 and an <Error> body without
// doing it (RGW's "did not respond in time" on a timeout). The client gets
// an error it retries, not a success that would have a backup tool believe
// its object locked when it is not (as a Forward taking any 2xx for
// success would).
func TestForwardedPutError200(t *testing.T) {
	t.Parallel()
	_, fp := motoBehindProxy(t)
	const b = "fwderr200"
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}}, mustCreateLockedBucket, b)
	ctx := ctxT(t)
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("data"))})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(24 * time.Hour).UTC().Truncate(time.Second)
	fp.Inject(faultproxy.Rule{Op: faultproxy.PutObject, Fault: faultproxy.ErrorInBody})
	_, rerr := c.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: put.VersionId,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: aws.Time(until)}})
	_, herr := c.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: put.VersionId,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}})
	_, terr := c.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: put.VersionId,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("t"), Value: aws.String("v")}}}})
	// moto has no GetObjectRetention (it answers ?retention with an empty
	// 200): the proxy's record shows the PUTs never reached the store.
	var notForwarded int
	for _, r := range fp.Requests(faultproxy.PutObject) {
		if r.Fault == faultproxy.ErrorInBody {
			notForwarded++
		}
	}
	fp.Reset()
	if rerr == nil {
		t.Errorf("PutObjectRetention succeeded for the client; the store answered 200 <Error> and never saw it (%d PUTs not forwarded)", notForwarded)
	}
	if herr == nil {
		h, err := c.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: put.VersionId})
		if err != nil || h.LegalHold == nil || h.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
			t.Errorf("PutObjectLegalHold succeeded for the client; the store has no hold (%v, %v)", h, err)
		}
	}
	if terr == nil {
		g, err := c.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: put.VersionId})
		if err != nil || len(g.TagSet) != 1 {
			t.Errorf("PutObjectTagging succeeded for the client; the store has tags %v (%v)", g, err)
		}
	}
}

// TestDeleteVersionError200: a flaky store answers the DELETE ?versionId
// of an old multipart version with 200 and an <Error> body, without
// deleting. The client gets an error, or a success only if the
// version is gone; never a version the store still has left unreadable
// (its manifest removed by s3seal).
func TestDeleteVersionError200(t *testing.T) {
	t.Parallel()
	_, fp := motoBehindProxy(t)
	const b = "delver200"
	_, c := startWithBucket(t, sealOpts{Backend: &motoServer{Endpoint: fp.URL()}}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	data := bytes.Repeat([]byte("m"), 5<<20+10)
	cm, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, d := range [][]byte{data[:5<<20], data[5<<20:]} {
		up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cm.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(d)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{ETag: up.ETag, PartNumber: aws.Int32(int32(i + 1))})
	}
	v1, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("k"), UploadId: cm.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("k"), Body: bytes.NewReader([]byte("current"))}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		del  func() error
	}{
		{"DeleteObject", func() error {
			_, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String("k"), VersionId: v1.VersionId})
			return err
		}},
		{"DeleteObjects", func() error {
			out, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(b), Delete: &types.Delete{
				Objects: []types.ObjectIdentifier{{Key: aws.String("k"), VersionId: v1.VersionId}}}})
			if err == nil && len(out.Errors) > 0 {
				return fmt.Errorf("%s", aws.ToString(out.Errors[0].Code))
			}
			return err
		}},
	} {
		fp.Reset()
		fp.Inject(faultproxy.Rule{Op: faultproxy.DeleteObject, Attempt: 1, Fault: faultproxy.ErrorInBody},
			faultproxy.Rule{Op: faultproxy.DeleteObjects, Attempt: 1, Fault: faultproxy.ErrorInBody})
		derr := tc.del()
		t.Logf("%s: store saw DELETEs %+v, DeleteObjects %+v", tc.name, fp.Requests(faultproxy.DeleteObject), fp.Requests(faultproxy.DeleteObjects))
		fp.Reset()
		got, gerr := getVersion(t, c, b, "k", aws.ToString(v1.VersionId))
		t.Logf("%s: delete err %v; GET of the version: %d bytes, %v", tc.name, derr, len(got), gerr)
		if derr == nil && gerr == nil {
			t.Errorf("%s: reported deleted, the version is still there and readable", tc.name)
		}
		if gerr != nil && !strings.Contains(gerr.Error(), "NoSuchVersion") && !strings.Contains(gerr.Error(), "404") {
			t.Errorf("%s: the version the store still has is unreadable: %v", tc.name, gerr)
		}
		if derr == nil && gerr != nil {
			return // deleted for real
		}
	}
}
