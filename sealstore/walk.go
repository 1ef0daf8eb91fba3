package sealstore

import (
	"context"
	"strings"

	"github.com/s3seal/s3seal/backend"
)

// Walks of the store's keys and versions that several of sealstore's
// parts make (bucket documents, manifests, recovery, rewrap, verify, gc).

// ListProgress, when a run over a bucket's objects is given one (Rewrap,
// Verify), is told as its listing proceeds how many objects it has found
// that the run will report, and their backend bytes, so far; once more,
// with complete, when the listing has ended. It is called from the
// listing's goroutine, after each object: it should only count.
type ListProgress func(objects int, bytes int64, complete bool)

// listAll calls fn for every object under prefix.
func (s *Store) listAll(ctx context.Context, bucket, prefix string, fn func(backend.ListEntry) error) error {
	in := backend.ListInput{Bucket: bucket, V2: true, Prefix: prefix}
	for {
		out, err := s.be.ListObjects(ctx, in)
		if err != nil {
			return err
		}
		for _, e := range out.Entries {
			if err := fn(e); err != nil {
				return err
			}
		}
		if !out.IsTruncated || out.NextContinuationToken == "" {
			return nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

// versionWithETag reports whether a version of key (current or not) has
// the backend ETag etag, and so still needs the manifest named by it.
//
// A listed key is trusted only to say yes: some stores list a key they
// cannot put in XML mangled (moto ignores encoding-type on ?versions, and
// XML end-of-line handling turns a carriage return into "\n"), so a
// listed version with the ETag under another key that may be ours is
// asked for by id at the exact key (versionAtKey). The store filters by
// the real prefix and sorts by the real key, so key's versions come before
// those of any longer key, and the listing ends there: at a key that
// starts with key and is longer, which no mangling of key can be.
func (s *Store) versionWithETag(ctx context.Context, bucket, key, etag string) (bool, error) {
	in := backend.ListVersionsInput{Bucket: bucket, Prefix: key}
	for {
		out, err := s.be.ListObjectVersions(ctx, in)
		if err != nil {
			return false, err
		}
		for _, v := range out.Entries {
			if v.Key != key && strings.HasPrefix(v.Key, key) {
				return false, nil
			}
			if v.DeleteMarker || strings.Trim(v.ETag, `"`) != etag {
				continue
			}
			if v.Key == key {
				return true, nil
			}
			if kept, err := s.versionAtKey(ctx, bucket, key, v.VersionID, etag); err != nil || kept {
				return kept, err
			}
		}
		if !out.IsTruncated || out.NextKeyMarker == "" {
			return false, nil
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
}

// versionAtKey reports whether version vid of exactly key has the ETag
// etag. In doubt it says yes: a store that refuses the question (a 4xx
// other than not found) keeps the manifest; one that fails on the way
// (5xx, no answer) fails the run.
func (s *Store) versionAtKey(ctx context.Context, bucket, key, vid, etag string) (bool, error) {
	if vid == "" {
		return true, nil // no id to ask by: the listing alone cannot rule it out
	}
	bi, err := s.be.HeadObjectVersion(ctx, bucket, key, vid)
	switch {
	case err == nil:
		return strings.Trim(bi.ETag, `"`) == etag, nil
	case backend.IsNotFound(err) || backend.ErrorCode(err) == "NoSuchVersion":
		return false, nil
	}
	if backend.IsRefused(err) {
		return true, nil
	}
	return false, err
}
