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

// A completion can find its upload already completed in three situations,
// each recognised by its own function (the overview in mp.go tells the
// whole story):
//
//   - completedBeforeRequest: the upload was completed before this request
//     came (a client repeating a completion whose answer it lost), so its
//     state or its backend upload is gone from the start;
//   - completedWhileChecking: another completion of the upload (a retry sent
//     to another replica) finished while this request checked its parts,
//     and removed the part records it needed;
//   - completedDespiteStoreAnswer: this request's own completion at the
//     store answered a failure (NoSuchUpload, no answer, 5xx) or an ETag
//     that does not tell, yet the object at the key is the one it asked for.
//
// The first two answer at once with the object found (CompletedElsewhere)
// and give it the lock its manifest carries (lockAsManifest). The third
// lets the completion go on with the object found (CompletedElsewhere too
// when the store's answer was a failure): its state is dropped and the
// object locked (lockCompleted) as after a plain success.

// completedBeforeRequest applies when the upload's state, or its backend
// upload, is gone before this completion could use it.
//
// It reports whether the upload was completed before with exactly these
// parts and its object is still the one at the key: S3 answers such a
// repeat (a client that lost the first answer) with the object, not
// NoSuchUpload. The object's manifest names the upload id it was completed
// from (in its metadata, as gc reads it) and its parts (sealed); both must
// match. Once the object is found (and locked), the state the upload left
// is dropped (dropLeftoverState).
func (s *Store) completedBeforeRequest(ctx context.Context, in CompleteInput) (ObjectInfo, bool, error) {
	bi, err := s.be.HeadObject(ctx, in.Bucket, in.Key)
	if err != nil {
		return ObjectInfo{}, false, nil
	}
	info, _, err := s.describe(ctx, in.Bucket, bi, false)
	if err != nil || info.manifest == nil || !manifestHasParts(*info.manifest, in.Parts) {
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
	s.dropLeftoverState(context.WithoutCancel(ctx), in)
	return info, true, nil
}

// dropLeftoverState applies once completedBeforeRequest found the object
// (and locked it): it removes, best effort, what state the completed
// upload left (its completing process died before or while removing it);
// gc removes what stays.
func (s *Store) dropLeftoverState(ctx context.Context, in CompleteInput) {
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

// completedWhileChecking applies when the upload's state was loaded but the
// named parts have no records (InvalidPart): another completion may have
// finished and removed them in between.
//
// It reports, when the upload is over, whether the object at its key is the
// one this completion asks for: it carries the upload's oid and its
// manifest names exactly these parts (numbers and ETags). That is the
// success of another completion of the same upload (a retry sent
// elsewhere, a replica) that removed the upload state in between.
func (s *Store) completedWhileChecking(ctx context.Context, u *upload, parts []CompletePart) (ObjectInfo, bool, error) {
	_, err := s.be.ListParts(ctx, backend.ListPartsInput{Bucket: u.bucket, Key: u.key, UploadID: u.id, MaxParts: 1})
	if backend.ErrorCode(err) != "NoSuchUpload" {
		return ObjectInfo{}, false, nil
	}
	bi, err := s.be.HeadObject(ctx, u.bucket, u.key)
	if err != nil {
		return ObjectInfo{}, false, nil
	}
	info, _, err := s.describe(ctx, u.bucket, bi, false)
	if err != nil || info.manifest == nil || info.env.OID != u.env.OID || !manifestHasParts(*info.manifest, parts) {
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

// completedDespiteStoreAnswer applies after this completion's own call to
// the store: when it failed with NoSuchUpload or an unknown outcome, when
// the retry package's retried attempt found the upload gone
// (completeBackend), and when the store answered an ETag s3seal cannot
// compare with the one it predicted.
//
// It reports whether the object now at the upload's key is the one this
// completion asked for (made by this call, or by another completion of the
// same upload with the same parts): it carries the upload's oid (written with
// the upload, random per upload), has the size the manifest implies, and,
// where the backend gives S3's multipart ETags (name is one), has the ETag
// of these very parts, so a completion of the same upload with other parts
// of the same size is not taken for this one. Nothing else is accepted as
// a recovery: not merely an object of the right size. It fails when it
// cannot tell.
func (s *Store) completedDespiteStoreAnswer(ctx context.Context, u *upload, m crypto.Manifest, name string) (backend.CompleteMultipartOutput, bool, error) {
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
	} else if ours, err := s.objectMadeOfManifest(ctx, u, m, etag); err != nil || !ours {
		return backend.CompleteMultipartOutput{}, false, err
	}
	s.log.Info("multipart: completion recovered: the object at the key is this completion's",
		"bucket", u.bucket, "key", u.key, "upload_id", u.id)
	return backend.CompleteMultipartOutput{ETag: etag, VersionID: bi.VersionID}, true, nil
}

// manifestHasParts tells whether the manifest is made of exactly the named
// parts (numbers and plaintext ETags, in order); completedBeforeRequest and
// completedWhileChecking compare the object's manifest with the request.
func manifestHasParts(m crypto.Manifest, parts []CompletePart) bool {
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

// objectMadeOfManifest tells, for completedDespiteStoreAnswer on a store
// whose ETags are not S3's, whether the object (of the upload's oid and the
// manifest's size) is made of m's parts. Every completion writes its manifest before it completes, so the
// upload's other manifests are all the part lists the object could be
// made of: where none of the same size differs from m, it is m's;
// otherwise the first segment of each part where they differ must
// decrypt as m's stream.
func (s *Store) objectMadeOfManifest(ctx context.Context, u *upload, m crypto.Manifest, etag string) (bool, error) {
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
