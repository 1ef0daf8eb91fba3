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

// TestObjectACLIsPerVersion: in a versioned bucket, an ACL given to one
// version of a key is that version's alone, as in S3: a later version
// written public-read does not open the earlier private one, a
// PutObjectAcl naming an old version opens that version and not the
// current one, and deleting the current version by id does not hand its
// ACL to the version that becomes current.
func TestObjectACLIsPerVersion(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	v1, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("secret")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("public"),
		ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: v1.VersionId}); errCode(err) != "AccessDenied" {
		body := ""
		if err == nil {
			d, _ := io.ReadAll(out.Body)
			body = string(d)
		}
		t.Errorf("another account's GetObject of the private first version: %v (body %q), want AccessDenied", err, body)
	}

	// An ACL put on the old version leaves the current one as it was.
	k2 := aws.String("k2")
	w1, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k2, Body: strings.NewReader("old")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k2, Body: strings.NewReader("current secret")}); err != nil {
		t.Fatal(err)
	}
	// The ACL is the old version's alone.
	if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k2, VersionId: w1.VersionId,
		ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatalf("PutObjectAcl on an old version: %v", err)
	}
	if out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k2}); errCode(err) != "AccessDenied" {
		body := ""
		if err == nil {
			d, _ := io.ReadAll(out.Body)
			body = string(d)
		}
		t.Errorf("another account's GetObject of the current version after PutObjectAcl on an old one: %v (body %q), want AccessDenied", err, body)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k2, VersionId: w1.VersionId}); err != nil {
		t.Errorf("another account's GetObject of the old version its ACL opens: %v", err)
	}
	if acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k2, VersionId: w1.VersionId}); err != nil || len(acl.Grants) != 2 {
		t.Errorf("GetObjectAcl of the old version: %+v, %v; want its public-read grants", acl, err)
	}
	if acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k2}); err != nil || len(acl.Grants) != 1 {
		t.Errorf("GetObjectAcl of the current object: %+v, %v; want the owner's grant alone", acl, err)
	}

	// An ACL put on the current object, without a version id, is that
	// version's too: a read naming its id finds it.
	cur, err := alice.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: k2, ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatalf("PutObjectAcl on the current object: %v", err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k2, VersionId: cur.VersionId}); err != nil {
		t.Errorf("another account's GetObject of the current version by id, opened without an id: %v", err)
	}
	if acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k2, VersionId: cur.VersionId}); err != nil || len(acl.Grants) != 2 {
		t.Errorf("GetObjectAcl of the current version by id: %+v, %v; want its public-read grants", acl, err)
	}

	// The current object's ACL goes with it when it is deleted by id: the
	// version that becomes current does not inherit it.
	k3 := aws.String("k3")
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k3, Body: strings.NewReader("private")}); err != nil {
		t.Fatal(err)
	}
	x2, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k3, Body: strings.NewReader("public"), ACL: types.ObjectCannedACLPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k3}); err != nil {
		t.Fatalf("another account's GetObject of the public current version: %v", err)
	}
	if _, err := alice.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k3, VersionId: x2.VersionId}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k3}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's GetObject of the private version made current by deleting the public one: %v, want AccessDenied", err)
	}
	// Likewise through DeleteObjects.
	x3, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k3, Body: strings.NewReader("public"), ACL: types.ObjectCannedACLPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{
		Objects: []types.ObjectIdentifier{{Key: k3, VersionId: x3.VersionId}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k3}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's GetObject after DeleteObjects took the public current version: %v, want AccessDenied", err)
	}
}

// TestWritersACLDecidesReadsOfItsVersion: the ACL a write gives its
// object decides reads of that version by id too, as in S3, and keeps
// deciding them once another write replaced the key: bob, writing into
// alice's versioned bucket, reads his own version by id, before and
// after alice's overwrite, and reads nothing of hers.
func TestWritersACLDecidesReadsOfItsVersion(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("shared"), aws.String("bobs")
	createBucketBobWrites(t, alice, "shared")
	if _, err := alice.PutBucketVersioning(ctx, &s3.PutBucketVersioningInput{Bucket: b,
		VersioningConfiguration: &types.VersioningConfiguration{Status: types.BucketVersioningStatusEnabled}}); err != nil {
		t.Fatal(err)
	}
	mine, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("bob's")})
	if err != nil {
		t.Fatal(err)
	}
	read := func(vid *string) error {
		out, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k, VersionId: vid})
		if err == nil {
			out.Body.Close()
		}
		if err == nil {
			_, err = bob.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: vid})
		}
		return err
	}
	if err := read(mine.VersionId); err != nil {
		t.Errorf("bob reading his own version by id: %v", err)
	}
	hers, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("alice's")})
	if err != nil {
		t.Fatal(err)
	}
	if err := read(mine.VersionId); err != nil {
		t.Errorf("bob reading his own version by id after alice's overwrite: %v", err)
	}
	if err := read(hers.VersionId); errCode(err) != "AccessDenied" {
		t.Errorf("bob reading alice's version by id: %v, want AccessDenied", err)
	}
	if err := read(nil); errCode(err) != "AccessDenied" {
		t.Errorf("bob reading alice's current object: %v, want AccessDenied", err)
	}
}
