package sealstore

import (
	"context"
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
