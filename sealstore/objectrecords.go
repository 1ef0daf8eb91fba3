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
// 1024 bytes would not fit under a prefix otherwise): the record of the
// key's current object, and beside it, suffixed with the SHA-256 of a
// version id, the record of one version of the key in a versioned bucket. The
// sealing binds a record to its name, so the store cannot move one from
// key to key or from version to version. The
// record of a key outlives no DeleteBucket (under BucketDocPrefix, it goes
// with the bucket's documents) and is not listed with them (BucketDocs
// reads the documents directly under BucketDocPrefix only).

// ObjectRecordPrefix is where object records are kept.
const ObjectRecordPrefix = BucketDocPrefix + "objects/"

// objectRecordKey names the record of key's current object (version ""),
// or of one of its versions.
func objectRecordKey(key, version string) string {
	sum := sha256.Sum256([]byte(key))
	name := ObjectRecordPrefix + hex.EncodeToString(sum[:])
	if version != "" {
		v := sha256.Sum256([]byte(version))
		// Beside the key's record, not under it: a store on a file
		// system (the embedded one) cannot hold a key that is also a
		// prefix of others.
		name += "." + hex.EncodeToString(v[:])
	}
	return name
}

// ObjectRecord returns the record kept for bucket's key (version "": its
// current object; else that version), and whether there is one.
func (s *Store) ObjectRecord(ctx context.Context, bucket, key, version string) ([]byte, bool, error) {
	d, err := s.readBucketDoc(ctx, bucket, objectRecordKey(key, version))
	if errors.Is(err, errGone) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return d, true, nil
}

// PutObjectRecord keeps rec as the record of bucket's key (version: as
// ObjectRecord).
func (s *Store) PutObjectRecord(ctx context.Context, bucket, key, version string, rec []byte) error {
	if len(rec) > MaxBucketDoc {
		return errorf("InternalError", "object record of %s/%s is over %d bytes", bucket, key, MaxBucketDoc)
	}
	_, err := s.put(ctx, PutInput{Bucket: bucket, Key: objectRecordKey(key, version), Body: bytes.NewReader(rec), Size: int64(len(rec))})
	return err
}

// DeleteObjectRecord removes the record of bucket's key (version: as
// ObjectRecord); removing one that is not there is not an error.
func (s *Store) DeleteObjectRecord(ctx context.Context, bucket, key, version string) error {
	err := s.be.DeleteObject(ctx, bucket, objectRecordKey(key, version))
	var be *backend.Error
	if errors.As(err, &be) && (be.Code == "NoSuchKey" || be.Code == "NotFound") {
		return nil
	}
	return err
}
