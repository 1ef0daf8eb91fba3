package s3api

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// A delete that names a version is S3's s3:DeleteObjectVersion: the
// bucket owner's, or granted by a bucket policy, never by an ACL's WRITE.
// A drop-box writer (another account granted WRITE, or everyone with
// public-read-write) may add delete markers but never destroy the owner's
// version history.

// versionedBucket has alice create bucket with versioning enabled, and
// puts two versions of key "k"; it returns their ids, oldest first.
func versionedBucket(t *testing.T, alice *s3.Client, bucket string, acl types.BucketCannedACL) []string {
	t.Helper()
	ctx := context.Background()
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket, ACL: acl}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: &bucket,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, body := range []string{"one", "two"} {
		out, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: &bucket, Key: aws.String("k"), Body: strings.NewReader(body)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, aws.ToString(out.VersionId))
	}
	return ids
}

// versionsOf is the number of versions of key "k" in bucket (delete
// markers apart).
func versionsOf(t *testing.T, c *s3.Client, bucket string) int {
	t.Helper()
	out, err := c.ListObjectVersions(context.Background(), &s3.ListObjectVersionsInput{Bucket: &bucket, Prefix: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	return len(out.Versions)
}

// TestWriteGrantDeletesNoVersion: bob, granted WRITE on alice's versioned
// bucket, is refused a delete by version id through DeleteObject and
// DeleteObjects, and the versions stay; his delete without a version id
// adds a delete marker, as S3 lets him. alice deletes by id; a policy
// granting bob s3:DeleteObjectVersion lets him too.
func TestWriteGrantDeletesNoVersion(t *testing.T) {
	url := newTestServer(t, aclCredsAliceAdmin())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	ids := versionedBucket(t, alice, "bkt", "")
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: aws.String("bkt"), GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &ids[0]}); errCode(err) != "AccessDenied" {
		t.Errorf("WRITE grantee's DeleteObject of a version by id: %v, want AccessDenied", err)
	}
	out, err := bob.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: k, VersionId: &ids[0]}, {Key: k, VersionId: &ids[1]}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Deleted) != 0 || len(out.Errors) != 2 || aws.ToString(out.Errors[0].Code) != "AccessDenied" {
		t.Errorf("WRITE grantee's DeleteObjects by version id: deleted %+v, errors %+v; want two AccessDenied", out.Deleted, out.Errors)
	}
	if n := versionsOf(t, alice, "bkt"); n != 2 {
		t.Fatalf("%d versions of k left after the grantee's deletes by id, want 2", n)
	}
	for _, id := range ids {
		if _, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: aws.String(id)}); err != nil {
			t.Errorf("owner's GET of version %s after the grantee's deletes: %v", id, err)
		}
	}
	// Without a version id: a delete marker, the versions kept.
	dm, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k})
	if err != nil || !aws.ToBool(dm.DeleteMarker) {
		t.Errorf("WRITE grantee's DeleteObject without a version id: %+v, %v; want a delete marker", dm, err)
	}
	// The grantee's own version is no more his to destroy: S3 decides
	// s3:DeleteObjectVersion by the bucket, not by the writer.
	own, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: own.VersionId}); errCode(err) != "AccessDenied" {
		t.Errorf("WRITE grantee's delete of the version it wrote, by id: %v, want AccessDenied", err)
	}
	// The owner deletes by id.
	if _, err := alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &ids[0]}); err != nil {
		t.Errorf("owner's DeleteObject by version id: %v", err)
	}
	// A policy may grant it.
	allowBobVersionDeletes(t, alice, "bkt")
	if _, err := bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &ids[1]}); err != nil {
		t.Errorf("DeleteObject by version id with s3:DeleteObjectVersion granted by the policy: %v", err)
	}
}

// TestPublicWriteDeletesNoVersion: with anonymous requests served, a
// public-read-write bucket lets anyone add a delete marker but never
// delete a version by id.
func TestPublicWriteDeletesNoVersion(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCreds(), AllowAnonymous: true})
	alice := sdkClient(srv.URL, "alice", "as")
	ids := versionedBucket(t, alice, "bkt", types.BucketCannedACLPublicReadWrite)
	del := func(query string) int {
		req, _ := http.NewRequest(http.MethodDelete, srv.URL+"/bkt/k"+query, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, id := range []string{ids[0], ids[1], "null"} {
		if st := del("?versionId=" + url.QueryEscape(id)); st != http.StatusForbidden {
			t.Errorf("anonymous DELETE ?versionId=%s on a public-read-write bucket: %d, want 403", id, st)
		}
	}
	body := `<Delete><Object><Key>k</Key><VersionId>` + ids[0] + `</VersionId></Object></Delete>`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/bkt?delete", strings.NewReader(body))
	sum := md5.Sum([]byte(body))
	req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Contains(string(answer), "<Deleted>") {
		t.Errorf("anonymous DeleteObjects by version id: %d %s, want the key refused", resp.StatusCode, answer)
	}
	if n := versionsOf(t, alice, "bkt"); n != 2 {
		t.Fatalf("%d versions of k left after anonymous deletes by id, want 2", n)
	}
	if st := del(""); st != http.StatusNoContent {
		t.Errorf("anonymous DELETE without a version id on a public-read-write bucket: %d, want 204", st)
	}
}
