package sealstore

import (
	"context"
	"fmt"
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

// copyOntoItselfByParts replaces bucket/key by itself with meta, h and p, for
// objects above the backend's single-copy limit: a multipart upload with
// the new metadata whose parts are copied from ranges of the object
// (UploadPartCopy, each conditional on etag, the backend ETag its HEAD
// saw), completed on condition that the key still holds that ETag. The
// ciphertext is not changed, only cut into other backend parts; s3seal's
// format does not depend on backend part boundaries. On failure the upload
// is aborted. It returns the version the completion made ("" when
// unversioned).
func (s *Store) copyOntoItselfByParts(ctx context.Context, bucket, key, etag string, size, maxCopy int64,
	meta map[string]string, h backend.Headers, p backend.Protection) (vid string, err error) {
	id, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key, Meta: meta, Headers: h, Protect: p})
	if err != nil {
		return "", err
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
			return "", err
		}
		parts = append(parts, backend.CompletedPart{PartNumber: n, ETag: pe})
	}
	out, err := s.be.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id,
		Parts: parts, IfMatch: etag})
	return out.VersionID, err
}

// carriedProtection is what a copy by parts must set on the new upload for
// the object bi describes to keep what a single CopyObject keeps (its tags)
// and its lock (carriedLock, as the single copy sets it): the tags of the
// version the HEAD saw (none from a store without tags). ACL grants are not
// carried: they are read only with ?acl, and s3seal's objects have the
// bucket owner's.
func (s *Store) carriedProtection(ctx context.Context, bucket, key string, bi backend.ObjectInfo, now time.Time) (backend.Protection, error) {
	p := carriedLock(bi, now)
	tags, err := s.be.ObjectTagging(ctx, bucket, key, bi.VersionID)
	switch {
	case backend.ErrorCode(err) == "NotImplemented":
	case err != nil:
		return p, fmt.Errorf("read the tags to carry over: %w", err)
	default:
		p.Tagging = tags
	}
	return p, nil
}

// carriedLock is the lock a copy of the object bi describes onto itself
// must set to keep it, since a store copies neither retention nor legal
// hold: the legal hold when on, and the retention while it has not expired
// (S3 refuses a retain-until date in the past).
func carriedLock(bi backend.ObjectInfo, now time.Time) backend.Protection {
	var p backend.Protection
	if bi.Lock.LockMode != "" && bi.Lock.RetainUntil.After(now) {
		p.LockMode, p.RetainUntil = bi.Lock.LockMode, bi.Lock.RetainUntil
	}
	if bi.Lock.LegalHold == "ON" {
		p.LegalHold = "ON"
	}
	return p
}
