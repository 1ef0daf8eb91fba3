package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// lockedBackupBucket creates bucket through s3seal with Object Lock
// enabled (so versioned) and a default GOVERNANCE retention of one day.
func lockedBackupBucket(t *testing.T, c *s3.Client, bucket string) {
	t.Helper()
	ctx := ctxT(t)
	mustCreateLockedBucket(t, c, bucket)
	if _, err := c.PutObjectLockConfiguration(ctx, &s3.PutObjectLockConfigurationInput{Bucket: aws.String(bucket),
		ObjectLockConfiguration: &types.ObjectLockConfiguration{ObjectLockEnabled: types.ObjectLockEnabledEnabled,
			Rule: &types.ObjectLockRule{DefaultRetention: &types.DefaultRetention{Mode: types.ObjectLockRetentionModeGovernance, Days: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
}

// versionsOf lists every version and delete marker of bucket through s3seal.
func versionsOf(t *testing.T, c *s3.Client, bucket string) (versions []types.ObjectVersion, markers []types.DeleteMarkerEntry) {
	t.Helper()
	p := s3.NewListObjectVersionsPaginator(c, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctxT(t))
		if err != nil {
			t.Fatal(err)
		}
		versions = append(versions, out.Versions...)
		markers = append(markers, out.DeleteMarkers...)
	}
	return versions, markers
}

// TestLockedBackupRclone is issue 10's backup scenario with rclone 1.60
// in front of moto: two backups into a versioned bucket with a default
// GOVERNANCE retention, the newer versions deleted by version id (with
// the governance bypass, by an admin), and the first backup restored
// byte for byte with --s3-version-at. A locked version (a multipart one
// among them) cannot be deleted without the bypass and stays readable; a
// COMPLIANCE one not even with it.
func TestLockedBackupRclone(t *testing.T) {
	t.Parallel()
	requireRclone(t)
	_, p, _, admin := lockSetup(t)
	const bucket = "locked-backup"
	lockedBackupBucket(t, admin, bucket)
	ctx := ctxT(t)

	env := rcloneEnv(t, &sealProc{Endpoint: p.Endpoint, AccessKey: "admin", SecretKey: "admin-secret-key"})
	rc := func(args ...string) string {
		t.Helper()
		return runTool(t, env, rcloneBin, append([]string{"--retries", "1", "--low-level-retries", "1",
			"--s3-upload-cutoff", "5M", "--s3-chunk-size", "5M"}, args...)...)
	}

	// First backup: small files and one above the cutoff (a multipart
	// version of three parts).
	first := map[string][]byte{
		"notes.txt":     []byte("monday's notes"),
		"db/dump.sql":   patternBytes(1, 70_000),
		"db/big.bin":    patternBytes(2, 12<<20+123),
		"keep/same.txt": []byte("unchanged between the backups"),
	}
	src := t.TempDir()
	for name, data := range first {
		writeFile(t, src, name, data)
	}
	rc("sync", src, "s3seal:"+bucket+"/host")
	time.Sleep(1500 * time.Millisecond)
	at := time.Now().UTC()
	time.Sleep(1500 * time.Millisecond)

	// The directory changes; a second backup.
	writeFile(t, src, "notes.txt", []byte("tuesday's notes, longer"))
	writeFile(t, src, "db/big.bin", patternBytes(3, 11<<20))
	writeFile(t, src, "new.txt", []byte("only in the second backup"))
	if err := os.Remove(filepath.Join(src, "db", "dump.sql")); err != nil {
		t.Fatal(err)
	}
	rc("sync", src, "s3seal:"+bucket+"/host")

	versions, markers := versionsOf(t, admin, bucket)
	var older, newer []types.ObjectVersion
	for _, v := range versions {
		if aws.ToTime(v.LastModified).Before(at) {
			older = append(older, v)
		} else {
			newer = append(newer, v)
		}
	}
	if len(older) != 4 || len(newer) != 3 || len(markers) != 1 {
		t.Fatalf("after two backups: %d older versions, %d newer, %d delete markers; want 4, 3, 1", len(older), len(newer), len(markers))
	}
	oldBig := ""
	for _, v := range older {
		if aws.ToString(v.Key) == "host/db/big.bin" {
			oldBig = aws.ToString(v.VersionId)
			if aws.ToInt64(v.Size) != int64(len(first["db/big.bin"])) {
				t.Errorf("listed size of the multipart version: %d, want %d", aws.ToInt64(v.Size), len(first["db/big.bin"]))
			}
		}
	}
	// moto leaves a completed multipart upload unlocked whatever the
	// bucket's default (S3 locks it): s3seal sets the default on it.
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if h, err := admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("host/db/big.bin"), VersionId: &oldBig}); err != nil ||
		h.ObjectLockMode != types.ObjectLockModeGovernance || !aws.ToTime(h.ObjectLockRetainUntilDate).After(time.Now().Add(23*time.Hour)) {
		t.Fatalf("multipart version in a bucket with a default retention of a day: %+v %v", h, err)
	}

	// A locked version cannot be deleted through s3seal without the bypass,
	// and stays readable, the multipart one with its manifest.
	for _, v := range append(append([]types.ObjectVersion{}, older...), newer...) {
		_, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: v.Key, VersionId: v.VersionId})
		wantStatus(t, "DELETE of locked version "+aws.ToString(v.Key), err, 403, "AccessDenied")
	}
	got, err := getVersion(t, admin, bucket, "host/db/big.bin", oldBig)
	if err != nil || !bytes.Equal(got, first["db/big.bin"]) {
		t.Fatalf("multipart version after a refused delete: %d bytes, %v", len(got), err)
	}

	// COMPLIANCE refuses even the bypass.
	if _, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String("audit.log"), Body: strings.NewReader("kept"),
		ObjectLockMode: types.ObjectLockModeCompliance, ObjectLockRetainUntilDate: &until}); err != nil {
		t.Fatal(err)
	}
	h, err := admin.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("audit.log")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String("audit.log"), VersionId: h.VersionId,
		BypassGovernanceRetention: aws.Bool(true)})
	wantStatus(t, "DELETE of a COMPLIANCE version with the bypass", err, 403, "AccessDenied")
	if got := getObj(t, admin, bucket, "audit.log"); string(got) != "kept" {
		t.Fatalf("COMPLIANCE version after a refused delete: %q", got)
	}

	// The admin deletes the second backup's versions and its delete
	// marker by version id, with the governance bypass.
	for _, v := range newer {
		if _, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: v.Key, VersionId: v.VersionId,
			BypassGovernanceRetention: aws.Bool(true)}); err != nil {
			t.Fatalf("DELETE %s?versionId=%s with the bypass: %v", aws.ToString(v.Key), aws.ToString(v.VersionId), err)
		}
	}
	for _, m := range markers {
		if _, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: m.Key, VersionId: m.VersionId,
			BypassGovernanceRetention: aws.Bool(true)}); err != nil {
			t.Fatalf("DELETE of the marker on %s: %v", aws.ToString(m.Key), err)
		}
	}
	if v, m := versionsOf(t, admin, bucket); len(v) != 5 || len(m) != 0 { // the first backup and audit.log
		t.Fatalf("after deleting the second backup: %d versions, %d markers; want 5, 0", len(v), len(m))
	}

	// rclone restores the first backup byte for byte, as of its time and
	// as the bucket now is.
	for _, args := range [][]string{{"--s3-version-at", at.Format(time.RFC3339)}, nil} {
		dst := t.TempDir()
		rc(append(append([]string{"copy"}, args...), "s3seal:"+bucket+"/host", dst)...)
		n := 0
		_ = filepath.WalkDir(dst, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		})
		if n != len(first) {
			t.Errorf("restore %v: %d files, want %d", args, n, len(first))
		}
		for name, data := range first {
			got, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name)))
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("restore %v of %s: %d bytes, %v; want the first backup's %d", args, name, len(got), err, len(data))
			}
		}
	}
}
