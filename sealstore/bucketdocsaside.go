package sealstore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// Some stores refuse a change of a bucket that holds any object: moto
// answers PutObjectLockConfiguration on such a bucket with "InvalidBucket:
// Bucket needs to be empty" (AWS and Ceph RGW do not). A bucket s3seal
// made always holds its owner document, so there the change could never
// be made. WithoutBucketDocs takes the documents out for the change and
// puts them back after.
//
// What it costs: while they are out (one request to the store), another
// s3seal process in front of the same store that reads the bucket's
// documents finds none, and treats the bucket as one without an owner:
// its lists decide (see the bucket documents in DESIGN.md), so a
// credential they reach through "*" may then write to it, or delete it
// and create it again as its own. This process keeps deciding by what it
// read, and its own document changes wait for the documents to be back.
// A process that dies in that window leaves the bucket without its
// documents. All of it is bounded to a bucket that holds nothing else,
// that is a bucket just made, on a store that wants it empty.

// maxAsideEntries bounds the versions WithoutBucketDocs takes out: a
// bucket just made holds a few documents, one version each or a few.
const maxAsideEntries = 100

// WithoutBucketDocs runs change while bucket holds none of s3seal's
// documents, when they are all the bucket holds, and puts them back
// after, whatever change answered. It answers ran false, without calling
// change, when the bucket holds anything else (or more versions than
// maxAsideEntries).
//
// The documents go back with an Object Lock retention already over, so
// that a default retention the change set does not lock them: s3seal
// rewrites and deletes them as it needs, and a store that refuses such a
// retention gets them back as plain objects.
func (s *Store) WithoutBucketDocs(ctx context.Context, bucket string, change func() error) (ran bool, err error) {
	// A document change of this process waits until they are back: it
	// would be lost under the documents read before.
	mu := s.bucketDocs.writeLock(bucket)
	mu.Lock()
	defer mu.Unlock()
	out, err := s.be.ListObjectVersions(ctx, backend.ListVersionsInput{Bucket: bucket, MaxKeys: maxAsideEntries})
	if err != nil || out.IsTruncated || len(out.Entries) == 0 {
		return false, err
	}
	var ids []backend.ObjectID
	for _, e := range out.Entries {
		// Only the bucket's own documents: an object record (under
		// ObjectRecordPrefix) is no document BucketDocs reads back, so
		// it would not be put back.
		if name := strings.TrimPrefix(e.Key, BucketDocPrefix); name == e.Key || name == "" || strings.Contains(name, "/") {
			return false, nil
		}
		ids = append(ids, backend.ObjectID{Key: e.Key, VersionID: e.VersionID})
	}
	docs, err := s.readBucketDocs(ctx, bucket)
	if err != nil {
		return false, err
	}
	// This process decides by the documents while they are out.
	s.bucketDocs.hold(bucket, docs)
	res, err := s.be.DeleteVersions(ctx, bucket, ids)
	for _, r := range res {
		if err == nil && r.Code != "" {
			err = &backend.Error{Op: "DeleteObjects", Code: r.Code, Message: r.Message}
		}
	}
	var changeErr error
	if err == nil {
		changeErr = change()
	}
	return true, errors.Join(err, changeErr, s.restoreBucketDocs(ctx, bucket, docs))
}

// restoreBucketDocs writes docs back, the owner first.
func (s *Store) restoreBucketDocs(ctx context.Context, bucket string, docs map[string][]byte) error {
	defer s.bucketDocs.forget(bucket)
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	if i := slices.Index(names, "owner"); i > 0 {
		names = append([]string{"owner"}, slices.Delete(names, i, i+1)...)
	}
	var errs []error
	for _, name := range names {
		doc := docs[name]
		in := PutInput{Bucket: bucket, Key: BucketDocPrefix + name, Body: bytes.NewReader(doc), Size: int64(len(doc)),
			Protect: backend.Protection{LockMode: "GOVERNANCE", RetainUntil: time.Unix(0, 0).UTC()}}
		if _, err := s.put(ctx, in); err != nil {
			in.Body, in.Protect = bytes.NewReader(doc), backend.Protection{}
			if _, err := s.put(ctx, in); err != nil {
				s.log.ErrorContext(ctx, "bucket documents: could not put a document back; the bucket has lost it",
					"bucket", bucket, "document", name, "error", err)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
