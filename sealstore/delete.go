package sealstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// DeleteCondition is a conditional delete (If-Match,
// x-amz-if-match-size, x-amz-if-match-last-modified-time), evaluated on
// the plaintext ETag and size.
type DeleteCondition struct {
	IfMatch      []string  // plaintext ETags without quotes, or "*"; nil: none
	Size         int64     // plaintext size; < 0: none
	LastModified time.Time // zero: none; compared to the second
}

// DeleteInput names what a DeleteVersion removes.
type DeleteInput struct {
	Bucket, Key string
	VersionID   string // "" the current object (a delete marker in a versioned bucket)
	Cond        *DeleteCondition
}

// DeleteOutput is what a delete did.
type DeleteOutput struct {
	VersionID    string // the version removed or the delete marker made
	DeleteMarker bool
}

// Delete removes an object, and the manifest of a multipart object.
// Deleting a missing key succeeds, as in S3.
func (s *Store) Delete(ctx context.Context, bucket, key string) error {
	_, err := s.DeleteVersion(ctx, DeleteInput{Bucket: bucket, Key: key})
	return err
}

// DeleteVersion deletes an object or one version of it. The manifest of a
// multipart version goes only when that version is gone for good: a
// delete by version id that succeeded, or a delete in a bucket without
// versions; a delete that made a delete marker keeps it, and a delete the
// backend refused (a locked version) removes nothing. Even then it stays
// while another version of the key has its ETag (dropManifest).
func (s *Store) DeleteVersion(ctx context.Context, in DeleteInput) (DeleteOutput, error) {
	if err := CheckKey(in.Key); err != nil {
		return DeleteOutput{}, err
	}
	bin := backend.DeleteInput{Bucket: in.Bucket, Key: in.Key, VersionID: in.VersionID}
	var pr prior
	marker, missing := false, false
	if in.Cond != nil {
		var err error
		if pr, bin.IfMatch, err = s.deleteCondition(ctx, in); errors.Is(err, errNothingToDelete) {
			return DeleteOutput{VersionID: in.VersionID}, nil
		} else if err != nil {
			return DeleteOutput{}, err
		}
	} else {
		pr, marker, missing = s.peekDelete(ctx, in.Bucket, in.Key, in.VersionID)
	}
	out, err := s.be.DeleteObjectVersion(ctx, bin)
	if err != nil {
		if in.Cond != nil {
			switch {
			case backend.ErrorCode(err) == "PreconditionFailed":
				return DeleteOutput{}, preconditionFailed()
			case backend.IsNotFound(err):
				return DeleteOutput{}, noSuchKey()
			}
		}
		return DeleteOutput{}, err
	}
	if removed(in.VersionID, pr, out.VersionID, out.DeleteMarker) {
		s.dropManifest(ctx, in.Bucket, in.Key, pr, in.VersionID != "")
	}
	if missing && !out.DeleteMarker && out.VersionID == "" {
		if vid := s.missingKeyMarkers(ctx, in.Bucket, []string{in.Key})[in.Key]; vid != "" {
			out.VersionID, out.DeleteMarker = vid, true
		}
	}
	// S3 names the version deleted by id, and says when it was a delete
	// marker; moto says neither, so the HEAD before tells.
	if in.VersionID != "" && out.VersionID == "" {
		out.VersionID = in.VersionID
	}
	return DeleteOutput{VersionID: out.VersionID, DeleteMarker: out.DeleteMarker || marker}, nil
}

// peekDelete is peekVersion for a delete, which also learns whether the
// version asked for by id is a delete marker (its HEAD says so), and
// whether the key asked for without id has neither an object nor a
// delete marker (missing, missingKeyMarkers).
func (s *Store) peekDelete(ctx context.Context, bucket, key, versionID string) (p prior, marker, missing bool) {
	bi, err := s.headObject(ctx, bucket, key, versionID)
	var be *backend.Error
	if versionID != "" && errors.As(err, &be) && (be.DeleteMarker || be.Code == "MethodNotAllowed") {
		return p, true, false
	}
	if err == nil {
		p.versionID = bi.VersionID
		if env, enc, err := crypto.ParseMetadata(bi.Meta); err == nil && enc && env.Multipart {
			p.manifest = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
		}
	}
	return p, false, versionID == "" && nothingAt(err)
}

// removed reports whether a delete asked for version asked, which found pr
// and answered version got and marker, removed pr's version for good.
func removed(asked string, pr prior, got string, marker bool) bool {
	switch {
	case asked != "":
		return true // that very version is gone
	case pr.realVersion():
		return false // only a delete naming it removes a version with an id
	case !marker:
		return true // no versions: the object is gone
	default:
		// A delete marker hides the current version, which stays, unless
		// the bucket is suspended and the marker replaced the null version.
		return got == "null" && pr.versionID == "null"
	}
}

// deleteCondition evaluates in.Cond on the plaintext description of the
// version to delete, and returns what was found and the backend ETag the
// backend delete is made conditional on, so an overwrite in between
// fails the delete rather than deleting the newer object ("" for a
// version with an id of its own, which nothing overwrites).
func (s *Store) deleteCondition(ctx context.Context, in DeleteInput) (prior, string, error) {
	info, err := s.HeadVersion(ctx, in.Bucket, in.Key, in.VersionID)
	if backend.IsNotFound(err) || backend.ErrorCode(err) == "NoSuchVersion" || backend.ErrorCode(err) == "MethodNotAllowed" {
		return prior{}, "", s.conditionOnMissing(ctx, in, err)
	}
	if err != nil {
		return prior{}, "", err
	}
	c := in.Cond
	if (c.IfMatch != nil && !etagIn(info.ETag, c.IfMatch)) ||
		(c.Size >= 0 && c.Size != info.Size) ||
		(!c.LastModified.IsZero() && !c.LastModified.Truncate(time.Second).Equal(info.LastModified.Truncate(time.Second))) {
		return prior{}, "", preconditionFailed()
	}
	pr := prior{versionID: info.VersionID}
	if info.manifest != nil {
		pr.manifest = manifestKey(info.env.OID, info.backendETag)
	}
	if in.VersionID != "" && in.VersionID != "null" {
		// A version with an id of its own never changes: no write can
		// come in between, and moto checks an If-Match sent with a
		// version id against the current object instead.
		return pr, "", nil
	}
	return pr, info.backendETag, nil
}

func preconditionFailed() error {
	return errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
}

func noSuchKey() error { return errorf("NoSuchKey", "The specified key does not exist.") }

// DeleteObjects deletes up to 1000 keys in one backend request, and the
// manifests of the multipart objects among them. Per-key failures come
// back in the result.
func (s *Store) DeleteObjects(ctx context.Context, bucket string, keys []string) ([]backend.DeleteResult, error) {
	es := make([]DeleteEntry, len(keys))
	for i, k := range keys {
		es[i] = DeleteEntry{Key: k}
	}
	res, err := s.DeleteEntries(ctx, bucket, es)
	if err != nil {
		return nil, err
	}
	// One result per distinct key, as the backend's DeleteObjects gives.
	out := make([]backend.DeleteResult, 0, len(res))
	seen := map[string]bool{}
	for _, r := range res {
		if !seen[r.Key] {
			seen[r.Key] = true
			out = append(out, r)
		}
	}
	return out, nil
}

// DeleteEntry is one entry of DeleteObjects.
type DeleteEntry struct {
	Key, VersionID string
	Cond           *DeleteCondition
}

// DeleteEntries deletes up to 1000 entries (key, version, condition).
// Entries without a condition go to the backend in one request, after
// HEADs made ListConcurrency at a time found the manifests of multipart
// versions among them; entries with a condition are deleted one by one
// like DeleteVersion. The result has one entry per entry, in order.
func (s *Store) DeleteEntries(ctx context.Context, bucket string, es []DeleteEntry) ([]backend.DeleteResult, error) {
	res := make([]backend.DeleteResult, len(es))
	priors := make([]prior, len(es))
	missing := make([]bool, len(es))
	var plain []backend.ObjectID
	var plainAt []int
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	for i, e := range es {
		if e.Cond == nil {
			plain, plainAt = append(plain, backend.ObjectID{Key: e.Key, VersionID: e.VersionID}), append(plainAt, i)
			g.Go(func() error { priors[i], _, missing[i] = s.peekDelete(gctx, bucket, e.Key, e.VersionID); return nil })
			continue
		}
		g.Go(func() error {
			out, err := s.DeleteVersion(gctx, DeleteInput{Bucket: bucket, Key: e.Key, VersionID: e.VersionID, Cond: e.Cond})
			res[i] = entryResult(e, out, err)
			return nil
		})
	}
	_ = g.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(plain) == 0 {
		return res, nil
	}
	got, err := s.be.DeleteVersions(ctx, bucket, plain)
	if err != nil {
		return nil, err
	}
	var drop []string
	var check []int // versions gone from a bucket with versions: shared?
	var unmarked []string
	seen := map[string]bool{}
	for j, r := range got {
		i := plainAt[j]
		res[i] = r
		missing[i] = missing[i] && r.Code == "" && !r.DeleteMarker
		if missing[i] {
			unmarked = append(unmarked, r.Key)
		}
		m := priors[i].manifest
		if r.Code != "" || m == "" || seen[m] || !removed(es[i].VersionID, priors[i], r.DeleteMarkerVersionID, r.DeleteMarker) {
			continue
		}
		seen[m] = true
		if es[i].VersionID == "" && priors[i].versionID == "" {
			drop = append(drop, m)
		} else {
			check = append(check, i)
		}
	}
	dctx := context.WithoutCancel(ctx)
	s.dropKeys(dctx, bucket, drop)
	var dg errgroup.Group
	dg.SetLimit(s.opt.ListConcurrency)
	for _, i := range check {
		dg.Go(func() error { s.dropManifest(dctx, bucket, es[i].Key, priors[i], true); return nil })
	}
	_ = dg.Wait()
	made := s.missingKeyMarkers(ctx, bucket, unmarked)
	for i := range res {
		if vid := made[res[i].Key]; vid != "" && missing[i] {
			res[i].DeleteMarker, res[i].DeleteMarkerVersionID = true, vid
		}
	}
	return res, nil
}

// entryResult is DeleteVersion's outcome as a DeleteObjects entry.
func entryResult(e DeleteEntry, out DeleteOutput, err error) backend.DeleteResult {
	r := backend.DeleteResult{Key: e.Key, VersionID: e.VersionID}
	if err != nil {
		var se *Error
		var be *backend.Error
		switch {
		case errors.As(err, &se):
			r.Code, r.Message = se.Code, se.Message
		case errors.As(err, &be) && be.Code != "":
			r.Code, r.Message = be.Code, be.Message
		default:
			r.Code, r.Message = "InternalError", "We encountered an internal error. Please try again."
		}
		return r
	}
	if out.DeleteMarker {
		r.DeleteMarker = true
		if e.VersionID == "" {
			r.DeleteMarkerVersionID = out.VersionID
		}
	}
	return r
}
