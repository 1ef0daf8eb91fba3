package retry

import (
	"context"
	"io"

	"github.com/s3seal/s3seal/backend"
)

// Completer is offered by the Store NewStore returns over a multipart
// backend: a completion retried under the complete policy whose lost
// answer the caller can recover (see Complete). recover is asked, after a
// retried attempt found the upload gone, whether the object at the key is
// this upload's; if so it returns what the completion would have answered
// (the backend ETag from its HEAD) and true.
type Completer interface {
	CompleteMultipartUploadRecovering(ctx context.Context, in backend.CompleteMultipartInput,
		recover func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error)) (backend.CompleteMultipartOutput, error)
}

var _ Completer = (*store)(nil)

func (s *store) CreateMultipartUpload(ctx context.Context, in backend.CreateMultipartInput) (id string, err error) {
	// A retry after a lost answer creates a second upload; the first is
	// left for the bucket's lifecycle rule (or ListMultipartUploads) to
	// abort, as with any S3 client.
	err = s.do(ctx, Call{Operation: "CreateMultipartUpload", Bucket: in.Bucket, Key: in.Key}, func(int) error {
		id, err = s.st.CreateMultipartUpload(ctx, in)
		return err
	})
	return id, err
}

// UploadPart is retried under the part policy. The body is put back at
// offset 0 before every attempt, so each attempt sends exactly the bytes
// of the first, whatever a failed attempt had consumed; a body that cannot
// be rewound (backend.Once) is sent once.
func (s *store) UploadPart(ctx context.Context, in backend.UploadPartInput) (etag string, err error) {
	c := Call{Operation: "UploadPart", Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID, Part: in.PartNumber}
	once := backend.SentOnce(in.Body)
	err = DoCall(ctx, onceFor(in.Body, s.ps.Part), c, func(int) error {
		if !once {
			if err := rewind(in.Body); err != nil {
				return err
			}
		}
		etag, err = s.st.UploadPart(ctx, in)
		return err
	})
	return etag, err
}

// UploadPartCopy is retried under the part policy: a copy that went
// through but whose answer was lost is done again, replacing the part
// with the same bytes.
func (s *store) UploadPartCopy(ctx context.Context, in backend.UploadPartCopyInput) (etag string, err error) {
	c := Call{Operation: "UploadPartCopy", Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID, Part: in.PartNumber}
	err = DoCall(ctx, s.ps.Part, c, func(int) error {
		etag, err = s.st.UploadPartCopy(ctx, in)
		return err
	})
	return etag, err
}

// CompleteMultipartUpload is retried under the complete policy without
// recovery: NoSuchUpload on a retry stands. Callers that can tell their
// object use CompleteMultipartUploadRecovering.
func (s *store) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	return s.CompleteMultipartUploadRecovering(ctx, in, nil)
}

func (s *store) CompleteMultipartUploadRecovering(ctx context.Context, in backend.CompleteMultipartInput,
	recover func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error)) (out backend.CompleteMultipartOutput, err error) {
	c := Call{Operation: "CompleteMultipartUpload", Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID}
	var recovered Recovered
	if recover != nil {
		recovered = func(ctx context.Context) (bool, error) {
			o, ok, err := recover(ctx)
			if ok && err == nil {
				out = o
			}
			return ok, err
		}
	}
	err = Complete(ctx, s.ps.Complete, c, func(int) error {
		var err error
		out, err = s.st.CompleteMultipartUpload(ctx, in)
		return err
	}, recovered)
	return out, err
}

// AbortMultipartUpload treats NoSuchUpload on a retry as the success of an
// earlier attempt whose answer was lost.
func (s *store) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	c := Call{Operation: "AbortMultipartUpload", Bucket: bucket, Key: key, UploadID: uploadID}
	return s.do(ctx, c, func(attempt int) error {
		err := s.st.AbortMultipartUpload(ctx, bucket, key, uploadID)
		if attempt > 1 && lostUpload(err) {
			return nil
		}
		return err
	})
}

func (s *store) ListParts(ctx context.Context, in backend.ListPartsInput) (out backend.ListPartsOutput, err error) {
	c := Call{Operation: "ListParts", Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID}
	err = s.do(ctx, c, func(int) error { out, err = s.st.ListParts(ctx, in); return err })
	return out, err
}

func (s *store) ListMultipartUploads(ctx context.Context, in backend.ListUploadsInput) (out backend.ListUploadsOutput, err error) {
	err = s.do(ctx, Call{Operation: "ListMultipartUploads", Bucket: in.Bucket}, func(int) error {
		out, err = s.st.ListMultipartUploads(ctx, in)
		return err
	})
	return out, err
}

// SourceReader is implemented by every Store NewStore returns: a reader
// of a copy source that resumes after a cut under the source-read policy.
type SourceReader interface {
	ReadSource(ctx context.Context, in backend.GetInput, size int64) io.ReadCloser
}

// ReadSource reads size bytes of the object in (its Range, if set, is
// replaced by the reader's own). The first GET pins the object version:
// every reopen asks If-Match on the ETag it answered, so a source
// overwritten mid-copy fails (PreconditionFailed) instead of splicing two
// versions.
var _ SourceReader = (*store)(nil)

func (s *store) ReadSource(ctx context.Context, in backend.GetInput, size int64) io.ReadCloser {
	c := Call{Operation: "ReadSource", Bucket: in.Bucket, Key: in.Key}
	base := int64(0)
	if in.Range != nil {
		base = in.Range.Off
	}
	open := func(ctx context.Context, off int64) (io.ReadCloser, error) {
		get := in
		get.Range = &backend.ByteRange{Off: base + off, Len: size - off}
		// One GET per attempt: the reader's source-read policy retries.
		obj, err := s.st.GetObject(ctx, get)
		if err != nil {
			return nil, err
		}
		if get.IfMatch == "" {
			in.IfMatch = obj.Info.ETag
		}
		return obj.Body, nil
	}
	return NewResumingReader(ctx, s.ps.SourceRead, c, size, open)
}
