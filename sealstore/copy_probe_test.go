package sealstore

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// completeIfMatchIgnored is a store that honours x-amz-copy-source-if-match
// on CopyObject and UploadPartCopy (all a store copy relies on) but
// ignores If-Match on CompleteMultipartUpload, as stores without
// conditional writes on completion do (older Ceph RGW, MinIO, many S3
// clones: conditional completions came to AWS only in late 2024).
type completeIfMatchIgnored struct{ backend.Store }

func (s completeIfMatchIgnored) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	in.IfMatch = ""
	return s.Store.CompleteMultipartUpload(ctx, in)
}

// A store that refuses a copy whose source condition fails can make every
// copy whose envelope the condition pins: whether it honours If-Match on
// a completion has nothing to do with it (no store copy sends one). The
// probe store copies rely on must not turn them off for it.
func TestStoreCopiesNeedOnlyTheSourceCondition(t *testing.T) {
	f := newFixture(t)
	bs := &bytesStore{Store: completeIfMatchIgnored{f.be}}
	st, err := New(Direct(bs), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	// The store does honour the source condition on a copy.
	data := randBytes(100<<10, 5)
	f.put(t, "src", data)
	_, err = bs.CopyObject(f.ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "raw",
		SrcIfMatch: "00000000000000000000000000000000"})
	if backend.ErrorCode(err) != "PreconditionFailed" {
		t.Fatalf("the store's copy with a wrong source ETag: %v, want PreconditionFailed", err)
	}
	bs.moved()
	if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst"}); err != nil {
		t.Fatal(err)
	}
	if n := bs.moved(); n != 0 {
		t.Errorf("over a store that honours x-amz-copy-source-if-match the copy moved %d bytes through s3seal: the probe "+
			"also demands If-Match on CompleteMultipartUpload, which no store copy uses", n)
	}
}

// probeBlocked is a store whose CreateMultipartUpload of a copy-condition
// probe's scratch upload blocks until release is closed and then fails (a
// bucket policy that refuses it, a store that stalls): probes counts them.
type probeBlocked struct {
	backend.Store
	probes  atomic.Int32
	release chan struct{}
}

func (s *probeBlocked) CreateMultipartUpload(ctx context.Context, in backend.CreateMultipartInput) (string, error) {
	if strings.HasPrefix(in.Key, probePrefix) {
		s.probes.Add(1)
		select {
		case <-s.release:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "", &backend.Error{Op: "CreateMultipartUpload", Code: "AccessDenied", Message: "denied by policy"}
	}
	return s.Store.CreateMultipartUpload(ctx, in)
}

// A probe that cannot finish must not hold every other copy of the
// process: a copy whose client gives up (its context ends) returns at
// once, whatever another copy's probe is doing.
func TestCopyDoesNotWaitForAnotherCopysProbe(t *testing.T) {
	f := newFixture(t)
	pb := &probeBlocked{Store: f.be, release: make(chan struct{})}
	st, err := New(Direct(pb), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(10<<10, 6)
	f.put(t, "src", data)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the first copy: its probe stalls
		defer wg.Done()
		st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "first"})
	}()
	for pb.probes.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(f.ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := st.Copy(ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "second"})
		done <- err
	}()
	waited := false
	select {
	case err := <-done:
		t.Logf("second copy: %v after %v", err, time.Since(start))
	case <-time.After(2 * time.Second):
		waited = true
		t.Errorf("a copy whose context ended after 200ms is still waiting after 2s for another copy's probe")
	}
	close(pb.release)
	wg.Wait()
	if waited {
		<-done
	}
}

// A probe that fails (not with ErrCopyConditionIgnored) is run again by
// every later copy: over a store where it always fails, each copy pays
// the probe's requests on top of reading its source.
func TestFailingProbeRunsOnEveryCopy(t *testing.T) {
	f := newFixture(t)
	pb := &probeBlocked{Store: f.be, release: make(chan struct{})}
	close(pb.release)
	st, err := New(Direct(pb), f.kr, Options{SpoolDir: t.TempDir(), OwnerPendingAge: 1})
	if err != nil {
		t.Fatal(err)
	}
	data := randBytes(10<<10, 7)
	f.put(t, "src", data)
	const copies = 20
	for i := range copies {
		if _, err := st.Copy(f.ctx, CopyInput{SrcBucket: bucket, SrcKey: "src", Bucket: bucket, Key: "dst" + string(rune('a'+i))}); err != nil {
			t.Fatal(err)
		}
	}
	if n := pb.probes.Load(); n > 2 {
		t.Errorf("%d copies over a store refusing the probe ran the probe %d times", copies, n)
	}
}
