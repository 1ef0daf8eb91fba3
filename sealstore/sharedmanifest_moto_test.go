package sealstore

import (
	"bytes"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// TestDeleteEntriesKeepsSharedManifest: two rewraps by single copy give
// two versions of a multipart object one manifest (same oid, same backend
// ETag); deleting the older of them by id in a DeleteObjects batch must
// keep the manifest the current version reads by, and deleting the last
// version that uses it removes it.
func TestDeleteEntriesKeepsSharedManifest(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	keys := map[string][]byte{"k1": mustKey(t), "k2": mustKey(t), "k3": mustKey(t)}
	kr, _ := crypto.NewKeyring("k1", keys)
	f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 93)
	f.completeSmall(t, "mp", data)
	var vids []string
	for _, to := range []string{"k2", "k3"} {
		if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: to, NoWriters: true}, func(RewrapResult) {}); err != nil {
			t.Fatal(err)
		}
		bi, err := f.be.HeadObject(f.ctx, bucket, "mp")
		if err != nil {
			t.Fatal(err)
		}
		vids = append(vids, bi.VersionID)
	}
	cur, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	env, _, _ := crypto.ParseMetadata(cur.Meta)
	mkey := manifestKey(env.OID, strings.Trim(cur.ETag, `"`))

	res, err := f.st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "mp", VersionID: vids[0]}})
	if err != nil || res[0].Code != "" {
		t.Fatalf("delete %v %+v", err, res)
	}
	f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()}) // nothing cached
	if _, got, err := f.get(t, "mp", nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the current version no longer reads after its twin was deleted in a batch: %d bytes, %v", len(got), err)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, mkey); err != nil {
		t.Fatalf("shared manifest gone: %v", err)
	}

	// The last version made of it: now it goes.
	if res, err := f.st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "mp", VersionID: vids[1]}}); err != nil || res[0].Code != "" {
		t.Fatalf("delete %v %+v", err, res)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, mkey); err == nil {
		t.Fatal("the manifest of the last version stays after that version was deleted")
	}
}

// TestRewrapByPartsSharedManifestSurvivesDelete: a multipart object whose
// backend parts the rewrap's copy by parts cuts the same way (here one
// part, below copyPartSize; in production parts of exactly 1 GiB) keeps
// its backend ETag, so the old and the new version share one manifest
// key. Deleting the new version by id (a delete marker in a versioned
// bucket) keeps that manifest: the older version, current again, reads.
func TestRewrapByPartsSharedManifestSurvivesDelete(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 91)
	f.completeSmall(t, "mp", data)
	before, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 1000}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %+v", r)
		}
	}); err != nil {
		t.Fatal(err)
	}
	after, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("backend ETag before %s after %s; versions %s -> %s", before.ETag, after.ETag, before.VersionID, after.VersionID)
	if after.VersionID == before.VersionID {
		t.Fatal("rewrap made no new version")
	}
	// Undo the rewrap: delete the new version by id (what an admin does
	// to go back to the version before).
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "mp", VersionID: after.VersionID}); err != nil {
		t.Fatal(err)
	}
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()}) // nothing cached
	got, err := f.readVersion(t, "mp", before.VersionID)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the version before the rewrap no longer reads after the rewrapped version was deleted: %d bytes, %v", len(got), err)
	}
}

// TestSecondRewrapSharedManifestSurvivesDelete: in a versioned bucket a
// multipart object rewrapped twice by the single CopyObject (any object up
// to 5 GiB) gets the same backend ETag both times (the MD5 of the
// unchanged ciphertext), so the versions of the two runs share one
// manifest. Deleting the noncurrent versions by id (cleaning up versions
// under the retired keys) keeps it: the current version reads.
func TestSecondRewrapSharedManifestSurvivesDelete(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	keys := map[string][]byte{"k1": mustKey(t), "k2": mustKey(t), "k3": mustKey(t)}
	kr, _ := crypto.NewKeyring("k1", keys)
	f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 92)
	f.completeSmall(t, "mp", data)
	first, err := f.be.HeadObject(f.ctx, bucket, "mp")
	if err != nil {
		t.Fatal(err)
	}
	var vids []string
	for _, to := range []string{"k2", "k3"} {
		if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: to, NoWriters: true}, func(r RewrapResult) {
			if r.Status != RewrapDone {
				t.Errorf("rewrap to %s: %+v", to, r)
			}
		}); err != nil {
			t.Fatal(err)
		}
		bi, err := f.be.HeadObject(f.ctx, bucket, "mp")
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("after rewrap to %s: version %s backend ETag %s", to, bi.VersionID, bi.ETag)
		vids = append(vids, bi.VersionID)
	}
	// Remove the noncurrent versions, under the retired keys k1 and k2.
	for _, vid := range []string{first.VersionID, vids[0]} {
		if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "mp", VersionID: vid}); err != nil {
			t.Fatal(err)
		}
	}
	f.st, _ = New(Direct(f.be), kr, Options{SpoolDir: t.TempDir()}) // nothing cached
	_, got, err := f.get(t, "mp", nil)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("after deleting the noncurrent versions, the current version %s no longer reads: %d bytes, %v", vids[1], len(got), err)
	}
}
