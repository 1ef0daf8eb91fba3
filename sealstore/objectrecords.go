package sealstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

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
//
// A record is also bound to the content it was written for (Record.For,
// the ObjectInfo.ContentID of that write), so that it never applies to
// other content under its name, whatever any process knows or caches:
// an overwrite, a version made current by a delete, a null version
// replaced, each is other content, and a record bound to the content
// before applies to none of it. Readers decide by a record only for the
// content it names, and read that content only (ReadInput.ContentID).
// A record written before records were bound names no content and
// applies to none: the object has the bucket's default ACL.

// Record is what s3seal keeps of one object besides it, and the content
// it was written for.
type Record struct {
	// For is the ContentID of the object the record was written for, or
	// another name no content has (a pending upload's).
	For  string
	Body []byte
}

// recordMagic opens a bound record; what follows is For, a newline, and
// the body.
const recordMagic = "s3seal record v2\n"

func (r Record) encode() ([]byte, error) {
	if r.For == "" || strings.ContainsAny(r.For, "\n") {
		return nil, errorf("InternalError", "an object record must be bound to one content, not %q", r.For)
	}
	return []byte(recordMagic + r.For + "\n" + string(r.Body)), nil
}

// decodeRecord reads a stored record; ok is false for one that names no
// content (written before records were bound).
func decodeRecord(d []byte) (r Record, ok bool) {
	rest, found := bytes.CutPrefix(d, []byte(recordMagic))
	if !found {
		return Record{}, false
	}
	f, body, found := bytes.Cut(rest, []byte("\n"))
	if !found || len(f) == 0 {
		return Record{}, false
	}
	return Record{For: string(f), Body: body}, true
}

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
// current object; else that version), and whether there is one bound to
// some content (Record.For: the caller compares it with the content it
// acts on).
func (s *Store) ObjectRecord(ctx context.Context, bucket, key, version string) (Record, bool, error) {
	d, err := s.readBucketDoc(ctx, bucket, objectRecordKey(key, version))
	if errors.Is(err, errGone) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	r, ok := decodeRecord(d)
	return r, ok, nil
}

// PutObjectRecord keeps rec as the record of bucket's key (version: as
// ObjectRecord), flagging the bucket first (ObjectRecordsDoc). A write's
// record is the write's own (RecordWrite); this is for a record of
// content already there (PutObjectAcl).
func (s *Store) PutObjectRecord(ctx context.Context, bucket, key, version string, rec Record) error {
	b, err := rec.encode()
	if err != nil {
		return err
	}
	if len(b) > MaxBucketDoc {
		return errorf("InternalError", "object record of %s/%s is over %d bytes", bucket, key, MaxBucketDoc)
	}
	if err := s.flagObjectRecords(ctx, bucket); err != nil {
		return err
	}
	_, err = s.put(ctx, PutInput{Bucket: bucket, Key: objectRecordKey(key, version), Body: bytes.NewReader(b), Size: int64(len(b))})
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
