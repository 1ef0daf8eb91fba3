package sealstore

// Completions of one upload that overlap, with the same or other parts,
// and one that another completion finished in between: each keeps the
// manifest its object needs.

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
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
	p1, err := New(Direct(g1), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := New(Direct(g2), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
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
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
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
	p1, _ := New(Direct(g), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
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
	p2, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if info, err := p2.CompleteMultipart(f.ctx, only1); err != nil || info.ETag != mpETag(a) {
		t.Fatalf("second completion: %+v, %v", info, err)
	}
	close(release)
	if err := <-done; !isCode(err, "NoSuchUpload") {
		t.Fatalf("first completion, which lost: %v, want NoSuchUpload", err)
	}
	f.st, _ = New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if info, got, err := f.get(t, "obj", nil); err != nil || !bytes.Equal(got, a) || info.ETag != mpETag(a) {
		t.Fatalf("object: %d bytes, etag %s, %v", len(got), info.ETag, err)
	}
	// The loser's manifest is garbage now; the winner's is not.
	found, err := f.st.GC(f.ctx, bucket, GCOptions{})
	if err != nil || len(found) != 1 || found[0].Kind != "manifest" {
		t.Fatalf("gc: %+v, %v", found, err)
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
	pb, _ := New(Direct(hb), f.kr, Options{SpoolDir: t.TempDir()})
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
