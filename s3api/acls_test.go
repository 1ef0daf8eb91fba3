package s3api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/sealstore"
)

// aclCreds are two accounts that may both reach every bucket by their
// lists, and a third whose lists reach only "other".
func aclCreds() Credentials {
	return Credentials{
		"alice": {AccessKey: "alice", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"},
			CanonicalID: "a11ce", DisplayName: "Alice", Email: "alice@example.com", Account: "111111111111"},
		"bob": {AccessKey: "bob", SecretKey: "bs", Read: []string{"*"}, Write: []string{"*"},
			CanonicalID: "b0b", DisplayName: "Bob", Email: "bob@example.com", Account: "222222222222"},
		"carol": {AccessKey: "carol", SecretKey: "cs", Read: []string{"other"}, Write: []string{"other"}, Account: "333333333333"},
	}
}

// aclCredsAliceAdmin are aclCreds with alice an admin: she may put
// bucket policies.
func aclCredsAliceAdmin() Credentials {
	c := aclCreds()
	a := c["alice"]
	a.Admin = true
	c["alice"] = a
	return c
}

// allowBobVersionDeletes has alice (aclCredsAliceAdmin) grant bob, by
// bucket's policy, s3:DeleteObjectVersion, which no ACL grant gives.
func allowBobVersionDeletes(t *testing.T, alice *s3.Client, bucket string) {
	t.Helper()
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::222222222222:root"},` +
		`"Action":"s3:DeleteObjectVersion","Resource":"arn:aws:s3:::` + bucket + `/*"}]}`
	if _, err := alice.PutBucketPolicy(context.Background(), &s3.PutBucketPolicyInput{Bucket: &bucket, Policy: &policy}); err != nil {
		t.Fatal(err)
	}
}

// createBucketBobWrites has alice (aclCreds) create bucket and grant bob
// WRITE on it, keeping her own FULL_CONTROL.
func createBucketBobWrites(t *testing.T, alice *s3.Client, bucket string) {
	t.Helper()
	ctx := context.Background()
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &bucket}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: &bucket, GrantWrite: aws.String(`id="b0b"`),
		GrantFullControl: aws.String(`id="a11ce"`)}); err != nil {
		t.Fatal(err)
	}
}

func errCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// recordCounter counts the store requests for object records.
type recordCounter struct {
	backend.Store
	n atomic.Int64
}

func (c *recordCounter) note(key string) {
	if strings.HasPrefix(key, sealstore.ObjectRecordPrefix) {
		c.n.Add(1)
	}
}

func (c *recordCounter) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	c.note(in.Key)
	return c.Store.GetObject(ctx, in)
}

func (c *recordCounter) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	c.note(in.Key)
	return c.Store.PutObject(ctx, in)
}

func (c *recordCounter) DeleteObject(ctx context.Context, bucket, key string) error {
	c.note(key)
	return c.Store.DeleteObject(ctx, bucket, key)
}

// TestBucketOwnerDecides: the creator of a bucket owns it; another
// account the lists allow is refused its objects and listing, and
// CreateBucket tells the two apart (200 for the owner in us-east-1,
// BucketAlreadyExists for another).
func TestBucketOwnerDecides(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("k")}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's GetObject: %v, want AccessDenied", err)
	}
	if _, err := bob.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's ListObjectsV2: %v, want AccessDenied", err)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k2"), Body: strings.NewReader("x")}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's PutObject: %v, want AccessDenied", err)
	}
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Errorf("owner re-creates in us-east-1: %v, want 200 as AWS answers there", err)
	}
	if _, err := bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); errCode(err) != "BucketAlreadyExists" {
		t.Errorf("another creates: %v, want BucketAlreadyExists", err)
	}
	out, err := alice.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, FetchOwner: aws.Bool(true)})
	if err != nil || len(out.Contents) != 1 || aws.ToString(out.Contents[0].Owner.ID) != "a11ce" || aws.ToString(out.Contents[0].Owner.DisplayName) != "Alice" {
		t.Errorf("owner's listing: %+v, %v; want the object owned by a11ce (Alice)", out, err)
	}
	lb, err := bob.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || aws.ToString(lb.Owner.ID) != "b0b" || aws.ToString(lb.Owner.DisplayName) != "Bob" {
		t.Errorf("ListBuckets owner: %+v, %v; want b0b (Bob)", lb.Owner, err)
	}
}

// TestCredentialsWithoutAccountShareBuckets: credentials that name no
// account are the deployment's one account, each the owner of the
// buckets any of them made within its own lists (as before s3seal kept
// owners); a key that replaces another keeps its buckets. One that names
// an account of its own is another owner.
func TestCredentialsWithoutAccountShareBuckets(t *testing.T) {
	creds := Credentials{
		"old":   {AccessKey: "old", SecretKey: "os", Read: []string{"*"}, Write: []string{"*"}},
		"new":   {AccessKey: "new", SecretKey: "ns", Read: []string{"*"}, Write: []string{"*"}},
		"other": {AccessKey: "other", SecretKey: "xs", Read: []string{"*"}, Write: []string{"*"}, Account: "444444444444"},
	}
	url := newTestServer(t, creds)
	ctx := context.Background()
	old, repl, other := sdkClient(url, "old", "os"), sdkClient(url, "new", "ns"), sdkClient(url, "other", "xs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := old.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := old.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := repl.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err != nil {
		t.Errorf("a credential of the same (default) account: %v, want its object", err)
	}
	if _, err := repl.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPrivate}); err != nil {
		t.Errorf("a credential of the same account acts as the owner: PutBucketAcl %v", err)
	}
	if _, err := other.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Errorf("a credential of another account: %v, want AccessDenied", err)
	}
}

// TestBucketACLGrants: a bucket's ACL, kept by s3seal, grants another
// account what it names (canned on CreateBucket, by header, by e-mail),
// shows every grantee field, and never reaches past the lists.
func TestBucketACLGrants(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob, carol := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs"), sdkClient(url, "carol", "cs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	acl, err := alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	// S3's order: the groups' grants, then the owner's.
	if aws.ToString(acl.Owner.ID) != "a11ce" || len(acl.Grants) != 3 || aws.ToString(acl.Grants[2].Grantee.DisplayName) != "Alice" ||
		aws.ToString(acl.Grants[0].Grantee.URI) != groupAllUsers || acl.Grants[1].Permission != types.PermissionWrite {
		t.Errorf("public-read-write ACL: owner %+v grants %+v", acl.Owner, acl.Grants)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("WRITE to all users, another account's PutObject: %v", err)
	}
	if _, err := bob.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b}); err != nil {
		t.Errorf("READ to all users, another account's ListObjects: %v", err)
	}
	if _, err := carol.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b}); errCode(err) != "AccessDenied" {
		t.Errorf("a credential whose lists do not reach the bucket: %v, want AccessDenied whatever the ACL", err)
	}
	// The object bob wrote is bob's: its ACL names him, alice may read it
	// as the bucket's owner, and its listing shows him.
	oacl, err := bob.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: aws.String("k")})
	if err != nil || aws.ToString(oacl.Owner.ID) != "b0b" {
		t.Errorf("object ACL of bob's object: %+v, %v", oacl, err)
	}
	v1, err := alice.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b})
	if err != nil || len(v1.Contents) != 1 || aws.ToString(v1.Contents[0].Owner.ID) != "b0b" {
		t.Errorf("listing of bob's object: %+v, %v; want owner b0b", v1, err)
	}
	// Grants by header and by e-mail address.
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantRead: aws.String(`emailAddress="bob@example.com"`)}); err != nil {
		t.Fatal(err)
	}
	acl, err = alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	if err != nil || len(acl.Grants) != 1 || aws.ToString(acl.Grants[0].Grantee.ID) != "b0b" || aws.ToString(acl.Grants[0].Grantee.DisplayName) != "Bob" {
		t.Errorf("grant by e-mail: %+v, %v; want READ to b0b (Bob)", acl, err)
	}
	if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k2"), Body: strings.NewReader("x")}); errCode(err) != "AccessDenied" {
		t.Errorf("READ only, another account's PutObject: %v, want AccessDenied", err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantRead: aws.String(`emailAddress="nobody@example.com"`)}); errCode(err) != "UnresolvableGrantByEmailAddress" {
		t.Errorf("grant to an unknown e-mail: %v, want UnresolvableGrantByEmailAddress", err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantRead: aws.String(`id="_foo"`)}); errCode(err) != "InvalidArgument" {
		t.Errorf("grant to an unknown id: %v, want InvalidArgument", err)
	}
	if _, err := bob.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPrivate}); errCode(err) != "AccessDenied" {
		t.Errorf("another account's PutBucketAcl without WRITE_ACP: %v, want AccessDenied", err)
	}
}

// TestObjectACLCostsNothingByDefault: in a bucket whose owner writes
// objects with the default ACL, no request goes to object records; a
// public-read object gets one, and anonymous requests (when served) read
// it while a private object stays refused.
func TestObjectACLCostsNothingByDefault(t *testing.T) {
	var rc *recordCounter
	srv := newTestServerOver(t, Config{Credentials: aclCreds(), AllowAnonymous: true}, func(s backend.Store) backend.Store {
		rc = &recordCounter{Store: s}
		return rc
	})
	ctx := context.Background()
	alice := sdkClient(srv.URL, "alice", "as")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
		if _, err := alice.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String(k)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := rc.n.Load(); n != 0 {
		t.Errorf("%d store requests for object records in a bucket of default ACLs, want 0", n)
	}
	get := func(key string) int {
		resp, err := http.Get(srv.URL + "/bkt/" + key)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := get("a"); st != http.StatusForbidden {
		t.Errorf("anonymous GET of a private object: %d, want 403", st)
	}
	if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: aws.String("a"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if st := get("a"); st != http.StatusOK {
		t.Errorf("anonymous GET of a public-read object: %d, want 200", st)
	}
	if st := get("b"); st != http.StatusForbidden {
		t.Errorf("anonymous GET of a private object beside a public one: %d, want 403", st)
	}
	if rc.n.Load() == 0 {
		t.Errorf("no object record kept for a public-read object")
	}
	// Back to private: the record goes.
	if _, err := alice.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: aws.String("a"), ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatal(err)
	}
	if st := get("a"); st != http.StatusForbidden {
		t.Errorf("anonymous GET once private again: %d, want 403", st)
	}
}

// TestAnonymousOffByDefault: without AllowAnonymous, an unsigned request
// is refused even where the bucket's ACL grants everyone.
func TestAnonymousOffByDefault(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice := sdkClient(url, "alice", "as")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/bkt")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("anonymous list of a public-read bucket, anonymous off: %d, want 403", resp.StatusCode)
	}
}

// TestPublicAccessBlock: kept per bucket; BlockPublicAcls refuses a
// public ACL, IgnorePublicAcls makes one grant nothing.
func TestPublicAccessBlock(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCreds(), AllowAnonymous: true})
	ctx := context.Background()
	alice := sdkClient(srv.URL, "alice", "as")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ACL: types.BucketCannedACLPublicRead}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: b}); errCode(err) != "NoSuchPublicAccessBlockConfiguration" {
		t.Errorf("GetPublicAccessBlock with none: %v", err)
	}
	list := func() int {
		resp, err := http.Get(srv.URL + "/bkt")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := list(); st != http.StatusOK {
		t.Errorf("anonymous list of a public-read bucket: %d", st)
	}
	_, err := alice.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: b, PublicAccessBlockConfiguration: &types.PublicAccessBlockConfiguration{
		BlockPublicAcls: aws.Bool(true), IgnorePublicAcls: aws.Bool(true)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := alice.GetPublicAccessBlock(ctx, &s3.GetPublicAccessBlockInput{Bucket: b})
	if err != nil || !aws.ToBool(got.PublicAccessBlockConfiguration.BlockPublicAcls) || aws.ToBool(got.PublicAccessBlockConfiguration.BlockPublicPolicy) {
		t.Errorf("GetPublicAccessBlock: %+v, %v", got, err)
	}
	if st := list(); st != http.StatusForbidden {
		t.Errorf("anonymous list with IgnorePublicAcls: %d, want 403", st)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicReadWrite}); errCode(err) != "AccessDenied" {
		t.Errorf("public ACL with BlockPublicAcls: %v, want AccessDenied", err)
	}
	if _, err := alice.DeletePublicAccessBlock(ctx, &s3.DeletePublicAccessBlockInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if st := list(); st != http.StatusOK {
		t.Errorf("anonymous list once the block is gone: %d", st)
	}
}

// TestCredentialPrincipalsUnique: two credentials may not share a
// canonical id or an e-mail address.
func TestCredentialPrincipalsUnique(t *testing.T) {
	for _, doc := range []string{
		`{"credentials": [{"access_key": "a", "secret_key": "s", "canonical_id": "x"}, {"access_key": "b", "secret_key": "s", "canonical_id": "x"}]}`,
		`{"credentials": [{"access_key": "a", "secret_key": "s", "email": "x@y"}, {"access_key": "b", "secret_key": "s", "email": "X@y"}]}`,
		`{"credentials": [{"access_key": "a", "secret_key": "s", "canonical_id": "a b"}]}`,
		`{"credentials": [{"access_key": "a", "secret_key": "s", "account": "12"}]}`,
	} {
		if _, err := ParseCredentials([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", doc)
		}
	}
}

// TestMultipartUploadACL: the ACL given at CreateMultipartUpload is the
// completed object's.
func TestMultipartUploadACL(t *testing.T) {
	srv := newTestServerWith(t, Config{Credentials: aclCreds(), AllowAnonymous: true})
	ctx := context.Background()
	alice := sdkClient(srv.URL, "alice", "as")
	b, k := aws.String("bkt"), aws.String("mp")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	up, err := alice.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: k, ACL: types.ObjectCannedACLPublicRead})
	if err != nil {
		t.Fatal(err)
	}
	part, err := alice.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: k, UploadId: up.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("data")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: k, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{ETag: part.ETag, PartNumber: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	acl, err := alice.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: k})
	if err != nil || len(acl.Grants) != 2 || aws.ToString(acl.Grants[0].Grantee.URI) != groupAllUsers {
		t.Errorf("the completed object's ACL: %+v, %v; want public-read", acl, err)
	}
	resp, err := http.Get(srv.URL + "/bkt/mp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("anonymous GET of a public-read multipart object: %d", resp.StatusCode)
	}
}

// TestOwnershipControlsKept: ownership controls are s3seal's; with
// BucketOwnerEnforced a write takes no ACL but bucket-owner-full-control
// and the bucket's owner owns what another account writes; with
// BucketOwnerPreferred, bucket-owner-full-control hands the object over.
// A multipart upload lists its initiator.
func TestOwnershipControlsKept(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}); err != nil {
		t.Fatal(err)
	}
	oc, err := alice.GetBucketOwnershipControls(ctx, &s3.GetBucketOwnershipControlsInput{Bucket: b})
	if err != nil || oc.OwnershipControls.Rules[0].ObjectOwnership != types.ObjectOwnershipBucketOwnerEnforced {
		t.Fatalf("ownership controls: %+v, %v", oc, err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, GrantWrite: aws.String(`id="b0b"`)}); errCode(err) != "AccessControlListNotSupported" {
		t.Errorf("PutBucketAcl granting another, enforced: %v", err)
	}
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("k"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPrivate}); errCode(err) != "AccessControlListNotSupported" {
		t.Errorf("PutObject with ACL private, enforced: %v", err)
	}
	if _, err := alice.DeleteBucketOwnershipControls(ctx, &s3.DeleteBucketOwnershipControlsInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, ACL: types.BucketCannedACLPublicReadWrite}); err != nil {
		t.Fatal(err)
	}
	_, err = alice.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: b, OwnershipControls: &types.OwnershipControls{
		Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerEnforced}}}})
	if errCode(err) != "InvalidBucketAclWithObjectOwnership" {
		t.Errorf("enforcing ownership over a public ACL: %v", err)
	}
	_, err = alice.PutBucketOwnershipControls(ctx, &s3.PutBucketOwnershipControlsInput{Bucket: b, OwnershipControls: &types.OwnershipControls{
		Rules: []types.OwnershipControlsRule{{ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred}}}})
	if err != nil {
		t.Fatal(err)
	}
	for key, acl := range map[string]types.ObjectCannedACL{"mine": "", "theirs": types.ObjectCannedACLBucketOwnerFullControl} {
		if _, err := bob.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(key), Body: strings.NewReader("x"), ACL: acl}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"mine": "b0b", "theirs": "a11ce"}
	v1, err := alice.ListObjects(ctx, &s3.ListObjectsInput{Bucket: b})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range v1.Contents {
		if got := aws.ToString(o.Owner.ID); got != want[aws.ToString(o.Key)] {
			t.Errorf("%s owned by %s, want %s", aws.ToString(o.Key), got, want[aws.ToString(o.Key)])
		}
	}
	if _, err := bob.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("up")}); err != nil {
		t.Fatal(err)
	}
	ups, err := alice.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(ups.Uploads) != 1 || aws.ToString(ups.Uploads[0].Initiator.ID) != "b0b" || aws.ToString(ups.Uploads[0].Owner.DisplayName) != "Bob" {
		t.Errorf("upload listing: %+v, %v; want bob's upload", ups, err)
	}
}

// oneAccount puts every credential of creds in one account: S3's IAM
// users of the account that owns the buckets, decided by their own
// permissions (here, their lists), as every credential was before buckets
// had owners.
func oneAccount(creds Credentials) Credentials {
	for k, c := range creds {
		c.Account = "111111111111"
		creds[k] = c
	}
	return creds
}

// recreateOK answers a CreateBucket of an existing bucket with success,
// as moto and AWS in us-east-1 do.
type recreateOK struct{ backend.Store }

func (r recreateOK) CreateBucket(ctx context.Context, bucket string) error {
	if err := r.Store.CreateBucket(ctx, bucket); err != nil && r.Store.HeadBucket(ctx, bucket) != nil {
		return err
	}
	return nil
}

// TestOwnerlessBucketNotClaimed: a bucket without an owner document (made
// before owners, or by another client of the store) is decided by the
// lists alone, and a CreateBucket of it does not make its caller the
// owner.
func TestOwnerlessBucketNotClaimed(t *testing.T) {
	var be backend.Store
	srv := newTestServerOver(t, Config{Credentials: aclCreds()}, func(s backend.Store) backend.Store { be = s; return recreateOK{s} })
	ctx := context.Background()
	if err := be.CreateBucket(ctx, "legacy"); err != nil {
		t.Fatal(err)
	}
	alice, bob := sdkClient(srv.URL, "alice", "as"), sdkClient(srv.URL, "bob", "bs")
	_, _ = bob.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("legacy")})
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("legacy"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("a credential the lists allow, in an ownerless bucket another re-created: %v", err)
	}
	if _, err := bob.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("legacy"), Key: aws.String("k")}); err != nil {
		t.Errorf("another credential the lists allow: %v", err)
	}
}

// TestACLDocumentGroupsFirst: an ACL document's grants are kept with the
// group grants first, as S3 writes canned ACLs.
func TestACLDocumentGroupsFirst(t *testing.T) {
	url := newTestServer(t, aclCreds())
	ctx := context.Background()
	alice := sdkClient(url, "alice", "as")
	b := aws.String("bkt")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	_, err := alice.PutBucketAcl(ctx, &s3.PutBucketAclInput{Bucket: b, AccessControlPolicy: &types.AccessControlPolicy{
		Owner: &types.Owner{ID: aws.String("a11ce")},
		Grants: []types.Grant{
			{Grantee: &types.Grantee{Type: types.TypeCanonicalUser, ID: aws.String("a11ce")}, Permission: types.PermissionFullControl},
			{Grantee: &types.Grantee{Type: types.TypeGroup, URI: aws.String(groupAllUsers)}, Permission: types.PermissionRead},
		}}})
	if err != nil {
		t.Fatal(err)
	}
	acl, err := alice.GetBucketAcl(ctx, &s3.GetBucketAclInput{Bucket: b})
	if err != nil || len(acl.Grants) != 2 || acl.Grants[0].Grantee.Type != types.TypeGroup || aws.ToString(acl.Grants[1].Grantee.ID) != "a11ce" {
		t.Errorf("grants %+v, %v; want the group's first", acl, err)
	}
}

// TestListNamingBucketLetsIn: a credential whose lists name a bucket
// itself (the operator's grant) reaches it as the owner's account would,
// reading with its read list and writing with its write list; one that
// reaches the bucket only through "*" is decided by the owner.
func TestListNamingBucketLetsIn(t *testing.T) {
	creds := Credentials{
		"backup":  {AccessKey: "backup", SecretKey: "bs", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
		"reader":  {AccessKey: "reader", SecretKey: "rs", Read: []string{"bkt"}, Account: "555555555555"},
		"writer":  {AccessKey: "writer", SecretKey: "ws", Write: []string{"bkt"}, Account: "555555555555"},
		"someone": {AccessKey: "someone", SecretKey: "ss", Read: []string{"*"}, Write: []string{"*"}, Account: "555555555555"},
	}
	url := newTestServer(t, creds)
	ctx := context.Background()
	backup := sdkClient(url, "backup", "bs")
	b, k := aws.String("bkt"), aws.String("k")
	if _, err := backup.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := backup.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	reader, writer, someone := sdkClient(url, "reader", "rs"), sdkClient(url, "writer", "ws"), sdkClient(url, "someone", "ss")
	if _, err := reader.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); err != nil {
		t.Errorf("a reader whose list names the bucket: %v", err)
	}
	if _, err := reader.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b}); err != nil {
		t.Errorf("a reader whose list names the bucket lists: %v", err)
	}
	if _, err := reader.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("r"), Body: strings.NewReader("x")}); errCode(err) != "AccessDenied" {
		t.Errorf("a reader writes: %v, want AccessDenied", err)
	}
	if _, err := writer.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("w"), Body: strings.NewReader("x")}); err != nil {
		t.Errorf("a writer whose list names the bucket: %v", err)
	}
	if _, err := someone.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Errorf("a credential reaching the bucket through *: %v, want AccessDenied", err)
	}
	// The bucket policy's Deny still refuses a named credential.
	pol := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*","Condition":{"StringEquals":{"aws:username":"reader"}}}]}`
	if _, err := backup.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: aws.String(pol)}); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k}); errCode(err) != "AccessDenied" {
		t.Errorf("a named reader the policy denies: %v, want AccessDenied", err)
	}
}
