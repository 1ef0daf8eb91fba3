package sealstore

import (
	"context"
	"strings"

	"github.com/s3seal/s3seal/crypto"
)

// What a write (a PUT, a copy, a completion) or a delete replaces: the
// object it found at the key, learnt before (peekManifest), and the
// manifest that object leaves behind once it is gone for good
// (dropManifest).

// prior is what a write or delete found at the key before it: the
// manifest of a multipart object there ("" for none) and its version id.
type prior struct {
	manifest, versionID string
}

// replacedBy reports whether a write that made version newVersion removed
// the object p describes. A version with an id of its own is never
// replaced by a write, only hidden (whatever the answer says: moto answers
// writes in a suspended bucket without a version id). Without a version
// id the bucket keeps no versions and the write replaced the object; a
// write in a suspended bucket ("null") replaces the null version, which is
// also what an object without a version id is (moto answers every write
// in a bucket without versioning with "null", and its HEAD with no id).
// When unsure, the manifest is kept (gc can remove it later; a dropped one
// cannot be restored).
func (p prior) replacedBy(newVersion string) bool {
	if p.realVersion() {
		return false
	}
	return newVersion == "" || newVersion == "null"
}

// realVersion reports whether p's version has an id of its own, so that
// only a delete naming that id removes it.
func (p prior) realVersion() bool { return p.versionID != "" && p.versionID != "null" }

// peekManifest starts a HEAD of the key in the background and returns a
// channel that yields the manifest key of the multipart object found there
// ("" for anything else). A write calls it before it reads its body, so the
// HEAD costs no time, takes the answer before it writes, and drops that
// manifest once its own object has replaced the old one. If another writer
// replaced the object in between, the manifest dropped is that of an object
// already gone, and the other writer's (if it completed a multipart upload)
// is left for s3seal gc. A key that cannot hold a multipart object
// (mayHoldManifest: s3seal's own, or any in a bucket that never held one)
// is not HEADed.
func (s *Store) peekManifest(ctx context.Context, bucket, key string) <-chan prior {
	ch := make(chan prior, 1)
	go func() {
		var p prior
		if s.mayHoldManifest(ctx, bucket, key) {
			if bi, err := s.headObject(ctx, bucket, key, ""); err == nil {
				p.versionID = bi.VersionID
				if env, enc, err := crypto.ParseMetadata(bi.Meta); err == nil && enc && env.Multipart {
					p.manifest = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
				}
			}
		}
		ch <- p
	}()
	return ch
}

// dropManifest deletes the manifest of pr, a version of key that a write
// or delete has just removed for good, unless another version of key still
// uses it. In a bucket that keeps (or kept) versions two versions can
// share one manifest: a rewrap's copy keeps the backend ETag when the
// ciphertext is unchanged (a second single-copy rewrap, or a copy by parts
// that cuts as the upload did), and the manifest is named by oid and ETag.
// So there the key's remaining versions are listed (the rule gc follows),
// and any with the manifest's ETag keeps it; so does a listing that fails
// (gc removes the manifest later; a dropped one cannot be restored).
// Without versions (pr has no version id and none was asked for) nothing
// else can use it.
func (s *Store) dropManifest(ctx context.Context, bucket, key string, pr prior, versioned bool) {
	if pr.manifest == "" {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if versioned || pr.versionID != "" {
		_, name, ok := splitManifestKey(pr.manifest)
		if !ok {
			return
		}
		if kept, err := s.versionWithETag(ctx, bucket, key, name); err != nil || kept {
			if err != nil {
				s.log.Warn("multipart: could not list the key's versions; the manifest stays for s3seal gc",
					"bucket", bucket, "key", key, "manifest", pr.manifest, "err", err)
			}
			return
		}
	}
	s.dropKeys(ctx, bucket, []string{pr.manifest})
}

// dropKeys deletes s3seal's own objects (upload state, manifests), 1000 a
// request, best effort: what is left is found by gc.
func (s *Store) dropKeys(ctx context.Context, bucket string, keys []string) {
	for len(keys) > 0 {
		n := min(len(keys), 1000)
		res, err := s.be.DeleteObjects(ctx, bucket, keys[:n])
		if err != nil {
			s.log.Warn("multipart: could not delete upload state; s3seal gc removes it", "bucket", bucket, "keys", n, "err", err)
		}
		for _, r := range res {
			// A key the store keeps (Object Lock, a policy) stays for gc,
			// which retries; the client's operation has succeeded.
			if r.Code != "" {
				s.log.Warn("multipart: the store kept s3seal's own object; s3seal gc retries", "bucket", bucket, "key", r.Key, "code", r.Code)
			}
		}
		keys = keys[n:]
	}
}
