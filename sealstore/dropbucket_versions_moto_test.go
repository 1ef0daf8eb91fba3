package sealstore

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// reservedVersions lists every version and delete marker under prefix, as
// "key@versionid" ("key@versionid(marker)" for a delete marker).
func (f *fixture) reservedVersions(t *testing.T, prefix string) []string {
	t.Helper()
	var got []string
	in := backend.ListVersionsInput{Bucket: bucket, Prefix: prefix}
	for {
		out, err := f.be.ListObjectVersions(f.ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range out.Entries {
			s := e.Key + "@" + e.VersionID
			if e.DeleteMarker {
				s += "(marker)"
			}
			got = append(got, s)
		}
		if !out.IsTruncated {
			return got
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
}

// deleteClientVersions deletes every client version and delete marker by
// id, as s3-tests (and `aws s3api`) empty a versioned bucket: listing
// versions, then DeleteObjects with VersionId.
func (f *fixture) deleteClientVersions(t *testing.T, keep func(backend.VersionEntry) bool) {
	t.Helper()
	page, err := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
	if err != nil || page.IsTruncated {
		t.Fatalf("versions: %+v %v", page, err)
	}
	var del []DeleteEntry
	for _, e := range page.Entries {
		if keep == nil || !keep(e.VersionEntry) {
			del = append(del, DeleteEntry{Key: e.Key, VersionID: e.VersionID})
		}
	}
	res, err := f.st.DeleteEntries(f.ctx, bucket, del)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Code != "" {
			t.Fatalf("delete %s@%s: %s %s", r.Key, r.VersionID, r.Code, r.Message)
		}
	}
}

// TestDeleteVersionedBucketOnMoto: in a versioned bucket, an old version
// or a delete marker of a client key keeps the bucket (BucketNotEmpty)
// and nothing of s3seal's is touched, not even an upload in progress.
// Once the client has deleted every version and marker by id, as s3-tests
// cleans its buckets, DeleteBucket removes every version and marker
// s3seal's deletes left under .s3seal/ and the bucket goes.
func TestDeleteVersionedBucketOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	data := randBytes(70000, 31)
	f.completeSmall(t, "mp", data)
	f.completeSmall(t, "gone", randBytes(1000, 32))
	f.put(t, "plain", []byte("x"))
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 33))
	// Only delete markers are current: a listing shows nothing.
	for _, k := range []string{"mp", "gone", "plain"} {
		if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: k}); err != nil {
			t.Fatal(err)
		}
	}
	// Every version but mp's (its multipart version behind its marker)
	// goes by id.
	f.deleteClientVersions(t, func(e backend.VersionEntry) bool { return e.Key == "mp" })
	before := f.reservedVersions(t, ReservedPrefix)

	err := f.st.DeleteBucket(f.ctx, bucket)
	if errorCode(err) != "BucketNotEmpty" {
		t.Fatalf("with an old client version left: %v", err)
	}
	if after := f.reservedVersions(t, ReservedPrefix); !slices.Equal(before, after) {
		t.Fatalf("BucketNotEmpty touched s3seal's versions:\n%q\n%q", before, after)
	}
	if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
		t.Fatalf("upload after BucketNotEmpty: %v", err)
	}
	page, _ := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
	if len(page.Entries) != 2 || !page.Entries[0].DeleteMarker || page.Entries[1].DeleteMarker {
		t.Fatalf("client versions left: %+v", page.Entries)
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}) // no manifest cached
	f.st, fresh = fresh, f.st
	if got, err := f.readVersion(t, "mp", page.Entries[1].VersionID); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("multipart version after BucketNotEmpty: %d bytes, %v", len(got), err)
	}
	f.st = fresh

	f.deleteClientVersions(t, nil)
	if left := f.reservedVersions(t, ReservedPrefix); len(left) == 0 {
		t.Fatal("s3seal's deletes left no versions under .s3seal/: the test proves nothing")
	}
	if err := f.st.DeleteBucket(f.ctx, bucket); err != nil {
		t.Fatalf("bucket emptied of client versions: %v", err)
	}
	if err := f.be.HeadBucket(f.ctx, bucket); !backend.IsNotFound(err) {
		t.Fatalf("bucket still there: %v", err)
	}
}

// TestGCVersionedBucketOnMoto: in a versioned bucket, s3seal's deletes of
// its own objects (a manifest whose version was deleted, the upload state
// of a completed upload) leave delete markers and old versions, and gc's
// deletes would too. gc removes such objects by version id, every version
// and marker, while a manifest that an old version (behind a delete
// marker) still needs is kept with all its versions.
func TestGCVersionedBucketOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	kept := randBytes(1000, 41)
	f.completeSmall(t, "kept", kept)
	keptManifest := f.reservedKeys(t, manifestsPrefix)
	f.completeSmall(t, "byid", randBytes(1000, 42))
	f.completeSmall(t, "crashed", randBytes(1000, 43))
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "kept"}); err != nil {
		t.Fatal(err)
	}
	ib, err := f.be.HeadObject(f.ctx, bucket, "byid")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "byid", VersionID: ib.VersionID}); err != nil {
		t.Fatal(err)
	}
	// A version deleted behind s3seal's back: its manifest is current
	// garbage.
	ic, err := f.be.HeadObject(f.ctx, bucket, "crashed")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.be.DeleteObjectVersion(f.ctx, backend.DeleteInput{Bucket: bucket, Key: "crashed", VersionID: ic.VersionID}); err != nil {
		t.Fatal(err)
	}

	later := func() time.Time { return time.Now().Add(time.Hour) }
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true, Now: later})
	if err != nil {
		t.Fatalf("gc: %+v %v", found, err)
	}
	var manifests int
	for _, g := range found {
		if !g.Removed {
			t.Errorf("not removed: %+v", g)
		}
		if g.Kind == "manifest" {
			manifests++
		}
	}
	if manifests != 2 {
		t.Errorf("gc found %d manifests, want 2 (byid's hidden one, crashed's current one): %+v", manifests, found)
	}
	// What is left under .s3seal/ is kept's manifest, one version.
	var want []string
	for _, v := range f.reservedVersions(t, ReservedPrefix) {
		if !strings.HasPrefix(v, keptManifest[0]+"@") || strings.HasSuffix(v, "(marker)") {
			want = append(want, v)
		}
	}
	if len(want) != 0 {
		t.Fatalf("gc left versions under .s3seal/: %q", want)
	}
	if n := len(f.reservedVersions(t, keptManifest[0])); n != 1 {
		t.Fatalf("kept's manifest has %d versions, want 1", n)
	}
	page, _ := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket, Prefix: "kept"})
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	f.st = fresh
	for _, e := range page.Entries {
		if e.DeleteMarker {
			continue
		}
		if got, err := f.readVersion(t, "kept", e.VersionID); err != nil || !bytes.Equal(got, kept) {
			t.Fatalf("old version behind the marker after gc: %v", err)
		}
	}
}

// TestLockedInternalVersionsOnMoto: in a bucket whose default retention
// locks s3seal's own objects, a version the store refuses to delete stays
// hidden (its delete marker is kept, so it does not become current
// again), gc reports it as not removed, and DeleteBucket answers
// BucketNotEmpty, as S3 does for a bucket holding locked versions.
func TestLockedInternalVersionsOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	f.completeSmall(t, "mp", randBytes(1000, 51))
	locked := f.reservedKeys(t, manifestsPrefix)[0]
	f.deleteClientVersions(t, nil) // takes the manifest: a marker over its version
	vs, err := f.st.keyVersions(f.ctx, bucket, locked)
	if err != nil || len(vs) != 2 || !vs[0].DeleteMarker || vs[1].DeleteMarker {
		t.Fatalf("manifest versions: %+v %v", vs, err)
	}
	f.st, _ = New(Direct(&lockedVersion{countingStore: f.be, id: backend.ObjectID{Key: locked, VersionID: vs[1].VersionID}}),
		f.kr, Options{SpoolDir: t.TempDir()})

	later := func() time.Time { return time.Now().Add(time.Hour) }
	found, err := f.st.GC(f.ctx, bucket, GCOptions{Delete: true, Now: later})
	if errorCode(err) != "AccessDenied" {
		t.Fatalf("gc: %v, want the store's refusal", err)
	}
	for _, g := range found {
		if g.Removed == (g.Key == locked) {
			t.Errorf("%+v", g)
		}
	}
	left := f.reservedVersions(t, ReservedPrefix)
	if len(left) != 2 || !strings.HasPrefix(left[0], locked+"@") || !strings.HasSuffix(left[0], "(marker)") ||
		!strings.HasPrefix(left[1], locked+"@") || strings.HasSuffix(left[1], "(marker)") {
		t.Fatalf("left under .s3seal/: %q, want the locked manifest behind its marker", left)
	}
	if n := len(f.reservedKeys(t, ReservedPrefix)); n != 0 {
		t.Fatalf("a locked version became current again")
	}
	if err := f.st.DeleteBucket(f.ctx, bucket); errorCode(err) != "BucketNotEmpty" {
		t.Fatalf("DeleteBucket with a locked version of s3seal's: %v", err)
	}
	if after := f.reservedVersions(t, ReservedPrefix); !slices.Equal(left, after) {
		t.Fatalf("DeleteBucket changed the locked versions: %q", after)
	}
}

// lockedVersion refuses to delete one version, as a store does under
// Object Lock (delete markers are never locked).
type lockedVersion struct {
	*countingStore
	id backend.ObjectID
}

func (l *lockedVersion) DeleteVersions(ctx context.Context, bucket string, objs []backend.ObjectID) ([]backend.DeleteResult, error) {
	var rest []backend.ObjectID
	var out []backend.DeleteResult
	for _, o := range objs {
		if o == l.id {
			out = append(out, backend.DeleteResult{Key: o.Key, VersionID: o.VersionID, Code: "AccessDenied", Message: "locked"})
		} else {
			rest = append(rest, o)
		}
	}
	res, err := l.countingStore.DeleteVersions(ctx, bucket, rest)
	return append(out, res...), err
}

// TestDeleteVersionedBucketNotEmptyKeepsUploads: in a versioned bucket whose
// only client content is an old version behind a delete marker (S3 counts
// both: the bucket is not empty), DeleteBucket answers BucketNotEmpty and
// touches nothing, as in an unversioned bucket with a client object left:
// the multipart upload in progress stays alive and takes parts.
func TestDeleteVersionedBucketNotEmptyKeepsUploads(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	f.put(t, "old", []byte("an old version the client keeps"))
	if err := f.st.Delete(f.ctx, bucket, "old"); err != nil { // a delete marker
		t.Fatal(err)
	}
	live := f.create(t, "inprogress")
	f.part(t, f.st, "inprogress", live, 1, randBytes(10, 2))

	err := f.st.DeleteBucket(f.ctx, bucket)
	t.Logf("DeleteBucket: %v", err)
	if backend.ErrorCode(err) != "BucketNotEmpty" {
		if se, ok := err.(*Error); !ok || se.Code != "BucketNotEmpty" {
			t.Fatalf("DeleteBucket of a bucket with a version left: %v, want BucketNotEmpty", err)
		}
	}
	if _, err := f.be.ListParts(f.ctx, backend.ListPartsInput{Bucket: bucket, Key: "inprogress", UploadID: live}); err != nil {
		t.Errorf("the client's upload after a refused DeleteBucket: %v, want it alive", err)
	}
	if _, err := f.st.UploadPart(f.ctx, UploadPartInput{Bucket: bucket, Key: "inprogress", UploadID: live, PartNumber: 2,
		Body: bytes.NewReader([]byte("more")), Size: 4}); err != nil {
		t.Errorf("UploadPart after a refused DeleteBucket: %v", err)
	}
}

// TestDeleteVersionedBucketAfterMultipart: a versioned bucket that held a
// multipart object can be deleted through s3seal once the client removed
// every version and delete marker it can see: the versions s3seal's
// manifest and upload state left under .s3seal/ (hidden from listings,
// refused to the client by CheckKey) go with it.
func TestDeleteVersionedBucketAfterMultipart(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	f.completeSmall(t, "mp", randBytes(1000, 1))
	// The client removes every version and marker it can list.
	for {
		page, err := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Entries) == 0 {
			break
		}
		for _, e := range page.Entries {
			if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: e.Key, VersionID: e.VersionID}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < 2; i++ {
		err := f.st.DeleteBucket(f.ctx, bucket)
		t.Logf("DeleteBucket #%d of a bucket with no client version left: %v", i+1, err)
		if err == nil {
			return
		}
	}
	t.Errorf("a versioned bucket emptied of every client version stays undeletable through s3seal")
}

// TestDeleteBucketWithNullVersionDocOnMoto: a bucket document written
// before versioning was turned on is the "null" version, which moto
// cannot HEAD by id (400). DeleteBucket of such a bucket, versioning
// suspended as s3-tests leave it, still removes the document and the
// bucket.
func TestDeleteBucketWithNullVersionDocOnMoto(t *testing.T) {
	f := motoFixture(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte(`{"id":"someone"}`)); err != nil {
		t.Fatal(err)
	}
	f.enableVersioning(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Suspended"); err != nil {
		t.Fatal(err)
	}
	if left := f.reservedVersions(t, BucketDocPrefix); !slices.Equal(left, []string{BucketDocPrefix + "owner@null"}) {
		t.Fatalf("document versions %q, want the null version only", left)
	}
	if err := f.st.DeleteBucket(f.ctx, bucket); err != nil {
		t.Fatalf("DeleteBucket: %v", err)
	}
	if err := f.be.HeadBucket(f.ctx, bucket); !backend.IsNotFound(err) {
		t.Fatalf("bucket still there: %v", err)
	}
}
