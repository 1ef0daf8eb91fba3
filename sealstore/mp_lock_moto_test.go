package sealstore

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// TestManifestLockedWithUploadMoto: the lock asked for at
// CreateMultipartUpload (here COMPLIANCE and a legal hold, in a bucket with
// Object Lock) is on the completed object's manifest too, recorded in the
// upload state for whichever process completes it: the backend account
// cannot delete the manifest version, so the object stays readable as
// long as it is locked.
func TestManifestLockedWithUploadMoto(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb = "worm"
	createLockBucket(f.ctx, t, s3be, lb)
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	id, err := f.st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: lb, Key: "backup",
		Protect: backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}})
	if err != nil {
		t.Fatal(err)
	}
	// Another process (no cached upload) completes it.
	st2, _ := New(Direct(f.be), f.kr, Options{SpoolDir: t.TempDir()})
	pi, err := st2.UploadPart(f.ctx, UploadPartInput{Bucket: lb, Key: "backup", UploadID: id, PartNumber: 1,
		Body: strings.NewReader("data"), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st2.CompleteMultipart(f.ctx, CompleteInput{ExpectSize: -1, Bucket: lb, Key: "backup", UploadID: id,
		Parts: completeParts([]int{1}, []string{pi.ETag})}); err != nil {
		t.Fatal(err)
	}
	mkey, _, err := f.st.ManifestOf(f.ctx, lb, "backup", "")
	if err != nil || mkey == "" {
		t.Fatalf("ManifestOf = %q, %v", mkey, err)
	}
	mi, err := f.be.HeadObject(f.ctx, lb, mkey)
	if err != nil {
		t.Fatal(err)
	}
	if mi.Lock.LockMode != "COMPLIANCE" || mi.Lock.RetainUntil.Before(until) || mi.Lock.LegalHold != "ON" {
		t.Fatalf("manifest lock %+v, want COMPLIANCE until %v with a legal hold", mi.Lock, until)
	}
	if _, err := f.be.DeleteObjectVersion(f.ctx, backend.DeleteInput{Bucket: lb, Key: mkey, VersionID: mi.VersionID}); err == nil {
		t.Fatal("the locked object's manifest version was deleted")
	}
}

// lockedVersionStore reports a lock on key (as a store whose bucket locks
// every new version does) and records the lock of copies to manifests; it
// passes every copy on without its lock (moto's bucket here has no Object
// Lock).
type lockedVersionStore struct {
	backend.Store
	key    string
	lock   backend.Protection
	copies []backend.Protection
}

func (l *lockedVersionStore) HeadObject(ctx context.Context, bucket, key string) (backend.ObjectInfo, error) {
	bi, err := l.Store.HeadObject(ctx, bucket, key)
	if err == nil && key == l.key {
		bi.Lock = l.lock
	}
	return bi, err
}

func (l *lockedVersionStore) CopyObject(ctx context.Context, in backend.CopyInput) (backend.CopyOutput, error) {
	if strings.HasPrefix(in.Key, manifestsPrefix) {
		l.copies = append(l.copies, in.Lock)
	}
	// The object's own copy carries the lock too (rewrap keeps it); moto's
	// bucket here has no Object Lock and would refuse either.
	in.Lock = backend.Protection{}
	return l.Store.CopyObject(ctx, in)
}

// TestRewrapManifestCopyLockedMoto: rewrap's copy of a multipart object's
// manifest (to the object's new ETag) carries the lock of the version it
// is for, so the new version is not readable only through an unlocked
// manifest.
func TestRewrapManifestCopyLockedMoto(t *testing.T) {
	f := motoFixture(t)
	k1, k2 := mustKey(t), mustKey(t)
	both, _ := crypto.NewKeyring("k1", map[string][]byte{"k1": k1, "k2": k2})
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	ls := &lockedVersionStore{Store: f.be, key: "mp", lock: backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}}
	f.st, _ = New(Direct(ls), both, Options{SpoolDir: t.TempDir()})
	f.completeSmall(t, "mp", randBytes(70000, 9))
	if err := f.st.Rewrap(f.ctx, bucket, RewrapOptions{To: "k2", NoWriters: true}, func(r RewrapResult) {
		if r.Status != RewrapDone {
			t.Errorf("rewrap %s: %s %v", r.Key, r.Status, r.Err)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(ls.copies) != 1 || ls.copies[0].LockMode != "COMPLIANCE" || !ls.copies[0].RetainUntil.Equal(until) || ls.copies[0].LegalHold != "ON" {
		t.Fatalf("manifest copies made with locks %+v, want one with the version's COMPLIANCE lock and legal hold", ls.copies)
	}
}

// lockFailsOnce fails the first PutObjectLock (a store that answers the
// retention PUT after a completion with a 500, a cut, ...).
type lockFailsOnce struct {
	backend.Store
	n atomic.Int32
}

func (l *lockFailsOnce) PutObjectLock(ctx context.Context, in backend.ObjectLockInput) error {
	if l.n.Add(1) == 1 {
		return errors.New("injected: connection reset while setting the retention")
	}
	return l.Store.PutObjectLock(ctx, in)
}

// TestLockedCompletionRetryLocksMoto: a multipart upload created with
// COMPLIANCE retention and a legal hold, in a lock-enabled bucket in front
// of moto (which drops the lock at completion). The lock step after the
// completion fails once, and the completion answers an error. The
// client's retry (every SDK retries a 5xx) is answered from recovery
// (completedBeforeRequest), which sets the lock the manifest carries
// (lockAsManifest) or fails: never a success for an unlocked version.
func TestLockedCompletionRetryLocksMoto(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb = "worm"
	createLockBucket(f.ctx, t, s3be, lb)
	lf := &lockFailsOnce{Store: f.be}
	st, err := New(Direct(lf), f.kr, Options{SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	until := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	id, err := st.CreateMultipart(f.ctx, CreateMultipartInput{Bucket: lb, Key: "backup",
		Protect: backend.Protection{LockMode: "COMPLIANCE", RetainUntil: until, LegalHold: "ON"}})
	if err != nil {
		t.Fatal(err)
	}
	pi, err := st.UploadPart(f.ctx, UploadPartInput{Bucket: lb, Key: "backup", UploadID: id, PartNumber: 1,
		Body: strings.NewReader("data"), Size: 4})
	if err != nil {
		t.Fatal(err)
	}
	in := CompleteInput{ExpectSize: -1, Bucket: lb, Key: "backup", UploadID: id, Parts: completeParts([]int{1}, []string{pi.ETag})}
	if _, err := st.CompleteMultipart(f.ctx, in); err == nil {
		t.Fatal("first completion: the lock step failed but the completion succeeded")
	} else {
		t.Logf("first completion (lock step failed): %v", err)
	}
	// The client's retry of the same completion.
	info, err := st.CompleteMultipart(f.ctx, in)
	t.Logf("retried completion: err=%v version=%q", err, info.VersionID)
	bi, herr := f.be.HeadObject(f.ctx, lb, "backup")
	if herr != nil {
		t.Fatal(herr)
	}
	t.Logf("object version %s lock now: %+v (lock calls: %d)", bi.VersionID, bi.Lock, lf.n.Load())
	if err != nil {
		t.Fatalf("retried completion: %v (the lock can be set now)", err)
	}
	if bi.Lock.LockMode != "COMPLIANCE" || !bi.Lock.RetainUntil.Equal(until) || bi.Lock.LegalHold != "ON" {
		// Show it is really deletable.
		_, derr := f.be.DeleteObjectVersion(f.ctx, backend.DeleteInput{Bucket: lb, Key: "backup", VersionID: bi.VersionID})
		t.Fatalf("retried completion answered success but the version is unlocked (%+v); backend delete of it: err=%v", bi.Lock, derr)
	}
}
