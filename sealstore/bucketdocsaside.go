package sealstore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strconv"
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
// While they are out, the bucket holds a marker the store does not count
// as an object: an open multipart upload of asideMarkerKey, made before
// the documents go and aborted once they are back. Another s3seal process
// in front of the same store that reads the bucket's documents and finds
// none finds the marker, and answers 503 SlowDown (clients retry) instead
// of taking the bucket for one without an owner, which its lists alone
// would decide. This process keeps deciding by what it read, and its own
// document changes wait for the documents to be back. A process that dies
// in that window leaves the bucket without its documents: the marker,
// past asideMarkerAge, no longer stops the others, and the bucket is then
// one without an owner. All of it is bounded to a bucket that holds
// nothing else, that is a bucket just made, on a store that wants it
// empty.

// asideMarkerPrefix is where the marker upload is: under BucketDocPrefix,
// in a folder, so that no listing of documents reads it, and hidden from
// clients' listings of uploads (ReservedPrefix). Its key names the time
// it was made, by s3seal's clock (asideMarkerKey): a store's own
// Initiated may say anything (moto answers one fixed date of 2010 for
// every upload).
const asideMarkerPrefix = BucketDocPrefix + "aside/"

// asideMarkerKey is the marker's key for one made at t.
func asideMarkerKey(t time.Time) string {
	return asideMarkerPrefix + strconv.FormatInt(t.UnixMilli(), 10)
}

// asideMarkerAge is how long a marker stops other processes: well past a
// store's answer to one configuration change and any clock skew between
// two s3seal processes.
const asideMarkerAge = 5 * time.Minute

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
	docs, err := s.listBucketDocs(ctx, bucket)
	if err != nil {
		return false, err
	}
	// Other processes wait while the documents are out; without the
	// marker they would decide by their lists.
	markerKey := asideMarkerKey(time.Now())
	marker, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: markerKey})
	if err != nil {
		return false, err
	}
	defer func() {
		if aerr := s.be.AbortMultipartUpload(context.WithoutCancel(ctx), bucket, markerKey, marker); aerr != nil {
			s.log.WarnContext(ctx, "bucket documents: the marker of documents set aside could not be removed; other processes wait for it to age",
				"bucket", bucket, "error", aerr, "age", asideMarkerAge)
		}
	}()
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
	return true, errors.Join(err, changeErr, s.restoreBucketDocs(ctx, bucket, docs, true))
}

// restoreBucketDocs writes docs back. marked says a marker holds other
// processes off while the bucket has no owner (WithoutBucketDocs): the
// owner then goes back last, so that a process finding it finds every
// document. Without one (DeleteBucket's clean-up undone) the owner goes
// back first: the bucket is never without an owner longer than it must.
func (s *Store) restoreBucketDocs(ctx context.Context, bucket string, docs map[string][]byte, marked bool) error {
	defer s.bucketDocs.forget(bucket)
	names := make([]string, 0, len(docs))
	for name := range docs {
		names = append(names, name)
	}
	slices.Sort(names)
	if i := slices.Index(names, "owner"); i >= 0 {
		names = slices.Delete(names, i, i+1)
		if marked {
			names = append(names, "owner")
		} else {
			names = append([]string{"owner"}, names...)
		}
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

// docsAside reports whether bucket's documents are set aside by some
// process now (a marker younger than asideMarkerAge): the caller found
// none, and must not take the bucket for one without an owner.
func (s *Store) docsAside(ctx context.Context, bucket string) (bool, error) {
	out, err := s.be.ListMultipartUploads(ctx, backend.ListUploadsInput{Bucket: bucket, Prefix: asideMarkerPrefix, MaxUploads: 100})
	if backend.ErrorCode(err) == "NotImplemented" || backend.IsRefused(err) {
		// A store without uploads, or whose credentials may not list
		// them, sets nothing aside either (WithoutBucketDocs makes its
		// marker before anything goes).
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, u := range out.Uploads {
		ms, err := strconv.ParseInt(strings.TrimPrefix(u.Key, asideMarkerPrefix), 10, 64)
		if err != nil || !strings.HasPrefix(u.Key, asideMarkerPrefix) {
			continue
		}
		if age := time.Since(time.UnixMilli(ms)); age < asideMarkerAge {
			// A marker from the future (another process's clock ahead)
			// counts too: the documents may be out.
			return true, nil
		}
	}
	return false, nil
}
