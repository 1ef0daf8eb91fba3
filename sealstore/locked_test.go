package sealstore

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// lockedStore refuses to delete or overwrite one key, as a backend does
// with an object under Object Lock (a version delete or, in a bucket
// without versioning, any write).
type lockedStore struct {
	*countingStore
	key string
}

func (l *lockedStore) denied(op string) error {
	return &backend.Error{Op: op, Code: "AccessDenied", StatusCode: http.StatusForbidden, Message: "Access Denied because object protected by object lock."}
}

func (l *lockedStore) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if in.Key == l.key {
		return backend.CopyOutput{}, l.denied("CopyObject")
	}
	return l.countingStore.CopyObject(ctx, in)
}

func (l *lockedStore) DeleteObject(ctx context.Context, bucket, key string) error {
	if key == l.key {
		return l.denied("DeleteObject")
	}
	return l.countingStore.DeleteObject(ctx, bucket, key)
}

func (l *lockedStore) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	var rest []string
	var out []backend.DeleteResult
	for _, k := range keys {
		if k == l.key {
			out = append(out, backend.DeleteResult{Key: k, Code: "AccessDenied", Message: "locked"})
		} else {
			rest = append(rest, k)
		}
	}
	res, err := l.countingStore.DeleteObjects(ctx, bucket, rest)
	return append(out, res...), err
}

func (l *lockedStore) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (backend.DeleteOutput, error) {
	if in.Key == l.key {
		return backend.DeleteOutput{}, l.denied("DeleteObject")
	}
	return l.countingStore.DeleteObjectVersion(ctx, in)
}

func (l *lockedStore) DeleteVersions(ctx context.Context, bucket string, objs []backend.ObjectID) ([]backend.DeleteResult, error) {
	var rest []backend.ObjectID
	var out []backend.DeleteResult
	for _, o := range objs {
		if o.Key == l.key {
			out = append(out, backend.DeleteResult{Key: o.Key, VersionID: o.VersionID, Code: "AccessDenied", Message: "locked"})
		} else {
			rest = append(rest, o)
		}
	}
	res, err := l.countingStore.DeleteVersions(ctx, bucket, rest)
	return append(out, res...), err
}

func (l *lockedStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if in.Key == l.key {
		return backend.PutOutput{}, l.denied("PutObject")
	}
	return l.countingStore.PutObject(ctx, in)
}

// A locked multipart object whose delete or overwrite the backend refuses
// keeps its manifest: nothing s3seal keeps beside it goes first, so the
// refused operation does not half-succeed and the object stays readable.
func TestLockedObjectKeepsManifest(t *testing.T) {
	f := newFixture(t)
	data := randBytes(100, 5)
	f.completeSmall(t, "locked", data)
	ls := &lockedStore{countingStore: f.be, key: "locked"}
	st, err := New(Direct(ls), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(f.ctx, bucket, "locked"); backend.ErrorCode(err) != "AccessDenied" {
		t.Fatalf("Delete: %v, want AccessDenied", err)
	}
	res, err := st.DeleteObjects(f.ctx, bucket, []string{"locked"})
	if err != nil || len(res) != 1 || res[0].Code != "AccessDenied" {
		t.Fatalf("DeleteObjects: %+v, %v", res, err)
	}
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "locked", Body: bytes.NewReader([]byte("x")), Size: 1}); backend.ErrorCode(err) != "AccessDenied" {
		t.Fatalf("Put over it: %v, want AccessDenied", err)
	}
	f.put(t, "src", []byte("other"))
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "locked"}); backend.ErrorCode(err) != "AccessDenied" {
		t.Fatalf("Copy over it: %v, want AccessDenied", err)
	}
	if n := len(f.reservedKeys(t, manifestsPrefix)); n != 1 {
		t.Fatalf("%d manifests, want the locked object's", n)
	}
	// A fresh process (no cached manifest) still reads it.
	fresh, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, rd, err := fresh.Get(f.ctx, bucket, "locked", nil)
	if err != nil {
		t.Fatalf("the locked object after refused deletes: %v", err)
	}
	defer rd.Close()
	if got, err := io.ReadAll(io.LimitReader(rd, rd.Len)); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the locked object reads %d bytes, %v", len(got), err)
	}
}

// When the store keeps one of s3seal's own objects (a manifest locked by a
// bucket's default retention, say), the user's operation still succeeds
// and the refusal is logged for gc to retry.
func TestKeptInternalObjectIsLogged(t *testing.T) {
	f := newFixture(t)
	f.completeSmall(t, "mp", randBytes(100, 6))
	manifests := f.reservedKeys(t, manifestsPrefix)
	if len(manifests) != 1 {
		t.Fatalf("manifests %v", manifests)
	}
	var logBuf bytes.Buffer
	ls := &lockedStore{countingStore: f.be, key: manifests[0]}
	st, err := New(Direct(ls), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true, Logger: slog.New(slog.NewTextHandler(&logBuf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(f.ctx, bucket, "mp"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if !strings.Contains(logBuf.String(), "kept s3seal's own object") || !strings.Contains(logBuf.String(), "AccessDenied") {
		t.Fatalf("log: %q", logBuf.String())
	}
}
