package e2e

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// lockSetup runs s3seal in front of moto with a user and an admin
// credential.
func lockSetup(t *testing.T) (m *motoServer, p *sealProc, user, admin *s3.Client) {
	t.Helper()
	m = startMoto(t)
	dir := t.TempDir()
	creds := writeJSON(t, dir, "creds.json", map[string]any{"credentials": []map[string]any{
		{"access_key": "user", "secret_key": "user-secret-key", "read": []string{"*"}, "write": []string{"*"}},
		{"access_key": "admin", "secret_key": "admin-secret-key", "read": []string{"*"}, "write": []string{"*"}, "admin": true},
	}})
	p = startS3seal(t, sealOpts{Backend: m, CredentialsFile: creds, DataDir: filepath.Join(dir, "data")})
	user = newSDKClient(t, p.Endpoint, "user", "user-secret-key", true)
	admin = newSDKClient(t, p.Endpoint, "admin", "admin-secret-key", true)
	return m, p, user, admin
}

// Object Lock, legal hold and tags through s3seal with the Go SDK, on
// moto: the backend holds the lock, so a locked version cannot be deleted
// even with s3seal's own backend credential; the governance bypass works;
// tags round-trip; bucket policy is for admins only; ACLs are s3seal's.
func TestObjectLockAndTagsSDK(t *testing.T) {
	t.Parallel()
	m, _, user, admin := lockSetup(t)
	be := motoClient(t, m)
	ctx := context.Background()
	b := aws.String("vault")
	mustCreateLockedBucket(t, user, *b)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("backup"), Body: strings.NewReader("precious"),
		ObjectLockMode: types.ObjectLockModeGovernance, ObjectLockRetainUntilDate: &until, Tagging: aws.String("tier=gold&kind=db")}); err != nil {
		t.Fatal(err)
	}
	head, err := be.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || head.ObjectLockMode != types.ObjectLockModeGovernance {
		t.Fatalf("backend object lock = %v, %v", head, err)
	}
	version := aws.ToString(head.VersionId)
	if got := string(getObj(t, user, "vault", "backup")); got != "precious" {
		t.Fatalf("read back %q", got)
	}
	tags, err := user.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || len(tags.TagSet) != 2 {
		t.Fatalf("tags = %+v, %v", tags, err)
	}
	// HEAD and GET report the tag count and the lock.
	sh, err := user.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || aws.ToInt32(sh.TagCount) != 2 || sh.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(sh.ObjectLockRetainUntilDate).Equal(until) {
		t.Fatalf("HEAD through s3seal: tags %v, lock %s until %v, %v", sh.TagCount, sh.ObjectLockMode, sh.ObjectLockRetainUntilDate, err)
	}
	sg, err := user.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || aws.ToInt32(sg.TagCount) != 2 {
		t.Fatalf("GET through s3seal: tags %v, %v", sg.TagCount, err)
	}
	sg.Body.Close()

	// The locked version resists s3seal's own backend credential, unless
	// the governance bypass is sent.
	_, err = be.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &version})
	if code, _ := apiCode(err); code != "AccessDenied" {
		t.Fatalf("backend delete of a locked version: %v, want AccessDenied", err)
	}
	// A legal hold set through s3seal blocks even the bypass.
	if _, err := user.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String("backup"), VersionId: &version,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
		t.Fatal(err)
	}
	hold, err := user.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: aws.String("backup")})
	if err != nil || hold.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("legal hold = %+v, %v", hold, err)
	}
	_, err = be.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &version, BypassGovernanceRetention: aws.Bool(true)})
	if code, _ := apiCode(err); code != "AccessDenied" {
		t.Fatalf("backend delete of a version under legal hold: %v, want AccessDenied", err)
	}
	if _, err := user.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: aws.String("backup"),
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOff}}); err != nil {
		t.Fatal(err)
	}
	if _, err := be.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("backup"), VersionId: &version, BypassGovernanceRetention: aws.Bool(true)}); err != nil {
		t.Fatalf("governance bypass: %v", err)
	}

	// Tags at CreateMultipartUpload reach the completed object; a copy
	// copies them (COPY) or takes new ones (REPLACE).
	mp, err := user.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp"), Tagging: aws.String("from=mp")})
	if err != nil {
		t.Fatal(err)
	}
	part, err := user.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId, PartNumber: aws.Int32(1),
		Body: strings.NewReader("part")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := user.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatal(err)
	}
	tagOf := func(key string) string {
		t.Helper()
		out, err := user.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: aws.String(key)})
		if err != nil {
			t.Fatal(err)
		}
		var kv []string
		for _, tg := range out.TagSet {
			kv = append(kv, aws.ToString(tg.Key)+"="+aws.ToString(tg.Value))
		}
		return strings.Join(kv, "&")
	}
	if got := tagOf("mp"); got != "from=mp" {
		t.Fatalf("tags of the completed upload = %q", got)
	}
	if _, err := user.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("vault/mp")}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("replaced"), CopySource: aws.String("vault/mp"),
		TaggingDirective: types.TaggingDirectiveReplace, Tagging: aws.String("new=1")}); err != nil {
		t.Fatal(err)
	}
	if got, got2 := tagOf("copy"), tagOf("replaced"); got != "from=mp" || got2 != "new=1" {
		t.Fatalf("copy tags = %q (COPY), %q (REPLACE)", got, got2)
	}
	if _, err := user.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: aws.String("copy")}); err != nil || tagOf("copy") != "" {
		t.Fatalf("DeleteObjectTagging: %v, tags %q", err, tagOf("copy"))
	}

	// Bucket policy: changed by admins only, kept by s3seal: the store
	// never sees it.
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::vault/nothing"}]}`
	_, err = user.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: &policy})
	if code, _ := apiCode(err); code != "AccessDenied" {
		t.Fatalf("user's PutBucketPolicy: %v, want AccessDenied", err)
	}
	if _, err := admin.PutBucketPolicy(ctx, &s3.PutBucketPolicyInput{Bucket: b, Policy: &policy}); err != nil {
		t.Fatalf("admin's PutBucketPolicy: %v", err)
	}
	if got, err := be.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b}); err == nil {
		t.Fatalf("the policy reached the backend: %v", aws.ToString(got.Policy))
	}
	back, err := admin.GetBucketPolicy(ctx, &s3.GetBucketPolicyInput{Bucket: b})
	if err != nil || aws.ToString(back.Policy) != policy {
		t.Fatalf("admin's GetBucketPolicy = %v, %v", back, err)
	}
	// And s3seal enforces it.
	if _, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("nothing"), Body: strings.NewReader("x")}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("nothing")}); func() string { c, _ := apiCode(err); return c }() != "AccessDenied" {
		t.Fatalf("GetObject the policy denies: %v, want AccessDenied", err)
	}
	// ACLs are s3seal's: a credential of the bucket owner's account sets
	// one, s3seal keeps and answers it, and the store's object never
	// becomes public (the store sees only s3seal's account).
	if _, err := user.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("pub"), Body: strings.NewReader("x"), ACL: types.ObjectCannedACLPublicRead}); err != nil {
		t.Fatalf("the owner account's public-read PUT: %v", err)
	}
	allUsers := func(grants []types.Grant) bool {
		for _, g := range grants {
			if g.Grantee != nil && strings.HasSuffix(aws.ToString(g.Grantee.URI), "/AllUsers") {
				return true
			}
		}
		return false
	}
	acl, err := admin.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: aws.String("pub")})
	if err != nil || !allUsers(acl.Grants) {
		t.Fatalf("GetObjectAcl = %+v, %v; want an AllUsers grant", acl, err)
	}
	if bacl, err := be.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: aws.String("pub")}); err != nil || allUsers(bacl.Grants) {
		t.Fatalf("the store's ACL of the object = %+v, %v; want it private", bacl, err)
	}
	if _, err := user.PutObjectAcl(ctx, &s3.PutObjectAclInput{Bucket: b, Key: aws.String("pub"), ACL: types.ObjectCannedACLPrivate}); err != nil {
		t.Fatalf("PutObjectAcl: %v", err)
	}
	if acl, err := admin.GetObjectAcl(ctx, &s3.GetObjectAclInput{Bucket: b, Key: aws.String("pub")}); err != nil || allUsers(acl.Grants) {
		t.Fatalf("GetObjectAcl after private = %+v, %v", acl, err)
	}

	// Object lock configuration round-trips (moto wants an empty bucket).
	b = aws.String("vault2")
	mustCreateLockedBucket(t, user, *b)
	// A default retention cannot be taken back: admins only.
	lockCfg := &s3.PutObjectLockConfigurationInput{Bucket: b, ObjectLockConfiguration: &types.ObjectLockConfiguration{
		ObjectLockEnabled: types.ObjectLockEnabledEnabled,
		Rule:              &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}
	if _, err := user.PutObjectLockConfiguration(ctx, lockCfg); func() string { c, _ := apiCode(err); return c }() != "AccessDenied" {
		t.Fatalf("user's PutObjectLockConfiguration: %v, want AccessDenied", err)
	}
	if _, err := admin.PutObjectLockConfiguration(ctx, lockCfg); err != nil {
		t.Fatal(err)
	}
	cfg, err := user.GetObjectLockConfiguration(ctx, &s3.GetObjectLockConfigurationInput{Bucket: b})
	if err != nil || cfg.ObjectLockConfiguration.Rule == nil || aws.ToInt32(cfg.ObjectLockConfiguration.Rule.DefaultRetention.Days) != 1 {
		t.Fatalf("lock configuration = %+v, %v", cfg, err)
	}
	// With default retention, s3seal's own objects (a multipart upload's
	// state and manifest) are locked too; uploads still work.
	mp2, err := user.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp2")})
	if err != nil {
		t.Fatal(err)
	}
	part, err = user.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp2"), UploadId: mp2.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("two")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := user.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp2"), UploadId: mp2.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{{PartNumber: aws.Int32(1), ETag: part.ETag}}}}); err != nil {
		t.Fatalf("completion with default retention: %v", err)
	}
	obj, err := user.GetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: aws.String("mp2")})
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	if string(body) != "two" {
		t.Fatalf("mp2 = %q", body)
	}
	// An abort and a delete succeed too (s3seal's deletes of its locked
	// records add delete markers), and leave nothing listed.
	mp3, err := user.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp3")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := user.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp3"), UploadId: mp3.UploadId, PartNumber: aws.Int32(1), Body: strings.NewReader("3")}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: b, Key: aws.String("mp3"), UploadId: mp3.UploadId}); err != nil {
		t.Fatalf("abort with default retention: %v", err)
	}
	if _, err := user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("mp2")}); err != nil {
		t.Fatalf("delete with default retention: %v", err)
	}
	ups, err := user.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: b})
	if err != nil || len(ups.Uploads) != 0 {
		t.Fatalf("uploads after abort: %+v, %v", ups, err)
	}
	list, err := user.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b})
	if err != nil || len(list.Contents) != 0 {
		t.Fatalf("objects after delete: %+v, %v", list.Contents, err)
	}
}
