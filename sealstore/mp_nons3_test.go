package sealstore

// Completions on a store whose ETags are not S3's: a completion with other
// parts is not told success, nor stores or caches the wrong manifest, nor
// lets gc delete the right one, since it checks the object is made of its
// parts (objectMadeOfManifest) before it takes a store's answer; and gc
// keeps the manifest of an object completed between its two checks, since
// it asks whether the upload is over before it looks at the key.

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// nmStore wraps a backend so that its ETags are not S3's: every ETag it
// answers (parts, objects, completions, listings) is prefixed with "z"
// (so it is not hex, as on a store that hashes parts otherwise), and the
// prefix is removed from the ETags s3seal sends back (completion parts,
// If-Match). It can hold completions at a gate and fail a manifest PUT.
type nmStore struct {
	backend.Store
	mu            sync.Mutex
	gate          func(in backend.CompleteMultipartInput)
	failPutKey    func(in backend.PutInput) bool
	afterComplete func(in backend.CompleteMultipartInput, out backend.CompleteMultipartOutput, err error)
}

func zz(e string) string  { return "z" + strings.Trim(e, `"`) }
func unz(e string) string { return strings.TrimPrefix(strings.Trim(e, `"`), "z") }

func (s *nmStore) UploadPart(ctx context.Context, in backend.UploadPartInput) (string, error) {
	e, err := s.Store.UploadPart(ctx, in)
	if err != nil {
		return e, err
	}
	return zz(e), nil
}

func (s *nmStore) ListParts(ctx context.Context, in backend.ListPartsInput) (backend.ListPartsOutput, error) {
	out, err := s.Store.ListParts(ctx, in)
	for i := range out.Parts {
		out.Parts[i].ETag = zz(out.Parts[i].ETag)
	}
	return out, err
}

func (s *nmStore) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	s.mu.Lock()
	gate, after := s.gate, s.afterComplete
	s.mu.Unlock()
	if gate != nil {
		gate(in)
	}
	bin := in
	bin.Parts = append([]backend.CompletedPart(nil), in.Parts...)
	for i := range bin.Parts {
		bin.Parts[i].ETag = unz(bin.Parts[i].ETag)
	}
	if bin.IfMatch != "" {
		bin.IfMatch = unz(bin.IfMatch)
	}
	out, err := s.Store.CompleteMultipartUpload(ctx, bin)
	if err == nil {
		out.ETag = zz(out.ETag)
	}
	if after != nil {
		after(in, out, err)
	}
	return out, err
}

func (s *nmStore) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	bi, err := s.Store.HeadObject(ctx, bucket, key)
	if err == nil {
		bi.ETag = zz(bi.ETag)
	}
	return bi, err
}

func (s *nmStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	if in.IfMatch != "" {
		in.IfMatch = unz(in.IfMatch)
	}
	o, err := s.Store.GetObject(ctx, in)
	if err == nil {
		o.Info.ETag = zz(o.Info.ETag)
	}
	return o, err
}

func (s *nmStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	s.mu.Lock()
	fail := s.failPutKey
	s.mu.Unlock()
	if fail != nil && fail(in) {
		return backend.PutOutput{}, &backend.Error{Op: "PutObject", Code: "InternalError", StatusCode: 500, Message: "simulated crash before this write"}
	}
	if in.IfMatch != "" {
		in.IfMatch = unz(in.IfMatch)
	}
	out, err := s.Store.PutObject(ctx, in)
	if err == nil {
		out.ETag = zz(out.ETag)
	}
	return out, err
}

func (s *nmStore) ListObjects(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	out, err := s.Store.ListObjects(ctx, in)
	for i := range out.Entries {
		out.Entries[i].ETag = zz(out.Entries[i].ETag)
	}
	return out, err
}

func (s *nmStore) set(f func(s *nmStore)) { s.mu.Lock(); f(s); s.mu.Unlock() }

// manifestNames lists the names under .s3seal/manifests/.
func (f *fixture) manifestNames(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, k := range f.reservedKeys(t, manifestsPrefix) {
		_, n, _ := strings.Cut(strings.TrimPrefix(k, manifestsPrefix), "/")
		names = append(names, n)
	}
	return names
}

// testRaceOtherParts: on a store whose ETags are not S3's, completion B
// (parts {1,3}) passes its checks, then completion A (parts {1,2}, part 3
// the size of part 2) completes the upload first. B must be told
// NoSuchUpload (its recovery used to accept A's object: same oid and size)
// and every reader must read A's object. With crashA, A stops between its
// backend completion and its copy of the manifest under the store's ETag
// (B used to store its own there).
func testRaceOtherParts(t *testing.T, f *fixture, crashA bool, p3size int) {
	w := &nmStore{Store: f.be}
	stA, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	stB, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = stA
	p1, p2, p3 := randBytes(5*mib, 1), randBytes(1000, 2), randBytes(p3size, 3)
	id := f.create(t, "obj")
	e1, e2, e3 := f.part(t, stA, "obj", id, 1, p1), f.part(t, stA, "obj", id, 2, p2), f.part(t, stA, "obj", id, 3, p3)

	release := make(chan struct{})
	bAtGate := make(chan struct{})
	w.set(func(s *nmStore) {
		s.gate = func(in backend.CompleteMultipartInput) {
			if len(in.Parts) == 2 && in.Parts[1].PartNumber == 3 {
				close(bAtGate)
				<-release
			}
		}
	})
	type res struct {
		info ObjectInfo
		err  error
	}
	bDone := make(chan res, 1)
	go func() {
		info, err := stB.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
			Parts: completeParts([]int{1, 3}, []string{e1.ETag, e3.ETag})})
		bDone <- res{info, err}
	}()
	<-bAtGate
	if crashA {
		w.set(func(s *nmStore) {
			s.failPutKey = func(in backend.PutInput) bool {
				return in.IfNoneMatch && strings.HasPrefix(in.Key, manifestsPrefix)
			}
		})
	}
	infoA, err := stA.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})})
	if err != nil {
		t.Fatalf("completion A: %v", err)
	}
	w.set(func(s *nmStore) { s.failPutKey = nil })
	close(release)
	b := <-bDone
	t.Logf("A: etag %s; B: etag %s err %v; manifests %v", infoA.ETag, b.info.ETag, b.err, f.manifestNames(t))

	want := append(append([]byte(nil), p1...), p2...)
	var fails []string
	if b.err == nil {
		fails = append(fails, "completion B (parts 1,3) told success (ETag "+b.info.ETag+") though the object is made of parts 1,2 (ETag "+infoA.ETag+")")
	}
	// B's process reads the object.
	if _, got, err := f.getWith(stB, "obj"); err != nil || !bytes.Equal(got, want) {
		fails = append(fails, "B's process cannot read the object A made: "+errStr(err))
	}
	// A fresh process reads it.
	fresh, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir()})
	if _, got, err := f.getWith(fresh, "obj"); err != nil || !bytes.Equal(got, want) {
		fails = append(fails, "a fresh process cannot read the object: "+errStr(err))
	}
	// gc with min-age 0 (nothing serves the bucket now), then read again.
	found, gerr := fresh.GC(f.ctx, bucket, GCOptions{MinAge: 0, Delete: true})
	t.Logf("gc: %+v %v; manifests after gc %v", found, gerr, f.manifestNames(t))
	fresh2, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir()})
	if _, got, err := f.getWith(fresh2, "obj"); err != nil || !bytes.Equal(got, want) {
		fails = append(fails, "after gc a fresh process cannot read the object: "+errStr(err))
	}
	for _, s := range fails {
		t.Error(s)
	}
}

func errStr(err error) string {
	if err == nil {
		return "wrong bytes"
	}
	return err.Error()
}

func (f *fixture) getWith(st *Store, key string) (ObjectInfo, []byte, error) {
	info, rd, err := st.Get(f.ctx, bucket, key, nil)
	if err != nil {
		return info, nil, err
	}
	defer rd.Close()
	data, err := io.ReadAll(io.LimitReader(rd, rd.Len))
	return info, data, err
}

// TestNonS3ETagsRaceOtherParts: both completions finish normally.
func TestNonS3ETagsRaceOtherParts(t *testing.T) { testRaceOtherParts(t, newFixture(t), false, 1000) }

// TestNonS3ETagsRaceOtherPartsCrash: A stops before its manifest copy.
func TestNonS3ETagsRaceOtherPartsCrash(t *testing.T) {
	testRaceOtherParts(t, newFixture(t), true, 1000)
}

// TestNonS3ETagsRaceOtherPartsMoto: on moto_server, which answers a
// completion of an upload completed before with the first object's ETag,
// completion B used to be taken for done even with parts of another size.
func TestNonS3ETagsRaceOtherPartsMoto(t *testing.T) {
	testRaceOtherParts(t, motoFixture(t), false, 3000)
}

// TestNonS3ETagsRaceOtherPartsMotoCrash: the same, A stops before its
// manifest copy.
func TestNonS3ETagsRaceOtherPartsMotoCrash(t *testing.T) {
	testRaceOtherParts(t, motoFixture(t), true, 3000)
}

var _ = context.Background

// lpHookStore runs a hook once before the ListParts that gc sends
// (MaxParts 1), after gc has looked at the object key.
type lpHookStore struct {
	faultyCompleteStore
	hook func()
}

func (s *lpHookStore) ListParts(ctx context.Context, in backend.ListPartsInput) (backend.ListPartsOutput, error) {
	s.mu.Lock()
	h := s.hook
	if in.MaxParts == 1 {
		s.hook = nil
	} else {
		h = nil
	}
	s.mu.Unlock()
	if h != nil {
		h()
	}
	return s.faultyCompleteStore.ListParts(ctx, in)
}

// TestGCKeepsManifestOfCompletionBetweenItsChecks: a completion failed
// a day ago at the backend (its manifest stays). The client retries it
// while gc (default min-age 24h) runs; the retry's backend completion lands
// between gc's two checks. gc used to look at the key first (no object)
// and then find the upload over, and delete the manifest of the object the
// retry had just published.
func TestGCKeepsManifestOfCompletionBetweenItsChecks(t *testing.T) {
	f := newFixture(t)
	w := &lpHookStore{faultyCompleteStore: faultyCompleteStore{Store: f.be}}
	st, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	data := randBytes(100_000, 3)
	id := f.create(t, "obj")
	e := f.part(t, st, "obj", id, 1, data)
	in := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1}, []string{e.ETag})}
	w.set(func(s *faultyCompleteStore) { s.failComplete = true })
	if _, err := st.CompleteMultipart(f.ctx, in); err == nil {
		t.Fatal("first completion should fail")
	}
	w.set(func(s *faultyCompleteStore) { s.failComplete = false })
	var retryErr error
	w.mu.Lock()
	w.hook = func() { _, retryErr = st.CompleteMultipart(f.ctx, in) }
	w.mu.Unlock()
	later := time.Now().Add(25 * time.Hour)
	found, err := st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Delete: true, Now: func() time.Time { return later }})
	t.Logf("gc found %+v, err %v; retried completion: %v", found, err, retryErr)
	if retryErr != nil {
		t.Fatalf("retried completion failed: %v", retryErr)
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if _, got, err := f.getWith(fresh, "obj"); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object whose completion was told success is unreadable after gc (default min-age): %v", errStr(err))
	}
}

// A reader that finds no manifest under the object's ETag looks among the
// upload's manifests for the one that fits. When two fit (here a
// byte-identical copy of the object's manifest under another name), it
// cannot tell which is the object's and refuses the read rather than take
// the first.
func TestReadRefusedWhenTwoManifestsFit(t *testing.T) {
	f := newFixture(t)
	w := &nmStore{Store: f.be}
	st, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	p1, p2 := randBytes(5*mib, 1), randBytes(1000, 2)
	id := f.create(t, "obj")
	e1, e2 := f.part(t, st, "obj", id, 1, p1), f.part(t, st, "obj", id, 2, p2)
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}); err != nil {
		t.Fatalf("completion: %v", err)
	}
	var kept string
	for _, k := range f.reservedKeys(t, manifestsPrefix) {
		if _, name, _ := strings.Cut(strings.TrimPrefix(k, manifestsPrefix), "/"); strings.HasPrefix(name, "l-") {
			kept = k
		} else if err := f.be.DeleteObject(f.ctx, bucket, k); err != nil {
			t.Fatal(err)
		}
	}
	if kept == "" {
		t.Fatalf("set-up: no l- manifest among %v", f.manifestNames(t))
	}
	obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: kept})
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := io.ReadAll(obj.Body)
	obj.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	copyKey := kept[:strings.LastIndex(kept, "/")+1] + "l-copy"
	if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: copyKey, Body: bytes.NewReader(sealed), Size: int64(len(sealed))}); err != nil {
		t.Fatal(err)
	}
	fresh, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir()})
	_, _, err = f.getWith(fresh, "obj")
	if !isCode(err, "InternalError") || !strings.Contains(err.Error(), "(2 candidates fit)") {
		t.Fatalf("read with two fitting manifests %v: %v; want InternalError, 2 candidates fit", f.manifestNames(t), err)
	}
}
