package sealstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// completedBefore reports, for a completion whose upload state is gone,
// whether the upload was completed before with exactly these parts and its
// object is still the one at the key: S3 answers such a repeat (a client
// that lost the first answer) with the object, not NoSuchUpload. The
// object's manifest names the upload id it was completed from (in its
// metadata, as gc reads it) and its parts (sealed); both must match.
func (s *Store) completedBefore(ctx context.Context, in CompleteInput) (ObjectInfo, bool, error) {
	bi, err := s.be.HeadObject(ctx, in.Bucket, in.Key)
	if err != nil {
		return ObjectInfo{}, false, nil
	}
	info, _, err := s.describe(ctx, in.Bucket, bi, false)
	if err != nil || info.manifest == nil || !madeOf(*info.manifest, in.Parts) {
		return ObjectInfo{}, false, nil
	}
	mi, err := s.be.HeadObject(ctx, in.Bucket, manifestKey(info.env.OID, info.backendETag))
	if err != nil {
		return ObjectInfo{}, false, nil
	}
	if id, err := b64url.DecodeString(mi.Meta[metaUploadID]); err != nil || string(id) != in.UploadID {
		return ObjectInfo{}, false, nil
	}
	// The completion that made it may have failed to lock it (its answer
	// was an error, which is what the client retries): the lock travels
	// on the manifest.
	if err := s.lockAsManifest(ctx, info, mi.Lock); err != nil {
		return ObjectInfo{}, true, err
	}
	info.CompletedElsewhere = true
	return info, true, nil
}

// dropUploadState removes, best effort, what state a completed upload left
// (its completing process died before or while removing it), once a
// repeated completion found the object that upload made; gc removes what
// stays.
func (s *Store) dropUploadState(ctx context.Context, in CompleteInput) {
	var keys []string
	err := s.listAll(ctx, in.Bucket, uploadPrefix(in.Bucket, in.Key, in.UploadID), func(e backend.ListEntry) error {
		keys = append(keys, e.Key)
		return nil
	})
	if err != nil {
		s.log.Warn("multipart: could not list the state a completed upload left; s3seal gc removes it",
			"bucket", in.Bucket, "key", in.Key, "upload_id", in.UploadID, "err", err)
		return
	}
	s.dropKeys(ctx, in.Bucket, keys)
}

// finishedElsewhere reports, when the upload is over, whether the object
// at its key is the one this completion asks for: it carries the upload's
// oid and its manifest names exactly these parts (numbers and ETags).
// That is the success of another completion of the same upload (a retry
// sent elsewhere, a replica) that removed the upload state in between.
func (s *Store) finishedElsewhere(ctx context.Context, u *upload, parts []CompletePart) (ObjectInfo, bool, error) {
	_, err := s.be.ListParts(ctx, backend.ListPartsInput{Bucket: u.bucket, Key: u.key, UploadID: u.id, MaxParts: 1})
	if backend.ErrorCode(err) != "NoSuchUpload" {
		return ObjectInfo{}, false, nil
	}
	bi, err := s.be.HeadObject(ctx, u.bucket, u.key)
	if err != nil {
		return ObjectInfo{}, false, nil
	}
	info, _, err := s.describe(ctx, u.bucket, bi, false)
	if err != nil || info.manifest == nil || info.env.OID != u.env.OID || !madeOf(*info.manifest, parts) {
		return ObjectInfo{}, false, nil
	}
	mi, err := s.be.HeadObject(ctx, u.bucket, manifestKey(info.env.OID, info.backendETag))
	if err != nil {
		return ObjectInfo{}, true, fmt.Errorf("multipart completion: the manifest of the completed object cannot be read: %w", err)
	}
	if err := s.lockAsManifest(ctx, info, mi.Lock); err != nil {
		return ObjectInfo{}, true, err
	}
	info.CompletedElsewhere = true
	s.forgetUpload(uploadKey{u.bucket, u.key, u.id})
	return info, true, nil
}

// completedByUs reports whether the object now at the upload's key is the
// one this completion asked for: it carries the upload's oid (written with
// the upload, random per upload), has the size the manifest implies, and,
// where the backend gives S3's multipart ETags (name is one), has the ETag
// of these very parts, so a completion of the same upload with other parts
// of the same size is not taken for this one. Nothing else is accepted as
// a recovery: not merely an object of the right size. It fails when it
// cannot tell.
func (s *Store) completedByUs(ctx context.Context, u *upload, m crypto.Manifest, name string) (backend.CompleteMultipartOutput, bool, error) {
	bi, err := s.be.HeadObject(ctx, u.bucket, u.key)
	if backend.IsNotFound(err) {
		return backend.CompleteMultipartOutput{}, false, nil
	}
	if err != nil {
		return backend.CompleteMultipartOutput{}, false, err
	}
	env, enc, err := crypto.ParseMetadata(bi.Meta)
	etag := strings.Trim(bi.ETag, `"`)
	if err != nil || !enc || !env.Multipart || env.OID != u.env.OID || bi.Size != m.CipherSize() {
		return backend.CompleteMultipartOutput{}, false, nil
	}
	if standardETag(name) && standardETag(etag) {
		if etag != name {
			return backend.CompleteMultipartOutput{}, false, nil
		}
	} else if ours, err := s.madeOfParts(ctx, u, m, etag); err != nil || !ours {
		return backend.CompleteMultipartOutput{}, false, err
	}
	s.log.Info("multipart: completion recovered: the object at the key is this completion's",
		"bucket", u.bucket, "key", u.key, "upload_id", u.id)
	return backend.CompleteMultipartOutput{ETag: etag, VersionID: bi.VersionID}, true, nil
}

// madeOf tells whether the manifest is made of exactly the named parts
// (numbers and plaintext ETags, in order).
func madeOf(m crypto.Manifest, parts []CompletePart) bool {
	if len(m.Parts) != len(parts) {
		return false
	}
	for i, p := range m.Parts {
		if int(p.Stream.Part) != parts[i].PartNumber || fmt.Sprintf("%x", p.PlainMD5) != strings.ToLower(strings.Trim(parts[i].ETag, `"`)) {
			return false
		}
	}
	return true
}

// madeOfParts tells, on a store whose ETags are not S3's, whether the
// object (of the upload's oid and the manifest's size) is made of m's
// parts. Every completion writes its manifest before it completes, so the
// upload's other manifests are all the part lists the object could be
// made of: where none of the same size differs from m, it is m's;
// otherwise the first segment of each part where they differ must
// decrypt as m's stream.
func (s *Store) madeOfParts(ctx context.Context, u *upload, m crypto.Manifest, etag string) (bool, error) {
	cands := []crypto.Manifest{m}
	err := s.listAll(ctx, u.bucket, manifestDir(u.env.OID), func(e backend.ListEntry) error {
		o, err := s.readManifest(ctx, u.bucket, u.key, u.dk, e.Key)
		if backend.IsNotFound(err) || errors.Is(err, ErrIntegrity) {
			return nil
		}
		if err != nil {
			return err
		}
		if o.CipherSize() == m.CipherSize() && !reflect.DeepEqual(o, m) {
			cands = append(cands, o)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	return len(cands) == 1 || s.partsOpen(ctx, u.bucket, u.key, u.dk, etag, m, cands), nil
}
