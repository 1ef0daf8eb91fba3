package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// readVersion reads one version through s3seal.
func (f *fixture) readVersion(t *testing.T, key, vid string) ([]byte, error) {
	t.Helper()
	_, rd, err := f.st.GetVersion(f.ctx, bucket, key, vid, nil)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(rd)
}

// TestVersionedBucketOnMoto: in a versioned bucket every version
// decrypts to its own bytes, a multipart version keeps its manifest while
// it exists (overwrites and delete markers do not take it), and only its
// permanent deletion removes it.
func TestVersionedBucketOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	manifests := func() int { return len(f.reservedKeys(t, manifestsPrefix)) }
	d1, d2, d3 := []byte("version one"), randBytes(70000, 21), []byte("version three!")
	i1 := f.put(t, "k", d1)
	id := f.create(t, "k")
	e := f.part(t, f.st, "k", id, 1, d2)
	i2, err := f.st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "k", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})})
	if err != nil {
		t.Fatal(err)
	}
	i3 := f.put(t, "k", d3)
	if i1.VersionID == "" || i2.VersionID == "" || i3.VersionID == "" || i1.VersionID == i2.VersionID || i2.VersionID == i3.VersionID {
		t.Fatalf("version ids %q %q %q", i1.VersionID, i2.VersionID, i3.VersionID)
	}
	if n := manifests(); n != 1 {
		t.Fatalf("after an overwrite of the multipart version: %d manifests, want 1", n)
	}
	del, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k"})
	if err != nil || !del.DeleteMarker || del.VersionID == "" {
		t.Fatalf("delete: %+v %v, want a delete marker", del, err)
	}
	if _, err := f.st.Head(f.ctx, bucket, "k"); !backend.IsNotFound(err) {
		t.Fatalf("HEAD after the delete marker: %v", err)
	}
	if n := manifests(); n != 1 {
		t.Fatalf("after a delete marker: %d manifests, want 1", n)
	}
	// gc sees that an older version is made of the manifest's parts (it
	// finds only the versions of the completed upload's state).
	g, err := f.st.GC(f.ctx, bucket, GCOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range g {
		if x.Kind != "upload-state" {
			t.Fatalf("gc: %+v, want only the upload state", x)
		}
	}
	for _, v := range []struct {
		id   string
		want []byte
	}{{i1.VersionID, d1}, {i2.VersionID, d2}, {i3.VersionID, d3}} {
		got, err := f.readVersion(t, "k", v.id)
		if err != nil || !bytes.Equal(got, v.want) {
			t.Fatalf("version %s: %d bytes, %v", v.id, len(got), err)
		}
		info, err := f.st.HeadVersion(f.ctx, bucket, "k", v.id)
		if err != nil || info.Size != int64(len(v.want)) || info.VersionID != v.id {
			t.Fatalf("HEAD version %s: %+v %v", v.id, info, err)
		}
	}
	// A range of the multipart version.
	_, rd, err := f.st.GetVersion(f.ctx, bucket, "k", i2.VersionID, &Range{First: 65530, Last: 65545})
	if err != nil {
		t.Fatal(err)
	}
	part, _ := io.ReadAll(rd)
	rd.Close()
	if !bytes.Equal(part, d2[65530:65546]) {
		t.Fatalf("range of version 2: %x", part)
	}

	// The listing: the marker, then the versions newest first, with
	// plaintext sizes and ETags.
	page, err := f.st.ListVersions(f.ctx, backend.ListVersionsInput{Bucket: bucket})
	if err != nil {
		t.Fatal(err)
	}
	want := []backend.VersionEntry{
		{Key: "k", VersionID: del.VersionID, IsLatest: true, DeleteMarker: true},
		{Key: "k", VersionID: i3.VersionID, Size: int64(len(d3)), ETag: fmt.Sprintf("%x", md5.Sum(d3))},
		{Key: "k", VersionID: i2.VersionID, Size: int64(len(d2)), ETag: i2.ETag},
		{Key: "k", VersionID: i1.VersionID, Size: int64(len(d1)), ETag: fmt.Sprintf("%x", md5.Sum(d1))},
	}
	if len(page.Entries) != len(want) {
		t.Fatalf("listing: %+v", page.Entries)
	}
	for i, w := range want {
		g := page.Entries[i]
		if g.Key != w.Key || g.VersionID != w.VersionID || g.IsLatest != w.IsLatest || g.DeleteMarker != w.DeleteMarker ||
			(!w.DeleteMarker && (g.Size != w.Size || g.ETag != w.ETag)) {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}

	// Deleting version 2 for good takes its manifest; the others stay.
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: i2.VersionID}); err != nil {
		t.Fatal(err)
	}
	if n := manifests(); n != 0 {
		t.Fatalf("after deleting version 2: %d manifests, want 0", n)
	}
	if _, err := f.readVersion(t, "k", i2.VersionID); err == nil {
		t.Fatal("deleted version still readable")
	}
	if got, err := f.readVersion(t, "k", i1.VersionID); err != nil || !bytes.Equal(got, d1) {
		t.Fatalf("version 1 after deleting version 2: %q %v", got, err)
	}
	// Removing the delete marker brings version 3 back.
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: del.VersionID}); err != nil {
		t.Fatal(err)
	}
	if got, err := f.readVersion(t, "k", ""); err != nil || !bytes.Equal(got, d3) {
		t.Fatalf("current after removing the marker: %q %v", got, err)
	}
}

// TestVersionedDeleteObjectsOnMoto: DeleteObjects with version ids makes
// markers for entries without one and removes the versions named, and
// only those take their manifests along.
func TestVersionedDeleteObjectsOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	manifests := func() int { return len(f.reservedKeys(t, manifestsPrefix)) }
	f.completeSmall(t, "a", randBytes(100, 1))
	f.completeSmall(t, "b", randBytes(100, 2))
	ib, err := f.st.Head(f.ctx, bucket, "b")
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "a"}, {Key: "b", VersionID: ib.VersionID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Code != "" || !res[0].DeleteMarker || res[0].DeleteMarkerVersionID == "" ||
		res[1].Code != "" || res[1].VersionID != ib.VersionID {
		t.Fatalf("results %+v", res)
	}
	if n := manifests(); n != 1 {
		t.Fatalf("%d manifests, want 1 (a's, whose version stays behind its marker)", n)
	}
}

// TestSwappedVersionRefused: a backend that answers, for a version of one
// key, another key's version (its bytes and metadata) is caught by the
// name binding every version carries.
func TestSwappedVersionRefused(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	ia := f.put(t, "a", []byte("secret of a"))
	f.put(t, "a", []byte("newer a"))
	obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: "a", VersionID: ia.VersionID})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(obj.Body)
	obj.Body.Close()
	f.put(t, "b", []byte("b's own"))
	out, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: "b", Body: bytes.NewReader(raw), Size: int64(len(raw)), Meta: obj.Info.Meta})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.readVersion(t, "b", out.VersionID); !errors.Is(err, ErrIntegrity) {
		t.Fatalf("GET of the swapped version: %v, want an integrity error", err)
	}
	if _, err := f.st.HeadVersion(f.ctx, bucket, "b", out.VersionID); !errors.Is(err, ErrIntegrity) {
		t.Fatalf("HEAD of the swapped version: %v, want an integrity error", err)
	}
}

// TestConditionalDeleteOnMoto: the condition is the plaintext's, and the
// backend delete is pinned to the version that matched.
func TestConditionalDeleteOnMoto(t *testing.T) {
	f := motoFixture(t)
	info := f.put(t, "k", []byte("data"))
	c := &DeleteCondition{IfMatch: []string{"0123"}, Size: -1}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: c}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("wrong ETag: %v", err)
	}
	c = &DeleteCondition{IfMatch: []string{info.ETag}, Size: 4, LastModified: time.Now().Add(-time.Hour)}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: c}); errorCode(err) != "PreconditionFailed" {
		t.Fatalf("wrong time: %v", err)
	}
	c.LastModified = time.Time{}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: c}); err != nil {
		t.Fatalf("matching condition: %v", err)
	}
	if _, err := f.st.Head(f.ctx, bucket, "k"); !backend.IsNotFound(err) {
		t.Fatalf("after the delete: %v", err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", Cond: c}); errorCode(err) != "NoSuchKey" {
		t.Fatalf("missing key: %v", err)
	}
}

func errorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return backend.ErrorCode(err)
}

// swapVersionStore answers a GET of version asked with version served
// (the same key's other, authentic version), headers included, as a
// store that rolls one version back to another, or one that ignores
// ?versionId, would.
type swapVersionStore struct {
	backend.Store
	asked, served string
}

func (s *swapVersionStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if in.VersionID == s.asked {
		in.VersionID = s.served
	}
	return s.Store.GetObject(ctx, in)
}

// TestGetVersionRefusesAnotherVersion: a GET of version A that the store
// answers with version B of the same key (B's own x-amz-version-id in the
// answer) is refused: s3seal never serves B's bytes for a request naming A.
func TestGetVersionRefusesAnotherVersion(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	a := f.put(t, "k", []byte("version A"))
	b := f.put(t, "k", []byte("version B, current"))
	st, err := New(Direct(&swapVersionStore{Store: f.be, asked: a.VersionID, served: b.VersionID}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	info, rd, err := st.GetVersion(f.ctx, bucket, "k", a.VersionID, nil)
	if err != nil {
		t.Logf("refused: %v", err)
		return
	}
	defer rd.Close()
	got, _ := io.ReadAll(rd)
	t.Errorf("GET version %s answered %q with version id %q; want the answer refused (another version than asked)", a.VersionID, got, info.VersionID)
}
