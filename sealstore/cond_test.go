package sealstore

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/retry"
)

func (f *fixture) cput(st *Store, key string, data []byte, c *Condition) (ObjectInfo, error) {
	return st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)), Cond: c})
}

func wantStoreCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("err %v, want %s", err, code)
	}
}

// Conditional PUTs are decided on the plaintext ETag and refuse to
// overwrite.
func TestConditionalPut(t *testing.T) {
	f := newFixture(t)
	first := f.put(t, "k", []byte("one"))
	_, err := f.cput(f.st, "k", []byte("two"), &Condition{IfNoneMatch: true})
	wantStoreCode(t, err, "PreconditionFailed")
	_, err = f.cput(f.st, "k", []byte("two"), &Condition{IfMatch: []string{md5hex([]byte("other"))}})
	wantStoreCode(t, err, "PreconditionFailed")
	_, err = f.cput(f.st, "missing", []byte("two"), &Condition{IfMatch: []string{first.ETag}})
	wantStoreCode(t, err, "NoSuchKey")
	if _, data, err := f.get(t, "k", nil); err != nil || string(data) != "one" {
		t.Fatalf("after refused PUTs: %q %v", data, err)
	}
	if _, err := f.cput(f.st, "k", []byte("two"), &Condition{IfMatch: []string{"x", first.ETag}}); err != nil {
		t.Fatalf("If-Match on the plaintext ETag: %v", err)
	}
	if _, err := f.cput(f.st, "new", []byte("x"), &Condition{IfNoneMatch: true}); err != nil {
		t.Fatalf("If-None-Match on a free key: %v", err)
	}
	if _, err := f.cput(f.st, "new", []byte("y"), &Condition{IfMatch: []string{"*"}}); err != nil {
		t.Fatalf("If-Match * on an existing key: %v", err)
	}
}

// writerStore lets another writer replace the object just before s3seal's
// conditional PUT reaches the backend, as a second s3seal process would.
type writerStore struct {
	backend.Store
	before func()
}

func (w *writerStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	if w.before != nil && (in.IfMatch != "" || in.IfNoneMatch) {
		b := w.before
		w.before = nil
		b()
	}
	return w.Store.PutObject(ctx, in)
}

func TestConditionalPutRacesAnotherWriter(t *testing.T) {
	f := newFixture(t)
	ws := &writerStore{Store: f.be}
	racing, _ := New(Direct(ws), f.kr, Options{SpoolDir: t.TempDir()})
	orig := f.put(t, "k", []byte("one"))

	// Another content lands between the HEAD and the PUT: 412, and the
	// other writer's object stays.
	ws.before = func() { f.put(t, "k", []byte("other")) }
	_, err := f.cput(racing, "k", []byte("mine"), &Condition{IfMatch: []string{orig.ETag}})
	wantStoreCode(t, err, "PreconditionFailed")
	if _, data, _ := f.get(t, "k", nil); string(data) != "other" {
		t.Fatalf("object %q, want the other writer's", data)
	}
	// The same plaintext written again (a new version, same ETag): the
	// condition still holds but the version changed: 409, retryable.
	cur := f.put(t, "k", []byte("one"))
	ws.before = func() { f.put(t, "k", []byte("one")) }
	_, err = f.cput(racing, "k", []byte("mine"), &Condition{IfMatch: []string{cur.ETag}})
	wantStoreCode(t, err, "ConditionalRequestConflict")
	// If-None-Match: * against a creator that came first.
	ws.before = func() { f.put(t, "lock", []byte("theirs")) }
	_, err = f.cput(racing, "lock", []byte("mine"), &Condition{IfNoneMatch: true})
	wantStoreCode(t, err, "PreconditionFailed")
	if _, data, _ := f.get(t, "lock", nil); string(data) != "theirs" {
		t.Fatalf("lock %q, want theirs", data)
	}
}

// lostAnswerStore lands the first conditional PUT and then reports a
// transient failure, as when the connection breaks after the backend
// committed: the retry gets 412 from the backend.
type lostAnswerStore struct {
	backend.Store
	lost bool
}

func (l *lostAnswerStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	out, err := l.Store.PutObject(ctx, in)
	if err == nil && !l.lost && (in.IfMatch != "" || in.IfNoneMatch) {
		l.lost = true
		return backend.PutOutput{}, &backend.Error{Code: "InternalError", StatusCode: 500, Op: "PutObject"}
	}
	return out, err
}

func TestConditionalPutRetryAfterLostAnswer(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		cond func(prev ObjectInfo) *Condition
	}{
		{"If-None-Match", func(ObjectInfo) *Condition { return &Condition{IfNoneMatch: true} }},
		{"If-Match", func(prev ObjectInfo) *Condition { return &Condition{IfMatch: []string{prev.ETag}} }},
	} {
		key := "lost-" + tc.name
		var prev ObjectInfo
		if tc.name == "If-Match" {
			prev = f.put(t, key, []byte("before"))
		}
		la := &lostAnswerStore{Store: f.be}
		st, _ := New(retry.Store(la, retry.Policy{Attempts: 3, Backoff: time.Millisecond}), f.kr, Options{SpoolDir: t.TempDir()})
		info, err := f.cput(st, key, []byte("mine"), tc.cond(prev))
		if err != nil || !la.lost {
			t.Fatalf("%s: retried PUT whose first attempt landed: %v (lost=%v), want success", tc.name, err, la.lost)
		}
		if _, data, _ := f.get(t, key, nil); string(data) != "mine" || info.ETag != md5hex([]byte("mine")) {
			t.Fatalf("%s: object %q etag %s", tc.name, data, info.ETag)
		}
	}
}
