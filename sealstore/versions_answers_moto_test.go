package sealstore

import (
	"bytes"
	"context"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// silentVersions answers writes and deletes without their version id and
// delete-marker flag, as moto does in a suspended bucket.
type silentVersions struct{ backend.Store }

func (s silentVersions) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	out, err := s.Store.PutObject(ctx, in)
	out.VersionID = ""
	return out, err
}

func (s silentVersions) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	_, err := s.Store.DeleteObjectVersion(ctx, in)
	return backend.DeleteOutput{}, err
}

// TestSilentVersionAnswersKeepManifestsOnMoto: a version with an id of
// its own is never taken for replaced, whatever the answer of the write or
// delete over it says: its manifest stays and it stays readable.
func TestSilentVersionAnswersKeepManifestsOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	data := randBytes(100, 5)
	f.completeSmall(t, "k", data)
	f.completeSmall(t, "d", data)
	var ids []string
	for _, k := range []string{"k", "d"} {
		info, err := f.st.Head(f.ctx, bucket, k)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, info.VersionID)
	}
	st, err := New(Direct(silentVersions{f.be}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "k", Body: bytes.NewReader([]byte("new")), Size: 3}); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(f.ctx, bucket, "d"); err != nil {
		t.Fatal(err)
	}
	// A fresh store: nothing cached, the manifests are read from the bucket.
	if f.st, err = New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	for i, k := range []string{"k", "d"} {
		got, err := f.readVersion(t, k, ids[i])
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("%s version %s after a silent write or delete: %v", k, ids[i], err)
		}
	}
}

// lockedVersions refuses every delete of a named version, as a backend
// does for a version under Object Lock.
type lockedVersions struct{ backend.Store }

func (s lockedVersions) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	if in.VersionID != "" {
		return backend.DeleteOutput{}, &backend.Error{Op: "DeleteObject", Code: "AccessDenied", StatusCode: 403, Message: "locked"}
	}
	return s.Store.DeleteObjectVersion(ctx, in)
}

func (s lockedVersions) DeleteVersions(ctx context.Context, bucket string, objs []backend.ObjectID) ([]backend.DeleteResult, error) {
	res := make([]backend.DeleteResult, len(objs))
	for i, o := range objs {
		res[i] = backend.DeleteResult{Key: o.Key, VersionID: o.VersionID, Code: "AccessDenied", Message: "locked"}
	}
	return res, nil
}

// TestRefusedVersionDeleteKeepsManifestOnMoto: a delete of a version that
// the backend refuses (a locked version) removes nothing s3seal keeps
// beside it, alone or in DeleteObjects.
func TestRefusedVersionDeleteKeepsManifestOnMoto(t *testing.T) {
	f := motoFixture(t)
	f.enableVersioning(t)
	data := randBytes(100, 6)
	f.completeSmall(t, "k", data)
	info, err := f.st.Head(f.ctx, bucket, "k")
	if err != nil {
		t.Fatal(err)
	}
	st, err := New(Direct(lockedVersions{f.be}), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.DeleteVersion(f.ctx, DeleteInput{Bucket: bucket, Key: "k", VersionID: info.VersionID}); backend.ErrorCode(err) != "AccessDenied" {
		t.Fatalf("delete of a locked version: %v", err)
	}
	res, err := st.DeleteEntries(f.ctx, bucket, []DeleteEntry{{Key: "k", VersionID: info.VersionID}})
	if err != nil || len(res) != 1 || res[0].Code != "AccessDenied" {
		t.Fatalf("DeleteObjects of a locked version: %+v %v", res, err)
	}
	if n := len(f.reservedKeys(t, manifestsPrefix)); n != 1 {
		t.Fatalf("%d manifests after refused deletes, want 1", n)
	}
}
