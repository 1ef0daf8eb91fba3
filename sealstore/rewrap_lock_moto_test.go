package sealstore

import (
	"bytes"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestMotoRewrapSingleCopyKeepsLock: an object at or under the single-copy
// limit, rewrapped by one CopyObject onto itself in a bucket with Object
// Lock, keeps its retention (mode and date) and legal hold on the new
// version, as one above it keeps them through the multipart copy; a
// retention that has expired is not set again, and the object is still
// rewrapped.
func TestMotoRewrapSingleCopyKeepsLock(t *testing.T) {
	be := motoS3(t)
	ctx := t.Context()
	createLockBucket(ctx, t, be, bucket)
	kr := rotationKeyring(t)
	st, err := New(Direct(be), kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	locks := map[string]backend.Protection{
		"locked": {LockMode: "GOVERNANCE", RetainUntil: until, LegalHold: "ON"},
		"soon":   {LockMode: "GOVERNANCE", RetainUntil: time.Now().Add(3 * time.Second).UTC().Truncate(time.Second)},
	}
	data := randBytes(1000, 7)
	for key, p := range locks {
		if _, err := st.Put(ctx, PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(data), Size: int64(len(data)), Protect: p}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Until(locks["soon"].RetainUntil.Add(time.Second)))
	var res []RewrapResult
	if err := st.Rewrap(ctx, bucket, RewrapOptions{To: "k2", NoWriters: true, MaxCopySize: 5 << 20}, func(r RewrapResult) { res = append(res, r) }); err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Status != RewrapDone || res[1].Status != RewrapDone {
		t.Fatalf("rewrap: %+v", res)
	}
	bi, err := be.HeadObject(ctx, bucket, "locked")
	if err != nil {
		t.Fatal(err)
	}
	env, _, _ := crypto.ParseMetadata(bi.Meta)
	if env.KeyID != "k2" {
		t.Fatalf("the object is under %q after the rewrap", env.KeyID)
	}
	if bi.Lock.LockMode != "GOVERNANCE" || !bi.Lock.RetainUntil.Equal(until) || bi.Lock.LegalHold != "ON" {
		t.Errorf("after the rewrap by one copy the object's lock is %+v; want GOVERNANCE until %v, legal hold ON", bi.Lock, until)
	}
	if bi, err = be.HeadObject(ctx, bucket, "soon"); err != nil {
		t.Fatal(err)
	}
	if bi.Lock.LockMode != "" || bi.Lock.LegalHold == "ON" {
		t.Errorf("an expired retention was set again: %+v", bi.Lock)
	}
}
