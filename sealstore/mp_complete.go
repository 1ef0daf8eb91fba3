package sealstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// CompletePart is one part named in a CompleteMultipartUpload request.
type CompletePart struct {
	PartNumber int
	ETag       string            // as UploadPart answered it; quotes optional
	Checksums  map[string]string // per-part checksums the client named, if any
}

// CompleteInput completes an upload.
type CompleteInput struct {
	Bucket, Key, UploadID string
	Parts                 []CompletePart
	// Cond, when set, makes the completion conditional on the object now
	// at the key (plaintext ETags), as S3 has it since 2024.
	Cond *Condition
	// ExpectSize, when >= 0, is the object size the client expects
	// (x-amz-mp-object-size); another size refuses the completion.
	ExpectSize int64
	// ExpectChecksums (algorithm -> value) and ExpectChecksumType are the
	// object checksum and type the client states (x-amz-checksum-*,
	// x-amz-checksum-type); another value or type is BadDigest, as in S3.
	ExpectChecksums    map[string]string
	ExpectChecksumType string
	// CustomerKey, when given, must be the upload's customer key (SSE-C);
	// a completion may also omit it.
	CustomerKey *crypto.CustomerKey
}

// CompleteMultipart checks the named parts against what s3seal recorded
// and the backend holds (S3's rules: InvalidPartOrder, InvalidPart,
// EntityTooSmall), computes the object's checksum from the parts' (the
// upload's algorithm and type, else S3's default: objectChecksums), writes
// the sealed manifest beside the object, and completes the backend upload.
// A completion that the backend performed but whose answer was lost (a
// retry then answers NoSuchUpload) is recovered when the object now at the
// key is the one this completion asked for (see
// completedDespiteStoreAnswer).
func (s *Store) CompleteMultipart(ctx context.Context, in CompleteInput) (ObjectInfo, error) {
	// Read before the completion, from the documents the request was
	// decided by: a long completion would read them from the store again.
	flagged, err := s.HasObjectRecords(ctx, in.Bucket)
	if err != nil {
		return ObjectInfo{}, err
	}
	info, err := s.completeMultipart(ctx, in)
	if err != nil {
		return info, err
	}
	return info, s.completeRecord(ctx, in.Bucket, in.Key, in.UploadID, flagged, info)
}

func (s *Store) completeMultipart(ctx context.Context, in CompleteInput) (ObjectInfo, error) {
	if len(in.Parts) == 0 {
		return ObjectInfo{}, errorf("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema.")
	}
	for i := 1; i < len(in.Parts); i++ {
		if in.Parts[i].PartNumber <= in.Parts[i-1].PartNumber {
			return ObjectInfo{}, errorf("InvalidPartOrder", "The list of parts was not in ascending order. Parts must be ordered by part number.")
		}
	}
	u, err := s.loadUpload(ctx, in.Bucket, in.Key, in.UploadID)
	if isCode(err, "NoSuchUpload") {
		if info, ok, err := s.completedBeforeRequest(ctx, in); ok {
			return info, err
		}
	}
	if err == nil {
		// Parts used the key cached with the upload; the KMS may have
		// disabled or lost it since: never acknowledge an object that
		// cannot be read (one call per completion).
		err = s.openedByKMS(ctx, u.env, crypto.Name{Bucket: in.Bucket, Key: in.Key})
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	if in.CustomerKey != nil {
		if _, err := u.contentKey(in.CustomerKey); err != nil {
			return ObjectInfo{}, err
		}
	}
	if err := checkCompleteChecksums(u, &in); err != nil {
		return ObjectInfo{}, err
	}
	want := make([]uint32, len(in.Parts))
	for i, p := range in.Parts {
		want[i] = uint32(p.PartNumber)
	}
	cur, _, keys, err := s.currentParts(ctx, u, want)
	if isCode(err, "NoSuchUpload") {
		// The store no longer has the upload, yet its state was found:
		// cached here (this process served a part), or left behind by a
		// process that completed the upload at the store and died before
		// (or while) removing the state. A client retrying that completion
		// gets its success, as from S3, when the object at the key is
		// this upload's, made of these parts (completedBeforeRequest).
		s.forgetUpload(uploadKey{in.Bucket, in.Key, in.UploadID})
		if info, ok, err := s.completedBeforeRequest(ctx, in); ok {
			return info, err
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	m, bparts, err := buildManifest(in.Parts, cur, s.opt.minPartSize)
	if isCode(err, "InvalidPart") {
		// Parts without their records: another completion of the upload
		// may have finished meanwhile and removed the upload state.
		if info, ok, err := s.completedWhileChecking(ctx, u, in.Parts); ok {
			return info, err
		}
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	if in.ExpectSize >= 0 && m.Size() != in.ExpectSize {
		// AWS's words, the computed size first.
		return ObjectInfo{}, errorf("InvalidRequest", "The provided 'x-amz-mp-object-size' header value %d does not match what was computed: %d", m.Size(), in.ExpectSize)
	}
	if m.Checksums, err = objectChecksums(u.checksumAlg, u.checksumType, m.Parts); err != nil {
		return ObjectInfo{}, err
	}
	if err := checkExpectedChecksums(in, m.Checksums); err != nil {
		return ObjectInfo{}, err
	}
	prev, err := s.conditions(ctx, in)
	if err != nil {
		return ObjectInfo{}, err
	}
	name := manifestName(bparts)
	if err := s.putManifest(ctx, u, m, name); err != nil {
		return ObjectInfo{}, err
	}
	at := time.Now() // a default retention counts from here, as S3 counts it
	out, err := s.completeBackend(ctx, backend.CompleteMultipartInput{
		Bucket: in.Bucket, Key: in.Key, UploadID: in.UploadID, Parts: bparts,
		IfMatch: prev.backendIfMatch, IfNoneMatch: ifNoneMatch(in.Cond),
	}, u, m, name)
	elsewhere := false
	if backend.ErrorCode(err) == "NoSuchUpload" || outcomeUnknown(err) {
		// The upload is gone: another completion of it (a client's retry
		// of a slow completion, another process) may have won. Or the
		// store never answered (it stalled, or failed, on every attempt)
		// and may have completed it all the same. If the object at the key
		// is the one this completion asks for, that is its success.
		if o, ok, cerr := s.completedDespiteStoreAnswer(ctx, u, m, name); cerr == nil && ok {
			out, err, elsewhere = o, nil, true
		}
	}
	if err != nil {
		// The manifest stays: another completion of the upload with the
		// same parts may have used it. gc removes it once the upload is
		// gone and no object is made of these parts.
		switch backend.ErrorCode(err) {
		case "NoSuchUpload":
			return ObjectInfo{}, noSuchUpload()
		case "PreconditionFailed":
			return ObjectInfo{}, errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
		}
		return ObjectInfo{}, err
	}
	cleanup := context.WithoutCancel(ctx)
	betag := strings.Trim(out.ETag, `"`)
	if betag != name {
		// The store's answer does not say by itself that its object is made
		// of these parts: an S3 ETag other than the predicted one says it
		// is not (some stores answer a completion of an upload completed
		// before with that earlier object); any other ETag needs a look.
		ours := false
		if !standardETag(betag) || !standardETag(name) {
			var o backend.CompleteMultipartOutput
			o, ours, err = s.completedDespiteStoreAnswer(ctx, u, m, name)
			if err != nil {
				return ObjectInfo{}, fmt.Errorf("multipart completion: the object the store made cannot be checked: %w", err)
			}
			betag = o.ETag
		}
		if !ours {
			s.log.Warn("multipart: the store answered a completion with an object not made of its parts",
				"bucket", in.Bucket, "key", in.Key, "upload_id", in.UploadID, "etag", out.ETag, "expected", name)
			return ObjectInfo{}, noSuchUpload()
		}
		if betag != name {
			// The store's ETags are not S3's: the manifest goes under the
			// one it gave too, where readers look first. Only a completion
			// that checked the object is its own writes there.
			if err := s.putManifestAs(cleanup, u, m, betag); err != nil {
				s.log.Warn("multipart: could not store the manifest under the backend's ETag; readers find it by listing",
					"bucket", in.Bucket, "key", in.Key, "upload_id", in.UploadID, "err", err)
			}
		}
	}
	s.dropKeys(cleanup, in.Bucket, keys)
	s.forgetUpload(uploadKey{in.Bucket, in.Key, in.UploadID})
	if prev.manifest != "" && !strings.HasPrefix(prev.manifest, manifestDir(u.env.OID)) &&
		(prior{prev.manifest, prev.versionID}).replacedBy(out.VersionID) {
		s.dropManifest(cleanup, in.Bucket, in.Key, prior{prev.manifest, prev.versionID}, false)
	}
	if err := s.lockCompleted(cleanup, u, out.VersionID, betag, at); err != nil {
		return ObjectInfo{}, err
	}
	etag := m.ETag()
	if betag != "" {
		s.manifests.Add(manifestID{u.env.OID, betag}, m)
		s.remember(cacheKey{in.Bucket, in.Key, betag, m.CipherSize()}, resolved{m.Size(), etag, m.Checksums})
	}
	return ObjectInfo{Bucket: in.Bucket, Key: in.Key, Size: m.Size(), ETag: etag, Encrypted: true, CompletedElsewhere: elsewhere,
		Checksums: m.Checksums, env: u.env, Headers: u.sse, CustomerKeyed: u.env.CustomerCheck != nil, backendETag: strings.Trim(out.ETag, `"`), backendSize: m.CipherSize(), VersionID: out.VersionID}, nil
}

// outcomeUnknown reports a failed completion that is not the store's
// refusal: no whole answer came (a stall, a cut connection) or it failed
// (5xx). The store may have assembled the object all the same.
func outcomeUnknown(err error) bool {
	var be *backend.Error
	if errors.As(err, &be) && be.Code != "" && be.StatusCode < 500 {
		return false
	}
	return err != nil
}

// completeBackend completes the backend upload, with the backend's
// recovery of an answer lost between its attempts.
func (s *Store) completeBackend(ctx context.Context, in backend.CompleteMultipartInput, u *upload, m crypto.Manifest, name string) (backend.CompleteMultipartOutput, error) {
	return s.be.CompleteMultipartUploadRecovering(ctx, in, func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error) {
		return s.completedDespiteStoreAnswer(ctx, u, m, name)
	})
}

func isCode(err error, code string) bool {
	var se *Error
	return errors.As(err, &se) && se.Code == code
}
