package s3api

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/backend"
)

// fakeForwarder records forwarded requests and answers with body.
type fakeForwarder struct {
	mu   sync.Mutex
	reqs []backend.RawRequest
	body string
}

func (f *fakeForwarder) Forward(_ context.Context, in backend.RawRequest) (*backend.RawResponse, error) {
	f.mu.Lock()
	body := f.body
	f.mu.Unlock()
	if lockProbe(in) && !strings.Contains(body, "<ObjectLockConfiguration") {
		return lockEnabledAnswer(), nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reqs = append(f.reqs, in)
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{}, Body: []byte(f.body)}, nil
}

// lockProbe is s3seal's GET ?object-lock of a bucket before a retention
// or legal hold request; the fakes stand for a bucket with Object Lock
// (fakeForwarder answers it with its body when that is a configuration,
// for a client's GetObjectLockConfiguration).
func lockProbe(in backend.RawRequest) bool {
	return in.Method == http.MethodGet && in.Key == "" && in.Query.Has("object-lock")
}

func lockEnabledAnswer() *backend.RawResponse {
	return &backend.RawResponse{StatusCode: 200, Header: http.Header{},
		Body: []byte(`<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled></ObjectLockConfiguration>`)}
}

func (f *fakeForwarder) last() (backend.RawRequest, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.reqs) == 0 {
		return backend.RawRequest{}, 0
	}
	return f.reqs[len(f.reqs)-1], len(f.reqs)
}

func tagSet(n int, key func(i int) string) *types.Tagging {
	t := &types.Tagging{}
	for i := range n {
		t.TagSet = append(t.TagSet, types.Tag{Key: aws.String(key(i)), Value: aws.String("v")})
	}
	return t
}

// Lock and tag headers are checked as S3 checks them, before the body is
// stored: bad ones are S3's 400s and nothing is written.
func TestProtectionHeadersChecked(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	future, past := time.Now().Add(time.Hour), time.Now().Add(-time.Hour)
	cases := map[string]struct {
		f         func(*s3.PutObjectInput)
		code, msg string
	}{
		"bad mode":      {func(in *s3.PutObjectInput) { in.ObjectLockMode = "FOREVER"; in.ObjectLockRetainUntilDate = &future }, "InvalidArgument", "Unknown wormMode directive."},
		"mode, no date": {func(in *s3.PutObjectInput) { in.ObjectLockMode = types.ObjectLockModeGovernance }, "InvalidArgument", "must both be supplied."},
		"date, no mode": {func(in *s3.PutObjectInput) { in.ObjectLockRetainUntilDate = &future }, "InvalidArgument", "must both be supplied."},
		"date in past": {func(in *s3.PutObjectInput) {
			in.ObjectLockMode = types.ObjectLockModeCompliance
			in.ObjectLockRetainUntilDate = &past
		}, "InvalidArgument", "must be in the future"},
		"bad legal hold":  {func(in *s3.PutObjectInput) { in.ObjectLockLegalHoldStatus = "MAYBE" }, "InvalidArgument", "Legal Hold"},
		"duplicate tag":   {func(in *s3.PutObjectInput) { in.Tagging = aws.String("a=1&a=2") }, "InvalidArgument", "without tag name duplicates"},
		"11 tags":         {func(in *s3.PutObjectInput) { in.Tagging = aws.String(elevenTags()) }, "BadRequest", "greater than 10"},
		"long tag key":    {func(in *s3.PutObjectInput) { in.Tagging = aws.String(strings.Repeat("é", 129) + "=v") }, "InvalidTag", "The TagKey you have provided is invalid"},
		"long tag value":  {func(in *s3.PutObjectInput) { in.Tagging = aws.String("k=" + strings.Repeat("v", 257)) }, "InvalidTag", "The TagValue you have provided is invalid"},
		"aws: tag prefix": {func(in *s3.PutObjectInput) { in.Tagging = aws.String("aws:x=v") }, "InvalidTag", "aws:"},
	}
	for name, tc := range cases {
		in := &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("data")}
		tc.f(in)
		_, err := c.PutObject(ctx, in)
		if apiCode(err) != tc.code || httpStatus(err) != 400 || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want 400 %s (%s)", name, err, tc.code, tc.msg)
		}
	}
	// 128 characters of a key are fine (counted as characters, not bytes),
	// and reach the store, which keeps them; nothing refused was written.
	if err := get(ctx, c, "bkt", "k"); apiCode(err) != "NoSuchKey" {
		t.Fatalf("a refused PUT wrote: %v", err)
	}
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("data"),
		Tagging: aws.String(strings.Repeat("é", 128) + "=v")})
	if err != nil {
		t.Fatalf("valid tags on the embedded store: %v", err)
	}
	head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil || aws.ToInt32(head.TagCount) != 1 {
		t.Errorf("tag count on the embedded store: %v, %v", head, err)
	}
}

func elevenTags() string {
	var kv []string
	for i := range 11 {
		kv = append(kv, fmt.Sprintf("k%d=v", i))
	}
	return strings.Join(kv, "&")
}

// Sub-resources reach the backend (tags checked first, versionId passed),
// answers are checked to be the operation's document, and the bucket
// configuration is for admin credentials only.
func TestSubresourcesForwarded(t *testing.T) {
	fw := &fakeForwarder{}
	creds := Credentials{
		"user":  {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}},
		"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	srv := newTestServerFw(t, Config{Credentials: creds}, fw)
	ctx := context.Background()
	user, admin := sdkClient(srv.URL, "user", "us"), sdkClient(srv.URL, "admin", "as")

	_, err := user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k"), VersionId: aws.String("Rb_l2T8UHDkFEwCgJjhlgPOZC0qJ.vpD"),
		Tagging: tagSet(2, func(i int) string { return fmt.Sprint("k", i) })})
	if err != nil {
		t.Fatal(err)
	}
	got, n := fw.last()
	if got.Method != "PUT" || got.Key != "k" || !got.Query.Has("tagging") || got.Query.Get("versionId") != "Rb_l2T8UHDkFEwCgJjhlgPOZC0qJ.vpD" || !strings.Contains(string(got.Body), "<Key>k1</Key>") {
		t.Fatalf("forwarded %+v", got)
	}
	refused := map[string]error{}
	_, refused["11 object tags"] = user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		Tagging: tagSet(11, func(i int) string { return fmt.Sprint("k", i) })})
	_, refused["duplicate keys"] = user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		Tagging: tagSet(2, func(int) string { return "same" })})
	_, refused["51 bucket tags"] = user.PutBucketTagging(ctx, &s3.PutBucketTaggingInput{Bucket: aws.String("bkt"),
		Tagging: tagSet(51, func(i int) string { return fmt.Sprint("k", i) })})
	_, refused["reserved key"] = user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String(".s3seal/manifests/x"),
		Tagging: tagSet(1, func(int) string { return "k" })})
	_, refused["policy by a user"] = user.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("bkt"), Policy: aws.String(`{"Version":"2012-10-17"}`)})
	_, refused["lifecycle by a user"] = user.DeleteBucketLifecycle(ctx, &s3.DeleteBucketLifecycleInput{Bucket: aws.String("bkt")})
	want := map[string]string{"11 object tags": "BadRequest", "duplicate keys": "InvalidTag", "51 bucket tags": "BadRequest",
		"reserved key": "InvalidArgument", "policy by a user": "AccessDenied", "lifecycle by a user": "AccessDenied"}
	for name, err := range refused {
		if apiCode(err) != want[name] {
			t.Errorf("%s: %v, want %s", name, err, want[name])
		}
	}
	if _, m := fw.last(); m != n {
		t.Fatalf("refused requests were forwarded: %d", m-n)
	}
	// Reading a configuration is open to readers.
	_, _ = user.GetBucketLifecycleConfiguration(ctx, &s3.GetBucketLifecycleConfigurationInput{Bucket: aws.String("bkt")})
	if got, m := fw.last(); m == n || got.Method != "GET" || !got.Query.Has("lifecycle") {
		t.Fatalf("a user's GET ?lifecycle was not forwarded: %+v", got)
	}

	// A policy is judged once the bucket is known (bucketpolicy.go).
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	pol := `{"Version":"2012-10-17","Statement":{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}}`
	if _, err := admin.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: aws.String("bkt"), Policy: aws.String(pol)}); err != nil {
		t.Fatalf("policy by an admin: %v", err)
	}
	if got, err := user.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: aws.String("bkt")}); err != nil || aws.ToString(got.Policy) != pol {
		t.Fatalf("policy kept as %v, %v", got, err)
	}

	// Answers: the document passes, anything else (here the object's
	// bytes, as moto answers GET ?retention) does not.
	fw.body = `<Tagging><TagSet><Tag><Key>a</Key><Value>b</Value></Tag></TagSet></Tagging>`
	out, err := user.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil || len(out.TagSet) != 1 || aws.ToString(out.TagSet[0].Value) != "b" {
		t.Fatalf("GetObjectTagging = %+v, %v", out, err)
	}
	// GET ?retention alone is then read from a HEAD (moto has none and
	// answers the object's bytes); here the key is missing.
	fw.body = "ciphertext"
	_, err = user.GetObjectRetention(ctx, &s3.GetObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if apiCode(err) != "NoSuchKey" || strings.Contains(err.Error(), "ciphertext") {
		t.Fatalf("GetObjectRetention answered with the object: %v", err)
	}
	// A missing key is NoSuchKey before the store is asked.
	fw.body = `<Tagging><TagSet/></Tagging>`
	_, err = user.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if apiCode(err) != "NoSuchKey" {
		t.Fatalf("GetObjectLegalHold of a missing key: %v", err)
	}

	// Retention: checked, the bypass header passed on for an admin (a
	// writer gets AccessDenied, see TestNonAdminLockDecisionsRefused).
	past := time.Now().Add(-time.Hour)
	_, err = user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &past}})
	if apiCode(err) != "InvalidArgument" {
		t.Fatalf("retention in the past: %v", err)
	}
	future := time.Now().Add(time.Hour)
	// The version must exist: s3seal answers a missing one itself (404).
	_, _ = admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")})
	if _, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	_, err = user.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if apiCode(err) != "InternalError" {
		t.Fatalf("GetObjectLegalHold answered with another document: %v", err)
	}
	_, before := fw.last()
	_, err = user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"), BypassGovernanceRetention: aws.Bool(true),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &future}})
	if _, after := fw.last(); apiCode(err) != "AccessDenied" || after != before {
		t.Fatalf("a user's retention with the governance bypass: %v, forwarded %v; want AccessDenied, nothing forwarded", err, after != before)
	}
	_, err = admin.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: aws.String("bkt"), Key: aws.String("k"), BypassGovernanceRetention: aws.Bool(true),
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &future}})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := fw.last(); got.Header.Get("X-Amz-Bypass-Governance-Retention") != "true" || !got.Query.Has("retention") {
		t.Fatalf("retention forwarded as %+v", got)
	}

	// CreateBucket with Object Lock is forwarded (the fake creates no
	// bucket, so keeping its owner then fails: what was forwarded is what
	// matters here); an ACL is s3seal's, never forwarded (issue 22).
	_, _ = user.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("locked"), ObjectLockEnabledForBucket: aws.Bool(true)})
	if got, _ := fw.last(); got.Method != "PUT" || got.Bucket != "locked" || got.Key != "" || got.Header.Get("X-Amz-Bucket-Object-Lock-Enabled") != "true" {
		t.Fatalf("CreateBucket with Object Lock forwarded as %+v", got)
	}
	_, before = fw.last()
	if _, err := user.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("pub"), ACL: types.BucketCannedACLPublicRead,
		ObjectOwnership: types.ObjectOwnershipBucketOwnerPreferred}); err != nil {
		t.Fatal(err)
	}
	if _, after := fw.last(); after != before {
		t.Fatalf("CreateBucket's ACL or ownership forwarded")
	}
}

// x-amz-acl and x-amz-grant-* are judged as S3 does and kept by s3seal,
// for any credential that may write (before issue 22: admins only).
func TestObjectACLForAdmins(t *testing.T) {
	creds := Credentials{
		"user":  {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}},
		"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	srv := newTestServerWith(t, Config{Credentials: creds})
	ctx := context.Background()
	user, admin := sdkClient(srv.URL, "user", "us"), sdkClient(srv.URL, "admin", "as")
	if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	put := func(c *s3.Client, f func(*s3.PutObjectInput)) error {
		in := &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k"), Body: strings.NewReader("data")}
		f(in)
		_, err := c.PutObject(ctx, in)
		return err
	}
	cases := []struct {
		name string
		c    *s3.Client
		f    func(*s3.PutObjectInput)
		code string
	}{
		{"user, public-read", user, func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }, ""},
		{"user, grant to nobody known", user, func(in *s3.PutObjectInput) { in.GrantFullControl = aws.String(`id="x"`) }, "InvalidArgument"},
		{"admin, unknown ACL", admin, func(in *s3.PutObjectInput) { in.ACL = "everyone" }, "InvalidArgument"},
		{"admin, ACL and grant", admin, func(in *s3.PutObjectInput) {
			in.ACL = types.ObjectCannedACLPublicRead
			in.GrantRead = aws.String(`id="x"`)
		}, "InvalidRequest"},
		{"admin, public-read", admin, func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPublicRead }, ""},
	}
	for _, tc := range cases {
		if err := put(tc.c, tc.f); apiCode(err) != tc.code {
			t.Errorf("%s: %v, want %s", tc.name, err, tc.code)
		}
	}
	if err := put(user, func(in *s3.PutObjectInput) { in.ACL = types.ObjectCannedACLPrivate }); err != nil {
		t.Fatalf("user, private: %v", err)
	}
}

// Only admins may bypass a GOVERNANCE retention: a user's DELETE or
// DeleteObjects with x-amz-bypass-governance-retention is AccessDenied and
// deletes nothing; without the header, or from an admin, it deletes.
func TestBypassForAdmins(t *testing.T) {
	creds := Credentials{
		"user":  {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}},
		"admin": {AccessKey: "admin", SecretKey: "as", Read: []string{"*"}, Write: []string{"*"}, Admin: true},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	srv := newTestServerWith(t, Config{Credentials: creds})
	ctx := context.Background()
	user, admin := sdkClient(srv.URL, "user", "us"), sdkClient(srv.URL, "admin", "as")
	b := aws.String("bkt")
	if _, err := user.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b}); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String(k), Body: strings.NewReader(k)}); err != nil {
			t.Fatal(err)
		}
	}
	exists := func(k string) bool {
		_, err := user.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String(k)})
		return err == nil
	}
	_, err := user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("a"), BypassGovernanceRetention: aws.Bool(true)})
	if apiCode(err) != "AccessDenied" || httpStatus(err) != 403 || !exists("a") {
		t.Fatalf("a user's DELETE with the bypass: %v; kept %v", err, exists("a"))
	}
	_, err = user.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("b")}}}})
	if apiCode(err) != "AccessDenied" || !exists("b") {
		t.Fatalf("a user's DeleteObjects with the bypass: %v; kept %v", err, exists("b"))
	}
	// A bypass header that does not say true bypasses nothing and is
	// nobody's privilege.
	if _, err := user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("a"), BypassGovernanceRetention: aws.Bool(false)}); err != nil || exists("a") {
		t.Fatalf("a user's DELETE with the bypass false: %v; kept %v", err, exists("a"))
	}
	if _, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("c"), BypassGovernanceRetention: aws.Bool(true)}); err != nil || exists("c") {
		t.Fatalf("an admin's DELETE with the bypass: %v; kept %v", err, exists("c"))
	}
	out, err := admin.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("b")}, {Key: aws.String("d")}}}})
	if err != nil || len(out.Deleted) != 2 || exists("b") || exists("d") {
		t.Fatalf("an admin's DeleteObjects with the bypass: %+v, %v", out, err)
	}
}

// Without a store that has them, the admin-only sub-resources answer 501
// to every credential, as the others do: a client reads that as "none
// here" (s3cmd's info fails on a 403). The embedded store has them.
func TestAdminSubresourcesNotImplementedForAll(t *testing.T) {
	for name, fw := range map[string]backend.Forwarder{"no forwarder": nil} {
		creds := Credentials{"user": {AccessKey: "user", SecretKey: "us", Read: []string{"*"}, Write: []string{"*"}}}
		srv := newTestServerFw(t, Config{Credentials: creds}, fw)
		ctx := context.Background()
		c := sdkClient(srv.URL, "user", "us")
		if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
			t.Fatal(err)
		}
		_, err := c.GetBucketCors(ctx, &s3.GetBucketCorsInput{Bucket: aws.String("bkt")})
		if apiCode(err) != "NotImplemented" || httpStatus(err) != 501 {
			t.Errorf("%s: GetBucketCors: %v, want 501 NotImplemented", name, err)
		}
		// ACLs are s3seal's (issue 22): answered on any backend.
		_, err = c.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
		if apiCode(err) != "NoSuchKey" {
			t.Errorf("%s: GetObjectAcl of a missing key: %v, want NoSuchKey", name, err)
		}
	}
}

// TestLockHeadersShowToWhoMayReadTheLock: GET and HEAD name an object's
// retention and legal hold only to a caller allowed to read them
// (s3:GetObjectRetention, s3:GetObjectLegalHold), as S3 does: bob, given
// READ on alice's object, reads it without learning its lock; alice sees
// both.
func TestLockHeadersShowToWhoMayReadTheLock(t *testing.T) {
	url := newEmbeddedFullServerFor(t, aclCreds())
	ctx := context.Background()
	alice, bob := sdkClient(url, "alice", "as"), sdkClient(url, "bob", "bs")
	b, k := aws.String("locked"), aws.String("k")
	if _, err := alice.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: b, ObjectLockEnabledForBucket: aws.Bool(true)}); err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := alice.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k, Body: strings.NewReader("x"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: aws.Time(until),
		ObjectLockLegalHoldStatus: types.ObjectLockLegalHoldStatusOn, GrantRead: aws.String(`id="b0b"`)}); err != nil {
		t.Fatal(err)
	}
	head := func(c *s3.Client) *s3.HeadObjectOutput {
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := head(bob); out.ObjectLockMode != "" || out.ObjectLockRetainUntilDate != nil || out.ObjectLockLegalHoldStatus != "" {
		t.Errorf("bob, allowed to read the object only, saw its lock: %q %v %q", out.ObjectLockMode, out.ObjectLockRetainUntilDate, out.ObjectLockLegalHoldStatus)
	}
	if out := head(alice); out.ObjectLockMode != types.ObjectLockModeGovernance || out.ObjectLockRetainUntilDate == nil || out.ObjectLockLegalHoldStatus != types.ObjectLockLegalHoldStatusOn {
		t.Errorf("alice's HEAD of her locked object: %q %v %q, want its lock", out.ObjectLockMode, out.ObjectLockRetainUntilDate, out.ObjectLockLegalHoldStatus)
	}
	// Leave nothing locked behind for the store's clean-up.
	if _, err := alice.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: k,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Log(err)
	}
}
