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
// so paging continues where the backend left off.
type ListPage struct {
	// Entries carry plaintext sizes and ETags (quotes removed).
	Entries               []backend.ListEntry
	CommonPrefixes        []string
	IsTruncated           bool
	NextMarker            string
	NextContinuationToken string
}

// List returns one page of objects with plaintext sizes and ETags. Entries
// under ReservedPrefix are left out. Each entry's size and ETag come from
// the object's metadata (a HEAD), cached under its backend ETag, which
// names one immutable ciphertext; so the cache is never stale.
func (s *Store) List(ctx context.Context, in backend.ListInput) (ListPage, error) {
	out, err := s.be.ListObjects(ctx, in)
	if err != nil {
		return ListPage{}, err
	}
	page := ListPage{
		IsTruncated:           out.IsTruncated,
		NextMarker:            out.NextMarker,
		NextContinuationToken: out.NextContinuationToken,
	}
	if !in.V2 && out.IsTruncated && page.NextMarker == "" {
		// Clients take the last key as the next marker when NextMarker is
		// absent; hidden entries would make that key an earlier one.
		if n := len(out.Entries); n > 0 {
			page.NextMarker = out.Entries[n-1].Key
		}
		if n := len(out.CommonPrefixes); n > 0 && out.CommonPrefixes[n-1] > page.NextMarker {
			page.NextMarker = out.CommonPrefixes[n-1]
		}
	}
	for _, p := range out.CommonPrefixes {
		if !strings.HasPrefix(p, ReservedPrefix) {
			page.CommonPrefixes = append(page.CommonPrefixes, p)
		}
	}
	entries := make([]backend.ListEntry, 0, len(out.Entries))
	for _, e := range out.Entries {
		if strings.HasPrefix(e.Key, ReservedPrefix) {
			continue
		}
		e.ETag = strings.Trim(e.ETag, `"`)
		entries = append(entries, e)
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i := range entries {
		e := &entries[i]
		if r, ok := s.cache.Get(cacheKey{in.Bucket, e.Key, e.ETag, e.Size}); ok {
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

// resolveEntry fills in one entry's plaintext size and ETag from a HEAD.
// An object deleted since the listing is dropped (Key cleared); one whose
// metadata fails authentication is listed as the backend has it, and logged.
func (s *Store) resolveEntry(ctx context.Context, bucket string, e *backend.ListEntry) error {
	bi, err := s.be.HeadObject(ctx, bucket, e.Key)
	if backend.IsNotFound(err) {
		e.Key = ""
		return nil
	}
	if err != nil {
		return err
	}
	info, _, err := s.describe(bucket, bi)
	switch {
	case errors.Is(err, crypto.ErrUnknownKey):
		// Unreadable here, but not tampered with: list what it claims.
		slog.Warn("listing: object sealed under a master key not in the keyring", "bucket", bucket, "key", e.Key)
	case err != nil:
		slog.Error("listing: object metadata failed its check", "bucket", bucket, "key", e.Key, "err", err)
		return nil
	}
	e.Size, e.ETag = info.Size, info.ETag
	if !bi.LastModified.IsZero() {
		e.LastModified = bi.LastModified
	}
	return nil
}
