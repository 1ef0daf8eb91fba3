package sealstore

// Races of multipart completions (failed, retried, with other parts, on a
// store that ignores If-None-Match) against each other and gc: none leaves
// an object whose manifest is missing or describes other parts, nor tells
// a client success for parts the object does not hold. Each manifest is
// named by the ETag of the object its part list makes, so completions never
// overwrite each other's.

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// faultyCompleteStore wraps the backend: it can make completions fail (the backend
// did not assemble: a transient error after retries), age manifests (the
// LastModified a GET of a manifest reports, as if written long ago), hold
// completions at a gate, drop If-None-Match/If-Match on PutObject (a
// backend that ignores them), and run a hook before ListMultipartUploads.
type faultyCompleteStore struct {
	backend.Store
	mu            sync.Mutex
	failComplete  bool
	age           time.Duration
	gate          func(in backend.CompleteMultipartInput)
	dropCond      bool
	beforeListMPU func()
	beforePut     func(in backend.PutInput)
}

func (s *faultyCompleteStore) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	s.mu.Lock()
	fail, gate := s.failComplete, s.gate
	s.mu.Unlock()
	if fail {
		return backend.CompleteMultipartOutput{}, &backend.Error{Op: "CompleteMultipartUpload", Code: "InternalError", StatusCode: 500, Message: "We encountered an internal error. Please try again."}
	}
	if gate != nil {
		gate(in)
	}
	return s.Store.CompleteMultipartUpload(ctx, in)
}

func (s *faultyCompleteStore) GetObject(ctx context.Context, in backend.GetInput) (*backend.Object, error) {
	o, err := s.Store.GetObject(ctx, in)
	s.mu.Lock()
	age := s.age
	s.mu.Unlock()
	if err == nil && strings.HasPrefix(in.Key, manifestsPrefix) {
		o.Info.LastModified = o.Info.LastModified.Add(-age)
	}
	return o, err
}

func (s *faultyCompleteStore) PutObject(ctx context.Context, in backend.PutInput) (backend.PutOutput, error) {
	s.mu.Lock()
	drop, hook := s.dropCond, s.beforePut
	s.mu.Unlock()
	if hook != nil {
		hook(in)
	}
	if drop {
		in.IfNoneMatch, in.IfMatch = false, ""
	}
	return s.Store.PutObject(ctx, in)
}

func (s *faultyCompleteStore) ListMultipartUploads(ctx context.Context, in backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	s.mu.Lock()
	hook := s.beforeListMPU
	s.beforeListMPU = nil
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.ListMultipartUploads(ctx, in)
}

func (s *faultyCompleteStore) set(f func(s *faultyCompleteStore)) { s.mu.Lock(); f(s); s.mu.Unlock() }

// TestGCKeepsManifestOfRetriedCompletion: a completion fails at the
// backend (500 after retries); its manifest stays. The client retries a
// day later (the upload is still there) while s3seal gc (default --min-age
// 24h) runs. gc used to find the manifest old and its object missing and
// delete it after the retry had published the object; now a manifest
// whose upload still exists is never garbage.
func TestGCKeepsManifestOfRetriedCompletion(t *testing.T) {
	testGCDeletesManifestOfRetriedCompletion(t, newFixture(t))
}

// TestGCKeepsManifestOfRetriedCompletionMoto runs it against moto_server.
func TestGCKeepsManifestOfRetriedCompletionMoto(t *testing.T) {
	testGCDeletesManifestOfRetriedCompletion(t, motoFixture(t))
}

func testGCDeletesManifestOfRetriedCompletion(t *testing.T, f *fixture) {
	w := &faultyCompleteStore{Store: f.be}
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

	// A day later: gc (default min-age) runs while the client retries.
	later := time.Now().Add(25 * time.Hour)
	var retryErr error
	w.set(func(s *faultyCompleteStore) {
		s.beforeListMPU = func() { _, retryErr = st.CompleteMultipart(f.ctx, in) }
	})
	found, err := st.GC(f.ctx, bucket, GCOptions{MinAge: 24 * time.Hour, Delete: true, Now: func() time.Time { return later }})
	t.Logf("gc found %+v, err %v; retried completion: %v", found, err, retryErr)
	if retryErr != nil {
		t.Fatalf("retried completion failed: %v", retryErr)
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	f.st = fresh
	if _, got, err := f.get(t, "obj", nil); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("object completed successfully is unreadable after gc (default min-age): %d bytes, %v", len(got), err)
	}
}

// TestOldFailedCompletionAndRacingLists: a completion with parts
// {1,2} failed more than an hour ago (its manifest stays). The client
// retries it while another completion names parts {1,3} (part 3 the size
// of part 2). The other used to replace the "stale" manifest and, after
// NoSuchUpload, take the object (right oid and size) for its own: both
// clients were told success for an object under the wrong manifest. Now
// exactly one succeeds and the object reads back as its parts.
func TestOldFailedCompletionAndRacingLists(t *testing.T) {
	testStaleManifestReplacedUnderEqualRetry(t, newFixture(t))
}

// TestOldFailedCompletionAndRacingListsMoto runs it against moto_server.
func TestOldFailedCompletionAndRacingListsMoto(t *testing.T) {
	testStaleManifestReplacedUnderEqualRetry(t, motoFixture(t))
}

func testStaleManifestReplacedUnderEqualRetry(t *testing.T, f *fixture) {
	w := &faultyCompleteStore{Store: f.be}
	st, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	st2, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	p1, p2, p3 := randBytes(5*mib, 1), randBytes(1000, 2), randBytes(1000, 3)
	id := f.create(t, "obj")
	e1, e2, e3 := f.part(t, st, "obj", id, 1, p1), f.part(t, st, "obj", id, 2, p2), f.part(t, st, "obj", id, 3, p3)
	a := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}
	b := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1, 3}, []string{e1.ETag, e3.ETag})}

	w.set(func(s *faultyCompleteStore) { s.failComplete = true })
	if _, err := st.CompleteMultipart(f.ctx, a); err == nil {
		t.Fatal("first completion should fail")
	}
	// More than staleManifest later.
	w.set(func(s *faultyCompleteStore) { s.failComplete = false; s.age = 2 * time.Hour })

	aAt, releaseA := make(chan struct{}), make(chan struct{})
	var once sync.Once
	w.set(func(s *faultyCompleteStore) {
		s.gate = func(in backend.CompleteMultipartInput) {
			if in.Parts[1].PartNumber == 2 {
				once.Do(func() { close(aAt) })
				<-releaseA
			}
		}
	})
	type res struct {
		info ObjectInfo
		err  error
	}
	aDone := make(chan res)
	go func() { i, err := st.CompleteMultipart(f.ctx, a); aDone <- res{i, err} }()
	<-aAt // the retry kept the equal manifest and is at the backend
	bDone := make(chan res)
	w.set(func(s *faultyCompleteStore) {
		s.gate = func(in backend.CompleteMultipartInput) {
			if in.Parts[1].PartNumber == 3 {
				close(releaseA)
				time.Sleep(200 * time.Millisecond) // the retry's completion lands first
			}
		}
	})
	go func() { i, err := st2.CompleteMultipart(f.ctx, b); bDone <- res{i, err} }()
	ra, rb := <-aDone, <-bDone
	t.Logf("retry {1,2}: etag %s err %v; other {1,3}: etag %s err %v", ra.info.ETag, ra.err, rb.info.ETag, rb.err)

	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	f.st = fresh
	info, got, err := f.get(t, "obj", nil)
	t.Logf("GET from a fresh process: etag %s, %d bytes, %v", info.ETag, len(got), err)
	want12 := append(bytes.Clone(p1), p2...)
	want13 := append(bytes.Clone(p1), p3...)
	switch {
	case err == nil && bytes.Equal(got, want12) && ra.err == nil && rb.err != nil:
		// correct: the object is {1,2}, the other completion failed
	case err == nil && bytes.Equal(got, want13) && rb.err == nil && ra.err != nil:
	default:
		t.Fatalf("object left inconsistent: retry err %v, other err %v, GET etag %s err %v (want exactly one success and a readable object of its parts)",
			ra.err, rb.err, info.ETag, err)
	}
}

// TestCompletionsOnBackendIgnoringConditions: on a backend that ignores If-None-Match
// and If-Match on PutObject, two completions of one upload with different
// part lists both wrote the one manifest name, and the object could carry
// the other's. Names per part list need no condition. (On moto the second
// completion of a completed upload answers success with the first
// object's ETag; s3seal answers NoSuchUpload then.)
func TestCompletionsOnBackendIgnoringConditions(t *testing.T) {
	testBackendIgnoringIfNoneMatch(t, newFixture(t))
}

// TestCompletionsOnBackendIgnoringConditionsMoto runs it against moto_server.
func TestCompletionsOnBackendIgnoringConditionsMoto(t *testing.T) {
	testBackendIgnoringIfNoneMatch(t, motoFixture(t))
}

func testBackendIgnoringIfNoneMatch(t *testing.T, f *fixture) {
	w := &faultyCompleteStore{Store: f.be, dropCond: true}
	st, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	st2, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	p1, p2, p3 := randBytes(5*mib, 1), randBytes(1000, 2), randBytes(1000, 3)
	id := f.create(t, "obj")
	e1, e2, e3 := f.part(t, st, "obj", id, 1, p1), f.part(t, st, "obj", id, 2, p2), f.part(t, st, "obj", id, 3, p3)
	a := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}
	b := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id, Parts: completeParts([]int{1, 3}, []string{e1.ETag, e3.ETag})}
	// Both GET the manifest (absent) before either PUTs it: hold each PUT
	// of a manifest until both arrived.
	var wg sync.WaitGroup
	wg.Add(2)
	release := make(chan struct{}) // closed to let the second completion through
	first := true
	w.set(func(s *faultyCompleteStore) {
		s.beforePut = func(in backend.PutInput) {
			if strings.HasPrefix(in.Key, manifestsPrefix) {
				wg.Done()
				wg.Wait()
			}
		}
		s.gate = func(in backend.CompleteMultipartInput) {
			s.mu.Lock()
			me := first
			first = false
			s.mu.Unlock()
			if !me {
				<-release // second waits for the first's completion
			}
		}
	})
	type res struct {
		info ObjectInfo
		err  error
	}
	ch := make(chan res, 2)
	done := make(chan struct{}, 2)
	for _, x := range []struct {
		st *Store
		in CompleteInput
	}{{st, a}, {st2, b}} {
		go func() {
			i, err := x.st.CompleteMultipart(f.ctx, x.in)
			ch <- res{i, err}
			done <- struct{}{}
		}()
	}
	// let the first backend completion through, then the second
	time.Sleep(500 * time.Millisecond)
	close(release)
	r1, r2 := <-ch, <-ch
	t.Logf("completions: (%s, %v) (%s, %v)", r1.info.ETag, r1.err, r2.info.ETag, r2.err)
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	f.st = fresh
	info, got, err := f.get(t, "obj", nil)
	t.Logf("GET: etag %s, %d bytes, %v", info.ETag, len(got), err)
	if r1.err == nil && r2.err == nil {
		t.Errorf("both completions (parts {1,2} and {1,3}) told success, with ETags %s and %s; the object is one of them (GET etag %s, %v)",
			r1.info.ETag, r2.info.ETag, info.ETag, err)
	}
	if err != nil || (!bytes.Equal(got, append(bytes.Clone(p1), p2...)) && !bytes.Equal(got, append(bytes.Clone(p1), p3...))) {
		var ok []string
		for _, r := range []res{r1, r2} {
			if r.err == nil {
				ok = append(ok, r.info.ETag)
			}
		}
		t.Fatalf("clients told success %v; the object is unreadable: %v", ok, errors.Unwrap(err))
	}
}

// TestCompletionAfterFailedOneWithOtherParts: a completion fails at
// the backend (500 after retries, nothing assembled); the client re-uploads
// part 2 and completes again, which S3 completes. s3seal used to answer 409
// ConditionalRequestConflict for an hour, taking the failed completion's
// manifest for one under way.
func TestCompletionAfterFailedOneWithOtherParts(t *testing.T) {
	testFailedCompletionBlocksOtherPartsForAnHour(t, newFixture(t))
}

// TestCompletionAfterFailedOneWithOtherPartsMoto runs it against moto_server.
func TestCompletionAfterFailedOneWithOtherPartsMoto(t *testing.T) {
	testFailedCompletionBlocksOtherPartsForAnHour(t, motoFixture(t))
}

func testFailedCompletionBlocksOtherPartsForAnHour(t *testing.T, f *fixture) {
	w := &faultyCompleteStore{Store: f.be}
	st, _ := New(Direct(w), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	p1, p2 := randBytes(5*mib, 1), randBytes(1000, 2)
	id := f.create(t, "obj")
	e1, e2 := f.part(t, st, "obj", id, 1, p1), f.part(t, st, "obj", id, 2, p2)
	w.set(func(s *faultyCompleteStore) { s.failComplete = true })
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})}); err == nil {
		t.Fatal("first completion should fail")
	}
	w.set(func(s *faultyCompleteStore) { s.failComplete = false })
	p2b := randBytes(1000, 22)
	e2b := f.part(t, st, "obj", id, 2, p2b)
	_, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "obj", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1.ETag, e2b.ETag})})
	if err != nil {
		t.Fatalf("completion after a failed one and a re-uploaded part: %v (S3 completes)", err)
	}
}
