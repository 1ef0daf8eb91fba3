package sealstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
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
	// ObjectChecksums, when set, computes the checksums of the whole object
	// from the parts, given the algorithm and type the upload was created
	// with ("" for none); an error refuses the completion.
	ObjectChecksums func(alg, typ string, parts []crypto.ManifestPart) (map[string]string, error)
	// CustomerKey, when given, must be the upload's customer key (SSE-C);
	// a completion may also omit it.
	CustomerKey *crypto.CustomerKey
}

// CompleteMultipart checks the named parts against what s3seal recorded
// and the backend holds (S3's rules: InvalidPartOrder, InvalidPart,
// EntityTooSmall), writes the sealed manifest beside the object, and
// completes the backend upload. A completion that the backend performed but
// whose answer was lost (a retry then answers NoSuchUpload) is recovered
// when the object now at the key is the one this completion asked for (see
// completedByUs).
func (s *Store) CompleteMultipart(ctx context.Context, in CompleteInput) (ObjectInfo, error) {
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
		if info, ok, err := s.completedBefore(ctx, in); ok {
			if err == nil {
				s.dropUploadState(context.WithoutCancel(ctx), in)
			}
			return info, err
		}
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
		// this upload's, made of these parts (completedBefore).
		s.forgetUpload(uploadKey{in.Bucket, in.Key, in.UploadID})
		if info, ok, err := s.completedBefore(ctx, in); ok {
			if err == nil {
				s.dropUploadState(context.WithoutCancel(ctx), in)
			}
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
		if info, ok, err := s.finishedElsewhere(ctx, u, in.Parts); ok {
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
	if in.ObjectChecksums != nil {
		if m.Checksums, err = in.ObjectChecksums(u.checksumAlg, u.checksumType, m.Parts); err != nil {
			return ObjectInfo{}, err
		}
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
		if o, ok, cerr := s.completedByUs(ctx, u, m, name); cerr == nil && ok {
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
			o, ours, err = s.completedByUs(ctx, u, m, name)
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
		s.cache.Add(cacheKey{in.Bucket, in.Key, betag, m.CipherSize()}, resolved{m.Size(), etag, m.Checksums})
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

func isCode(err error, code string) bool {
	var se *Error
	return errors.As(err, &se) && se.Code == code
}

// checkExpectedChecksums compares what the client states about the
// object's checksum with what the parts give. A COMPOSITE value may be
// stated with or without its "-N".
func checkExpectedChecksums(in CompleteInput, got map[string]string) error {
	if in.ExpectChecksumType != "" {
		typ := "FULL_OBJECT"
		for _, v := range got {
			if strings.Contains(v, "-") {
				typ = "COMPOSITE"
			}
		}
		if len(got) == 0 || !strings.EqualFold(in.ExpectChecksumType, typ) {
			return errorf("BadDigest", "The checksum type %s you specified does not match the upload's.", in.ExpectChecksumType)
		}
	}
	for alg, v := range in.ExpectChecksums {
		have, ok := got[alg]
		if !ok || (v != have && v != strings.Split(have, "-")[0]) {
			return errorf("BadDigest", "The %s you specified did not match the calculated checksum.", strings.ToUpper(alg))
		}
	}
	return nil
}

// buildManifest checks the client's part list against the recorded parts
// and returns the manifest and the backend part list to complete with.
func buildManifest(parts []CompletePart, cur map[uint32]crypto.PartRecord, minPart int64) (crypto.Manifest, []backend.CompletedPart, error) {
	var m crypto.Manifest
	bparts := make([]backend.CompletedPart, 0, len(parts))
	for i, p := range parts {
		r, ok := cur[uint32(p.PartNumber)]
		etag := strings.ToLower(strings.Trim(p.ETag, `"`))
		if !ok || p.PartNumber < 1 || p.PartNumber > crypto.MaxParts || etag != fmt.Sprintf("%x", r.PlainMD5) {
			return m, nil, invalidPart(p.PartNumber)
		}
		for alg, v := range p.Checksums {
			if _, kept := r.Checksums[alg]; !kept {
				return m, nil, errorf("BadDigest", "The %s you specified for part %d did not match what we received.", alg, p.PartNumber)
			}
			if r.Checksums[alg] != v {
				return m, nil, invalidPart(p.PartNumber)
			}
		}
		if i < len(parts)-1 && r.PlainSize < minPart {
			return m, nil, errorf("EntityTooSmall", "Your proposed upload is smaller than the minimum allowed size")
		}
		m.Parts = append(m.Parts, crypto.ManifestPart{Stream: r.Stream, PlainSize: r.PlainSize, PlainMD5: r.PlainMD5, Checksums: r.Checksums})
		bparts = append(bparts, backend.CompletedPart{PartNumber: int32(p.PartNumber), ETag: r.BackendETag})
	}
	return m, bparts, nil
}

func invalidPart(_ int) error {
	return errorf("InvalidPart", "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.")
}

// previous is what conditions found at the key before the completion.
type previous struct {
	backendIfMatch string // backend ETag to send as If-Match, or ""
	manifest       string // manifest of a multipart object there, which goes when it is replaced
	versionID      string // its version id
}

// conditions evaluates the completion's condition against the object now
// at the key, and notes what it found there. The backend decides again
// atomically: If-Match goes to it as the backend ETag of the version that
// matched, If-None-Match "*" as it is.
func (s *Store) conditions(ctx context.Context, in CompleteInput) (previous, error) {
	c := in.Cond
	failed := errorf("PreconditionFailed", "At least one of the pre-conditions you specified did not hold.")
	bi, err := s.be.HeadObject(ctx, in.Bucket, in.Key)
	if backend.IsNotFound(err) {
		if c != nil && c.IfMatch != nil {
			return previous{}, errorf("NoSuchKey", "The specified key does not exist.")
		}
		return previous{}, nil
	}
	if err != nil {
		return previous{}, err
	}
	if c != nil && c.IfNoneMatch {
		return previous{}, failed
	}
	prev := previous{versionID: bi.VersionID}
	if env, enc, err := crypto.ParseMetadata(bi.Meta); err == nil && enc && env.Multipart {
		prev.manifest = manifestKey(env.OID, strings.Trim(bi.ETag, `"`))
	}
	if c != nil && c.IfMatch != nil {
		info, _, err := s.describe(ctx, in.Bucket, bi, false)
		if err != nil || !etagIn(info.ETag, c.IfMatch) {
			return previous{}, failed
		}
		prev.backendIfMatch = strings.Trim(bi.ETag, `"`)
	}
	return prev, nil
}

func ifNoneMatch(c *Condition) string {
	if c != nil && c.IfNoneMatch {
		return "*"
	}
	return ""
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

// recoveringCompleter is a backend (the retry package's store) that
// retries completions and asks, after a retried attempt found the upload
// gone, whether an earlier attempt assembled the object after all.
type recoveringCompleter interface {
	CompleteMultipartUploadRecovering(ctx context.Context, in backend.CompleteMultipartInput,
		recover func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error)) (backend.CompleteMultipartOutput, error)
}

// completeBackend completes the backend upload, with recovery when the
// backend offers it.
func (s *Store) completeBackend(ctx context.Context, in backend.CompleteMultipartInput, u *upload, m crypto.Manifest, name string) (backend.CompleteMultipartOutput, error) {
	rc, ok := s.be.(recoveringCompleter)
	if !ok {
		return s.be.CompleteMultipartUpload(ctx, in)
	}
	return rc.CompleteMultipartUploadRecovering(ctx, in, func(ctx context.Context) (backend.CompleteMultipartOutput, bool, error) {
		return s.completedByUs(ctx, u, m, name)
	})
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

// checkCompleteChecksums holds a completion to the checksum its upload was
// created with, as S3 does: the same checksum type if the request names
// one; an upload created without an algorithm ignores a stated object
// checksum and type (its CRC64NVME is s3seal's own, and parts recorded by
// the previous release have none to give the type from).
func checkCompleteChecksums(u *upload, in *CompleteInput) error {
	if u.checksumAlg == "" {
		in.ExpectChecksums, in.ExpectChecksumType = nil, ""
		return nil
	}
	if in.ExpectChecksumType != "" && !strings.EqualFold(in.ExpectChecksumType, u.checksumType) {
		return errorf("InvalidRequest", "The upload was created using the %s checksum mode. The complete request must use the same checksum mode.", u.checksumType)
	}
	return nil
}
