package sealstore

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// manifestName names the manifest of a completion with these backend
// parts: the ETag S3 gives the object they make (the MD5 of the parts'
// binary MD5s, "-" and their number), which AWS, Ceph RGW, MinIO and the
// embedded store compute so, and which a reader learns from a HEAD. When a
// part ETag is not an MD5 (the backend hashes otherwise) it is "l-" and a
// hash of the part list, and the completion also stores the manifest under
// the ETag the backend answers.
func manifestName(parts []backend.CompletedPart) string {
	h := md5.New()
	for _, p := range parts {
		sum, err := hex.DecodeString(strings.Trim(p.ETag, `"`))
		if err != nil || len(sum) != md5.Size {
			l := sha256.New()
			for _, p := range parts {
				fmt.Fprintf(l, "%d:%s\n", p.PartNumber, strings.Trim(p.ETag, `"`))
			}
			return "l-" + hex.EncodeToString(l.Sum(nil)[:16])
		}
		h.Write(sum)
	}
	return fmt.Sprintf("%x-%d", h.Sum(nil), len(parts))
}

// standardETag reports whether etag has the form of an S3 multipart ETag.
func standardETag(etag string) bool {
	hexPart, n, ok := strings.Cut(strings.Trim(etag, `"`), "-")
	_, err := hex.DecodeString(hexPart)
	_, nerr := strconv.Atoi(n)
	return ok && len(hexPart) == 2*md5.Size && err == nil && nerr == nil
}

// putManifest stores the manifest of a completion of the upload under
// name. Completions with the same parts write the same manifest under the
// same name; completions with other parts write theirs under another name:
// none ever replaces a manifest another completion may need. The manifest
// records the object key and upload id, for gc.
func (s *Store) putManifest(ctx context.Context, u *upload, m crypto.Manifest, name string) error {
	return s.writeManifest(ctx, u, m, name, false)
}

// putManifestAs stores the manifest under the ETag a backend whose ETags
// are not S3's gave the completed object, unless a manifest is there.
func (s *Store) putManifestAs(ctx context.Context, u *upload, m crypto.Manifest, etag string) error {
	return s.writeManifest(ctx, u, m, etag, true)
}

func (s *Store) writeManifest(ctx context.Context, u *upload, m crypto.Manifest, name string, ifNone bool) error {
	// An upload created before its bucket said it held no multipart
	// object (an older s3seal's, or one a store kept across a bucket
	// created again) must not complete while it still says so.
	if err := s.dropSinglePart(ctx, u.bucket); err != nil {
		return err
	}
	if ifNone {
		if have, err := s.readManifest(ctx, u.bucket, u.key, u.dk, manifestKey(u.env.OID, name)); err == nil {
			if !reflect.DeepEqual(have, m) {
				return fmt.Errorf("another manifest is stored under %s", name)
			}
			return nil
		}
	}
	sealed, err := crypto.SealManifest(u.dk, m)
	if err != nil {
		return fmt.Errorf("seal manifest: %w", err)
	}
	// The manifest carries the upload's lock in its own PUT: there is no
	// moment at which the object is locked and its manifest is not.
	in := backend.PutInput{Bucket: u.bucket, Key: manifestKey(u.env.OID, name),
		Body: bytes.NewReader(sealed), Size: int64(len(sealed)), IfNoneMatch: ifNone, Protect: liveLock(u.lock),
		Meta: map[string]string{metaKey: b64url.EncodeToString([]byte(u.key)), metaUploadID: b64url.EncodeToString([]byte(u.id))}}
	_, err = s.be.PutObject(ctx, in)
	if err != nil && in.Protect.Locks() && backend.ErrorCode(err) == "InvalidRequest" {
		// A store that took the lock on the upload but refuses it on a PUT
		// into the same bucket (no Object Lock there; moto) locks neither:
		// the manifest goes without, as the object does.
		s.log.Warn("multipart: the store refused the upload's lock on its manifest; stored without it",
			"bucket", u.bucket, "key", u.key, "upload_id", u.id, "err", err)
		in.Protect, in.Body = backend.Protection{}, bytes.NewReader(sealed)
		_, err = s.be.PutObject(ctx, in)
	}
	return err
}

// maxManifestSize bounds what s3seal reads as a manifest (10,000 parts with
// a checksum each take under 1 MiB).
const maxManifestSize = 8 << 20

// manifest returns the manifest of the multipart object with data key dk,
// backend ETag etag and backend size size, from the cache or from the
// backend: first under its name (the ETag), else among the manifests of the
// upload (a backend whose ETags are not S3's, and a completion that stopped
// before it stored the manifest under the ETag the backend gave): the one
// whose size is the object's and, if several are, whose parts decrypt.
func (s *Store) manifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	id := manifestID{dk.OID(), etag}
	if m, ok := s.manifests.Get(id); ok {
		return m, nil
	}
	m, err := s.loadManifest(ctx, bucket, key, dk, etag, size)
	if err != nil {
		return crypto.Manifest{}, err
	}
	s.manifests.Add(id, m)
	return m, nil
}

// loadManifest is manifest without the cache: it reads the manifest whole,
// per-part checksums included.
func (s *Store) loadManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	m, err := s.readManifest(ctx, bucket, key, dk, manifestKey(dk.OID(), etag))
	if backend.IsNotFound(err) {
		m, err = s.findManifest(ctx, bucket, key, dk, etag, size)
	}
	return m, err
}

// readManifest reads and opens one manifest object.
func (s *Store) readManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, mkey string) (crypto.Manifest, error) {
	obj, err := s.be.GetObject(ctx, backend.GetInput{Bucket: bucket, Key: mkey})
	if err != nil {
		return crypto.Manifest{}, err
	}
	defer obj.Body.Close()
	sealed, err := io.ReadAll(io.LimitReader(obj.Body, maxManifestSize+1))
	if err != nil {
		return crypto.Manifest{}, err
	}
	if len(sealed) > maxManifestSize {
		return crypto.Manifest{}, integrityErr(bucket, key, fmt.Errorf("manifest over %d bytes", maxManifestSize))
	}
	m, err := crypto.OpenManifest(dk, sealed)
	if err != nil {
		return crypto.Manifest{}, integrityErr(bucket, key, err)
	}
	return m, nil
}

// findManifest looks among the upload's manifests for the object's.
func (s *Store) findManifest(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, size int64) (crypto.Manifest, error) {
	var fits []crypto.Manifest
	err := s.listAll(ctx, bucket, manifestDir(dk.OID()), func(e backend.ListEntry) error {
		m, err := s.readManifest(ctx, bucket, key, dk, e.Key)
		if err == nil && m.CipherSize() == size {
			fits = append(fits, m)
		}
		if backend.IsNotFound(err) || errors.Is(err, ErrIntegrity) {
			return nil
		}
		return err
	})
	if err != nil {
		return crypto.Manifest{}, err
	}
	var found []crypto.Manifest
	for _, m := range fits {
		if len(fits) == 1 || s.partsOpen(ctx, bucket, key, dk, etag, m, fits) {
			found = append(found, m)
		}
	}
	if len(found) != 1 {
		return crypto.Manifest{}, integrityErr(bucket, key, fmt.Errorf("the manifest of this multipart object is missing (%d candidates fit)", len(found)))
	}
	return found[0], nil
}

// partsOpen reports whether the object's parts are m's where m differs
// from the other candidates: the first segment of each such part is read
// (pinned to the object's ETag) and must decrypt as m's stream.
func (s *Store) partsOpen(ctx context.Context, bucket, key string, dk *crypto.DataKey, etag string, m crypto.Manifest, all []crypto.Manifest) bool {
	var cstart int64
	for i, p := range m.Parts {
		differs := false
		for _, o := range all {
			differs = differs || len(o.Parts) != len(m.Parts) || o.Parts[i].Stream != p.Stream
		}
		if differs {
			pk, stream, err := p.Key(dk)
			if err == nil {
				err = s.openFirstSegment(ctx, backend.GetInput{Bucket: bucket, Key: key, IfMatch: etag}, cstart, pk, stream, p.PlainSize)
			}
			if err != nil {
				return false
			}
		}
		cstart += crypto.CiphertextSize(p.PlainSize)
	}
	return true
}

// splitManifestKey splits a manifest's key into the object id and the backend
// ETag it is named by.
func splitManifestKey(mkey string) (oid []byte, name string, ok bool) {
	dir, name, _ := strings.Cut(strings.TrimPrefix(mkey, manifestsPrefix), "/")
	oid, err := b64url.DecodeString(dir)
	if err != nil || len(oid) != crypto.OIDSize || name == "" {
		return nil, "", false
	}
	return oid, name, true
}
