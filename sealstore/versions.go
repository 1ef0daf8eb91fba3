package sealstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/s3seal/s3seal/backend"
)

// VersionsPage is one page of ListObjectVersions with plaintext sizes and
// ETags; markers are the backend's (none names a hidden key).
type VersionsPage struct {
	Entries             []VersionInfo
	CommonPrefixes      []string
	IsTruncated         bool
	NextKeyMarker       string
	NextVersionIDMarker string
}

// ListVersions returns one page of versions and delete markers. Entries
// under ReservedPrefix, and prefixes only they make up, are left out. Each version's size and ETag come
// from that version's own metadata (a HEAD with its version id), cached
// like listings under its backend ETag, which names one ciphertext and so
// one version; a version that cannot be authenticated is listed with an
// unverified ETag, as in List.
func (s *Store) ListVersions(ctx context.Context, in backend.ListVersionsInput) (VersionsPage, error) {
	out, err := s.listVisibleVersions(ctx, in)
	if err != nil {
		return VersionsPage{}, err
	}
	page := VersionsPage{IsTruncated: out.IsTruncated, NextKeyMarker: out.NextKeyMarker, NextVersionIDMarker: out.NextVersionIDMarker,
		CommonPrefixes: out.CommonPrefixes}
	entries := make([]VersionInfo, 0, len(out.Entries))
	for _, e := range out.Entries {
		e.ETag = strings.Trim(e.ETag, `"`)
		entries = append(entries, VersionInfo{VersionEntry: e})
	}
	if err := s.resolveVersions(ctx, in.Bucket, entries); err != nil {
		return VersionsPage{}, err
	}
	for _, e := range entries {
		if e.Key != "" {
			page.Entries = append(page.Entries, e)
		}
	}
	return page, nil
}

// VersionInfo is a listed version with its plaintext size, ETag and kept
// checksums (none for a delete marker or an unverified version).
type VersionInfo struct {
	backend.VersionEntry
	Checksums map[string]string
}

// resolveVersions is resolveEach for versions: each from the cache, else
// from a HEAD of that version, with its checksums.
func (s *Store) resolveVersions(ctx context.Context, bucket string, entries []VersionInfo) error {
	return s.resolveEach(ctx, bucket, len(entries), func(i int) (resolvedFields, bool) {
		e := &entries[i]
		return resolvedFields{e.Key, &e.ETag, &e.Size, &e.Checksums}, e.DeleteMarker
	}, func(ctx context.Context, i int) error { return s.resolveVersion(ctx, bucket, &entries[i]) })
}

// resolveVersion is resolveEntry for one version: a HEAD of that version.
// A HEAD that answers another ciphertext than the listing named is not
// taken for it.
func (s *Store) resolveVersion(ctx context.Context, bucket string, e *VersionInfo) error {
	le := ListedObject{ListEntry: backend.ListEntry{Key: e.Key, Size: e.Size, ETag: e.ETag, LastModified: e.LastModified}}
	vid := e.VersionID
	bi, err := s.headObject(ctx, bucket, e.Key, vid)
	switch {
	case backend.IsNotFound(err) || backend.ErrorCode(err) == "NoSuchVersion":
		e.Key = "" // deleted since the listing
		return nil
	case errors.Is(err, ErrIntegrity): // another version answered
		slog.Error("listing versions: the backend answered another version; listed as unverified", "bucket", bucket, "key", e.Key, "err", err)
		e.ETag = UnverifiedETagPrefix + e.ETag
		return nil
	case err != nil:
		return err
	case strings.Trim(bi.ETag, `"`) != e.ETag:
		e.ETag = UnverifiedETagPrefix + e.ETag
		return nil
	}
	if info, _, err := s.describe(ctx, bucket, bi, false); err == nil {
		e.Size, e.ETag, e.Checksums = info.Size, info.ETag, info.Checksums
		return nil
	}
	if err := s.resolveInfo(ctx, bucket, &le, bi); err != nil { // unverified, logged
		return err
	}
	e.Size, e.ETag = le.Size, le.ETag
	return nil
}

// headObject HEADs one version, or with versionID "" the current object
// (HeadObject, as before versions). An answer naming another version than
// the one asked for is refused (checkVersion).
func (s *Store) headObject(ctx context.Context, bucket, key, versionID string) (backend.ObjectInfo, error) {
	if versionID == "" {
		return s.be.HeadObject(ctx, bucket, key)
	}
	bi, err := s.be.HeadObjectVersion(ctx, bucket, key, versionID)
	if err != nil {
		return bi, err
	}
	return bi, checkVersion(bucket, key, versionID, bi.VersionID)
}

// checkVersion refuses a backend answer to a request for version asked
// that names another version (got), or none: a store that ignores
// ?versionId, or rolled one version back to another, would have s3seal
// serve the wrong version's (authentic) bytes under the id asked for, and
// a store that also drops x-amz-version-id from its answers would slip
// past a check that took an answer naming no version. It is a store fault
// like a failed integrity check: 500 InternalError, logged. Only the
// "null" version (an object written while versioning was off) may be
// answered without an id: S3 names it "null" or not at all.
func checkVersion(bucket, key, asked, got string) error {
	if asked == "" || got == asked || (asked == "null" && got == "") {
		return nil
	}
	named := fmt.Sprintf("version %q", got)
	if got == "" {
		named = "no version id"
	}
	return &Error{Code: "InternalError",
		Message: "the backend answered another version than the one asked for; s3seal refuses to return it",
		Err:     fmt.Errorf("%w: %s/%s: asked for version %q, the backend answered %s", ErrIntegrity, bucket, key, asked, named)}
}

// markerErr is err, a GET's "not found", or the answer of a HEAD of the
// same version when that names a delete marker: S3 says so on GET too
// (x-amz-delete-marker; 405 for a marker asked for by id), moto and
// gofakes3 only on HEAD. An error that already says it costs nothing.
func (s *Store) markerErr(ctx context.Context, bucket, key, versionID string, err error) error {
	var be *backend.Error
	if !errors.As(err, &be) || be.DeleteMarker || !(backend.IsNotFound(err) || be.Code == "NoSuchVersion") {
		return err
	}
	_, herr := s.headObject(ctx, bucket, key, versionID)
	var he *backend.Error
	if errors.As(herr, &he) && he.DeleteMarker {
		return herr
	}
	return err
}
