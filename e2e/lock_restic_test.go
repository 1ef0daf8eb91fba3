package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// resticBin is Debian's restic 0.14 (minio-go).
const resticBin = "restic"

// TestLockedBackupRestic is issue 10's backup scenario with restic in
// front of moto: a repository in a versioned bucket with a default
// GOVERNANCE retention; two snapshots; then the older one is forgotten and
// pruned (its data deleted, as an intruder or a mistake would). The data
// stays in older versions: an admin deletes everything newer than the
// first snapshot by version id (with the governance bypass), and restic
// restores the first snapshot byte for byte. The first snapshot's
// versions refuse a delete without the bypass.
func TestLockedBackupRestic(t *testing.T) {
	t.Parallel()
	bin := requireTool(t, resticBin)
	_, p, _, admin := lockSetup(t)
	const bucket = "restic-locked"
	lockedBackupBucket(t, admin, bucket)
	ctx := ctxT(t)

	env := cleanEnv([]string{"AWS_CA_BUNDLE"},
		"RESTIC_REPOSITORY=s3:"+p.Endpoint+"/"+bucket+"/repo",
		"RESTIC_PASSWORD=correct horse battery staple",
		"AWS_ACCESS_KEY_ID=admin", "AWS_SECRET_ACCESS_KEY=admin-secret-key", "AWS_DEFAULT_REGION=us-east-1",
		"RESTIC_CACHE_DIR="+t.TempDir(), "HOME="+t.TempDir())
	restic := func(args ...string) string {
		t.Helper()
		return runTool(t, env, bin, append([]string{"--quiet"}, args...)...)
	}

	first := map[string][]byte{
		"notes.txt":   []byte("monday's notes"),
		"db/dump.sql": patternBytes(11, 300_000),
		"db/big.bin":  patternBytes(12, 9<<20),
	}
	src := t.TempDir()
	for name, data := range first {
		writeFile(t, src, name, data)
	}
	restic("init")
	restic("backup", "--host", "h", src)
	time.Sleep(1500 * time.Millisecond)
	at := time.Now().UTC()
	time.Sleep(1500 * time.Millisecond)

	writeFile(t, src, "notes.txt", []byte("tuesday's notes, longer"))
	writeFile(t, src, "db/big.bin", patternBytes(13, 8<<20))
	restic("backup", "--host", "h", src)

	snaps := resticSnapshots(t, restic("snapshots", "--json"))
	if len(snaps) != 2 {
		t.Fatalf("restic snapshots after two backups: %+v", snaps)
	}
	older := snaps[0].ID
	if snaps[1].Time.Before(snaps[0].Time) {
		older = snaps[1].ID
	}
	// The first snapshot's objects are locked: no delete without the bypass.
	versions, _ := versionsOf(t, admin, bucket)
	refused := 0
	for _, v := range versions {
		if aws.ToTime(v.LastModified).Before(at) && strings.HasPrefix(aws.ToString(v.Key), "repo/data/") {
			_, err := admin.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: v.Key, VersionId: v.VersionId})
			wantStatus(t, "DELETE of a locked pack version", err, 403, "AccessDenied")
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("the first snapshot wrote no pack under repo/data/")
	}

	// The first snapshot is forgotten and its data pruned: deletes without
	// version id, which leave delete markers over the locked versions.
	restic("forget", older, "--prune")
	if snaps := resticSnapshots(t, restic("snapshots", "--json")); len(snaps) != 1 || snaps[0].ID == older {
		t.Fatalf("snapshots after forgetting %s: %+v", older, snaps)
	}
	versions, markers := versionsOf(t, admin, bucket)
	if len(markers) == 0 {
		t.Fatal("prune deleted nothing")
	}

	// The admin rolls the repository back to the first snapshot's time.
	for _, v := range versions {
		if !aws.ToTime(v.LastModified).Before(at) {
			deleteVersion(t, admin, bucket, aws.ToString(v.Key), aws.ToString(v.VersionId))
		}
	}
	for _, m := range markers {
		if !aws.ToTime(m.LastModified).Before(at) {
			deleteVersion(t, admin, bucket, aws.ToString(m.Key), aws.ToString(m.VersionId))
		}
	}

	if snaps := resticSnapshots(t, restic("snapshots", "--json")); len(snaps) != 1 || snaps[0].ID != older {
		t.Fatalf("snapshots after the roll-back: %+v, want only %s", snaps, older)
	}
	restic("check", "--read-data")
	dst := t.TempDir()
	restic("restore", older, "--target", dst)
	for name, data := range first {
		got, err := os.ReadFile(filepath.Join(dst, src, filepath.FromSlash(name)))
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("restic restore of %s: %d bytes, %v; want the first snapshot's %d", name, len(got), err, len(data))
		}
	}
}

// deleteVersion deletes one version or delete marker through s3seal with
// the governance bypass.
func deleteVersion(t *testing.T, c *s3.Client, bucket, key, vid string) {
	t.Helper()
	if _, err := c.DeleteObject(ctxT(t), &s3.DeleteObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), VersionId: aws.String(vid),
		BypassGovernanceRetention: aws.Bool(true)}); err != nil {
		t.Fatalf("DELETE %s?versionId=%s with the bypass: %v", key, vid, err)
	}
}

type resticSnapshot struct {
	ID   string    `json:"id"`
	Time time.Time `json:"time"`
}

func resticSnapshots(t *testing.T, out string) []resticSnapshot {
	t.Helper()
	var snaps []resticSnapshot
	if err := json.Unmarshal([]byte(out), &snaps); err != nil {
		t.Fatalf("restic snapshots --json: %v\n%s", err, out)
	}
	return snaps
}
