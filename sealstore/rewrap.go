package sealstore

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// What Rewrap did with one object.
const (
	RewrapDone      = "rewrapped"
	RewrapWould     = "would-rewrap" // DryRun
	RewrapCurrent   = "already"      // already under the target key
	RewrapChanged   = "changed"      // written or deleted meanwhile: left alone
	RewrapPlaintext = "plaintext"    // no s3seal metadata: nothing to rewrap
	RewrapFailed    = "failed"       // unknown key, corrupt envelope, backend failure
	// RewrapInProgress: a multipart upload under another key is in
	// progress; its object will carry that key: complete or abort it, then
	// run again (Key is the upload's object key).
	RewrapInProgress = "in-progress"
)

// HasKey reports whether the store's keyring holds the master key id.
func (s *Store) HasKey(id string) bool { return s.kr.Has(id) }

// HasKMS reports whether the store has a key service (Options.KMS).
func (s *Store) HasKMS() bool { return s.opt.KMS != nil }

// RewrapOptions configure Rewrap.
type RewrapOptions struct {
	Prefix string
	To     string // master key id to wrap every data key under
	// Latest, instead of To, keeps every object under its KMS key and has
	// the key service seal its intermediate key under the key's current
	// version (AWS ReEncrypt, Transit rewrap, inside the HSM): no data key
	// leaves the service. Objects under local keys are left as they are.
	Latest bool
	DryRun bool // report what would be rewrapped, change nothing
	// Concurrency bounds the objects handled at once. Default 8.
	Concurrency int
	// NoWriters says no client writes to the bucket during the run. Only
	// with it does Rewrap run on a store that ignores the copy's source
	// ETag condition (ErrCopyConditionIgnored), which alone keeps an object
	// written meanwhile from getting the old object's wrapped key.
	NoWriters bool
	// MaxCopySize is the largest object copied onto itself with one
	// CopyObject; larger ones are copied part by part (UploadPartCopy).
	// Default backend.MaxCopySize (S3's 5 GiB); tests set it small.
	MaxCopySize int64
	// Listed, when set, is told of the listing's progress. Rewrap reports
	// the uploads in progress too, which are not listed objects.
	Listed ListProgress
}

// RewrapResult is Rewrap's outcome for one object.
type RewrapResult struct {
	Key  string
	Size int64  // backend (ciphertext) size
	From string // master key id the object was under
	// FromVersion and ToVersion name the KMS key versions of a Latest
	// run, when the key service tells them.
	FromVersion, ToVersion string
	Status                 string // one of the Rewrap* constants
	Err                    error  // for RewrapFailed
}

// Rewrap wraps the data key of every object of bucket under opt.Prefix
// again under the master key opt.To, without rewriting the data: the
// wrapped key is opened with the key it is under and sealed under opt.To,
// with the same name and binding (docs/FORMAT.md), and the object is
// copied onto itself at the backend with the new metadata, conditional on
// the backend ETag its HEAD saw, so an object written meanwhile is left
// alone (a store that ignores that condition is refused, see NoWriters).
// Uploads in progress under another key are reported (RewrapInProgress):
// their objects get the key their upload was created with. Objects already under opt.To are
// skipped, so a run that was interrupted is resumed by running it again.
// report is called once per object, from one goroutine at a time. The
// error is a listing failure or the refusal; per-object failures are
// reported.
func (s *Store) Rewrap(ctx context.Context, bucket string, opt RewrapOptions, report func(RewrapResult)) error {
	switch {
	case opt.Latest && (opt.To != "" || s.opt.KMS == nil):
		return &Error{Code: "InvalidArgument", Message: "a rewrap to the latest key versions needs a key service and no target key"}
	case opt.Latest:
	case !s.kr.Has(opt.To):
		return &Error{Code: "InvalidArgument", Message: "the target master key is not in the keyring", Err: crypto.ErrUnknownKey}
	}
	if opt.Concurrency <= 0 {
		opt.Concurrency = 8
	}
	if opt.MaxCopySize <= 0 {
		opt.MaxCopySize = backend.MaxCopySize
	}
	count := s.startCount(ctx, bucket, opt.Prefix, opt.Listed)
	defer count.stop(false)
	if !opt.DryRun && !opt.NoWriters {
		if err := s.CheckCopyConditions(ctx, bucket); err != nil {
			return err
		}
	}
	// Uploads under the old key, listed before the objects: one completed
	// while the listing runs could otherwise pass unseen.
	before, err := s.oldUploads(ctx, bucket, opt)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Concurrency)
	err = s.listAll(gctx, bucket, opt.Prefix, func(e backend.ListEntry) error {
		if !walkedObject(e.Key) {
			return nil
		}
		count.add(e)
		g.Go(func() error {
			r := s.rewrapOne(gctx, bucket, e, opt)
			mu.Lock()
			defer mu.Unlock()
			report(r)
			return nil
		})
		return gctx.Err()
	})
	count.stop(err == nil)
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		return err
	}
	if opt.Latest {
		// An upload in progress keeps the key version it was created
		// under; its object is rewrapped by the next run.
		return nil
	}
	return s.rewrapUploads(ctx, bucket, opt, before, func(r RewrapResult) {
		mu.Lock()
		defer mu.Unlock()
		report(r)
	})
}

func (s *Store) rewrapOne(ctx context.Context, bucket string, e backend.ListEntry, opt RewrapOptions) RewrapResult {
	r := RewrapResult{Key: e.Key, Size: e.Size}
	fail := func(err error) RewrapResult {
		if backend.IsNotFound(err) || backend.ErrorCode(err) == "PreconditionFailed" {
			r.Status = RewrapChanged
			return r
		}
		r.Status, r.Err = RewrapFailed, err
		return r
	}
	bi, err := s.be.HeadObject(ctx, bucket, e.Key)
	if err != nil {
		return fail(err)
	}
	r.Size = bi.Size
	env, encrypted, err := crypto.ParseMetadata(bi.Meta)
	switch {
	case err != nil:
		return fail(integrityErr(bucket, e.Key, err))
	case !encrypted:
		r.Status = RewrapPlaintext
		return r
	}
	r.From = env.KeyID
	name := crypto.Name{Bucket: bucket, Key: e.Key}
	var newEnv crypto.Envelope
	if opt.Latest {
		var current bool
		if newEnv, current, err = s.rewrapSealedKey(ctx, env, name, &r); err != nil {
			return fail(err)
		}
		if current {
			r.Status = RewrapCurrent
			return r
		}
	} else {
		if to, _ := s.kr.External(opt.To); env.KeyID == opt.To || env.KeyID == to {
			r.Status = RewrapCurrent
			return r
		}
		dk, b, err := s.kr.Unwrap(ctx, env, name)
		if err != nil {
			return fail(err)
		}
		if _, external := s.kr.External(opt.To); !external {
			b.KMSContext, b.BucketKey = "", false // a local key binds neither
		}
		if newEnv, err = s.kr.Wrap(ctx, dk, opt.To, name, b); err != nil {
			return fail(err)
		}
		// The object's only envelope is about to be replaced: the KMS
		// itself must open the new one (whatever --kms-check-writes says).
		if err := s.openedByKMS(ctx, newEnv, name); err != nil {
			return fail(err)
		}
	}
	if opt.DryRun {
		r.Status = RewrapWould
		return r
	}
	// The sealed metadata and origin are sealed with the DEK, which is
	// kept. A format 1 object keeps its clear entries; a format 2 object
	// has none of its own (what else the store holds is not the client's).
	newEnv.SealedMeta, newEnv.Origin = env.SealedMeta, env.Origin
	meta := newEnv.Metadata()
	if env.Version == crypto.FormatV1 {
		meta = userMeta(bi.Meta)
		maps.Copy(meta, newEnv.Metadata())
		if v, ok := sealedMetaValue(bi.Meta); ok {
			meta[crypto.MetaUser] = v
		}
	}
	etag := strings.Trim(bi.ETag, `"`)
	var vid string
	if bi.Size > opt.MaxCopySize {
		var p backend.Protection
		if p, err = s.carriedProtection(ctx, bucket, e.Key, bi, time.Now()); err == nil {
			vid, err = s.copyOntoItselfByParts(ctx, bucket, e.Key, etag, bi.Size, opt.MaxCopySize, meta, bi.Headers, p)
		}
	} else {
		var out backend.CopyOutput
		out, err = s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: e.Key, Bucket: bucket, Key: e.Key,
			SrcIfMatch: etag, Meta: meta, Headers: bi.Headers, Lock: carriedLock(bi, time.Now())})
		vid = out.VersionID
	}
	if err != nil {
		return fail(err)
	}
	// Before the manifest's copy, which takes the new version's lock.
	if err := s.keepNewerLock(ctx, bucket, e.Key, bi, vid); err != nil {
		r.Status, r.Err = RewrapFailed, err
		return r
	}
	if env.Multipart {
		s.rewrapManifest(ctx, bucket, e.Key, env.OID, etag)
	}
	r.Status = RewrapDone
	return r
}

// rewrapSealedKey has the key service seal an object's intermediate key
// under its master key's current version and returns the envelope with
// it; current says the object was under that version already (when the
// service tells versions). The new sealed key is opened and the object's
// data key unwrapped with it before it is used: a key service that
// answers with something else changes nothing.
func (s *Store) rewrapSealedKey(ctx context.Context, env crypto.Envelope, name crypto.Name, r *RewrapResult) (crypto.Envelope, bool, error) {
	if !env.External() {
		return env, true, nil
	}
	req := env.KeyRequest(name)
	sealed, err := s.opt.KMS.Rewrap(ctx, req, env.SealedKey)
	if err != nil {
		return env, false, err
	}
	r.FromVersion, r.ToVersion = s.opt.KMS.Version(env.KeyID, env.SealedKey), s.opt.KMS.Version(env.KeyID, sealed)
	if r.FromVersion != "" && r.FromVersion == r.ToVersion {
		return env, true, nil
	}
	newEnv := env
	newEnv.SealedKey = sealed
	if _, _, err := s.kr.Unwrap(ctx, newEnv, name); err != nil {
		return env, false, fmt.Errorf("the key service's rewrapped key does not open the object's data key: %w", err)
	}
	return newEnv, false, nil
}

// rewrapManifest keeps a multipart object's manifest findable by name once
// the copy gave the object a new backend ETag (S3 gives a copy the MD5 of
// its bytes in place of the multipart ETag): the manifest, sealed with the
// unchanged data key, is copied to the name of the new ETag, and the one
// under the old name is then removed unless something may still read it
// (dropReplacedManifest). Should the copy fail, readers still find the
// manifest among the upload's manifests by listing, and s3seal gc removes
// the old name once the new one exists.
func (s *Store) rewrapManifest(ctx context.Context, bucket, key string, oid [crypto.OIDSize]byte, oldETag string) {
	bi, err := s.be.HeadObject(ctx, bucket, key)
	if err != nil {
		return
	}
	env, enc, err := crypto.ParseMetadata(bi.Meta)
	newETag := strings.Trim(bi.ETag, `"`)
	if err != nil || !enc || env.OID != oid || newETag == oldETag {
		return
	}
	old := manifestKey(oid, oldETag)
	mi, err := s.be.HeadObject(ctx, bucket, old)
	if err != nil {
		return
	}
	// The copy takes the lock of the version it is for (S3 copies no lock):
	// the bucket's default retention, and whatever else that version has.
	if _, err := s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: old, Bucket: bucket, Key: manifestKey(oid, newETag),
		SrcIfMatch: mi.ETag, Meta: mi.Meta, Headers: mi.Headers, Lock: liveLock(bi.Lock)}); err != nil {
		s.log.Warn("rewrap: could not store the manifest under the object's new ETag; readers find it by listing",
			"bucket", bucket, "key", key, "err", err)
		return
	}
	s.dropReplacedManifest(ctx, bucket, key, old, mi.Meta)
}

// dropReplacedManifest removes the manifest mkey that the copy to the
// object's new ETag replaced, by s3seal gc's own rule (manifestGarbage):
// never while its upload lives, nor while a version of the key is made of
// its parts (in a versioned bucket the version rewrap copied, which keeps
// the old ETag, so there it stays); nor while the object's manifest under
// its current ETag is missing. It is removed as gc removes it (in a
// versioned bucket each version by id). One kept, or that the store
// refuses to delete, is left to s3seal gc.
func (s *Store) dropReplacedManifest(ctx context.Context, bucket, key, mkey string, meta map[string]string) {
	why, err := s.manifestGarbage(ctx, bucket, mkey, meta)
	if err != nil || why == "" {
		return
	}
	versioned, err := s.bucketVersioned(ctx, bucket)
	if err == nil {
		err = s.removeGarbage(ctx, bucket, []Garbage{{Kind: "manifest", Key: mkey, Reason: why}}, versioned)
	}
	if err != nil {
		s.log.Warn("rewrap: could not remove the manifest under the object's old ETag; s3seal gc removes it",
			"bucket", bucket, "key", key, "err", err)
	}
}
