package retry

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/s3seal/s3seal/backend"
)

func mpStore(t *testing.T, f *fakeMultipart) (backend.Multipart, Completer) {
	t.Helper()
	st := NewStore(f, Policies{Default: fast, Part: fast, Complete: fast, SourceRead: fast})
	c, ok := st.(Completer)
	if !ok {
		t.Fatal("store over a multipart backend does not implement Completer")
	}
	return st, c
}

func TestUploadPartRetriesWithTheSameBytes(t *testing.T) {
	f := &fakeMultipart{partErrs: []error{errInternal200, &backend.Error{Op: "UploadPart", Code: "SlowDown", StatusCode: 503}},
		partRead: 5000}
	mp, _ := mpStore(t, f)
	data := bytes.Repeat([]byte("0123456789abcdef"), 1000)
	body := bytes.NewReader(data)
	etag, err := mp.UploadPart(context.Background(), backend.UploadPartInput{Bucket: "b", Key: "k", UploadID: "u1",
		PartNumber: 3, Body: body, Size: int64(len(data))})
	if err != nil || etag != "etag-part" {
		t.Fatalf("etag=%q err=%v", etag, err)
	}
	if len(f.parts) != 3 {
		t.Fatalf("%d attempts, want 3", len(f.parts))
	}
	// The failed attempts read 5000 bytes each; every attempt starts at 0.
	for i, got := range f.parts {
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatalf("attempt %d sent other bytes than the first", i+1)
		}
	}
	if !bytes.Equal(f.parts[2], data) {
		t.Fatalf("the successful attempt sent %d bytes, want all %d", len(f.parts[2]), len(data))
	}
}

func TestUploadPartPermanentErrorNotRetried(t *testing.T) {
	f := &fakeMultipart{partErrs: []error{&backend.Error{Op: "UploadPart", Code: "NoSuchUpload", StatusCode: 404}}}
	mp, _ := mpStore(t, f)
	_, err := mp.UploadPart(context.Background(), backend.UploadPartInput{Body: bytes.NewReader([]byte("x")), Size: 1})
	if backend.ErrorCode(err) != "NoSuchUpload" || len(f.parts) != 1 {
		t.Fatalf("err=%v attempts=%d", err, len(f.parts))
	}
}

func TestAbortNoSuchUploadOnRetryIsSuccess(t *testing.T) {
	f := &fakeMultipart{abortErrs: []error{errInternal200, errNoSuchUpload}}
	mp, _ := mpStore(t, f)
	if err := mp.AbortMultipartUpload(context.Background(), "b", "k", "u1"); err != nil || f.aborts != 2 {
		t.Fatalf("err=%v aborts=%d", err, f.aborts)
	}
	// On the first attempt NoSuchUpload is the truth.
	f = &fakeMultipart{abortErrs: []error{errNoSuchUpload}}
	mp, _ = mpStore(t, f)
	if err := mp.AbortMultipartUpload(context.Background(), "b", "k", "u1"); backend.ErrorCode(err) != "NoSuchUpload" {
		t.Fatalf("first-attempt NoSuchUpload: err=%v", err)
	}
}

// headCheck is the caller's recovery check over the fake: the object is
// this upload's when the fake assembled it.
func headCheck(f *fakeMultipart, calls *int) func(context.Context) (backend.CompleteMultipartOutput, bool, error) {
	return func(context.Context) (backend.CompleteMultipartOutput, bool, error) {
		*calls++
		f.mu.Lock()
		defer f.mu.Unlock()
		return backend.CompleteMultipartOutput{ETag: "etag-from-head"}, f.object, nil
	}
}

func TestCompleteThroughStore(t *testing.T) {
	in := backend.CompleteMultipartInput{Bucket: "b", Key: "k", UploadID: "u1", Parts: []backend.CompletedPart{{PartNumber: 1, ETag: "e"}}}
	ctx := context.Background()

	t.Run("transient InternalError is retried", func(t *testing.T) {
		f := &fakeMultipart{completeErrs: []error{errInternal200}}
		_, c := mpStore(t, f)
		checks := 0
		out, err := c.CompleteMultipartUploadRecovering(ctx, in, headCheck(f, &checks))
		if err != nil || out.ETag != "etag-object" || f.completes != 2 || checks != 0 {
			t.Fatalf("out=%+v err=%v completes=%d checks=%d", out, err, f.completes, checks)
		}
	})
	t.Run("lost answer recovered with the HEAD's ETag", func(t *testing.T) {
		f := &fakeMultipart{completeErrs: []error{errInternal200, errNoSuchUpload}, assembled: []bool{true}}
		_, c := mpStore(t, f)
		checks := 0
		out, err := c.CompleteMultipartUploadRecovering(ctx, in, headCheck(f, &checks))
		if err != nil || out.ETag != "etag-from-head" || checks != 1 {
			t.Fatalf("out=%+v err=%v checks=%d", out, err, checks)
		}
	})
	t.Run("plain CompleteMultipartUpload does not recover", func(t *testing.T) {
		f := &fakeMultipart{completeErrs: []error{errInternal200, errNoSuchUpload}, assembled: []bool{true}}
		mp, _ := mpStore(t, f)
		_, err := mp.CompleteMultipartUpload(ctx, in)
		if !errors.Is(err, errNoSuchUpload) || f.completes != 2 {
			t.Fatalf("err=%v completes=%d", err, f.completes)
		}
	})
}
