package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestRewrapCommandOnMoto runs `s3seal rewrap` against moto_server, which
// copies an object even when x-amz-copy-source-if-match names another
// ETag. On such a store a client's write during the run would get the old
// object's wrapped key, so rewrap refuses (exit 1, saying how to go on)
// and changes nothing, and its summary says it stopped, and why, never
// that there were no objects. The dry run before it says that the real
// run will need --no-concurrent-writers (in text and in JSON). With the
// flag it rewraps, and the object reads back through a server holding
// only the new key.
func TestRewrapCommandOnMoto(t *testing.T) {
	t.Parallel()
	moto := startMoto(t)
	oldKey, newKey := randomKey(t), randomKey(t)
	both := writeFile(t, t.TempDir(), "both.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"old": %q, "new": %q}}`, oldKey, newKey)))
	onlyOld := writeFile(t, t.TempDir(), "old.json", []byte(fmt.Sprintf(`{"primary": "old", "keys": {"old": %q}}`, oldKey)))
	onlyNew := writeFile(t, t.TempDir(), "new.json", []byte(fmt.Sprintf(`{"primary": "new", "keys": {"new": %q}}`, newKey)))

	p, c := startWithBucket(t, sealOpts{Backend: moto, KeysFile: onlyOld}, mustCreateBucket, "rot")
	body := patternBytes(7, 100000)
	putObj(t, c, "rot", "obj", body)
	p.Stop()

	rewrap := func(extra ...string) (int, string) {
		args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", both,
			"--backend-endpoint", moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", "rot", "--to", "new"}
		return runS3sealExit(t, nil, append(args, extra...)...)
	}
	code, out := rewrap("--dry-run")
	if code != 0 || !strings.Contains(out, "would-rewrap rot/obj") ||
		!strings.Contains(out, "the real run will stop unless given --no-concurrent-writers") {
		t.Fatalf("dry run on a store ignoring the copy condition: exit %d\n%s", code, out)
	}
	code, out = rewrap("--dry-run", "--json")
	if code != 0 || !strings.Contains(out, `"needs_no_concurrent_writers": true`) {
		t.Fatalf("dry run --json: exit %d\n%s", code, out)
	}
	code, out = rewrap()
	if code != 1 || !strings.Contains(out, "ignores x-amz-copy-source-if-match") || !strings.Contains(out, "--no-concurrent-writers") ||
		!strings.Contains(out, "rot/ under new: stopped before any object was rewrapped: ") || strings.Contains(out, "no objects") {
		t.Fatalf("rewrap on a store ignoring the copy condition: exit %d\n%s", code, out)
	}
	code, out = rewrap("--no-concurrent-writers")
	// Two: the object and the bucket's sealed owner document.
	if code != 0 || !strings.Contains(out, "rot/ under new: 3 rewrapped") {
		t.Fatalf("rewrap --no-concurrent-writers: exit %d\n%s", code, out)
	}

	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: onlyNew, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	if got := getObj(t, sdkFor(t, p), "rot", "obj"); md5Hex(got) != md5Hex(body) {
		t.Fatalf("object after rewrap differs")
	}
}

// TestTwoRewrapsThenDeleteOldVersions, with the real binary in front of
// moto: a multipart object (Go SDK) in a versioned bucket, `s3seal rewrap`
// run twice (two key rotations), then the noncurrent versions deleted by
// id with the aws CLI, as one cleans up after a rotation. The two rewraps
// give the object the same backend ETag, so their versions share one
// manifest; the delete of the older one must not take it away: the
// current object still reads in an s3seal process that has not cached the
// manifest (after a restart, on another replica).
func TestTwoRewrapsThenDeleteOldVersions(t *testing.T) {
	moto := startMoto(t)
	k1, k2, k3 := randomKey(t), randomKey(t), randomKey(t)
	dir := t.TempDir()
	only1 := writeFile(t, dir, "k1.json", []byte(fmt.Sprintf(`{"primary": "k1", "keys": {"k1": %q}}`, k1)))
	to2 := writeFile(t, dir, "k2.json", []byte(fmt.Sprintf(`{"primary": "k2", "keys": {"k1": %q, "k2": %q}}`, k1, k2)))
	to3 := writeFile(t, dir, "k3.json", []byte(fmt.Sprintf(`{"primary": "k3", "keys": {"k1": %q, "k2": %q, "k3": %q}}`, k1, k2, k3)))

	const b = "rot2"
	p, c := startWithBucket(t, sealOpts{Backend: moto, KeysFile: only1}, mustCreateVersionedBucket, b)
	ctx := ctxT(t)
	body := patternBytes(93, 6<<20+5)
	mp, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("backup.tar")})
	if err != nil {
		t.Fatal(err)
	}
	var parts []types.CompletedPart
	for i, chunk := range [][]byte{body[:5<<20], body[5<<20:]} {
		out, err := c.UploadPart(ctx, &s3.UploadPartInput{Bucket: aws.String(b), Key: aws.String("backup.tar"), UploadId: mp.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(chunk)})
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: out.ETag})
	}
	if _, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(b), Key: aws.String("backup.tar"),
		UploadId: mp.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}}); err != nil {
		t.Fatal(err)
	}
	p.Stop()
	for _, rot := range []struct{ keys, to string }{{to2, "k2"}, {to3, "k3"}} {
		args := []string{"rewrap", "--data-dir", filepath.Join(t.TempDir(), "d"), "--keys-file", rot.keys,
			"--backend-endpoint", moto.Endpoint, "--backend-region", "us-east-1", "--backend-path-style",
			"--backend-access-key", "x", "--backend-secret-key", "y", "--bucket", b, "--to", rot.to, "--no-concurrent-writers"}
		code, out := runS3sealExit(t, nil, args...)
		if code != 0 {
			t.Fatalf("rewrap to %s: exit %d\n%s", rot.to, code, out)
		}
		h, err := motoClient(t, moto).HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b), Key: aws.String("backup.tar")})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after rewrap to %s: backend version %s ETag %s\n%s", rot.to, aws.ToString(h.VersionId), aws.ToString(h.ETag), out)
	}
	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: to3, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	a := newAWSCLI(t, p)
	var lv struct {
		Versions []struct {
			VersionID string `json:"VersionId"`
			IsLatest  bool
		}
	}
	if err := json.Unmarshal([]byte(a.run("s3api", "list-object-versions", "--bucket", b)), &lv); err != nil || len(lv.Versions) != 3 {
		t.Fatalf("versions: %+v %v", lv, err)
	}
	for _, v := range lv.Versions {
		if !v.IsLatest {
			a.run("s3api", "delete-object", "--bucket", b, "--key", "backup.tar", "--version-id", v.VersionID)
		}
	}
	// A fresh process (a restart, another replica): the running one may
	// still hold the manifest in its cache.
	p.Stop()
	p = startS3seal(t, sealOpts{Backend: moto, KeysFile: to3, AccessKey: p.AccessKey, SecretKey: p.SecretKey})
	out, err := sdkFor(t, p).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String("backup.tar")})
	var got []byte
	if err == nil {
		got, err = io.ReadAll(out.Body)
		out.Body.Close()
	}
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("after two rewraps and deleting the noncurrent versions, the current object does not read: %d bytes, %v", len(got), err)
	}
}
