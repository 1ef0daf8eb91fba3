package retry

import (
	"context"

	"github.com/s3seal/s3seal/backend"
)

func (s *store) GetBucketVersioning(ctx context.Context, bucket string) (out string, err error) {
	err = s.do(ctx, Call{Operation: "GetBucketVersioning", Bucket: bucket}, func(int) error { out, err = s.st.GetBucketVersioning(ctx, bucket); return err })
	return out, err
}

func (s *store) PutBucketVersioning(ctx context.Context, bucket, status string) error {
	return s.do(ctx, Call{Operation: "PutBucketVersioning", Bucket: bucket}, func(int) error { return s.st.PutBucketVersioning(ctx, bucket, status) })
}

func (s *store) HeadObjectVersion(ctx context.Context, bucket, key, versionID string) (out backend.ObjectInfo, err error) {
	err = s.do(ctx, Call{Operation: "HeadObject", Bucket: bucket, Key: key}, func(int) error {
		out, err = s.st.HeadObjectVersion(ctx, bucket, key, versionID)
		return err
	})
	return out, err
}

// DeleteObjectVersion is retried like DeleteObject. A retried delete
// without a version id in a versioned bucket may leave a second delete
// marker, as any S3 client's retry does.
func (s *store) DeleteObjectVersion(ctx context.Context, in backend.DeleteInput) (out backend.DeleteOutput, err error) {
	err = s.do(ctx, Call{Operation: "DeleteObject", Bucket: in.Bucket, Key: in.Key}, func(int) error {
		out, err = s.st.DeleteObjectVersion(ctx, in)
		return err
	})
	return out, err
}

func (s *store) DeleteVersions(ctx context.Context, bucket string, objs []backend.ObjectID) (out []backend.DeleteResult, err error) {
	err = s.do(ctx, Call{Operation: "DeleteObjects", Bucket: bucket}, func(int) error { out, err = s.st.DeleteVersions(ctx, bucket, objs); return err })
	return out, err
}

func (s *store) ListObjectVersions(ctx context.Context, in backend.ListVersionsInput) (out backend.ListVersionsOutput, err error) {
	err = s.do(ctx, Call{Operation: "ListObjectVersions", Bucket: in.Bucket}, func(int) error { out, err = s.st.ListObjectVersions(ctx, in); return err })
	return out, err
}
