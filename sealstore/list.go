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
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i := range entries {
		e := &entries[i]
		r, ok := s.cache.Get(cacheKey{in.Bucket, e.Key, e.ETag, e.Size})
		s.opt.Observer.ListCache(ok)
		if ok {
			e.Size, e.ETag = r.size, r.etag
			continue
		}
		g.Go(func() error { return s.resolveEntry(gctx, in.Bucket, e) })
	}
	if err := g.Wait(); err != nil {
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
