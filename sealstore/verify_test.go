package sealstore

import (
	"bytes"
	"maps"
	"testing"

	"github.com/s3seal/s3seal/crypto"
)

// verifyFixture stores under "v/": a good object, one whose last segment
// was flipped at the backend, one wrapped under a key this keyring lacks,
// one wrapped under another key of this keyring's key id, one without
// s3seal metadata, a good multipart object and one whose
// manifest is gone; and one object outside the prefix.
func verifyFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.put(t, "v/good", randBytes(3*65536+5, 1))
	f.put(t, "v/tampered", randBytes(3*65536+5, 2))
	f.rewrite(t, "v/tampered", func(b []byte) []byte { b[len(b)-20] ^= 1; return b }, nil)
	other, _ := crypto.GenerateKey()
	kr2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": other})
	st2, err := New(Direct(f.be), kr2, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.Put(f.ctx, PutInput{Bucket: bucket, Key: "v/unknown", Body: bytes.NewReader([]byte("x")), Size: 1}); err != nil {
		t.Fatal(err)
	}
	// Sealed under another key that has the id of this keyring's.
	sameID, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": other})
	st3, err := New(Direct(f.be), sameID, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st3.Put(f.ctx, PutInput{Bucket: bucket, Key: "v/wrong-key", Body: bytes.NewReader([]byte("x")), Size: 1}); err != nil {
		t.Fatal(err)
	}
	f.putBare(t, "v/plain", []byte("before s3seal"))
	f.completeSmall(t, "v/mp", randBytes(100, 3))
	f.completeSmall(t, "v/mp-lost", randBytes(100, 4))
	for _, k := range f.reservedKeys(t, manifestsPrefix) {
		bi, _ := f.be.HeadObject(f.ctx, bucket, "v/mp-lost")
		env, _, _ := crypto.ParseMetadata(bi.Meta)
		if k[:len(manifestDir(env.OID))] == manifestDir(env.OID) {
			if err := f.be.DeleteObject(f.ctx, bucket, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	f.put(t, "w/outside", []byte("y"))
	return f
}

func runVerify(t *testing.T, f *fixture, deep bool) map[string]VerifyResult {
	t.Helper()
	st, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()}) // cold caches
	got := map[string]VerifyResult{}
	if err := st.Verify(f.ctx, bucket, VerifyOptions{Prefix: "v/", Deep: deep}, func(r VerifyResult) {
		if _, dup := got[r.Key]; dup {
			t.Errorf("%s reported twice", r.Key)
		}
		got[r.Key] = r
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestVerify(t *testing.T) {
	f := verifyFixture(t)
	want := map[string]string{
		"v/good": VerifyOK, "v/tampered": VerifyOK, "v/unknown": VerifyUnknownKey, "v/wrong-key": VerifyWrongKey,
		"v/plain": VerifyPlaintext, "v/mp": VerifyOK, "v/mp-lost": VerifyCorrupt,
	}
	check := func(deep bool) {
		got := runVerify(t, f, deep)
		status := map[string]string{}
		for k, r := range got {
			status[k] = r.Status
			if (r.Status == VerifyOK) != (r.Err == nil) {
				t.Errorf("deep=%v %s: status %s with error %v", deep, k, r.Status, r.Err)
			}
		}
		if !maps.Equal(status, want) {
			t.Errorf("deep=%v: got %v, want %v", deep, status, want)
		}
		if got["v/unknown"].KeyID != "k2" || got["v/good"].KeyID != "k1" || got["v/wrong-key"].KeyID != "k1" {
			t.Errorf("deep=%v: key ids %+v", deep, got)
		}
	}
	// Only the metadata: the flipped byte goes unseen.
	check(false)
	// Every segment: it is found.
	want["v/tampered"] = VerifyCorrupt
	check(true)
}
