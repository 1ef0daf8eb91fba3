package retry

import (
	"context"
	"io"
	"sync"

	"github.com/s3seal/s3seal/backend"
)

// fakeMultipart is a scripted multipart backend. Each operation answers
// from its script in turn (nil = do the work), then succeeds.
type fakeMultipart struct {
	backend.Store // not used by these tests

	mu        sync.Mutex
	parts     [][]byte // bytes received per UploadPart attempt
	partErrs  []error
	partRead  int // bytes an attempt reads before failing (0 = all)
	completes int
	// completeErrs[i] answers attempt i+1; assembled[i] says whether that
	// attempt assembled the object before its answer.
	completeErrs []error
	assembled    []bool
	object       bool // the completed object exists
	aborts       int
	abortErrs    []error
}

func next(errs *[]error) error {
	if len(*errs) == 0 {
		return nil
	}
	err := (*errs)[0]
	*errs = (*errs)[1:]
	return err
}

func (f *fakeMultipart) CreateMultipartUpload(context.Context, backend.CreateMultipartInput) (string, error) {
	return "u1", nil
}

func (f *fakeMultipart) UploadPart(_ context.Context, in backend.UploadPartInput) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := next(&f.partErrs)
	var got []byte
	if err != nil && f.partRead > 0 {
		got = make([]byte, f.partRead)
		n, _ := io.ReadFull(in.Body, got)
		got = got[:n]
	} else {
		got, _ = io.ReadAll(in.Body)
	}
	f.parts = append(f.parts, got)
	if err != nil {
		return "", err
	}
	return "etag-part", nil
}

func (f *fakeMultipart) CompleteMultipartUpload(context.Context, backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	i := f.completes
	f.completes++
	if i < len(f.assembled) && f.assembled[i] {
		f.object = true
	}
	if i < len(f.completeErrs) && f.completeErrs[i] != nil {
		return backend.CompleteMultipartOutput{}, f.completeErrs[i]
	}
	f.object = true
	return backend.CompleteMultipartOutput{ETag: "etag-object"}, nil
}

func (f *fakeMultipart) AbortMultipartUpload(context.Context, string, string, string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.aborts++
	return next(&f.abortErrs)
}

func (f *fakeMultipart) ListParts(context.Context, backend.ListPartsInput) (backend.ListPartsOutput, error) {
	return backend.ListPartsOutput{}, nil
}

func (f *fakeMultipart) ListMultipartUploads(context.Context, backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	return backend.ListUploadsOutput{}, nil
}

var (
	errInternal200 = &backend.Error{Op: "CompleteMultipartUpload", Code: "InternalError", StatusCode: 200,
		Message: "The server did not respond in time."}
	errNoSuchUpload = &backend.Error{Op: "CompleteMultipartUpload", Code: "NoSuchUpload", StatusCode: 404,
		Message: "The specified upload does not exist."}
	errInProgress = &backend.Error{Op: "CompleteMultipartUpload", Code: "InternalError", StatusCode: 200,
		Message: "This multipart completion is already in progress"}
	errAccessDenied = &backend.Error{Op: "CompleteMultipartUpload", Code: "AccessDenied", StatusCode: 403}
)
