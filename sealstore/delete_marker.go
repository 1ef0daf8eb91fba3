package sealstore

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
)

// A delete without version id in a bucket whose versioning is Enabled
// makes a delete marker on S3 whether or not the key has any version
// (DeleteObject answers x-amz-delete-marker and its version id,
// DeleteObjects DeleteMarker and DeleteMarkerVersionId). moto makes none
// for a key without any version: it answers as in a bucket without
// versioning and keeps nothing. s3seal makes the marker S3 would have
// made (missingKeyMarkers). It costs nothing where the store makes the
// marker itself (S3, the embedded store: their answer says so); a
// delete of a key the HEAD before it did not find, answered without a
// marker, costs one GetBucketVersioning more (a bucket without
// versioning, on any store).

// nothingAt reports whether err, a HEAD's answer, says there is neither
// an object nor a delete marker at the key (the bucket is there).
func nothingAt(err error) bool {
	var be *backend.Error
	return errors.As(err, &be) && !be.DeleteMarker && (be.Code == "NoSuchKey" || be.Code == "NotFound")
}

// missingKeyMarkers makes a delete marker for each of keys, keys of
// bucket that the HEAD before a delete without version id found missing
// and whose delete the store answered without a marker, when the
// bucket's versioning is Enabled. It returns the marker's version id by
// key (one marker for a key named twice); a key without one is left as
// the store left it. The store makes a marker only on top of a version
// (moto), so s3seal writes an empty placeholder version, deletes the key
// without version id, which makes the marker on top of it, and deletes
// the placeholder by its id: the key then holds the marker alone
// (markMissing). A concurrent reader may meet the placeholder in between
// (a bare object, refused as any object without s3seal metadata): only a
// store that makes no such marker itself costs that. Nothing is made
// where the placeholder could not be removed again (a bucket with a
// default retention would lock it), nor in a suspended bucket (S3's
// marker there has version id "null", which a store that makes none
// cannot be made to make).
func (s *Store) missingKeyMarkers(ctx context.Context, bucket string, keys []string) map[string]string {
	slices.Sort(keys)
	if keys = slices.Compact(keys); len(keys) == 0 {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	if st, err := s.be.GetBucketVersioning(ctx, bucket); err != nil || st != "Enabled" {
		return nil
	}
	type made struct{ key, vid string }
	found := make([]made, len(keys))
	var todo []int
	var g errgroup.Group
	g.SetLimit(s.opt.ListConcurrency)
	for i, key := range keys {
		g.Go(func() error {
			// The store may have made a marker without saying so.
			_, err := s.be.HeadObject(ctx, bucket, key)
			var be *backend.Error
			if errors.As(err, &be) && be.DeleteMarker && be.VersionID != "" {
				found[i] = made{key, be.VersionID}
			} else if nothingAt(err) {
				found[i] = made{key: key}
			}
			return nil
		})
	}
	_ = g.Wait()
	for i, m := range found {
		if m.key != "" && m.vid == "" {
			todo = append(todo, i)
		}
	}
	if len(todo) > 0 {
		if d, err := s.be.BucketDefaultRetention(ctx, bucket); err != nil || d.Mode != "" {
			todo = nil
		}
	}
	var mg errgroup.Group
	mg.SetLimit(s.opt.ListConcurrency)
	for _, i := range todo {
		mg.Go(func() error { found[i].vid = s.markMissing(ctx, bucket, keys[i]); return nil })
	}
	_ = mg.Wait()
	out := map[string]string{}
	for _, m := range found {
		if m.vid != "" {
			out[m.key] = m.vid
		}
	}
	return out
}

// placeholderMeta is the metadata key of markMissing's placeholder, so
// that s3seal knows it again (a client's metadata is sealed, never a
// store's metadata key).
const placeholderMeta = "s3seal-placeholder"

// markMissing makes a delete marker for key, which has no version, in a
// bucket whose versioning is Enabled (missingKeyMarkers), and returns
// its version id, "" when none was made. The placeholder is written only
// where no object is (If-None-Match: *).
func (s *Store) markMissing(ctx context.Context, bucket, key string) string {
	put, err := s.be.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(nil),
		Meta: map[string]string{placeholderMeta: "delete-marker"}, IfNoneMatch: true})
	if err != nil {
		// An object written in between, or the answer lost (a retry of
		// the PUT that wrote the placeholder is refused): a HEAD tells.
		bi, herr := s.be.HeadObject(ctx, bucket, key)
		if herr != nil || bi.Meta[placeholderMeta] == "" {
			return ""
		}
		put.VersionID = bi.VersionID
	}
	if put.VersionID == "" || put.VersionID == "null" {
		// Versioning changed in between: the placeholder is the object.
		s.dropPlaceholder(ctx, bucket, key, put.VersionID)
		return ""
	}
	del, err := s.be.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: key})
	s.dropPlaceholder(ctx, bucket, key, put.VersionID)
	if err != nil || !del.DeleteMarker || del.VersionID == "" {
		return ""
	}
	return del.VersionID
}

// dropPlaceholder deletes markMissing's placeholder, version vid of key.
func (s *Store) dropPlaceholder(ctx context.Context, bucket, key, vid string) {
	if _, err := s.be.DeleteObjectVersion(ctx, backend.DeleteInput{Bucket: bucket, Key: key, VersionID: vid}); err != nil {
		s.log.Warn("delete marker: could not delete the empty placeholder version written to make it; delete it by its version id",
			"bucket", bucket, "key", key, "version", vid, "err", err)
	}
}
