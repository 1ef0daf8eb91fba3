package sealstore

import (
	"context"
	"fmt"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// keepNewerLock gives the version a rewrap copy made (newVID) the lock
// its source version has now, when a client changed that lock after the
// rewrap's HEAD (bi): the copy carried the lock the HEAD saw, and its
// condition is on the ETag, which a lock change does not move. The source
// version is read again after the copy; a retention or legal hold that
// differs from bi's is set on the new version. A retention that is gone
// or shorter now (an admin's bypass) cannot be taken from the new version
// without the bypass, which rewrap never sends: that is reported. A
// change landing after the second HEAD reaches the new version itself,
// which is current by then.
func (s *Store) keepNewerLock(ctx context.Context, bucket, key string, bi backend.ObjectInfo, newVID string) error {
	if bi.VersionID == "" || bi.VersionID == "null" || newVID == "" || newVID == bi.VersionID {
		return nil // unversioned: no Object Lock
	}
	now, err := s.be.HeadObjectVersion(ctx, bucket, key, bi.VersionID)
	if err != nil {
		return fmt.Errorf("rewrapped, but the old version's lock could not be read again to carry a change made meanwhile: %w", err)
	}
	in := backend.ObjectLockInput{Bucket: bucket, Key: key, VersionID: newVID}
	was, is := bi.Lock, now.Lock
	if is.LockMode != was.LockMode || !is.RetainUntil.Equal(was.RetainUntil) {
		in.Retention = true
		if is.LockMode != "" && is.RetainUntil.After(time.Now()) {
			in.Lock.LockMode, in.Lock.RetainUntil = is.LockMode, is.RetainUntil
		}
	}
	if (is.LegalHold == "ON") != (was.LegalHold == "ON") {
		in.LegalHold, in.Lock.LegalHold = true, is.LegalHold
	}
	if !in.Retention && !in.LegalHold {
		return nil
	}
	if err := s.be.PutObjectLock(ctx, in); err != nil {
		return fmt.Errorf("rewrapped, but the lock set on the old version meanwhile (%+v) could not be set on the new version %s: %w",
			is, newVID, err)
	}
	return nil
}
