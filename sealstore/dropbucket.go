package sealstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// DeleteBucket deletes a bucket whose client-visible content is empty,
// with what s3seal keeps in it under ReservedPrefix, which listings hide
// and which would otherwise make the backend refuse with BucketNotEmpty.
//
// While any client object remains (in a versioned bucket: any version or
// delete marker of a client key) it answers BucketNotEmpty and touches
// nothing. Otherwise the backend decides first: it is asked to delete the
// bucket as it is, and whatever it answers but BucketNotEmpty (done, or
// refused for lack of authority: AccessDenied) is the answer, with
// nothing of the bucket touched. Only when the backend refuses for
// content does DeleteBucket clean up (cleanBucket) and ask once more.
func (s *Store) DeleteBucket(ctx context.Context, bucket string) error {
	empty, _, err := s.clientEmpty(ctx, bucket)
	if err != nil {
		return err
	}
	if !empty {
		return s.notEmpty(ctx, bucket)
	}
	err = s.be.DeleteBucket(ctx, bucket)
	if err == nil {
		s.bucketDocs.forget(bucket)
	}
	if backend.ErrorCode(err) != "BucketNotEmpty" {
		return err
	}
	// The clean-up removes the bucket's documents; a bucket that stays
	// after all (a client write landed meanwhile, the store kept a locked
	// version, a failure on the way) gets them back: without its owner
	// document it would be open to every credential its lists reach. A
	// document change of this process waits, so as not to be undone.
	mu := s.bucketDocs.writeLock(bucket)
	mu.Lock()
	defer mu.Unlock()
	docs, err := s.listBucketDocs(ctx, bucket)
	if err != nil {
		return err
	}
	err = s.cleanBucket(ctx, bucket)
	if err == nil {
		err = s.be.DeleteBucket(ctx, bucket)
	}
	if err == nil {
		s.bucketDocs.forget(bucket)
		return nil
	}
	if len(docs) > 0 && backend.ErrorCode(err) != "NoSuchBucket" {
		if now, rerr := s.listBucketDocs(ctx, bucket); rerr == nil {
			for name := range now {
				delete(docs, name)
			}
		}
		if len(docs) > 0 {
			if rerr := s.restoreBucketDocs(ctx, bucket, docs, false); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}
	}
	return err
}

// notEmpty is DeleteBucket's refusal of a bucket with client content, in
// S3's words: a bucket with versioning (enabled or suspended) asks for
// every version to go.
func (s *Store) notEmpty(ctx context.Context, bucket string) error {
	if versioned, err := s.bucketVersioned(ctx, bucket); err == nil && versioned {
		return errorf("BucketNotEmpty", "The bucket you tried to delete is not empty. You must delete all versions in the bucket.")
	}
	return errorf("BucketNotEmpty", "The bucket you tried to delete is not empty.")
}

// cleanBucket makes a bucket the backend would not delete for its content
// deletable, if the client has not written to it meanwhile (asked again:
// a client object landing after DeleteBucket's first look answers
// BucketNotEmpty with nothing touched). As S3 deletes a bucket with
// multipart uploads in progress (they are discarded with it), it aborts
// every backend upload of the bucket (unless one of s3seal's objects is
// under Object Lock, which keeps the bucket anyway: then it answers
// BucketNotEmpty with nothing touched, lockedState), then deletes under ReservedPrefix
// what gc's rules say no object or upload needs any more, whatever its
// age (uploads were just aborted, so their state and manifests are
// garbage). A write landing meanwhile is safe: a PUT or copy is a client
// object, so the backend refuses the bucket's deletion; a completion
// keeps its manifest, since a manifest is deleted only once its upload is
// over and the object at its key is not made of its parts (the upload is
// asked first). Upload state or a manifest written after the clean-up
// (an upload created or completed meanwhile) makes the backend refuse too:
// the bucket stays, readable, and a retry cleans it. In a versioned bucket
// the clean-up deletes every version and delete marker of what it removes
// by id, and also what s3seal deleted before (gcHidden), so that no
// version hidden from the client keeps the bucket.
func (s *Store) cleanBucket(ctx context.Context, bucket string) error {
	empty, reserved, err := s.clientEmpty(ctx, bucket)
	if err != nil {
		return err
	}
	if !empty {
		return s.notEmpty(ctx, bucket)
	}
	versioned := false
	if reserved {
		if versioned, err = s.bucketVersioned(ctx, bucket); err != nil {
			return err
		}
	}
	// A locked object of s3seal's keeps the bucket whatever the clean-up
	// does: then it answers BucketNotEmpty before aborting any upload.
	if versioned {
		why, err := s.lockedState(ctx, bucket)
		if err != nil {
			return err
		}
		if why != "" {
			return errorf("BucketNotEmpty", "The bucket you tried to delete is not empty: %s; no upload was aborted.", why)
		}
	}
	if err := s.abortUploads(ctx, bucket); err != nil {
		return err
	}
	if !reserved {
		return nil
	}
	// No age limit: the client asked for the bucket to go, and the rules
	// above keep whatever a live upload or object still needs. A cutoff in
	// the future also takes objects the store stamped ahead of our clock.
	cutoff := time.Now().Add(24 * time.Hour)
	steps := []gcStep{s.gcManifests, s.gcUploadState, s.gcProbes, s.gcBucketDocs}
	if versioned {
		steps = append(steps, s.gcHidden)
	}
	found, err := s.findGarbage(ctx, bucket, cutoff, nil, steps...)
	if err != nil {
		return err
	}
	if err := s.removeGarbage(ctx, bucket, found, versioned); err != nil {
		if !storeRefused(found) {
			return err
		}
		// The store kept some of s3seal's objects (locked versions): the
		// bucket is not empty, and the backend says so.
		s.log.WarnContext(ctx, "DeleteBucket: the store kept s3seal's own objects", "bucket", bucket, "error", err)
	}
	return nil
}

// storeRefused reports whether every removal that failed was refused by
// the store (an S3 error of the request, a locked version's AccessDenied),
// rather than failed on the way (a 5xx or no answer), which a retry of
// the DeleteBucket may get past.
func storeRefused(found []Garbage) bool {
	for _, g := range found {
		if g.Err == nil {
			continue
		}
		errs := []error{g.Err}
		if j, ok := g.Err.(interface{ Unwrap() []error }); ok {
			errs = j.Unwrap()
		}
		for _, err := range errs {
			var be *backend.Error
			if !errors.As(err, &be) || be.Code == "" || be.StatusCode >= 500 ||
				be.Code == "InternalError" || be.Code == "ServiceUnavailable" || be.Code == "SlowDown" {
				return false
			}
		}
	}
	return true
}

// clientEmpty reports whether the bucket holds no object outside
// ReservedPrefix, and whether it holds any under it. It lists versions,
// which S3 counts too: a client key with only an old version or a delete
// marker left is not empty (a bucket never versioned lists its objects as
// versions "null"); a store without ListObjectVersions is asked for its
// objects. With the delimiter "/", everything under ReservedPrefix is one
// common prefix, so a page of two answers.
func (s *Store) clientEmpty(ctx context.Context, bucket string) (empty, reserved bool, err error) {
	empty, reserved, err = s.clientEmptyVersions(ctx, bucket)
	if backend.ErrorCode(err) != "NotImplemented" {
		return empty, reserved, err
	}
	in := backend.ListInput{Bucket: bucket, V2: true, Delimiter: "/", MaxKeys: 2}
	return walkPages(func() ([]string, []string, bool, error) {
		out, err := s.be.ListObjects(ctx, in)
		if err != nil {
			return nil, nil, false, err
		}
		keys := make([]string, len(out.Entries))
		for i, e := range out.Entries {
			keys[i] = e.Key
		}
		in.ContinuationToken = out.NextContinuationToken
		return keys, out.CommonPrefixes, out.IsTruncated && out.NextContinuationToken != "", nil
	})
}

// walkPages reads listing pages (delimiter "/") from page until one names
// a client key (not empty) or none is left (empty), noting whether any
// named ReservedPrefix.
func walkPages(page func() (keys, prefixes []string, more bool, err error)) (empty, reserved bool, err error) {
	for {
		keys, prefixes, more, err := page()
		if err != nil {
			return false, false, err
		}
		client, res := pageKeys(keys, prefixes)
		if client {
			return false, false, nil
		}
		reserved = reserved || res
		if !more {
			return true, reserved, nil
		}
	}
}

// pageKeys reports whether a listing page (delimiter "/") names a
// client key or common prefix, and whether it names ReservedPrefix.
func pageKeys(keys, prefixes []string) (client, reserved bool) {
	for _, k := range keys {
		if !strings.HasPrefix(k, ReservedPrefix) {
			return true, reserved
		}
		reserved = true
	}
	for _, p := range prefixes {
		if p != ReservedPrefix {
			return true, reserved
		}
		reserved = true
	}
	return false, reserved
}

// clientEmptyVersions is clientEmpty by ListObjectVersions.
func (s *Store) clientEmptyVersions(ctx context.Context, bucket string) (empty, reserved bool, err error) {
	in := backend.ListVersionsInput{Bucket: bucket, Delimiter: "/", MaxKeys: 2}
	return walkPages(func() ([]string, []string, bool, error) {
		out, err := s.be.ListObjectVersions(ctx, in)
		if err != nil {
			return nil, nil, false, err
		}
		keys := make([]string, len(out.Entries))
		for i, e := range out.Entries {
			keys[i] = e.Key
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
		return keys, out.CommonPrefixes, out.IsTruncated && out.NextKeyMarker != "", nil
	})
}

// abortUploads aborts every backend multipart upload of the bucket, the
// client's and s3seal's own (rewrap probes). An upload that ended
// meanwhile (NoSuchUpload) is fine.
func (s *Store) abortUploads(ctx context.Context, bucket string) error {
	in := backend.ListUploadsInput{Bucket: bucket}
	for {
		out, err := s.be.ListMultipartUploads(ctx, in)
		if err != nil {
			return err
		}
		for _, u := range out.Uploads {
			err := s.be.AbortMultipartUpload(ctx, bucket, u.Key, u.UploadID)
			if err != nil && backend.ErrorCode(err) != "NoSuchUpload" {
				return err
			}
		}
		if !out.IsTruncated {
			return nil
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
}
