package sealstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/s3seal/s3seal/backend"
)

// Object records are what s3seal keeps of one object besides the object
// itself, sealed like bucket documents: its ACL and its owner when they
// are not the bucket's defaults. Each is one sealed object under
// ObjectRecordPrefix, named by the SHA-256 of the object's key (a key of
// 1024 bytes would not fit under a prefix otherwise); the sealing binds a
// record to its name, so the store cannot move one from key to key. The
// record of a key outlives no DeleteBucket (under BucketDocPrefix, it goes
// with the bucket's documents) and is not listed with them (BucketDocs
// reads the documents directly under BucketDocPrefix only).

// ObjectRecordPrefix is where object records are kept.
const ObjectRecordPrefix = BucketDocPrefix + "objects/"

func objectRecordKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return ObjectRecordPrefix + hex.EncodeToString(sum[:])
}

// ObjectRecord returns the record kept for bucket's key, and whether there
// is one.
func (s *Store) ObjectRecord(ctx context.Context, bucket, key string) ([]byte, bool, error) {
	d, err := s.readBucketDoc(ctx, bucket, objectRecordKey(key))
	if errors.Is(err, errGone) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// PutObjectRecord keeps rec as the record of bucket's key.
func (s *Store) PutObjectRecord(ctx context.Context, bucket, key string, rec []byte) error {
	if len(rec) > MaxBucketDoc {
		return errorf("InternalError", "object record of %s/%s is over %d bytes", bucket, key, MaxBucketDoc)
	}
	_, err := s.put(ctx, PutInput{Bucket: bucket, Key: objectRecordKey(key), Body: bytes.NewReader(rec), Size: int64(len(rec))})
	return err
}

// DeleteObjectRecord removes the record of bucket's key; removing one that
// is not there is not an error.
func (s *Store) DeleteObjectRecord(ctx context.Context, bucket, key string) error {
	err := s.be.DeleteObject(ctx, bucket, objectRecordKey(key))
	var be *backend.Error
	if errors.As(err, &be) && (be.Code == "NoSuchKey" || be.Code == "NotFound") {
		return nil
	}
	return err
}
