package sealstore

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// TestWithoutBucketDocsKeepsChangesMadeMeanwhile: a document written or
// removed while the documents are set aside (another request of the same
// bucket landing during the store's change, such as the owner's
// PutBucketAcl making the bucket private, or a DeleteBucketPolicy) is not
// undone when the documents read before are put back.
func TestWithoutBucketDocsKeepsChangesMadeMeanwhile(t *testing.T) {
	f := newFixture(t)
	f.enableVersioning(t)
	for name, doc := range map[string]string{"owner": `{"id":"o"}`, "acl": "public-read-write", "policy": "public"} {
		if err := f.st.PutBucketDoc(f.ctx, bucket, name, []byte(doc)); err != nil {
			t.Fatal(err)
		}
	}
	// The other request runs beside the change; the change waits a while
	// for it (it may be made to wait for the documents to be back).
	meanwhile := make(chan error, 1)
	ran, err := f.st.WithoutBucketDocs(f.ctx, bucket, func() error {
		go func() {
			err := f.st.PutBucketDoc(f.ctx, bucket, "acl", []byte("private"))
			if err == nil {
				err = f.st.DeleteBucketDoc(f.ctx, bucket, "policy")
			}
			meanwhile <- err
		}()
		select {
		case err := <-meanwhile:
			meanwhile <- err
		case <-time.After(300 * time.Millisecond):
		}
		return nil
	})
	if !ran || err != nil {
		t.Fatalf("WithoutBucketDocs: ran %v, %v", ran, err)
	}
	if err := <-meanwhile; err != nil {
		t.Fatalf("the document changes made meanwhile: %v", err)
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	for _, st := range []*Store{f.st, fresh} {
		docs, err := st.BucketDocs(f.ctx, bucket)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(docs["acl"], []byte("private")) {
			t.Errorf("acl after: %q, want the one written meanwhile", docs["acl"])
		}
		if p, ok := docs["policy"]; ok {
			t.Errorf("policy after: %q, want the removal made meanwhile kept", p)
		}
		if string(docs["owner"]) != `{"id":"o"}` {
			t.Errorf("owner after: %q", docs["owner"])
		}
	}
}

// clientWriteOnDocDelete writes a client object the first time s3seal
// deletes one of its bucket documents: a client PUT landing during
// DeleteBucket's clean-up.
type clientWriteOnDocDelete struct {
	backend.Store
	once  sync.Once
	write func()
}

func (w *clientWriteOnDocDelete) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	for _, k := range keys {
		if len(k) > len(BucketDocPrefix) && k[:len(BucketDocPrefix)] == BucketDocPrefix {
			w.once.Do(w.write)
		}
	}
	return w.Store.DeleteObjects(ctx, bucket, keys)
}

// TestDeleteBucketRefusedKeepsOwner: a DeleteBucket whose clean-up a
// client write overtakes (the store then refuses the bucket's deletion:
// BucketNotEmpty) leaves the bucket with its documents: a bucket without
// its owner document is open to every credential whose lists reach it.
func TestDeleteBucketRefusedKeepsOwner(t *testing.T) {
	f := newFixture(t)
	owner := []byte(`{"id":"o"}`)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", owner); err != nil {
		t.Fatal(err)
	}
	ws := &clientWriteOnDocDelete{Store: f.be, write: func() { f.put(t, "late", []byte("written meanwhile")) }}
	st, err := New(Direct(ws), f.kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	err = st.DeleteBucket(f.ctx, bucket)
	if err == nil {
		t.Fatal("DeleteBucket with a client object written during its clean-up succeeded")
	}
	fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	if d, ok, err := fresh.BucketDoc(f.ctx, bucket, "owner"); !ok || err != nil || !bytes.Equal(d, owner) {
		t.Fatalf("owner document after a refused DeleteBucket (%v): %q %v %v", err, d, ok, err)
	}
}

// TestCreateBucketDocOnlyOnce: CreateBucketDoc keeps a document only
// where none of its name is, on the embedded store and on moto.
func TestCreateBucketDocOnlyOnce(t *testing.T) {
	for name, f := range map[string]func(*testing.T) *fixture{
		"embedded": func(t *testing.T) *fixture { return newFixture(t) },
		"moto":     motoFixture,
	} {
		t.Run(name, func(t *testing.T) {
			f := f(t)
			if err := f.st.CreateBucketDoc(f.ctx, bucket, "owner", []byte("first")); err != nil {
				t.Fatal(err)
			}
			err := f.st.CreateBucketDoc(f.ctx, bucket, "owner", []byte("second"))
			if se, ok := err.(*Error); !ok || se.Code != "PreconditionFailed" {
				t.Errorf("a second CreateBucketDoc: %v, want PreconditionFailed", err)
			}
			fresh, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
			if d, _, err := fresh.BucketDoc(f.ctx, bucket, "owner"); err != nil || string(d) != "first" {
				t.Errorf("owner after: %q %v", d, err)
			}
		})
	}
}

// TestWithoutBucketDocsHoldsPastTTL: while the documents are out, this
// process decides by them however long the change takes (a slow store):
// a read after the cache's TTL does not find the bucket without an owner.
func TestWithoutBucketDocsHoldsPastTTL(t *testing.T) {
	f := newFixtureWith(t, Options{BucketDocTTL: 20 * time.Millisecond})
	f.enableVersioning(t)
	if err := f.st.PutBucketDoc(f.ctx, bucket, "owner", []byte(`{"id":"o"}`)); err != nil {
		t.Fatal(err)
	}
	var during map[string][]byte
	ran, err := f.st.WithoutBucketDocs(f.ctx, bucket, func() error {
		time.Sleep(100 * time.Millisecond)
		var err error
		during, err = f.st.BucketDocs(f.ctx, bucket)
		return err
	})
	if !ran || err != nil {
		t.Fatalf("WithoutBucketDocs: ran %v, %v", ran, err)
	}
	if string(during["owner"]) != `{"id":"o"}` {
		t.Errorf("documents read during a change longer than the TTL: %q, want the owner's", during)
	}
}
