package sealstore

import (
	"context"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
)

// lockedState says why DeleteBucket cannot succeed for s3seal's own
// objects ("" when it can): a version under ReservedPrefix under Object
// Lock (a retention not yet expired, or a legal hold). The store refuses
// to delete such a version, and so to delete the bucket, whatever the
// clean-up does; a default retention locks every manifest and upload
// record s3seal writes. DeleteBucket asks before it aborts any upload, so
// that a deletion bound to fail destroys nothing. Object Lock needs
// versioning: the caller asks only in a bucket with versions. Each
// version is asked for by id (a listing carries no lock), ListConcurrency
// at a time, until one is found locked.
func (s *Store) lockedState(ctx context.Context, bucket string) (string, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opt.ListConcurrency)
	var mu sync.Mutex
	why := ""
	found := func() bool { mu.Lock(); defer mu.Unlock(); return why != "" }
	in := backend.ListVersionsInput{Bucket: bucket, Prefix: ReservedPrefix}
	for !found() {
		out, err := s.be.ListObjectVersions(gctx, in)
		if err != nil {
			_ = g.Wait()
			if backend.ErrorCode(err) == "NotImplemented" {
				return "", nil // no versions, so no Object Lock
			}
			return "", err
		}
		for _, v := range out.Entries {
			if v.DeleteMarker || !strings.HasPrefix(v.Key, ReservedPrefix) {
				continue
			}
			g.Go(func() error {
				bi, err := s.be.HeadObjectVersion(gctx, bucket, v.Key, v.VersionID)
				if err != nil {
					if backend.IsNotFound(err) || backend.ErrorCode(err) == "NoSuchVersion" {
						return nil // gone meanwhile
					}
					if v.VersionID == "null" && backend.IsBadRequest(err) {
						// A store that cannot HEAD the "null" version by
						// id (moto answers 400): the version written
						// before versioning was enabled is taken as
						// unlocked; if it is locked all the same, the
						// store refuses its removal, and DeleteBucket
						// answers BucketNotEmpty (storeRefused).
						return nil
					}
					return err
				}
				if r := lockReason(gctx, bi.Lock); r != "" {
					mu.Lock()
					if why == "" {
						why = "s3seal's own object " + v.Key + " (multipart upload state or manifest) is under Object Lock (" + r + ")"
					}
					mu.Unlock()
				}
				return nil
			})
		}
		if !out.IsTruncated || out.NextKeyMarker == "" {
			break
		}
		in.KeyMarker, in.VersionIDMarker = out.NextKeyMarker, out.NextVersionIDMarker
	}
	if err := g.Wait(); err != nil {
		return "", err
	}
	return why, nil
}

// lockReason describes the lock of p that forbids deleting its version
// now, or "" for none. A GOVERNANCE retention does not count when ctx
// bypasses it.
func lockReason(ctx context.Context, p backend.Protection) string {
	if strings.EqualFold(p.LegalHold, "ON") {
		return "a legal hold"
	}
	if p.LockMode == "" || !p.RetainUntil.After(time.Now()) {
		return ""
	}
	if strings.EqualFold(p.LockMode, "GOVERNANCE") && backend.BypassGovernance(ctx) {
		return ""
	}
	return p.LockMode + " retention until " + p.RetainUntil.UTC().Format(time.RFC3339)
}
