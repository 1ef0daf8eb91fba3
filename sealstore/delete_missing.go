package sealstore

import (
	"context"
	"errors"

	"github.com/s3seal/s3seal/backend"
)

// errNothingToDelete says a conditional delete found nothing to delete
// and succeeds without asking the store to delete anything.
var errNothingToDelete = errors.New("nothing to delete")

// conditionOnMissing answers a conditional delete whose version is not
// there (err is the HEAD's answer). AWS documents (DeleteObject) that
// x-amz-if-match-size and x-amz-if-match-last-modified-time delete "only
// if" they match, and that a missing object is 204: so with only those
// two the delete succeeds with nothing deleted (errNothingToDelete; a
// missing bucket is still NoSuchBucket). If-Match on a missing key is 404
// NoSuchKey, as S3 answers for general purpose buckets. A delete marker is
// there but has neither size nor time to match: PreconditionFailed (as
// Ceph RGW answers; S3 documents none for it), with If-Match NoSuchKey as
// before.
func (s *Store) conditionOnMissing(ctx context.Context, in DeleteInput, err error) error {
	if in.Cond.IfMatch != nil {
		return noSuchKey()
	}
	var be *backend.Error
	if errors.As(err, &be) && (be.DeleteMarker || be.Code == "MethodNotAllowed") {
		return preconditionFailed()
	}
	if err := s.be.HeadBucket(ctx, in.Bucket); backend.IsNotFound(err) {
		return errorf("NoSuchBucket", "The specified bucket does not exist.")
	} else if err != nil {
		return err
	}
	return errNothingToDelete
}
