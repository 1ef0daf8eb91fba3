package sealstore

import (
	"bytes"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// Copies the store made (single-stream and multipart) and their sources
// pass a deep verify, are rewrapped to another master key and, once the
// old key is gone from the keyring, still read back byte for byte (each
// envelope rewrapped on its own, the origin kept).
func TestStoreCopiesVerifyAndRewrap(t *testing.T) {
	f := newFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	st, err := New(Direct(f.be), both, Options{SpoolDir: t.TempDir(), BackendChecksum: true, OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.st = st
	single := randBytes(3*crypto.SegmentSize+9, 101)
	f.put(t, "src", single)
	p1, p2 := randBytes(MinPartSize+3, 102), randBytes(100<<10, 103)
	id := f.create(t, "mp")
	e1, e2 := f.part(t, st, "mp", id, 1, p1).ETag, f.part(t, st, "mp", id, 2, p2).ETag
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1, 2}, []string{e1, e2}), ExpectSize: -1}); err != nil {
		t.Fatal(err)
	}
	whole := append(append([]byte{}, p1...), p2...)
	fresh := func(kr *crypto.Keyring) *Store {
		s, err := New(Direct(f.be), kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	cp := fresh(both)
	for _, c := range [][2]string{{"src", "c1"}, {"c1", "c2"}, {"mp", "mc1"}, {"mc1", "mc2"}} {
		if _, err := cp.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: c[0], Bucket: bucket, Key: c[1]}); err != nil {
			t.Fatalf("copy %s to %s: %v", c[0], c[1], err)
		}
	}
	want := map[string][]byte{"src": single, "c1": single, "c2": single, "mp": whole, "mc1": whole, "mc2": whole}
	verify := func(s *Store, what string) {
		t.Helper()
		if err := s.Verify(f.ctx, bucket, VerifyOptions{Deep: true}, func(r VerifyResult) {
			if r.Status != VerifyOK {
				t.Errorf("%s: verify %s: %s %v", what, r.Key, r.Status, r.Err)
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	verify(fresh(both), "after the copies")
	if err := fresh(both).Rewrap(f.ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) {
		if r.Err != nil {
			t.Errorf("rewrap %s: %v", r.Key, r.Err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	s2 := fresh(only2)
	verify(s2, "after the rewrap")
	for k, w := range want {
		info, rd, err := s2.Get(f.ctx, bucket, k, nil)
		if err != nil {
			t.Errorf("%s after the rewrap: %v", k, err)
			continue
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(rd)
		rd.Close()
		if err != nil || !bytes.Equal(b.Bytes(), w) {
			t.Errorf("%s after the rewrap reads %d bytes: %v (key %s)", k, b.Len(), err, info.env.KeyID)
		}
	}
	// Deleting the sources leaves the copies whole; gc takes nothing a copy needs.
	for _, k := range []string{"src", "mp", "c1", "mc1"} {
		if err := s2.Delete(f.ctx, bucket, k); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s2.GC(f.ctx, bucket, GCOptions{Delete: true}); err != nil {
		t.Fatal(err)
	}
	s3 := fresh(only2)
	verify(s3, "after deleting the sources and gc")
}
