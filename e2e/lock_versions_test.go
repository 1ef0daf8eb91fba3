package e2e

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// putLocked PUTs body under key with a lock of mode for an hour and
// returns the version id.
func putLocked(t *testing.T, c *s3.Client, bucket, key string, body []byte, mode types.ObjectLockMode) string {
	t.Helper()
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)}
	if mode != "" {
		in.ObjectLockMode, in.ObjectLockRetainUntilDate = mode, &until
	}
	out, err := c.PutObject(ctxT(t), in)
	if err != nil || aws.ToString(out.VersionId) == "" {
		t.Fatalf("PUT %s: version %q, %v", key, aws.ToString(out.VersionId), err)
	}
	return aws.ToString(out.VersionId)
}

// TestLockedVersionDeletes: deletes by version id through s3seal, in
// front of moto, single and in DeleteObjects: a GOVERNANCE version is
// refused without x-amz-bypass-governance-retention and deleted with it
// (a multipart one with its manifest), and only an admin may send it; a
// refused delete leaves the version readable; COMPLIANCE refuses even the
// bypass.
func TestLockedVersionDeletes(t *testing.T) {
	t.Parallel()
	m, _, user, admin := lockSetup(t)
	be := motoClient(t, m)
	ctx := context.Background()
	const bucket = "gov"
	b := aws.String(bucket)
	mustCreateLockedBucket(t, admin, *b)
	want := map[string][]byte{} // version id -> plaintext
	key := map[string]string{}  // version id -> key
	put := func(k string, body []byte, mode types.ObjectLockMode) string {
		vid := putLocked(t, admin, bucket, k, body, mode)
		want[vid], key[vid] = body, k
		return vid
	}
	g1 := put("g", []byte("governed, first"), types.ObjectLockModeGovernance)
	g2 := put("g", []byte("governed, second"), types.ObjectLockModeGovernance)
	c1 := put("c", []byte("compliance"), types.ObjectLockModeCompliance)

	// A multipart version (its own manifest). moto does not lock completed
	// uploads, so the lock is set on the version afterwards.
	mpBody := patternBytes(21, 6<<20+7)
	mp, err := admin.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: aws.String("mp")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{mpBody[:5<<20], mpBody[5<<20:]} {
		out, err := admin.UploadPart(ctx, &s3.UploadPartInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(chunk)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	done, err := admin.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: aws.String("mp"), UploadId: mp.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	mv := aws.ToString(done.VersionId)
	want[mv], key[mv] = mpBody, "mp"
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if _, err := admin.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: aws.String("mp"), VersionId: &mv,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}}); err != nil {
		t.Fatal(err)
	}
	manifests := func() int {
		t.Helper()
		out, err := be.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: b, Prefix: aws.String(".s3seal/manifests/")})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Contents)
	}
	if manifests() != 1 {
		t.Fatalf("backend holds %d manifests, want the multipart version's", manifests())
	}
	readable := func(what string, vids ...string) {
		t.Helper()
		for _, vid := range vids {
			if got, err := getVersion(t, admin, bucket, key[vid], vid); err != nil || !bytes.Equal(got, want[vid]) {
				t.Fatalf("%s: %s?versionId=%s reads %d bytes, %v; want its %d", what, key[vid], vid, len(got), err, len(want[vid]))
			}
		}
	}
	gone := func(what string, vids ...string) {
		t.Helper()
		for _, vid := range vids {
			_, err := getVersion(t, admin, bucket, key[vid], vid)
			wantStatus(t, what+": GET of the deleted version", err, 404, "NoSuchVersion")
		}
	}
	deleteOne := func(vid string, bypass bool) error {
		_, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String(key[vid]), VersionId: aws.String(vid),
			BypassGovernanceRetention: aws.Bool(bypass)})
		return err
	}
	deleteMany := func(bypass bool, vids ...string) map[string]string { // version id -> error code, "" when deleted
		t.Helper()
		var ids []types.ObjectIdentifier
		for _, vid := range vids {
			ids = append(ids, types.ObjectIdentifier{Key: aws.String(key[vid]), VersionId: aws.String(vid)})
		}
		in := &s3.DeleteObjectsInput{Bucket: b, Delete: &types.Delete{Objects: ids}}
		if bypass {
			in.BypassGovernanceRetention = aws.Bool(true)
		}
		out, err := admin.DeleteObjects(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		res := map[string]string{}
		for _, d := range out.Deleted {
			res[aws.ToString(d.VersionId)] = ""
		}
		for _, e := range out.Errors {
			res[aws.ToString(e.VersionId)] = aws.ToString(e.Code)
		}
		return res
	}

	// Without the bypass every locked version stays, single or in a batch.
	for _, vid := range []string{g1, mv, c1} {
		wantStatus(t, "DELETE "+key[vid]+" by version, no bypass", deleteOne(vid, false), 403, "AccessDenied")
	}
	if res := deleteMany(false, g1, mv, c1); res[g1] != "AccessDenied" || res[mv] != "AccessDenied" || res[c1] != "AccessDenied" {
		t.Fatalf("DeleteObjects without the bypass: %v, want AccessDenied for each", res)
	}
	readable("refused deletes", g1, g2, mv, c1)
	if manifests() != 1 {
		t.Fatal("a refused delete took the multipart version's manifest")
	}

	// The bypass is an admin's: a user's is refused whole.
	_, err = user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: aws.String("g"), VersionId: aws.String(g1), BypassGovernanceRetention: aws.Bool(true)})
	wantStatus(t, "a user's DELETE by version with the bypass", err, 403, "AccessDenied")
	_, err = user.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: b, BypassGovernanceRetention: aws.Bool(true),
		Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("g"), VersionId: aws.String(g1)}}}})
	wantStatus(t, "a user's DeleteObjects with the bypass", err, 403, "AccessDenied")
	readable("a user's bypass", g1)

	// With it, GOVERNANCE versions go; COMPLIANCE stays.
	if res := deleteMany(true, g1, mv, c1); res[g1] != "" || res[mv] != "" || res[c1] != "AccessDenied" {
		t.Fatalf("DeleteObjects with the bypass: %v, want g1 and mp deleted, AccessDenied for the COMPLIANCE version", res)
	}
	if err := deleteOne(g2, true); err != nil {
		t.Fatalf("DELETE of a GOVERNANCE version with the bypass: %v", err)
	}
	wantStatus(t, "DELETE of a COMPLIANCE version with the bypass", deleteOne(c1, true), 403, "AccessDenied")
	gone("bypass", g1, g2, mv)
	readable("COMPLIANCE", c1)
	if manifests() != 0 {
		t.Fatal("the deleted multipart version's manifest is still current")
	}
	if v, mk := versionsOf(t, admin, bucket); len(v) != 1 || len(mk) != 0 || aws.ToString(v[0].VersionId) != c1 {
		t.Fatalf("left: %d versions, %d markers; want the COMPLIANCE version alone", len(v), len(mk))
	}
}

// TestLockCallsByVersion: PutObjectRetention, PutObjectLegalHold and
// object tagging with versionId reach that version through s3seal, in
// front of moto, and leave the other versions of the key as they were.
func TestLockCallsByVersion(t *testing.T) {
	t.Parallel()
	m, _, user, _ := lockSetup(t)
	be := motoClient(t, m)
	ctx := context.Background()
	const bucket = "byversion"
	b, k := aws.String(bucket), aws.String("k")
	mustCreateLockedBucket(t, user, *b)
	v1 := putLocked(t, user, bucket, "k", []byte("old"), "")
	v2 := putLocked(t, user, bucket, "k", []byte("new"), "")
	until := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)

	if _, err := user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k, VersionId: &v1,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("gen"), Value: aws.String("old")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.PutObjectLegalHold(ctx, &s3.PutObjectLegalHoldInput{Bucket: b, Key: k, VersionId: &v1,
		LegalHold: &types.ObjectLockLegalHold{Status: types.ObjectLockLegalHoldStatusOn}}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.PutObjectRetention(ctx, &s3.PutObjectRetentionInput{Bucket: b, Key: k, VersionId: &v1,
		Retention: &types.ObjectLockRetention{Mode: types.ObjectLockRetentionModeGovernance, RetainUntilDate: &until}}); err != nil {
		t.Fatal(err)
	}

	// The backend's view: v1 carries all three, v2 (the current one) none.
	for _, c := range []struct {
		vid                 string
		tags                int32
		mode                types.ObjectLockMode
		hold                types.ObjectLockLegalHoldStatus
		viaSeal, viaBackend *s3.Client
	}{{v1, 1, types.ObjectLockModeGovernance, types.ObjectLockLegalHoldStatusOn, user, be}, {v2, 0, "", "", user, be}} {
		for name, cl := range map[string]*s3.Client{"backend": c.viaBackend, "s3seal": c.viaSeal} {
			h, err := cl.HeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k, VersionId: aws.String(c.vid)})
			if err != nil {
				t.Fatal(err)
			}
			if aws.ToInt32(h.TagCount) != c.tags || h.ObjectLockMode != c.mode || h.ObjectLockLegalHoldStatus != c.hold ||
				(c.mode != "" && !aws.ToTime(h.ObjectLockRetainUntilDate).Equal(until)) {
				t.Errorf("%s HEAD of version %s: %d tags, mode %q until %v, hold %q; want %d, %q, %q",
					name, c.vid, aws.ToInt32(h.TagCount), h.ObjectLockMode, h.ObjectLockRetainUntilDate, h.ObjectLockLegalHoldStatus, c.tags, c.mode, c.hold)
			}
		}
	}
	// And read back through s3seal by version.
	tags, err := user.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k, VersionId: &v1})
	if err != nil || len(tags.TagSet) != 1 || aws.ToString(tags.TagSet[0].Value) != "old" || aws.ToString(tags.VersionId) != v1 {
		t.Fatalf("GetObjectTagging of v1: %+v, %v", tags, err)
	}
	if cur, err := user.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k}); err != nil || len(cur.TagSet) != 0 {
		t.Fatalf("GetObjectTagging of the current version: %+v, %v", cur, err)
	}
	hold, err := user.GetObjectLegalHold(ctx, &s3.GetObjectLegalHoldInput{Bucket: b, Key: k, VersionId: &v1})
	if err != nil || hold.LegalHold.Status != types.ObjectLockLegalHoldStatusOn {
		t.Fatalf("GetObjectLegalHold of v1: %+v, %v", hold, err)
	}
	// (moto 5.2 has no GetObjectRetention: it answers ?retention with the
	// object, which s3seal refuses to pass on; the HEADs above show it.)

	// DeleteObjectTagging by version clears that version's tags only.
	if _, err := user.PutObjectTagging(ctx, &s3.PutObjectTaggingInput{Bucket: b, Key: k,
		Tagging: &types.Tagging{TagSet: []types.Tag{{Key: aws.String("gen"), Value: aws.String("new")}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := user.DeleteObjectTagging(ctx, &s3.DeleteObjectTaggingInput{Bucket: b, Key: k, VersionId: &v1}); err != nil {
		t.Fatal(err)
	}
	for vid, n := range map[string]int{v1: 0, v2: 1} {
		out, err := be.GetObjectTagging(ctx, &s3.GetObjectTaggingInput{Bucket: b, Key: k, VersionId: aws.String(vid)})
		if err != nil || len(out.TagSet) != n {
			t.Errorf("backend tags of version %s after DeleteObjectTagging of v1: %+v, %v; want %d", vid, out.TagSet, err, n)
		}
	}

	// The hold and the retention are v1's: the current version deletes,
	// v1 does not, and still reads.
	if _, err := user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &v2}); err != nil {
		t.Fatalf("DELETE of the unlocked version: %v", err)
	}
	_, err = user.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k, VersionId: &v1})
	wantStatus(t, "DELETE of the held version", err, 403, "AccessDenied")
	if got, err := getVersion(t, user, bucket, "k", v1); err != nil || string(got) != "old" {
		t.Fatalf("v1 after the refused delete: %q, %v", got, err)
	}
}

// TestConditionalDeleteOfLockedVersion: conditional deletes
// (If-Match on DeleteObject, ETag in DeleteObjects) of a COMPLIANCE
// version whose ETag matches are refused, on both stores, and the version
// stays; a conditional delete of a missing version answers success.
func TestConditionalDeleteOfLockedVersion(t *testing.T) {
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
			mustCreateLockedBucket(t, c, *b)
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
