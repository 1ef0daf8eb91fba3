package s3api

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestObjectRecordNotInheritedByOlderVersion: in a versioned bucket, the
// ACL record a writer's version left (owner: the writer) does not pass to
// the older version that becomes current when the writer's version is
// deleted by id: the bucket owner's object stays out of the writer's
// reach.
func TestObjectRecordNotInheritedByOlderVersion(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCredsAliceAdmin()})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	// Bob may write (WRITE on the bucket), not read.
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
	// And delete versions by id (s3:DeleteObjectVersion, by the policy).
	allowBobVersionDeletes(t, alice, "bkt")
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's secret")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Fatalf("bob reading alice's object before: %v, want AccessDenied", err)
	}
	for _, batch := range []bool{false, true} {
		put, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")})
		if err != nil {
			t.Fatal(err)
		}
		if batch {
			_, err = bob.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
				Objects: []types.ObjectIdentifier{{Key: k, VersionId: put.VersionId}}}})
		} else {
			_, err = bob.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: put.VersionId})
		}
		if err != nil {
			t.Fatal(err)
		}
		out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
		if err == nil {
			body, _ := io.ReadAll(out.Body)
			t.Errorf("bob reading alice's object after deleting his own version (DeleteObjects %v): %q", batch, body)
		} else if errCode(err) != "AccessDenied" {
			t.Errorf("bob reading alice's object after (DeleteObjects %v): %v, want AccessDenied", batch, err)
		}
	}
}

// TestPutObjectAclKeepsVersionOwner: bob's version made current again
// (alice's newer version deleted by id) is still his: his PutObjectAcl
// on it, naming its version id, is decided and applied by the record
// kept for its content, and he stays its owner.
func TestPutObjectAclKeepsVersionOwner(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCredsAliceAdmin()})
	ctx := context.Background()
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	createBucketBobWrites(t, alice, "bkt")
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	v2, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: v2.VersionId}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: v1.VersionId}); err != nil {
		t.Fatalf("bob reading his version by id: %v", err)
	}
	if _, err := bob.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k, VersionId: v1.VersionId, ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatalf("bob's PutObjectAcl on his version: %v", err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: v1.VersionId}); err != nil {
		t.Errorf("bob reading his version after his own PutObjectAcl: %v", err)
	}
	acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k, VersionId: v1.VersionId})
	if err != nil || aws.ToString(acl.Owner.ID) != "b0b" {
		t.Errorf("owner of bob's version after his PutObjectAcl: %+v, %v; want b0b", acl, err)
	}
}
