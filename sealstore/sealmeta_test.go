package sealstore

import (
	"bytes"
	"io"
	"maps"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// digestMeta is what rclone and s3cmd write beside an object.
func digestMeta(md5b64, md5hex string) map[string]string {
	return map[string]string{"md5chksum": md5b64, "s3cmd-attrs": "atime:1/md5:" + md5hex + "/mode:33188", "color": "red"}
}

// backendMeta returns the store's user metadata of key.
func (f *fixture) backendMeta(t *testing.T, key string) map[string]string {
	t.Helper()
	bi, err := f.be.HeadObject(f.ctx, bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return bi.Meta
}

// noDigestInStore fails when the store's metadata of key holds any of
// the digests.
func (f *fixture) noDigestInStore(t *testing.T, key string, digests ...string) {
	t.Helper()
	for k, v := range f.backendMeta(t, key) {
		for _, d := range digests {
			if strings.Contains(v, d) {
				t.Errorf("%s: the store holds a plaintext digest in %s=%s", key, k, v)
			}
		}
	}
}

func (f *fixture) statMeta(t *testing.T, st *Store, key string, ck *crypto.CustomerKey) map[string]string {
	t.Helper()
	info, err := st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: key, CustomerKey: ck})
	if err != nil {
		t.Fatalf("stat %s: %v", key, err)
	}
	return info.Meta
}

// TestDigestMetadataSealed: the user metadata values that carry the
// plaintext's MD5 (rclone's md5chksum, s3cmd's s3cmd-attrs) never reach
// the store in the clear, on single PUTs, SSE-C objects, multipart
// uploads, copies (COPY and REPLACE) and rewraps; clients get back
// exactly what they wrote. Other metadata stays as it is.
func TestDigestMetadataSealed(t *testing.T) {
	f := newFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	kr, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	st, _ := New(f.be, kr, Options{SpoolDir: t.TempDir(), BackendChecksum: true})
	f.st = st
	ck := customerKeyOf(t, 3)
	data := randBytes(70000, 5)
	want := digestMeta("B64MD5DIGEST==", "0123456789abcdef0123456789abcdef")
	digests := []string{want["md5chksum"], "0123456789abcdef"}
	if _, err := st.Put(f.ctx, PutInput{Bucket: bucket, Key: "c", Body: bytes.NewReader(data), Size: int64(len(data)),
		Meta: maps.Clone(want), CustomerKey: ck}); err != nil {
		t.Fatal(err)
	}
	f.noDigestInStore(t, "c", digests...)
	if got := f.backendMeta(t, "c"); got["color"] != "red" {
		t.Errorf("other metadata not kept as it is: %v", got)
	}
	if got := f.statMeta(t, st, "c", ck); !maps.Equal(got, want) {
		t.Errorf("stat: %v, want %v", got, want)
	}
	info, rd, err := st.Read(f.ctx, ReadInput{Bucket: bucket, Key: "c", CustomerKey: ck})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(io.LimitReader(rd, rd.Len))
	rd.Close()
	if !bytes.Equal(got, data) || !maps.Equal(info.Meta, want) {
		t.Errorf("read: %d bytes, meta %v", len(got), info.Meta)
	}

	// Multipart: the upload's metadata is the object's.
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: bucket, Key: "mp", Meta: maps.Clone(want)})
	if err != nil {
		t.Fatal(err)
	}
	e := f.part(t, st, "mp", id, 1, data)
	if _, err := st.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: bucket, Key: "mp", UploadID: id,
		Parts: completeParts([]int{1}, []string{e.ETag})}); err != nil {
		t.Fatal(err)
	}
	f.noDigestInStore(t, "mp", digests...)
	if got := f.statMeta(t, st, "mp", nil); !maps.Equal(got, want) {
		t.Errorf("multipart stat: %v", got)
	}

	// COPY keeps the source's metadata (sealed again, with the copy's key).
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "c", SrcCustomerKey: ck, Bucket: bucket, Key: "copy"}); err != nil {
		t.Fatal(err)
	}
	f.noDigestInStore(t, "copy", digests...)
	if got := f.statMeta(t, st, "copy", nil); !maps.Equal(got, want) {
		t.Errorf("COPY: %v", got)
	}
	// REPLACE takes the request's.
	repl := map[string]string{"md5chksum": "OTHERDIGEST=="}
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "copy", Bucket: bucket, Key: "copy", ReplaceMeta: true, Meta: maps.Clone(repl)}); err != nil {
		t.Fatal(err)
	}
	f.noDigestInStore(t, "copy", "OTHERDIGEST")
	if got := f.statMeta(t, st, "copy", nil); !maps.Equal(got, repl) {
		t.Errorf("REPLACE: %v", got)
	}

	// A rewrap keeps the sealed entries (same data key).
	if err := st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) {
		if r.Err != nil {
			t.Errorf("rewrap %s: %v", r.Key, r.Err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if f.backendMeta(t, "mp")[crypto.MetaKeyID] != "k2" {
		t.Fatal("not rewrapped")
	}
	for _, k := range []string{"c", "mp"} {
		var key *crypto.CustomerKey
		if k == "c" {
			key = ck
		}
		f.noDigestInStore(t, k, digests...)
		if got := f.statMeta(t, st, k, key); !maps.Equal(got, want) {
			t.Errorf("after rewrap, %s: %v", k, got)
		}
	}
}

// TestDigestMetadataOldAndTampered: an object written before s3seal
// sealed these entries reads unchanged; a sealed entry moved from another
// object, or altered, fails the integrity check.
func TestDigestMetadataOldAndTampered(t *testing.T) {
	f := newFixture(t)
	want := digestMeta("B64MD5DIGEST==", "0123456789abcdef")
	put := func(key string, meta map[string]string) {
		t.Helper()
		if _, err := f.st.Put(f.ctx, PutInput{Bucket: bucket, Key: key, Body: strings.NewReader("x"), Size: 1, Meta: maps.Clone(meta)}); err != nil {
			t.Fatal(err)
		}
	}
	restore := func(key string, meta map[string]string) {
		t.Helper()
		obj, err := f.be.GetObject(f.ctx, backend.GetInput{Bucket: bucket, Key: key})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(obj.Body)
		obj.Body.Close()
		if _, err := f.be.PutObject(f.ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(b), Size: int64(len(b)), Meta: meta}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", want)
	put("b", map[string]string{"md5chksum": "B'S DIGEST"})
	am, bm := f.backendMeta(t, "a"), f.backendMeta(t, "b")

	// Old: the entries in the clear, no sealed ones.
	old := maps.Clone(am)
	delete(old, crypto.MetaUser)
	maps.Copy(old, want)
	restore("a", old)
	if got := f.statMeta(t, f.st, "a", nil); !maps.Equal(got, want) {
		t.Errorf("old object: %v", got)
	}
	// b's sealed entries under a's envelope.
	moved := maps.Clone(am)
	moved[crypto.MetaUser] = bm[crypto.MetaUser]
	restore("a", moved)
	if _, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "a"}); errorCode(err) != "InternalError" {
		t.Errorf("moved sealed metadata: %v", err)
	}
	bad := maps.Clone(am)
	v := []byte(am[crypto.MetaUser])
	v[10] ^= 1
	bad[crypto.MetaUser] = string(v)
	restore("a", bad)
	if _, err := f.st.Stat(f.ctx, ReadInput{Bucket: bucket, Key: "a"}); errorCode(err) != "InternalError" {
		t.Errorf("altered sealed metadata: %v", err)
	}
	restore("a", am)
	if got := f.statMeta(t, f.st, "a", nil); !maps.Equal(got, want) {
		t.Errorf("restored: %v", got)
	}
}
