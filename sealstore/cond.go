package sealstore

import (
	"context"
	"errors"

	"github.com/s3seal/s3seal/backend"
)

// Condition makes a PUT or copy conditional on the object now under its
// key, in plaintext terms (S3's conditional writes).
type Condition struct {
	// IfNoneMatch: the key must be free (If-None-Match: *).
	IfNoneMatch bool
	// IfMatch lists plaintext ETags without quotes; the object must exist
	// and carry one of them. "*" matches any existing object.
	IfMatch []string
}

// pin translates c into a condition on the backend's ETag, so that the
// backend decides it atomically with the write: If-None-Match: * passes
// through; If-Match is checked against the plaintext ETag of the object a
// HEAD finds and becomes If-Match on that version's backend ETag.
func (s *Store) pin(ctx context.Context, bucket, key string, c *Condition, bin *backend.PutInput) error {
	bin.IfNoneMatch = c.IfNoneMatch
	if c.IfMatch == nil {
		return nil
	}
	bi, err := s.be.HeadObject(ctx, bucket, key)
	if backend.IsNotFound(err) {
		return errorf("NoSuchKey", "The specified key does not exist.")
	}
	if err != nil {
		return err
	}
	info, _, err := s.describe(ctx, bucket, bi, false)
	if err != nil {
		return err
	}
	if c.IfNoneMatch {
		return errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	}
	if !etagIn(info.ETag, c.IfMatch) {
		return errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	}
	bin.IfMatch = info.backendETag
	return nil
}

// settle interprets a refused conditional backend PUT. A refusal whose
// object carries this PUT's own envelope means an earlier attempt of the
// same PUT landed and its answer was lost (the retry layer tried again):
// that is the PUT's success, and its description is returned. Otherwise
// the condition is evaluated again against the object now there: false is
// PreconditionFailed (or NoSuchKey), still true means a concurrent write
// came between the HEAD and the PUT: ConditionalRequestConflict, which the
// client may retry.
func (s *Store) settle(ctx context.Context, bucket, key string, c *Condition, env map[string]string, putErr error) (backend.ObjectInfo, error) {
	switch backend.ErrorCode(putErr) {
	case "PreconditionFailed", "NoSuchKey", "NotFound":
	default:
		return backend.ObjectInfo{}, putErr
	}
	bi, err := s.be.HeadObject(ctx, bucket, key)
	if backend.IsNotFound(err) {
		if c.IfMatch != nil {
			return bi, errorf("NoSuchKey", "The specified key does not exist.")
		}
		return bi, errorf("ConditionalRequestConflict", "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part.")
	}
	if err != nil {
		return bi, errors.Join(putErr, err)
	}
	if carries(bi.Meta, env) {
		return bi, nil
	}
	if c.IfNoneMatch {
		return bi, errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	}
	info, _, err := s.describe(ctx, bucket, bi, false)
	if err != nil {
		return bi, err
	}
	if !etagIn(info.ETag, c.IfMatch) {
		return bi, errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	}
	return bi, errorf("ConditionalRequestConflict", "A conflicting operation occurred. If using PutObject you can retry the request. If using multipart upload you should initiate another CreateMultipartUpload request and re-upload each part.")
}

// carries reports whether meta holds every entry of env: the envelope of
// one PUT (its object id and wrapped data key are random), so only that
// PUT's object carries it.
func carries(meta, env map[string]string) bool {
	for k, v := range env {
		if meta[k] != v {
			return false
		}
	}
	return len(env) > 0
}

func etagIn(etag string, list []string) bool {
	for _, e := range list {
		if e == "*" || e == etag {
			return true
		}
	}
	return false
}
