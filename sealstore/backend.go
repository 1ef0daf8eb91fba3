package sealstore

import (
	"context"
	"io"

	"github.com/s3seal/s3seal/backend"
)

// Backend is what sealstore needs of the object store: its S3 calls, and
// two capabilities that a plain client has only in their simplest form,
// declared here rather than looked for on whatever store it is given.
// The retry package's store (retry.NewStore) has them in full; Direct
// gives any backend.Store their simplest form.
type Backend interface {
	backend.Store
	// ReadSource reads size bytes of a copy source's ciphertext from the
	// offset of in's Range (0 without one), pinned to the object first
	// read (If-Match), resuming where a read broke when it can: a copy of
	// many GB survives a cut connection without starting over. Errors
	// come from the reader.
	ReadSource(ctx context.Context, in backend.GetInput, size int64) io.ReadCloser
	// CompleteMultipartUploadRecovering completes an upload, asking
	// recover, when a retried attempt found the upload gone, whether an
	// earlier attempt made the object after all (its answer lost).
	CompleteMultipartUploadRecovering(ctx context.Context, in backend.CompleteMultipartInput,
		recover func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error)) (backend.CompleteMultipartOutput, error)
}

// Direct is be as a Backend that retries nothing: a copy source is one
// ranged GET, a completion one call, which no retried attempt of its
// own can have lost (sealstore still recovers a completion whose one
// answer looked failed: completedDespiteStoreAnswer).
func Direct(be backend.Store) Backend { return direct{be} }

type direct struct{ backend.Store }

func (d direct) ReadSource(ctx context.Context, in backend.GetInput, size int64) io.ReadCloser {
	off := int64(0)
	if in.Range != nil {
		off = in.Range.Off
	}
	in.Range = &backend.ByteRange{Off: off, Len: size}
	obj, err := d.GetObject(ctx, in)
	if err != nil {
		return io.NopCloser(errReader{err})
	}
	return obj.Body
}

func (d direct) CompleteMultipartUploadRecovering(ctx context.Context, in backend.CompleteMultipartInput,
	_ func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error)) (backend.CompleteMultipartOutput, error) {
	return d.CompleteMultipartUpload(ctx, in)
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
