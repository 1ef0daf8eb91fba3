package sealstore

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestMotoDefaultRetentionCopies: in a bucket whose Object Lock
// configuration has a default retention, moto (like AWS for PUTs) refuses
// a CopyObject without Content-MD5 even when the copy sets no lock itself.
// Rewrap's copies that set no lock (an object whose retention has expired,
// a multipart object's manifest, the copy-condition probe) get the empty
// body's MD5 on a second attempt: the rewrap by one copy and by parts
// succeeds, as does a client's copy, and everything reads back under the
// new key.
func TestMotoDefaultRetentionCopies(t *testing.T) {
	be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, be, bucket)
	kr := rotationKeyring(t)
	st, err := New(Direct(be), kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	conf := `<ObjectLockConfiguration><ObjectLockEnabled>Enabled</ObjectLockEnabled><Rule><DefaultRetention>` +
		`<Mode>GOVERNANCE</Mode><Days>1</Days></DefaultRetention></Rule></ObjectLockConfiguration>`
	if _, err := be.Forward(ctx, backend.RawRequest{Method: http.MethodPut, Bucket: bucket, Query: url.Values{"object-lock": {""}},
		Body: []byte(conf)}); err != nil {
		t.Fatal(err)
	}
	small, big, mp := randBytes(1000, 3), randBytes(7<<20, 4), randBytes(70000, 5)
	soon := time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)
	puts := []struct {
		key  string
		data []byte
		p    backend.Protection
	}{{"small", small, backend.Protection{}}, {"big", big, backend.Protection{}},
		{"soon", small, backend.Protection{LockMode: "GOVERNANCE", RetainUntil: soon}}}
	for _, p := range puts {
		if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: p.key, Body: bytes.NewReader(p.data), Size: int64(len(p.data)), Protect: p.p}); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{be: &countingStore{Store: be}, ctx: ctx, st: st, kr: kr}
	f.completeSmall(t, "mp", mp)

	// The copy-condition probe copies too: it must get to moto's real
	// answer (the condition ignored), not stop at the missing MD5.
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2"}, func(r RewrapResult) { t.Errorf("reported %+v", r) }); !errors.Is(err, ErrCopyConditionIgnored) {
		t.Fatalf("rewrap with the probe: %v, want ErrCopyConditionIgnored", err)
	}
	time.Sleep(time.Until(soon.Add(time.Second)))
	if _, err := st.Copy(ctx, CopyInput{SrcBucket: bucket, SrcKey: "small", Bucket: bucket, Key: "copied"}); err != nil {
		t.Fatalf("client copy in a bucket with a default retention: %v", err)
	}
	var res []RewrapResult
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 6 << 20}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	done := 0
	for _, r := range res {
		if r.Status == RewrapDone {
			done++
		} else {
			t.Errorf("rewrap of %s: %+v", r.Key, r)
		}
	}
	if done != 5 {
		t.Fatalf("rewrap: %+v, want big, copied, mp, small and soon done", res)
	}
	for key, data := range map[string][]byte{"small": small, "big": big, "copied": small, "mp": mp, "soon": small} {
		bi, err := be.HeadObject(ctx, bucket, key)
		if err != nil {
			t.Fatal(err)
		}
		if env, _, _ := crypto.ParseMetadata(bi.Meta); env.KeyID != "k2" {
			t.Errorf("%s is under %q after the rewrap", key, env.KeyID)
		}
		_, rd, err := st.Get(ctx, bucket, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(io.LimitReader(rd, rd.Len))
		rd.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s reads back %d bytes (%v), want %d", key, len(got), err, len(data))
		}
	}
}
