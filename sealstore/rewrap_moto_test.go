package sealstore

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestRewrapMultipartMoto: on an S3 implementation a copy gives a
// multipart object an MD5 ETag in place of its multipart one. After a
// rewrap the object reads back with only the new key, its manifest is
// found under the new ETag, and rewrap has removed the manifest under the
// old name, which nothing reads any more: gc, even with no minimum age,
// finds nothing left to remove.
func TestRewrapMultipartMoto(t *testing.T) {
	f := motoFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	only2, _ := crypto.NewKeyring("k2", map[string][]byte{"k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	data := randBytes(70000, 9)
	f.completeSmall(t, "mp", data)
	before, _ := f.be.HeadObject(f.ctx, bucket, "mp")
	var got []RewrapResult
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true}, func(r RewrapResult) { got = append(got, r) }); err != nil { // moto ignores the copy condition
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Status != RewrapDone {
		t.Fatalf("rewrap: %+v", got)
	}
	after, _ := f.be.HeadObject(f.ctx, bucket, "mp")
	env, _, _ := crypto.ParseMetadata(after.Meta)
	if env.KeyID != "k2" || !env.Multipart || after.ETag == before.ETag || strings.Contains(after.ETag, "-") {
		t.Fatalf("after the copy: etag %s (was %s), envelope %+v", after.ETag, before.ETag, env)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, manifestKey(env.OID, strings.Trim(after.ETag, `"`))); err != nil {
		t.Fatalf("no manifest under the new ETag: %v", err)
	}
	if _, err := f.be.HeadObject(f.ctx, bucket, manifestKey(env.OID, strings.Trim(before.ETag, `"`))); !backend.IsNotFound(err) {
		t.Fatalf("the manifest under the old ETag is still there: %v", err)
	}
	later := func() time.Time { return time.Now().Add(time.Hour) }
	if found, err := f.st.GC(f.ctx, bucket, GCOptions{Now: later}); err != nil || len(found) != 0 {
		t.Fatalf("gc after a clean rewrap: %+v %v", found, err)
	}
	f.st, _ = New(Direct(f.be), only2, Options{SpoolDir: t.TempDir()})
	if _, rd, err := f.get(t, "mp", nil); err != nil || !bytes.Equal(rd, data) {
		t.Fatalf("read with only the new key: %v", err)
	}
}

// TestRewrapRefusesStoreIgnoringCopyCondition: moto ignores
// x-amz-copy-source-if-match, so a client PUT landing between rewrap's HEAD
// and its copy would get the old object's wrapped key and be lost. Rewrap
// finds that out first and refuses unless told no client writes
// meanwhile; nothing is changed.
func TestRewrapRefusesStoreIgnoringCopyCondition(t *testing.T) {
	f := motoFixture(t)
	k1, _ := crypto.GenerateKey()
	k2, _ := crypto.GenerateKey()
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	f.st, _ = New(Direct(f.be), both, Options{SpoolDir: t.TempDir()})
	f.put(t, "obj", []byte("data"))
	err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) { t.Errorf("reported %+v", r) })
	if !errors.Is(err, ErrCopyConditionIgnored) {
		t.Fatalf("rewrap on moto: %v, want ErrCopyConditionIgnored", err)
	}
	bi, _ := f.be.HeadObject(f.ctx, bucket, "obj")
	if env, _, _ := crypto.ParseMetadata(bi.Meta); env.KeyID != "k1" {
		t.Fatalf("the object was rewrapped to %s", env.KeyID)
	}
	if keys := f.reservedKeys(t, ReservedPrefix); len(keys) != 0 {
		t.Fatalf("probe left %v", keys)
	}
}
