package sealstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// A multipart object is read through its manifest, so whatever Object Lock
// its version has, its manifest has too, at least as strong and as long:
// the lock asked for at CreateMultipartUpload goes with the manifest's PUT
// (recorded in the upload state for any process that completes it), a
// retention or legal hold set later goes to the manifest first
// (ManifestOf, used by s3api), and rewrap's copy of the manifest takes the
// lock of the version it was copied for.

// Upload-level lock kept in the upload state's metadata.
const (
	metaLockMode  = "lock-mode"
	metaLockUntil = "lock-retain-until"
	metaLockHold  = "lock-legal-hold"
)

// lockMeta records p's lock (not its tags or ACL) in the upload state.
func lockMeta(meta map[string]string, p backend.Protection) {
	if p.LockMode != "" {
		meta[metaLockMode], meta[metaLockUntil] = p.LockMode, p.RetainUntil.UTC().Format(time.RFC3339Nano)
	}
	if p.LegalHold != "" {
		meta[metaLockHold] = p.LegalHold
	}
}

// lockOfMeta is the lock lockMeta recorded; an unreadable date keeps no
// retention (the upload then locks its manifest only as the bucket's
// default retention does).
func lockOfMeta(meta map[string]string) backend.Protection {
	var p backend.Protection
	if t, err := time.Parse(time.RFC3339Nano, meta[metaLockUntil]); err == nil && meta[metaLockMode] != "" {
		p.LockMode, p.RetainUntil = meta[metaLockMode], t
	}
	p.LegalHold = meta[metaLockHold]
	return p
}

// liveLock is p's retention and legal hold, without tags or ACL, and
// without a retention that has ended (stores refuse a date in the past;
// the object's has ended too).
func liveLock(p backend.Protection) backend.Protection {
	l := backend.Protection{LockMode: p.LockMode, RetainUntil: p.RetainUntil, LegalHold: p.LegalHold}
	if !l.RetainUntil.After(time.Now().Add(time.Second)) {
		l.LockMode, l.RetainUntil = "", time.Time{}
	}
	return l
}

// lockCompleted makes the version a completion made as locked as asked,
// where the store dropped the lock at completion (moto does; AWS keeps
// it): the lock given at CreateMultipartUpload, or, where that gives no
// retention, the bucket's default retention counted from at (the
// completion's start, as S3 counts it; moto applies defaults only at
// PutObject). The manifest has the upload's own lock from its PUT, before
// the completion; a default retention is set on the manifest (under
// mname) first, so "manifest first" holds here too. Nothing is done in an
// unversioned bucket (no Object Lock there). A lock that cannot be set
// fails the completion's answer (the object is there, unlocked, and the
// client must not take it for locked); it is logged. A retry of the
// completion sets it from the manifest (lockAsManifest).
func (s *Store) lockCompleted(ctx context.Context, u *upload, versionID, mname string, at time.Time) error {
	if versionID == "" || versionID == "null" {
		return nil
	}
	want := liveLock(u.lock)
	if want.LockMode == "" {
		d, err := s.be.BucketDefaultRetention(ctx, u.bucket)
		if err != nil {
			return s.lockCompletedFailed(u.bucket, u.key, versionID, err)
		}
		if d.Mode != "" {
			want.LockMode, want.RetainUntil = d.Mode, d.Until(at)
			mwant := backend.Protection{LockMode: want.LockMode, RetainUntil: want.RetainUntil}
			if err := s.lockVersion(ctx, u.bucket, manifestKey(u.env.OID, mname), "", mwant); err != nil {
				return s.lockCompletedFailed(u.bucket, u.key, versionID, err)
			}
		}
	}
	if err := s.lockVersion(ctx, u.bucket, u.key, versionID, want); err != nil {
		return s.lockCompletedFailed(u.bucket, u.key, versionID, err)
	}
	return nil
}

// lockAsManifest gives a version that a completion answers from recovery
// (completedBeforeRequest, completedWhileChecking) the lock its manifest
// carries: the upload's lock, or the default retention, which the first
// completion set there before the object. What that completion may have
// failed to set on the object is set now, or the completion fails.
func (s *Store) lockAsManifest(ctx context.Context, info ObjectInfo, manifest backend.Protection) error {
	if info.VersionID == "" || info.VersionID == "null" {
		return nil
	}
	if err := s.lockVersion(ctx, info.Bucket, info.Key, info.VersionID, liveLock(manifest)); err != nil {
		return s.lockCompletedFailed(info.Bucket, info.Key, info.VersionID, err)
	}
	return nil
}

// lockVersion sets, by version id ("" the current version), the part of
// want the version lacks: a retention where it has another mode or an
// earlier date, a legal hold ON where it has none. Nothing is weakened.
func (s *Store) lockVersion(ctx context.Context, bucket, key, versionID string, want backend.Protection) error {
	if want.LockMode == "" && want.LegalHold != "ON" {
		return nil
	}
	bi, err := s.be.HeadObjectVersion(ctx, bucket, key, versionID)
	if err != nil {
		return err
	}
	in := backend.ObjectLockInput{Bucket: bucket, Key: key, VersionID: versionID}
	if want.LockMode != "" && (bi.Lock.LockMode != want.LockMode ||
		bi.Lock.RetainUntil.Before(want.RetainUntil.Truncate(time.Second))) {
		in.Retention, in.Lock.LockMode, in.Lock.RetainUntil = true, want.LockMode, want.RetainUntil
	}
	if want.LegalHold == "ON" && bi.Lock.LegalHold != "ON" {
		in.LegalHold, in.Lock.LegalHold = true, "ON"
	}
	if !in.Retention && !in.LegalHold {
		return nil
	}
	return s.be.PutObjectLock(ctx, in)
}

func (s *Store) lockCompletedFailed(bucket, key, versionID string, err error) error {
	s.log.Warn("multipart: the completed object lacks the lock asked for (at CreateMultipartUpload or by the bucket's default retention) and it could not be set",
		"bucket", bucket, "key", key, "version_id", versionID, "err", err)
	return fmt.Errorf("multipart completion: the object was completed, but the lock asked for could not be set on it: %w", err)
}

// ManifestOf names the manifest that the version versionID of key ("" for
// the current one) needs to be read, and that version's id, so that the
// caller can lock the manifest before the version and then lock exactly
// that version. mkey is "" for an object that is not multipart or not
// there (the caller's request to the object answers for it). A multipart
// object whose manifest is not under its name (a store whose ETags are not
// S3's, whose completion could not store it there) is logged: its
// manifest is found by listing and stays unlocked.
func (s *Store) ManifestOf(ctx context.Context, bucket, key, versionID string) (mkey, version string, err error) {
	if err := CheckKey(key); err != nil {
		return "", "", err
	}
	bi, err := s.headObject(ctx, bucket, key, versionID)
	if backend.IsNotFound(err) || backend.ErrorCode(err) == "MethodNotAllowed" {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	env, enc, err := crypto.ParseMetadata(bi.Meta)
	if err != nil || !enc || !env.Multipart {
		return "", bi.VersionID, nil
	}
	mkey = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
	if _, err := s.be.HeadObject(ctx, bucket, mkey); backend.IsNotFound(err) {
		s.log.Warn("lock: the manifest of a multipart object is not under its name and is not locked with it; readers find it by listing",
			"bucket", bucket, "key", key, "version_id", bi.VersionID, "manifest", mkey)
		return "", bi.VersionID, nil
	} else if err != nil {
		return "", "", err
	}
	return mkey, bi.VersionID, nil
}
