package sealstore

import (
	"context"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// The store's buckets, and what the store enforces on an object, as
// s3seal's front reaches them: through sealstore, like everything else it
// asks of the store. Their documents are
// bucketdocs.go's; DeleteBucket, which takes s3seal's own objects along,
// is dropbucket.go's.

// Bucket is one of the store's buckets.
type Bucket struct {
	Name    string
	Created time.Time
}

// ListBuckets lists the store's buckets, in the store's order.
func (s *Store) ListBuckets(ctx context.Context) ([]Bucket, error) {
	bs, err := s.be.ListBuckets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Bucket, len(bs))
	for i, b := range bs {
		out[i] = Bucket{Name: b.Name, Created: b.Created}
	}
	return out, nil
}

// HeadBucket answers nil for a bucket that is there and s3seal may reach,
// else the store's refusal (NoSuchBucket, AccessDenied).
func (s *Store) HeadBucket(ctx context.Context, bucket string) error {
	return s.be.HeadBucket(ctx, bucket)
}

// CreateBucket makes the bucket on the store, with no document of
// s3seal's but SinglePartDoc yet: the caller keeps its owner
// (CreateBucketDoc), which must come after, as other processes take a
// young bucket without an owner for one being made and write nothing
// there.
func (s *Store) CreateBucket(ctx context.Context, bucket string) error {
	if err := s.be.CreateBucket(ctx, bucket); err != nil {
		return err
	}
	s.claimSinglePart(ctx, bucket)
	return nil
}

// UndoCreateBucket removes a bucket CreateBucket has just made, with the
// owner document kept for it if any, before a client's object is in it
// (a CreateBucket whose settings the store then refused): the store's own
// delete, else DeleteBucket, which refuses a bucket holding a client's
// object.
func (s *Store) UndoCreateBucket(ctx context.Context, bucket string) error {
	defer s.bucketDocs.forget(bucket)
	err := s.be.DeleteBucket(ctx, bucket)
	if backend.ErrorCode(err) == "BucketNotEmpty" {
		// The owner document was kept already: DeleteBucket takes what
		// s3seal keeps, and refuses if a client's object is there.
		return s.DeleteBucket(ctx, bucket)
	}
	return err
}

// BucketRegion is the region the store says the bucket is in.
func (s *Store) BucketRegion(ctx context.Context, bucket string) (string, error) {
	return s.be.BucketRegion(ctx, bucket)
}

// BucketVersioning is the bucket's versioning: "Enabled", "Suspended", or
// "" when it was never enabled.
func (s *Store) BucketVersioning(ctx context.Context, bucket string) (string, error) {
	return s.be.GetBucketVersioning(ctx, bucket)
}

// SetBucketVersioning sets the bucket's versioning, "Enabled" or
// "Suspended".
func (s *Store) SetBucketVersioning(ctx context.Context, bucket, status string) error {
	return s.be.PutBucketVersioning(ctx, bucket, status)
}

// ObjectTags are the tags the store keeps for an object (of one version
// when versionID is not ""), URL-encoded as x-amz-tagging carries them.
func (s *Store) ObjectTags(ctx context.Context, bucket, key, versionID string) (string, error) {
	return s.be.ObjectTagging(ctx, bucket, key, versionID)
}

// LockState is what the store enforces on one version of an object (its
// retention and legal hold), and which version that is.
type LockState struct {
	VersionID string // "" or "null" in a bucket without versioning
	backend.Protection
}

// ObjectLock is the LockState of an object (one version when versionID is
// not ""), as the store reports it on a HEAD. An object or version that
// is not there is the store's error (a delete marker's included), so it
// answers whether it is there too.
func (s *Store) ObjectLock(ctx context.Context, bucket, key, versionID string) (LockState, error) {
	info, err := s.be.HeadObjectVersion(ctx, bucket, key, versionID)
	return LockState{VersionID: info.VersionID, Protection: info.Lock}, err
}
