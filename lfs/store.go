package lfs

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/sealstore"
)

// errTooLarge and errChecksum end a store early; nothing is published.
var (
	errTooLarge = errors.New("blob larger than the maximum")
	errChecksum = errors.New("checksum mismatch")
	errEmpty    = errors.New("empty blob")
)

// bodyError marks a failure to read the client's body, as opposed to a
// storage failure.
type bodyError struct{ err error }

func (e *bodyError) Error() string { return "reading the request body: " + e.err.Error() }
func (e *bodyError) Unwrap() error { return e.err }

// blobReader reads the client's body into the sums, refusing more than max
// bytes. It passes io.EOF on bare (sealstore takes only a bare io.EOF as a
// clean end) and marks every other error as the body's.
type blobReader struct {
	r   io.Reader
	s   *sums // nil: count only
	n   int64
	max int64
}

func (b *blobReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if b.s != nil {
		b.s.Write(p[:n])
	}
	b.n += int64(n)
	if b.n > b.max {
		return n, errTooLarge
	}
	if err != nil && err != io.EOF {
		err = &bodyError{err}
	}
	return n, err
}

// storeStream stores body (length size, or -1) at key and returns its sums.
// A body that fits one part (by its declared length) is one PUT; any other
// streams into a multipart upload of PartSize parts, sealed and sent one
// after another, so memory holds no more than sealstore's spool buffers
// whatever the size. A checksum mismatch, an oversize or broken body leaves
// nothing in storage: the PUT is refused before publishing, the multipart
// upload is aborted instead of completed.
func (h *Handler) storeStream(ctx context.Context, key string, body io.Reader, size int64, contentType string, spec checksumSpec) (*sums, error) {
	s := newSums(spec)
	return s, h.storeBody(ctx, key, body, size, contentType, nil, s)
}

// storeBody is storeStream with the user metadata to keep and the sums to
// feed, or nil for a body whose sums are already known (a record value,
// hashed before its key is chosen).
func (h *Handler) storeBody(ctx context.Context, key string, body io.Reader, size int64, contentType string, meta map[string]string, s *sums) error {
	br := &blobReader{r: body, s: s, max: h.cfg.MaxBlobSize}
	hdr := backend.Headers{ContentType: contentType}
	if size >= 0 && size <= h.cfg.PartSize {
		_, err := h.cfg.Store.Put(ctx, sealstore.PutInput{Bucket: h.cfg.Bucket, Key: key, Body: br, Size: size, Headers: hdr, Meta: meta,
			Finalize: func() (map[string]string, error) {
				if s != nil && s.mismatch() {
					return nil, errChecksum
				}
				return nil, nil
			}})
		return err
	}
	buf := bufio.NewReaderSize(br, 64<<10)
	if _, err := buf.Peek(1); err != nil {
		if err == io.EOF {
			return errEmpty
		}
		return err
	}
	id, err := h.cfg.Store.CreateMultipart(ctx, sealstore.CreateMultipartInput{Bucket: h.cfg.Bucket, Key: key, Headers: hdr, Meta: meta})
	if err != nil {
		return err
	}
	parts, err := h.streamParts(ctx, key, id, buf)
	if err == nil && s != nil && s.mismatch() {
		err = errChecksum
	}
	if err == nil && size >= 0 && br.n != size {
		err = &bodyError{io.ErrUnexpectedEOF}
	}
	if err == nil {
		_, err = h.cfg.Store.CompleteMultipart(ctx, sealstore.CompleteInput{Bucket: h.cfg.Bucket, Key: key, UploadID: id, Parts: parts, ExpectSize: -1})
	}
	if err != nil {
		h.abort(ctx, key, id)
	}
	return err
}

func (h *Handler) streamParts(ctx context.Context, key, id string, buf *bufio.Reader) ([]sealstore.CompletePart, error) {
	var parts []sealstore.CompletePart
	for n := 1; ; n++ {
		pi, err := h.cfg.Store.UploadPart(ctx, sealstore.UploadPartInput{Bucket: h.cfg.Bucket, Key: key, UploadID: id,
			PartNumber: n, Body: io.LimitReader(buf, h.cfg.PartSize), Size: -1})
		if err != nil {
			return nil, err
		}
		parts = append(parts, sealstore.CompletePart{PartNumber: n, ETag: pi.ETag})
		if pi.Size < h.cfg.PartSize {
			return parts, nil
		}
		if _, err := buf.Peek(1); err == io.EOF {
			return parts, nil
		} else if err != nil {
			return nil, err
		}
	}
}

// abort drops a multipart upload that will not be completed; one that
// cannot be dropped is left to the expiry sweep and s3seal gc.
func (h *Handler) abort(ctx context.Context, key, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := h.cfg.Store.AbortMultipart(ctx, h.cfg.Bucket, key, id); err != nil && sealstoreCode(err) != "NoSuchUpload" {
		h.metrics.storageErrors.Inc()
		h.log.Warn("lfs: could not abort a multipart upload; the expiry sweep or s3seal gc removes it",
			"bucket", h.cfg.Bucket, "key", key, "upload_id", id, "err", err)
	}
}

// sealstoreCode is the S3 error code of a sealstore or backend error, or "".
func sealstoreCode(err error) string {
	var se *sealstore.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return backend.ErrorCode(err)
}

// storeError maps a failure to store a blob to its answer.
func (h *Handler) storeError(err error) *apiError {
	var be *bodyError
	switch {
	case errors.Is(err, errTooLarge), sealstoreCode(err) == "EntityTooLarge":
		return errf(http.StatusRequestEntityTooLarge, "payload_too_large", "the blob is larger than %d bytes", h.cfg.MaxBlobSize)
	case errors.Is(err, errChecksum):
		return errf(http.StatusBadRequest, "checksum_mismatch", "the blob does not match the checksum given; nothing was stored")
	case errors.Is(err, errEmpty):
		return errf(http.StatusBadRequest, "empty_upload", "the blob is empty")
	case sealstoreCode(err) == "MetadataTooLarge":
		return errf(http.StatusBadRequest, "invalid_request", "the Content-Type is too long to be stored with the blob (sealed, it may take %d bytes)", crypto.MaxObjectMeta-6)
	case errors.As(err, &be), sealstoreCode(err) == "IncompleteBody":
		return errf(http.StatusBadRequest, "invalid_request", "the request body could not be read whole: %v", err)
	}
	h.metrics.storageErrors.Inc()
	h.log.Error("lfs: storing a blob failed", "err", err)
	return errf(http.StatusBadGateway, "s3_upload_failed", "storing the blob failed")
}
