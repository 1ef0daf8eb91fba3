package sealstore

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// keyVersions lists every version and delete marker of key in bkt, as
// the store holds them.
func (f *fixture) keyVersions(t *testing.T, bkt, key string) []backend.VersionEntry {
	t.Helper()
	out, err := f.be.ListObjectVersions(f.ctx, backend.ListVersionsInput{Bucket: bkt, Prefix: key})
	if err != nil {
		t.Fatal(err)
	}
	var es []backend.VersionEntry
	for _, e := range out.Entries {
		if e.Key == key {
			es = append(es, e)
		}
	}
	return es
}

// wantOnlyMarker checks that key's one version is the delete marker vid.
func (f *fixture) wantOnlyMarker(t *testing.T, bkt, key, vid string) {
	t.Helper()
	es := f.keyVersions(t, bkt, key)
	if len(es) != 1 || !es[0].DeleteMarker || es[0].VersionID != vid || !es[0].IsLatest {
		t.Fatalf("%s: versions %+v, want only the delete marker %q", key, es, vid)
	}
	if _, err := f.st.Head(f.ctx, bkt, key); !backend.IsNotFound(err) {
		t.Fatalf("%s: HEAD %v, want not found", key, err)
	}
}

// deleteWithoutVersionsMakesMarker: in a bucket whose versioning is
// Enabled, a delete without version id of a key that has no version at
// all makes a delete marker and says so (DeleteObject's
// x-amz-delete-marker and version id, DeleteObjects' DeleteMarker and
// DeleteMarkerVersionId), as S3 does, and the key then holds that marker
// alone. In a bucket without versioning it makes nothing.
func deleteWithoutVersionsMakesMarker(t *testing.T, f *fixture) {
	out, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "plain"})
	if err != nil || out.DeleteMarker || out.VersionID != "" {
		t.Fatalf("delete of a missing key without versioning: %+v, %v, want nothing made", out, err)
	}
	if es := f.keyVersions(t, bucket, "plain"); len(es) != 0 {
		t.Fatalf("without versioning: versions %+v, want none", es)
	}

	f.enableVersioning(t)
	out, err = f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never"})
	if err != nil || !out.DeleteMarker || out.VersionID == "" {
		t.Fatalf("DeleteVersion of a key without versions: %+v, %v, want a delete marker", out, err)
	}
	f.wantOnlyMarker(t, bucket, "never", out.VersionID)

	res, err := f.st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "never2"}, {Key: "never3"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []string{"never2", "never3"} {
		r := res[i]
		if r.Key != key || r.Code != "" || !r.DeleteMarker || r.DeleteMarkerVersionID == "" {
			t.Fatalf("DeleteEntries of %s, a key without versions: %+v, want a delete marker", key, r)
		}
		f.wantOnlyMarker(t, bucket, key, r.DeleteMarkerVersionID)
	}

	// A key whose current version is a delete marker gets another one.
	out2, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never"})
	if err != nil || !out2.DeleteMarker || out2.VersionID == "" || out2.VersionID == out.VersionID {
		t.Fatalf("delete over a delete marker: %+v, %v, want a new delete marker", out2, err)
	}
	if es := f.keyVersions(t, bucket, "never"); len(es) != 2 || !es[0].DeleteMarker || !es[1].DeleteMarker {
		t.Fatalf("after a second delete: versions %+v, want two delete markers", es)
	}
}

func TestDeleteWithoutVersionsMakesMarker(t *testing.T) {
	deleteWithoutVersionsMakesMarker(t, newFixture(t))
}

// TestDeleteWithoutVersionsMakesMarkerOnMoto: moto makes no delete marker
// for a key without versions (it answers as a bucket without versioning
// does); s3seal makes the one S3 would have.
func TestDeleteWithoutVersionsMakesMarkerOnMoto(t *testing.T) {
	deleteWithoutVersionsMakesMarker(t, motoFixture(t))
}

// TestDeleteWithoutVersionsUnderDefaultRetentionOnMoto: in a bucket with
// a default retention s3seal makes no marker moto does not make (the way
// it makes one would leave a locked version behind): the delete
// succeeds and the key holds nothing. In a bucket with Object Lock and
// no default retention the marker is made.
func TestDeleteWithoutVersionsUnderDefaultRetentionOnMoto(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb, ret = "worm-free", "worm-ret"
	createLockBucket(f.ctx, t, s3be, lb)
	createLockBucket(f.ctx, t, s3be, ret)
	conf := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>` +
		`<Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	if _, err := s3be.Forward(f.ctx, backend.RawRequest{Method: http.MethodPut, Bucket: ret, Query: url.Values{"object-lock": {""}},
		Body: []byte(conf)}); err != nil {
		t.Fatal(err)
	}
	out, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: lb, Key: "never"})
	if err != nil || !out.DeleteMarker || out.VersionID == "" {
		t.Fatalf("Object Lock without default retention: %+v, %v, want a delete marker", out, err)
	}
	f.wantOnlyMarker(t, lb, "never", out.VersionID)

	out, err = f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: ret, Key: "never"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.keyVersions(t, ret, "never") {
		if !e.DeleteMarker {
			t.Fatalf("default retention: a version %+v was left behind (answer %+v)", e, out)
		}
	}
}

// TestDeleteWithoutVersionsSuspendedOnMoto: a suspended bucket on moto
// gets no marker from s3seal (moto would need one with version id
// "null", which it cannot make), and keeps nothing.
func TestDeleteWithoutVersionsSuspendedOnMoto(t *testing.T) {
	f := motoFixture(t)
	if err := f.be.PutBucketVersioning(f.ctx, bucket, "Suspended"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never"}); err != nil {
		t.Fatal(err)
	}
	for _, e := range f.keyVersions(t, bucket, "never") {
		if !e.DeleteMarker {
			t.Fatalf("suspended: a version %+v was left behind", e)
		}
	}
}

// lostPutAnswer writes every PUT it is given and then answers the first
// one with a transport failure, as a store whose answer was lost does.
type lostPutAnswer struct {
	backend.Store
	lost atomic.Bool
}

func (l *lostPutAnswer) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	out, err := l.Store.PutObject(ctx, in)
	if err == nil && l.lost.CompareAndSwap(false, true) {
		return backend.PutOutput{}, &backend.Error{Op: "PutObject", Err: errors.New("connection reset")}
	}
	return out, err
}

// TestDeleteWithoutVersionsLostPlaceholderAnswerOnMoto: when the answer
// to the placeholder's PUT is lost, s3seal knows its placeholder again
// by a HEAD, makes the marker and removes the placeholder all the same.
func TestDeleteWithoutVersionsLostPlaceholderAnswerOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	lp := &lostPutAnswer{Store: f.be}
	st, err := New(Direct(lp), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never"})
	if !lp.lost.Load() {
		t.Fatal("no placeholder was written")
	}
	if err != nil || !out.DeleteMarker || out.VersionID == "" {
		t.Fatalf("DeleteVersion with the placeholder's answer lost: %+v, %v, want a delete marker", out, err)
	}
	f.wantOnlyMarker(t, bucket, "never", out.VersionID)
}

// markerCalls counts what missingKeyMarkers asks of a store.
type markerCalls struct {
	backend.Store
	versioning, puts atomic.Int64
}

func (m *markerCalls) GetBucketVersioning(ctx context.Context, bucket string) (string, error) {
	m.versioning.Add(1)
	return m.Store.GetBucketVersioning(ctx, bucket)
}

func (m *markerCalls) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	m.puts.Add(1)
	return m.Store.PutObject(ctx, in)
}

// TestDeleteWithoutVersionsCostsNothingWhereStoreMarks: a store that
// makes the marker itself (the embedded store, S3) is asked nothing more
// for a delete of a key without versions; nor is one for a delete of an
// object that is there, with versioning or without.
func TestDeleteWithoutVersionsCostsNothingWhereStoreMarks(t *testing.T) {
	f := newFixture(t)
	mc := &markerCalls{Store: f.be}
	st, err := New(Direct(mc), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f.put(t, "here", []byte("data"))
	if _, err := st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "here"}); err != nil {
		t.Fatal(err)
	}
	f.enableVersioning(t)
	f.put(t, "here", []byte("data"))
	if _, err := st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "here"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "never"}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "never2"}, {Key: "here"}}); err != nil {
		t.Fatal(err)
	}
	if v, p := mc.versioning.Load(), mc.puts.Load(); v != 0 || p != 0 {
		t.Fatalf("%d GetBucketVersioning and %d PUTs, want none", v, p)
	}
}
