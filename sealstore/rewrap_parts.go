package sealstore

import (
	"context"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// Part sizes of a multipart copy onto itself: every part but the last at
// least S3's 5 MiB, at most 1 GiB (S3 allows 5 GiB), and few enough for
// S3's 10,000 parts.
const (
	minCopyPart = 5 << 20
	maxCopyPart = 1 << 30
	maxParts    = 10000
)

// copyPartSize is the size of each copied range of an object of size
// bytes, for a backend whose single copy takes at most maxCopy bytes.
func copyPartSize(size, maxCopy int64) int64 {
	part := min(max(maxCopy, minCopyPart), maxCopyPart)
	if need := (size + maxParts - 1) / maxParts; part < need {
		part = need
	}
	return part
}

// copyOntoItselfByParts replaces bucket/key by itself with meta and h, for
// objects above the backend's single-copy limit: a multipart upload with
// the new metadata whose parts are copied from ranges of the object
// (UploadPartCopy, each conditional on etag, the backend ETag its HEAD
// saw), completed on condition that the key still holds that ETag. The
// ciphertext is not changed, only cut into other backend parts; s3seal's
// format does not depend on backend part boundaries. On failure the upload
// is aborted.
func (s *Store) copyOntoItselfByParts(ctx context.Context, bucket, key, etag string, size, maxCopy int64,
	meta map[string]string, h backend.Headers) (err error) {
	id, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key, Meta: meta, Headers: h})
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			defer cancel()
			if aerr := s.be.AbortMultipartUpload(actx, bucket, key, id); aerr != nil {
				s.log.Warn("rewrap: could not abort the multipart copy; gc or the bucket's lifecycle rule removes it",
					"bucket", bucket, "key", key, "upload", id, "err", aerr)
			}
		}
	}()
	step := copyPartSize(size, maxCopy)
	var parts []backend.CompletedPart
	for first, n := int64(0), int32(1); first < size; first, n = first+step, n+1 {
		last := min(first+step, size) - 1
		pe, err := s.be.UploadPartCopy(ctx, backend.UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: n,
			SrcBucket: bucket, SrcKey: key, SrcIfMatch: etag, First: first, Last: last})
		if err != nil {
			return err
		}
		parts = append(parts, backend.CompletedPart{PartNumber: n, ETag: pe})
	}
	_, err = s.be.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id,
		Parts: parts, IfMatch: etag})
	return err
}
