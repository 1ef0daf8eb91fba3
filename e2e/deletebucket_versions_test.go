package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// emptyVersions deletes every version and delete marker of the bucket
// but those keep names, as Ceph's s3-tests clean each bucket:
// ListObjectVersions, then DeleteObjects with VersionId.
func emptyVersions(t *testing.T, c *s3.Client, bucket string, keep func(key string) bool) {
	t.Helper()
	ctx := ctxT(t)
	out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	if err != nil || aws.ToBool(out.IsTruncated) {
		t.Fatalf("ListObjectVersions: %v", err)
	}
	var ids []types.ObjectIdentifier
	for _, v := range out.Versions {
		if !keep(aws.ToString(v.Key)) {
			ids = append(ids, types.ObjectIdentifier{Key: v.Key, VersionId: v.VersionId})
		}
	}
	for _, m := range out.DeleteMarkers {
		if !keep(aws.ToString(m.Key)) {
			ids = append(ids, types.ObjectIdentifier{Key: m.Key, VersionId: m.VersionId})
		}
	}
	del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: ids}})
	if err != nil || len(del.Errors) != 0 || len(del.Deleted) != len(ids) {
		t.Fatalf("DeleteObjects of %d versions: %+v %v", len(ids), del, err)
	}
}

// TestDeleteVersionedBucket: a versioned bucket (on moto and on the
// embedded store) with a multipart
// object, overwritten and deleted (so s3seal's own deletes left versions
// and markers under .s3seal/), and an upload in progress. While an old
// version and a delete marker of a client key remain, DeleteBucket is 409
// BucketNotEmpty, the upload is left alone and the old multipart version
// still reads by id after a restart; once the client deleted every version by id, as s3-tests does,
// DeleteBucket succeeds and the name can be created again.
func TestDeleteVersionedBucket(t *testing.T) {
	t.Parallel()
	onEachStoreOpts(t, func(t *testing.T, o sealOpts) {
		const b = "versioned-drop"
		p, c := startWithBucket(t, o, mustCreateVersionedBucket, b)
		ctx := ctxT(t)
		multipart := func(key string, data []byte, complete bool) string {
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key)})
			if err != nil {
				t.Fatal(err)
			}
			up, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String(key), UploadId: cr.UploadId,
				PartNumber: aws.Int32(1), Body: bytes.NewReader(data)})
			if err != nil {
				t.Fatal(err)
			}
			if !complete {
				return aws.ToString(cr.UploadId)
			}
			out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String(key),
				UploadId: cr.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: up.ETag}}}})
			if err != nil {
				t.Fatal(err)
			}
			return aws.ToString(out.VersionId)
		}
		mpData := patternBytes(71, 100000)
		mpVersion := multipart("mp", mpData, true)
		multipart("gone", patternBytes(72, 1000), true)
		pending := multipart("pending", patternBytes(73, 1000), false)
		putObj(t, c, b, "gone", []byte("overwrites a multipart version"))
		for _, k := range []string{"mp", "gone"} {
			if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b), Key: aws.String(k)}); err != nil {
				t.Fatal(err)
			}
		}
		emptyVersions(t, c, b, func(k string) bool { return k == "mp" })

		_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(b)})
		wantStatus(t, "DeleteBucket with an old version and a delete marker left", err, http.StatusConflict, "BucketNotEmpty")
		p.Stop()
		p = startS3seal(t, sealOpts{Backend: o.Backend, DataDir: p.DataDir, Key: p.Key})
		c = sdkFor(t, p)
		if got, err := getVersion(t, c, b, "mp", mpVersion); err != nil || !bytes.Equal(got, mpData) {
			t.Fatalf("multipart version after BucketNotEmpty: %d bytes, %v", len(got), err)
		}
		if _, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: aws.String(b), Key: aws.String("pending"), UploadId: aws.String(pending)}); err != nil {
			t.Fatalf("upload after BucketNotEmpty: %v", err)
		}

		emptyVersions(t, c, b, func(string) bool { return false })
		if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatalf("DeleteBucket after every version was deleted: %v", err)
		}
		_, err = c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(b)})
		wantStatus(t, "HeadBucket after DeleteBucket", err, http.StatusNotFound, "")
		mustCreateBucket(t, c, b)
		out, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
		if err != nil || len(out.Versions)+len(out.DeleteMarkers) != 0 {
			t.Fatalf("versions in the bucket made again: %v %v", out, err)
		}
	})
}

// TestRewrapVersionedBucket runs `s3seal rewrap` on a versioned bucket:
// the current versions are rewrapped, older ones stay under the old key.
// With both keys in the keyring every version reads by id; with only the
// new key the current ones read and an older one is 500 InternalError
// (its key is not in the keyring), as docs/OPERATIONS.md says.
func TestRewrapVersionedBucket(t *testing.T) {
	t.Parallel()
	moto := startMoto(t)
	oldKey, newKey := randomKey(t), randomKey(t)
	both := writeFile(t, t.TempDir(), "both.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"old": %q, "new": %q}}`, oldKey, newKey)))
	onlyOld := writeFile(t, t.TempDir(), "old.json", []byte(fmt.Sprintf(`{"primary": "old", "keys": {"old": %q}}`, oldKey)))
	onlyNew := writeFile(t, t.TempDir(), "new.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"new": %q}}`, newKey)))

	const b = "rot-versions"
	p, c := startWithBucket(t, sealOpts{Backend: moto, KeysFile: onlyOld}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	v1, v2 := patternBytes(81, 1000), patternBytes(82, 70000)
	o1, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("obj"), Body: bytes.NewReader(v1)})
	if err != nil {
		t.Fatal(err)
	}
	putObj(t, c, b, "obj", v2)
	old := aws.ToString(o1.VersionId)
	p.Stop()

	args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", both,
		"--backend-endpoint", moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
		"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", b, "--to", "new", "--no-concurrent-writers"}
	if code, out := runS3sealExit(t, nil, args...); code != 0 {
		t.Fatalf("rewrap: exit %d\n%s", code, out)
	}

	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: both, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	c = sdkFor(t, p)
	lv, err := c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: aws.String(b)})
	if err != nil || len(lv.Versions) != 3 {
		t.Fatalf("versions after rewrap: %+v %v, want 3", lv, err)
	}
	for _, v := range lv.Versions {
		want := v2
		if aws.ToString(v.VersionId) == old {
			want = v1
		}
		if aws.ToInt64(v.Size) != int64(len(want)) || aws.ToString(v.ETag) != `"`+md5Hex(want)+`"` {
			t.Errorf("listed version %s: size %d etag %s", aws.ToString(v.VersionId), aws.ToInt64(v.Size), aws.ToString(v.ETag))
		}
		if got, err := getVersion(t, c, b, "obj", aws.ToString(v.VersionId)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("version %s with both keys: %d bytes, %v", aws.ToString(v.VersionId), len(got), err)
		}
	}
	p.Stop()

	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: onlyNew, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	c = sdkFor(t, p)
	if got := getObj(t, c, b, "obj"); !bytes.Equal(got, v2) {
		t.Fatal("current version with only the new key differs")
	}
	_, err = getVersion(t, c, b, "obj", old)
	wantStatus(t, "GET of the version older than the rewrap, old key dropped", err, http.StatusInternalServerError, "InternalError")
}
