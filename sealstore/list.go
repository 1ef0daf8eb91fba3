package sealstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// ListPage is one page of a listing. Markers and tokens are the backend's,
// so paging continues where the backend left off, except that none names a
// key or prefix the listing hides (listVisible).
type ListPage struct {
	// Entries carry plaintext sizes and ETags (quotes removed).
	Entries               []backend.ListEntry
	CommonPrefixes        []string
	IsTruncated           bool
	NextMarker            string
	NextContinuationToken string
}

// List returns one page of objects with plaintext sizes and ETags. Entries
// under ReservedPrefix, and prefixes only they make up, are left out. Each entry's size and ETag come from
// the object's metadata (a HEAD), cached under its backend ETag, which
// names one immutable ciphertext; so the cache is never stale.
func (s *Store) List(ctx context.Context, in backend.ListInput) (ListPage, error) {
	out, err := s.listVisible(ctx, in)
	if err != nil {
		return ListPage{}, err
	}
	page := ListPage{
		CommonPrefixes:        out.CommonPrefixes,
		IsTruncated:           out.IsTruncated,
		NextMarker:            out.NextMarker,
		NextContinuationToken: out.NextContinuationToken,
	}
	entries := make([]backend.ListEntry, 0, len(out.Entries))
	for _, e := range out.Entries {
		e.ETag = strings.Trim(e.ETag, `"`)
		entries = append(entries, e)
	}
	err = s.resolveEach(ctx, in.Bucket, len(entries), func(i int) (string, *string, *int64, bool) {
		return entries[i].Key, &entries[i].ETag, &entries[i].Size, false
	}, func(ctx context.Context, i int) error { return s.resolveEntry(ctx, in.Bucket, &entries[i]) })
	if err != nil {
		return ListPage{}, err
	}
	page.Entries = entries[:0]
	for _, e := range entries {
		if e.Key != "" {
			page.Entries = append(page.Entries, e)
		}
	}
	return page, nil
}

// resolveEach fills in the plaintext size and ETag of n listing entries,
// ListConcurrency at a time: from the cache when it holds the entry's
// backend ETag and size, else by resolve. entry(i) gives entry i's key and
// its ETag and size fields, and whether to leave it as it is (a delete
// marker).
func (s *Store) resolveEach(ctx context.Context, bucket string, n int,
	entry func(i int) (key string, etag *string, size *int64, skip bool), resolve func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i := range n {
		key, etag, size, skip := entry(i)
		if skip {
			continue
		}
		r, ok := s.cache.Get(cacheKey{bucket, key, *etag, *size})
		s.opt.Observer.ListCache(ok)
		if ok {
			*size, *etag = r.size, r.etag
			continue
		}
		g.Go(func() error { return resolve(gctx, i) })
	}
	return g.Wait()
}

// UnverifiedETagPrefix starts the ETag a listing shows for an object whose
// size and ETag s3seal cannot authenticate: sealed under a master key not in
// the keyring, metadata that fails its check, or no s3seal metadata while
// plaintext reads are off. The rest is the backend's ETag. No client can
// take it for an MD5 or a multipart ETag (rclone, for one, uses an ETag as
// an MD5 only when it is 32 hex digits), and it names the object version.
const UnverifiedETagPrefix = "s3seal-unverified-"

// resolveEntry fills in one entry's plaintext size and ETag from a HEAD.
// An object deleted since the listing is dropped (Key cleared). One that
// HEAD and GET refuse stays listed, so that it can be found and deleted,
// with the backend's (ciphertext) size and an unverified ETag, and is
// logged: nothing its metadata claims is shown.
func (s *Store) resolveEntry(ctx context.Context, bucket string, e *backend.ListEntry) error {
	bi, err := s.be.HeadObject(ctx, bucket, e.Key)
	if backend.IsNotFound(err) {
		e.Key = ""
		return nil
	}
	if err != nil {
		return err
	}
	return s.resolveInfo(ctx, bucket, e, bi)
}

// resolveInfo fills in e from bi, what a HEAD said of the object.
func (s *Store) resolveInfo(ctx context.Context, bucket string, e *backend.ListEntry, bi backend.ObjectInfo) error {
	if !bi.LastModified.IsZero() {
		e.LastModified = bi.LastModified
	}
	info, _, err := s.describe(ctx, bucket, bi, false)
	if err == nil {
		e.Size, e.ETag = info.Size, info.ETag
		return nil
	}
	e.Size, e.ETag = bi.Size, UnverifiedETagPrefix+strings.Trim(bi.ETag, `"`)
	switch {
	case errors.Is(err, crypto.ErrUnknownKey):
		// Unreadable here, but not known to be tampered with.
		slog.Warn("listing: object sealed under a master key not in the keyring; listed as unverified", "bucket", bucket, "key", e.Key)
	case errors.Is(err, ErrNotEncrypted):
		slog.Warn("listing: object is not encrypted and plaintext reads are off; listed as unverified", "bucket", bucket, "key", e.Key)
	default:
		slog.Error("listing: object metadata failed its check; listed as unverified", "bucket", bucket, "key", e.Key, "err", err)
	}
	return nil
}
