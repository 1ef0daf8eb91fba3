package sealstore

import (
	"context"
	"strings"

	"github.com/s3seal/s3seal/backend"
)

// Walks of the store's keys and versions that several of sealstore's
// parts make (bucket documents, manifests, recovery, rewrap, verify, gc).

// ListProgress is told, when a run over a bucket's objects is given one
// (Rewrap, Verify), how many objects the run takes and their backend
// bytes: as a listing of its own (countObjects) proceeds, then, with
// complete, the total; last, once the run's listing has ended, the exact
// total of what it listed. It is called from one goroutine at a time and
// should only count.
type ListProgress func(objects int, bytes int64, complete bool)

// walkedObject reports whether a run over a bucket's objects (Rewrap,
// Verify) takes key: not s3seal's own keys, except the bucket's
// documents, which are sealed objects like any other (bucketdocs.go).
func walkedObject(key string) bool {
	return !strings.HasPrefix(key, ReservedPrefix) || strings.HasPrefix(key, BucketDocPrefix)
}

// countObjects tells told, as it lists them, how many objects under prefix
// a run takes, and their bytes, then with complete the total. Beside the
// run it tells the total long before the run's own listing, which waits
// for the work, reaches the end (for a progress display's time left), for
// one more LIST per 1000 objects. It stops at the first failure (told no
// total) or when ctx ends.
func (s *Store) countObjects(ctx context.Context, bucket, prefix string, told ListProgress) {
	n, b := 0, int64(0)
	err := s.listAll(ctx, bucket, prefix, func(e backend.ListEntry) error {
		if walkedObject(e.Key) {
			n++
			b += e.Size
			told(n, b, false)
		}
		return nil
	})
	if err == nil {
		told(n, b, true)
	}
}

// objectCount is a run's count of the objects it takes: countObjects
// beside it, then its own total.
type objectCount struct {
	told   ListProgress // nil: no count
	n      int
	bytes  int64
	cancel context.CancelFunc
	done   chan struct{}
}

// startCount starts countObjects beside a run when told is set.
func (s *Store) startCount(ctx context.Context, bucket, prefix string, told ListProgress) *objectCount {
	c := &objectCount{told: told}
	if told == nil {
		return c
	}
	ctx, c.cancel = context.WithCancel(ctx)
	c.done = make(chan struct{})
	go func() {
		defer close(c.done)
		s.countObjects(ctx, bucket, prefix, told)
	}()
	return c
}

// add counts an object the run's listing found.
func (c *objectCount) add(e backend.ListEntry) {
	c.n++
	c.bytes += e.Size
}

// stop ends the count beside the run; with listed (the run's listing
// ended) it tells the run's own total.
func (c *objectCount) stop(listed bool) {
	if c.told == nil || c.cancel == nil {
		return
	}
	c.cancel()
	<-c.done
	c.cancel = nil
	if listed {
		c.told(c.n, c.bytes, true)
	}
}

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
