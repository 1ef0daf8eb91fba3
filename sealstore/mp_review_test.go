package sealstore

// Regression tests for findings of a hostile review of multipart.

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// gatedStore lets a test order two processes' backend completions.
type gatedStore struct {
	backend.Store
	mu       sync.Mutex
	complete func(ctx context.Context, in backend.CompleteMultipartInput) // called before the real completion
}

func (g *gatedStore) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	g.mu.Lock()
	hook := g.complete
	g.mu.Unlock()
	if hook != nil {
		hook(ctx, in)
	}
	return g.Store.CompleteMultipartUpload(ctx, in)
}

// TestOverlappingCompletionsKeepManifest: a client (or two s3seal processes
// behind a balancer) sends CompleteMultipartUpload twice for one upload,
// the second while the first is still running (an SDK retry after a
// client-side timeout). The first completes the object; the second's
// backend completion answers NoSuchUpload on its first attempt. It used to
// take that as final and delete .s3seal/manifests/<oid>, the manifest of
// the object the first had just published (same upload, same oid): the
// object was unreadable for good from any process without it cached. Now
// the second sees the object is this upload's and answers success.
func TestOverlappingCompletionsKeepManifest(t *testing.T) {
	f := newFixture(t)
	g1 := &gatedStore{Store: f.be}
	g2 := &gatedStore{Store: f.be}
	p1, err := New(g1, f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := New(g2, f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	f.st = p1
	data := randBytes(100_000, 9)
	id := f.create(t, "obj")
	e := f.part(t, p1, "obj", id, 1, data)
	in := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}

	p1AtBackend := make(chan struct{})
	p1Done := make(chan struct{})
	release1 := make(chan struct{})
	g1.complete = func(context.Context, backend.CompleteMultipartInput) { close(p1AtBackend); <-release1 }
	g2.complete = func(context.Context, backend.CompleteMultipartInput) { close(release1); <-p1Done }

	var err1 error
	go func() {
		_, err1 = p1.CompleteMultipart(f.ctx, in)
		close(p1Done)
	}()
	<-p1AtBackend // first completion has written its manifest, is about to complete
	_, err2 := p2.CompleteMultipart(f.ctx, in)
	<-p1Done
	t.Logf("first completion: %v; second completion: %v", err1, err2)
	if err1 != nil || err2 != nil {
		t.Fatalf("completions: %v, %v; both must succeed (the second is the first's object)", err1, err2)
	}
	// A fresh process (restart, other replica) reads the object.
	fresh, _ := New(f.be, f.kr, Options{SpoolDir: t.TempDir()})
	f.st = fresh
	if keys := f.reservedKeys(t, manifestsPrefix); len(keys) != 1 {
		t.Errorf("manifests in the bucket: %v (want the live object's one)", keys)
	}
	if _, got, err := f.get(t, "obj", nil); err != nil || string(got) != string(data) {
		t.Fatalf("the completed object is unreadable after an overlapping second completion: %d bytes, %v", len(got), err)
	}
}

// TestCompletionsWithOtherParts: while one completion of an upload waits
// at the backend, another with a different part list completes first. As
// on S3 the first to reach the store wins; the other is told NoSuchUpload,
// not success, and the object is readable everywhere: each part list has
// its own manifest, named by the ETag of the object it makes.
func TestCompletionsWithOtherParts(t *testing.T) {
	f := newFixture(t)
	g := &gatedStore{Store: f.be}
	p1, _ := New(g, f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = p1
	a, b := randBytes(5*mib, 1), randBytes(1000, 2)
	id := f.create(t, "obj")
	e1, e2 := f.part(t, p1, "obj", id, 1, a), f.part(t, p1, "obj", id, 2, b)
	both := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}
	only1 := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1}, []string{e1.ETag})}
	atBackend, release := make(chan struct{}), make(chan struct{})
	g.complete = func(context.Context, backend.CompleteMultipartInput) { close(atBackend); <-release }
	done := make(chan error)
	go func() { _, err := p1.CompleteMultipart(f.ctx, both); done <- err }()
	<-atBackend
	p2, _ := New(f.be, f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if info, err := p2.CompleteMultipart(f.ctx, only1); err != nil || info.ETag != mpETag(a) {
		t.Fatalf("second completion: %+v, %v", info, err)
	}
	close(release)
	if err := <-done; !isCode(err, "NoSuchUpload") {
		t.Fatalf("first completion, which lost: %v, want NoSuchUpload", err)
	}
	f.st, _ = New(f.be, f.kr, Options{SpoolDir: t.TempDir()})
	if info, got, err := f.get(t, "obj", nil); err != nil || !bytes.Equal(got, a) || info.ETag != mpETag(a) {
		t.Fatalf("object: %d bytes, etag %s, %v", len(got), info.ETag, err)
	}
	// The loser's manifest is garbage now; the winner's is not.
	found, err := f.st.GC(f.ctx, bucket, GCOptions{})
	if err != nil || len(found) != 1 || found[0].Kind != "manifest" {
		t.Fatalf("gc: %+v, %v", found, err)
	}
}

// TestManifestCacheMemory: the manifests of 10,000-part objects (a 50 GB
// object in 5 MiB parts, with CRC64NVME part checksums) are cached within
// the cache's part budget, whatever the number of objects read: a review
// found each one pinned 4 MB (a map per part) with room for 4096 of them.
// The objects are crafted at the backend (empty parts, so the test stays
// small); the manifests are those a real upload produces.
func TestManifestCacheMemory(t *testing.T) {
	f := newFixture(t)
	const objects, parts = 40, crypto.MaxParts
	for i := 0; i < objects; i++ {
		dk, err := crypto.NewDataKey()
		if err != nil {
			t.Fatal(err)
		}
		key := fmt.Sprintf("big-%d", i)
		env, err := f.kr.Wrap(dk, "", crypto.Name{Bucket: bucket, Key: key}, crypto.Binding{Multipart: true})
		if err != nil {
			t.Fatal(err)
		}
		if env.SealedMeta, err = crypto.SealObjectMeta(dk, crypto.ObjectMeta{}); err != nil {
			t.Fatal(err)
		}
		var m crypto.Manifest
		for p := 1; p <= parts; p++ {
			m.Parts = append(m.Parts, crypto.ManifestPart{Stream: crypto.Stream{Part: uint32(p), ID: [8]byte{byte(p), byte(p >> 8), 1}},
				PlainSize: 0, Checksums: map[string]string{"crc64nvme": "AAAAAAAAAAA="}})
		}
		sealed, err := crypto.SealManifest(dk, m)
		if err != nil {
			t.Fatal(err)
		}
		body := make([]byte, m.CipherSize())
		out, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body)), Meta: env.Metadata()})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: manifestKey(dk.OID(), out.ETag), Body: bytes.NewReader(sealed), Size: int64(len(sealed))}); err != nil {
			t.Fatal(err)
		}
	}
	const budget = 100_000 // parts: ten of these manifests
	fresh, _ := New(f.be, f.kr, Options{SpoolDir: t.TempDir(), ManifestCacheParts: budget})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := 0; i < objects; i++ {
		if h, err := fresh.Head(f.ctx, bucket, fmt.Sprintf("big-%d", i)); err != nil || h.PartsCount != parts {
			t.Fatalf("head %d: %+v %v", i, h, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	retained := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("retained heap after reading %d objects of %d parts with a budget of %d parts: %d KiB", objects, parts, budget, retained>>10)
	runtime.KeepAlive(fresh)
	if retained > 100*budget { // 100 bytes a cached part
		t.Errorf("the manifest cache holds %d MiB for a budget of %d parts", retained>>20, budget)
	}
	if got := fresh.manifests.parts.Load(); got > budget || got < budget-parts {
		t.Errorf("cache counts %d parts, budget %d", got, budget)
	}
}

// hookList runs hook once before the first listing of upload state.
type hookList struct {
	backend.Store
	once sync.Once
	hook func()
}

func (h *hookList) ListObjects(ctx context.Context, in backend.ListInput) (backend.ListOutput, error) {
	if strings.HasPrefix(in.Prefix, uploadsPrefix) {
		h.once.Do(h.hook)
	}
	return h.Store.ListObjects(ctx, in)
}

// TestCompletionFinishedBetweenItsListings: process B lists the backend's
// parts, then process A completes the upload and removes its state, then
// B lists the part records and finds none. B used to answer InvalidPart
// (seen in an e2e race); the object is the one B asks for, so it is B's
// success too, made elsewhere.
func TestCompletionFinishedBetweenItsListings(t *testing.T) {
	f := newFixture(t)
	data := randBytes(1000, 41)
	id := f.create(t, "obj")
	e := f.part(t, f.st, "obj", id, 1, data)
	in := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1}, []string{e.ETag})}
	var errA error
	hb := &hookList{Store: f.be, hook: func() { _, errA = f.st.CompleteMultipart(f.ctx, in) }}
	pb, _ := New(hb, f.kr, Options{SpoolDir: t.TempDir()})
	info, err := pb.CompleteMultipart(f.ctx, in)
	if errA != nil || err != nil || !info.CompletedElsewhere || info.ETag != mpETag(data) {
		t.Fatalf("A: %v; B: %+v, %v", errA, info, err)
	}
	// Another part list is not taken for it.
	other := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1}, []string{md5hex([]byte("x"))})}
	if _, err := pb.CompleteMultipart(f.ctx, other); !isCode(err, "NoSuchUpload") && !isCode(err, "InvalidPart") {
		t.Fatalf("other parts after the upload is done: %v", err)
	}
}
