package retry

import (
	"context"
	"fmt"
	"io"

	"github.com/s3seal/s3seal/backend"
)

// Store wraps a backend.Store so that every call is retried under p. The
// backend client underneath should not retry by itself (attempts would
// multiply). PutObject bodies are rewound before each attempt, which is why
// backend.PutInput asks for an io.ReadSeeker.
func Store(st backend.Store, p Policy) backend.Store {
	return &store{st: st, p: p}
}

type store struct {
	st backend.Store
	p  Policy
}

var _ backend.Store = (*store)(nil)

func (s *store) ListBuckets(ctx context.Context) (out []backend.Bucket, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.ListBuckets(ctx); return err })
	return out, err
}

// CreateBucket treats BucketAlreadyOwnedByYou on a retry as the success of
// an earlier attempt whose answer was lost.
func (s *store) CreateBucket(ctx context.Context, bucket string) error {
	return Do(ctx, s.p, func(attempt int) error {
		err := s.st.CreateBucket(ctx, bucket)
		if attempt > 1 && backend.ErrorCode(err) == "BucketAlreadyOwnedByYou" {
			return nil
		}
		return err
	})
}

func (s *store) HeadBucket(ctx context.Context, bucket string) error {
	return Do(ctx, s.p, func(int) error { return s.st.HeadBucket(ctx, bucket) })
}

func (s *store) DeleteBucket(ctx context.Context, bucket string) error {
	return Do(ctx, s.p, func(attempt int) error {
		err := s.st.DeleteBucket(ctx, bucket)
		if attempt > 1 && backend.ErrorCode(err) == "NoSuchBucket" {
			return nil
		}
		return err
	})
}

func (s *store) BucketRegion(ctx context.Context, bucket string) (out string, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.BucketRegion(ctx, bucket); return err })
	return out, err
}

func (s *store) PutObject(ctx context.Context, in backend.PutInput) (out backend.PutOutput, err error) {
	err = Do(ctx, s.p, func(attempt int) error {
		if attempt > 1 {
			if _, err := in.Body.Seek(0, io.SeekStart); err != nil {
				return fmt.Errorf("rewind body for retry: %w", err)
			}
		}
		out, err = s.st.PutObject(ctx, in)
		return err
	})
	return out, err
}

// GetObject retries until the backend answers; the body itself is not
// retried (the caller is already streaming it).
func (s *store) GetObject(ctx context.Context, in backend.GetInput) (out *backend.Object, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.GetObject(ctx, in); return err })
	return out, err
}

func (s *store) HeadObject(ctx context.Context, bucket, key string) (out backend.ObjectInfo, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.HeadObject(ctx, bucket, key); return err })
	return out, err
}

func (s *store) DeleteObject(ctx context.Context, bucket, key string) error {
	return Do(ctx, s.p, func(int) error { return s.st.DeleteObject(ctx, bucket, key) })
}

func (s *store) DeleteObjects(ctx context.Context, bucket string, keys []string) (out []backend.DeleteResult, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.DeleteObjects(ctx, bucket, keys); return err })
	return out, err
}

func (s *store) ListObjects(ctx context.Context, in backend.ListInput) (out backend.ListOutput, err error) {
	err = Do(ctx, s.p, func(int) error { out, err = s.st.ListObjects(ctx, in); return err })
	return out, err
}
