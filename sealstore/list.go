package sealstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
	"github.com/s3seal/s3seal/kms"
)

// ListPage is one page of a listing. Markers and tokens are the backend's,
// so paging continues where the backend left off, except that none names a
// key or prefix the listing hides (listVisible).
type ListPage struct {
	// Entries carry plaintext sizes and ETags (quotes removed) and the
	// kept checksums.
	Entries               []ListedObject
	CommonPrefixes        []string
	IsTruncated           bool
	NextMarker            string
	NextContinuationToken string
}

// ListedObject is a listed object with its plaintext size and ETag and the
// checksums kept with it (none for an object without, or unverified).
type ListedObject struct {
	backend.ListEntry
	Checksums map[string]string
}

// List returns one page of objects with plaintext sizes, ETags and kept
// checksums. Entries under ReservedPrefix, and prefixes only they make
// up, are left out. Each entry's size, ETag and checksums come from the
// object's metadata (a HEAD), cached under its backend ETag, which names
// one immutable ciphertext; so the cache is never stale.
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
	entries := make([]ListedObject, 0, len(out.Entries))
	for _, e := range out.Entries {
		e.ETag = strings.Trim(e.ETag, `"`)
		entries = append(entries, ListedObject{ListEntry: e})
	}
	err = s.resolveEach(ctx, in.Bucket, len(entries), func(i int) (resolvedFields, bool) {
		e := &entries[i]
		return resolvedFields{e.Key, &e.ETag, &e.Size, &e.Checksums}, false
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

// resolvedFields names a listing entry's key and the fields resolveEach
// fills in: its ETag and size (the backend's until resolved) and its kept
// checksums.
type resolvedFields struct {
	key       string
	etag      *string
	size      *int64
	checksums *map[string]string
}

// resolveEach fills in the plaintext size, ETag and kept checksums of n
// listing entries (objects or versions), ListConcurrency at a time: from
// the cache when it holds the entry's backend ETag and size, else by
// resolve. entry(i) gives entry i's fields, and whether to leave it as it
// is (a delete marker).
func (s *Store) resolveEach(ctx context.Context, bucket string, n int,
	entry func(i int) (f resolvedFields, skip bool), resolve func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i := range n {
		f, skip := entry(i)
		if skip {
			continue
		}
		r, ok := s.cache.Get(cacheKey{bucket, f.key, *f.etag, *f.size})
		s.opt.Observer.ListCache(ok)
		if ok {
			*f.size, *f.etag, *f.checksums = r.size, r.etag, r.checksums
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

// resolveEntry fills in one entry's plaintext size, ETag and checksums
// from a HEAD.
// An object deleted since the listing is dropped (Key cleared). One that
// HEAD and GET refuse stays listed, so that it can be found and deleted,
// with the backend's (ciphertext) size and an unverified ETag, and is
// logged: nothing its metadata claims is shown.
func (s *Store) resolveEntry(ctx context.Context, bucket string, e *ListedObject) error {
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

// resolveInfo fills in e from bi, what a HEAD said of the object: the
// size, ETag and checksums of its sealed metadata (the same describe that
// fills the cache), or, unverified, the backend's size and no checksums.
func (s *Store) resolveInfo(ctx context.Context, bucket string, e *ListedObject, bi backend.ObjectInfo) error {
	if !bi.LastModified.IsZero() {
		e.LastModified = bi.LastModified
	}
	info, _, err := s.describe(ctx, bucket, bi, false)
	if err == nil {
		e.Size, e.ETag, e.Checksums = info.Size, info.ETag, info.Checksums
		return nil
	}
	kind := kms.KindOf(err)
	if kind == kms.Unavailable {
		// The KMS is down or slow: the page fails at once (503), rather
		// than wait out every entry's calls and list them unverified.
		return err
	}
	e.Size, e.ETag, e.Checksums = bi.Size, UnverifiedETagPrefix+strings.Trim(bi.ETag, `"`), nil
	switch {
	case kind != 0 && kind != kms.Invalid:
		// Its KMS key is disabled, gone or denied: unreadable, not tampered with.
		slog.Warn("listing: the object's KMS key refuses; listed as unverified", "bucket", bucket, "key", e.Key, "err", err)
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
