package sealstore

// Review s11c (r3): the reviewer's proving test, turned into a regression
// test of the fix (finding 3).

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

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

// TestReviewS11cLockedCompletionRetryUnlockedMoto (fixed: the retry sets
// the lock its manifest carries, or fails). A
// multipart upload created with COMPLIANCE retention + legal hold in a
// lock-enabled bucket in front of moto (which drops the lock at
// completion). The post-completion lock step fails once; the completion
// is answered with an error (as designed). The client retries the
// completion (every SDK does on a 5xx): s3seal answers success through
// the "completed before" recovery path, which never runs the lock step,
// so the client believes its backup is locked while the version is
// unlocked and deletable by anyone with write access.
func TestReviewS11cLockedCompletionRetryUnlockedMoto(t *testing.T) {
	f := motoFixture(t)
	s3be := f.be.Store.(*backend.S3)
	const lb = "worm"
	if _, err := s3be.Forward(f.ctx, backend.RawRequest{Method: http.MethodPut, Bucket: lb,
		Header: http.Header{"X-Amz-Bucket-Object-Lock-Enabled": {"true"}}}); err != nil {
		t.Fatal(err)
	}
	lf := &lockFailsOnce{Store: f.be}
	st, err := New(lf, f.kr, Options{SpoolDir: t.TempDir()})
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
