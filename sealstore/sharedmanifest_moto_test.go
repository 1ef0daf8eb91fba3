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
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Enabled"); err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{"k1": mustKey(t), "k2": mustKey(t), "k3": mustKey(t)}
	kr, _ := crypto.NewKeyring("k1", keys)
	f.st, _ = New(f.be, kr, Options{SpoolDir: t.TempDir()})
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
	f.st, _ = New(f.be, kr, Options{SpoolDir: t.TempDir()}) // nothing cached
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
