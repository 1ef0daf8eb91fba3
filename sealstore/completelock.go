package sealstore

import (
	"context"
	"fmt"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// lockCompleted makes the lock asked for at CreateMultipartUpload hold on
// the version the completion made, where the store dropped it at
// completion (moto does; AWS keeps it): a HEAD of exactly that version,
// then its missing retention and legal hold are set on it by version id.
// The manifest got the same lock with its own PUT, before the completion,
// so the order "manifest first" holds here too. Nothing is done in an
// unversioned bucket (no Object Lock there) or where the store kept the
// lock. A lock that cannot be set fails the completion's answer (the
// object is there, unlocked, and the client must not take it for locked);
// it is logged.
func (s *Store) lockCompleted(ctx context.Context, u *upload, versionID string) error {
	want := liveLock(u.lock)
	if versionID == "" || versionID == "null" || (want.LockMode == "" && want.LegalHold != "ON") {
		return nil
	}
	bi, err := s.be.HeadObjectVersion(ctx, u.bucket, u.key, versionID)
	if err != nil {
		return s.lockCompletedFailed(u, versionID, err)
	}
	in := backend.ObjectLockInput{Bucket: u.bucket, Key: u.key, VersionID: versionID}
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
	if err := s.be.PutObjectLock(ctx, in); err != nil {
		return s.lockCompletedFailed(u, versionID, err)
	}
	return nil
}

func (s *Store) lockCompletedFailed(u *upload, versionID string, err error) error {
	s.log.Warn("multipart: the completed object lacks the lock asked for at CreateMultipartUpload and it could not be set; its manifest has it",
		"bucket", u.bucket, "key", u.key, "upload_id", u.id, "version_id", versionID, "err", err)
	return fmt.Errorf("multipart completion: the object was completed, but the lock asked for at CreateMultipartUpload could not be set on it: %w", err)
}
