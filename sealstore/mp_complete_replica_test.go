package sealstore

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

// cleanupStore is the backend as the process that completes sees it; while
// dead is set, its deletes of the upload state never reach the store (the
// process died after the store completed the upload and before, or
// half-way through, its clean-up), keeping those keep() tells.
type cleanupStore struct {
	backend.Store
	mu   sync.Mutex
	dead bool
	keep func(key string) bool
}

func (s *cleanupStore) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	s.mu.Lock()
	dead, keep := s.dead, s.keep
	s.mu.Unlock()
	if !dead {
		return s.Store.DeleteObjects(ctx, bucket, keys)
	}
	var gone []string
	for _, k := range keys {
		if !keep(k) {
			gone = append(gone, k)
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	return s.Store.DeleteObjects(ctx, bucket, gone)
}

// A replica that completed an upload at the store and died before (or
// during) the removal of the upload state leaves the state behind; the
// client retries the completion on another replica. That one must answer
// the completion's success, as S3 answers a repeated completion, whether
// it has the upload cached (it served a part) or reads the state afresh,
// and whatever part of the state is left: all of it, the records without
// the info object, the info object without the records. Other parts, or
// another upload's object at the key, stay NoSuchUpload.
func TestCompleteRetriedOnReplicaAfterDeath(t *testing.T) {
	testCompleteRetriedOnReplica(t, newFixture)
}

// The same over moto, which forgets a completed upload as S3 does.
func TestCompleteRetriedOnReplicaAfterDeathMoto(t *testing.T) {
	testCompleteRetriedOnReplica(t, func(t testing.TB) *fixture { return motoFixture(t.(*testing.T)) })
}

func testCompleteRetriedOnReplica(t *testing.T, newF func(testing.TB) *fixture) {
	left := map[string]func(key string) bool{
		"all state":    func(string) bool { return true },
		"records only": func(k string) bool { return !strings.HasSuffix(k, "/"+infoName) },
		"info only":    func(k string) bool { return strings.HasSuffix(k, "/"+infoName) },
	}
	for name, keep := range left {
		t.Run(name, func(t *testing.T) {
			f := newF(t)
			dying := &cleanupStore{Store: f.be, keep: keep}
			a, err := New(Direct(dying), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			// b served a part (the upload is in its cache); c never saw it.
			b, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			key := "replicated"
			id := f.create(t, key)
			p1, p2 := randBytes(5*mib, 21), randBytes(1000, 22)
			e1, e2 := f.part(t, a, key, id, 1, p1), f.part(t, b, key, id, 2, p2)
			parts := completeParts([]int{1, 2}, []string{e1.ETag, e2.ETag})
			in := CompleteInput{ExpectSize: -1, Bucket: bucket, Key: key, UploadID: id, Parts: parts}

			dying.mu.Lock()
			dying.dead = true
			dying.mu.Unlock()
			first, err := a.CompleteMultipart(f.ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.reservedKeys(t, uploadsPrefix)) == 0 {
				t.Fatal("the test's dying replica removed the upload state")
			}

			// Completions not of the object at the key fail, on a replica
			// of their own (one that fails forgets the upload).
			other, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"other parts", "other upload"} {
				bad := in
				if name == "other parts" {
					bad.Parts = completeParts([]int{1, 2}, []string{e1.ETag, e1.ETag})
				} else {
					bad.UploadID = id + "x"
				}
				if _, err := other.CompleteMultipart(f.ctx, bad); err == nil {
					t.Errorf("%s: a completion not of the object at the key succeeded", name)
				}
			}
			c, err := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
			if err != nil {
				t.Fatal(err)
			}
			// c reads what state is left; b has the upload cached.
			for i, st := range []*Store{c, b} {
				again, err := st.CompleteMultipart(f.ctx, in)
				if err != nil || again.ETag != first.ETag || again.Size != first.Size {
					t.Fatalf("replica %d: retried completion: %+v, %v; want ETag %s size %d", i, again, err, first.ETag, first.Size)
				}
			}
			if keys := f.reservedKeys(t, uploadsPrefix); len(keys) != 0 {
				t.Errorf("the retries left the dead replica's upload state: %v", keys)
			}
			_, data, err := f.getWith(c, key)
			if err != nil || string(data) != string(p1)+string(p2) {
				t.Fatalf("object after the retries: %d bytes, %v", len(data), err)
			}

			// Another upload completed at the key ends the old id: a
			// retry of it is NoSuchUpload on every replica.
			id2 := f.create(t, key)
			o := f.part(t, b, key, id2, 1, p2)
			if _, err := b.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: key, UploadID: id2,
				Parts: completeParts([]int{1}, []string{o.ETag})}); err != nil {
				t.Fatal(err)
			}
			for i, st := range []*Store{b, c} {
				if _, err := st.CompleteMultipart(f.ctx, in); !isCode(err, "NoSuchUpload") {
					t.Errorf("replica %d: retry after another upload's object: %v, want NoSuchUpload", i, err)
				}
			}
		})
	}
}
