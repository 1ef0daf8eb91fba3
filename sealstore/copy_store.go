package sealstore

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// A copy made by the store (docs/DESIGN.md, "Copies that move no bytes"):
// the store copies the source's ciphertext, s3seal writes the copy's
// envelope. The copy has a data key and oid of its own, which wrap its
// name, seal its metadata and seal its origin: the source stream's key.
// Its bytes stay sealed under that key, and no byte passes through s3seal.

// storeSource is a copy source as the store-side copy needs it: its
// description, its data key and the backend object the HEAD saw.
type storeSource struct {
	info ObjectInfo
	dk   *crypto.DataKey
	bi   backend.ObjectInfo
}

// statSource describes the source of a copy that the store may make: ok is
// false when the copy must read the source instead (it is not encrypted,
// or has a customer key); err is the source's own error (missing, its
// integrity), which the reading copy would answer too. A multipart
// source's manifest is read whole, with the per-part checksums that the
// cache of manifests leaves out and the copy keeps.
func (s *Store) statSource(ctx context.Context, bucket, key, versionID, contentID string) (src storeSource, ok bool, err error) {
	src.bi, src.info, src.dk, err = s.headDescribed(ctx, ReadInput{Bucket: bucket, Key: key, VersionID: versionID, ContentID: contentID})
	if err != nil {
		return src, false, err
	}
	if !src.info.Encrypted || src.info.CustomerKeyed {
		return src, false, nil
	}
	if src.info.manifest != nil {
		id := manifestID{src.dk.OID(), src.info.backendETag}
		m, ok := s.copySources.Get(id)
		if !ok {
			if m, err = s.loadManifest(ctx, bucket, key, src.dk, src.info.backendETag, src.bi.Size); err != nil {
				return src, false, err
			}
			s.copySources.Add(id, m)
		}
		src.info.manifest = &m
	}
	return src, true, nil
}

// copySourceManifests bounds the whole manifests kept for copy sources: a
// client copying an object part by part (the aws CLI: one UploadPartCopy
// per part) reads its manifest once. At most 10,000 parts each, with
// their checksums: a few MB at worst.
const copySourceManifests = 8

// origin is the origin of the source's single stream: the one it carries
// when it is itself a copy, else its own.
func (src storeSource) origin() crypto.Origin {
	if src.info.origin != nil {
		return *src.info.origin
	}
	return crypto.OriginOf(src.dk, crypto.Stream{})
}

// plainMD5 is the source's plaintext MD5, from its ETag.
func (src storeSource) plainMD5() ([16]byte, error) {
	var sum [16]byte
	b, err := hex.DecodeString(src.info.ETag)
	if err != nil || len(b) != len(sum) {
		return sum, fmt.Errorf("single-stream object with ETag %q", src.info.ETag)
	}
	copy(sum[:], b)
	return sum, nil
}

// copyChecksums are the checksums a copy keeps: the one the client asked
// for (alg, lower case) or, when it asked for none, the source's (none
// for a source written without one). ok is false when the source lacks
// the one asked for: the copy must read the bytes to compute it.
func copyChecksums(src map[string]string, alg string) (map[string]string, bool) {
	if alg == "" {
		return src, true
	}
	v, ok := src[alg]
	return map[string]string{alg: v}, ok
}

// storeCopies reports whether the request lets the store make the copy:
// no customer key on either side (a copy keyed otherwise than its source
// must be sealed again) and no condition on the destination (decided with
// the bytes, in Put).
func (in CopyInput) storeCopies() bool {
	return in.CustomerKey == nil && in.SrcCustomerKey == nil && in.Cond == nil
}

// copyConditions is what s3seal learnt of the store's copy conditions.
type copyConditions struct {
	mu       sync.Mutex
	known    bool
	honoured bool
	probing  chan struct{} // closed when the probe running ends; nil when none runs
	retry    time.Time     // no probe before this, after one that failed
}

// copyProbeWait bounds how long a copy waits for another copy's probe
// before it reads its source (as it does at once if its own context ends).
const copyProbeWait = 10 * time.Second

// copyProbeRetry is how long copies read their source after a probe of
// the store's copy conditions failed, before the next copy probes again.
const copyProbeRetry = time.Minute

// storeHonoursCopyConditions reports whether the store refuses a copy
// (UploadPartCopy, CopyObject) whose x-amz-copy-source-if-match names
// another ETag than the source's, which a copy the store makes relies on:
// the envelope s3seal writes describes the source version its HEAD saw,
// and only that condition makes the store copy that version or nothing.
// It is probed once per process (probeSourceConditions, with the source
// of the copy at hand), by the first copy. Copies that come while it runs
// wait for its verdict at most copyProbeWait, or until their own context
// ends, and then read their source; so do copies within copyProbeRetry of
// a probe that failed. A store that ignores the condition (moto) gets
// copies that read their source, and one WARN.
func (s *Store) storeHonoursCopyConditions(ctx context.Context, bucket, srcBucket, srcKey string) bool {
	c := &s.copyConds
	c.mu.Lock()
	if running := c.probing; running != nil {
		c.mu.Unlock()
		select {
		case <-running:
		case <-ctx.Done():
		case <-time.After(copyProbeWait):
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.known && c.honoured
	}
	if c.known || time.Now().Before(c.retry) {
		defer c.mu.Unlock()
		return c.known && c.honoured
	}
	running := make(chan struct{})
	c.probing = running
	c.mu.Unlock()
	honoured, err := s.probeSourceConditions(ctx, bucket, srcBucket, srcKey)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.probing = nil
	defer close(running)
	switch {
	case err != nil:
		c.retry = time.Now().Add(copyProbeRetry)
		s.log.Warn("copy: could not probe the store's copy conditions; copies read their source for a minute", "bucket", bucket, "err", err)
		return false
	case !honoured:
		s.log.Warn("copy: the object store ignores x-amz-copy-source-if-match, so copies read and seal their source again instead of having the store copy it")
	}
	c.known, c.honoured = true, honoured
	return honoured
}

// probeSourceConditions asks the store for copies of an existing source
// that name a source ETag it does not have: an UploadPartCopy of its first
// byte into a scratch upload under the probe prefix (aborted after) and,
// when that is refused, a CopyObject to a scratch key. A store that
// honours the condition refuses both, and nothing is written; one that
// ignores it writes a part, which the abort removes, or a scratch object,
// removed at once or, if a lock keeps it, by s3seal gc later.
func (s *Store) probeSourceConditions(ctx context.Context, bucket, srcBucket, srcKey string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	key, err := probeKey()
	if err != nil {
		return false, err
	}
	id, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key})
	if err != nil {
		return false, err
	}
	defer func() {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := s.be.AbortMultipartUpload(actx, bucket, key, id); err != nil {
			s.log.Warn("copy: could not abort the probe's upload; s3seal gc removes it", "bucket", bucket, "key", key, "err", err)
		}
	}()
	_, err = s.be.UploadPartCopy(ctx, backend.UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: 1,
		SrcBucket: srcBucket, SrcKey: srcKey, SrcIfMatch: probeETag, First: 0, Last: 0})
	if honoured, err := refusedByCondition(err); err != nil || !honoured {
		return honoured, err
	}
	_, err = s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: srcBucket, SrcKey: srcKey, Bucket: bucket, Key: key, SrcIfMatch: probeETag})
	honoured, err := refusedByCondition(err)
	if err == nil && !honoured {
		s.dropKeys(context.WithoutCancel(ctx), bucket, []string{key})
	}
	return honoured, err
}

// refusedByCondition reads a probe copy's answer: refused as its
// condition asks (true), done anyway (false), or another error.
func refusedByCondition(err error) (bool, error) {
	switch {
	case err == nil:
		return false, nil
	case backend.ErrorCode(err) == "PreconditionFailed":
		return true, nil
	}
	return false, err
}

// copyByStore makes the copy at the store when it can. done is false when
// the copy must read the source instead (Copy then does); when done, err
// is the copy's outcome.
func (s *Store) copyByStore(ctx context.Context, in CopyInput) (info ObjectInfo, done bool, err error) {
	if !in.storeCopies() {
		return ObjectInfo{}, false, nil
	}
	src, ok, err := s.statSource(ctx, in.SrcBucket, in.SrcKey, in.SrcVersionID, in.SrcContentID)
	if err != nil || !ok || !s.storeHonoursCopyConditions(ctx, in.Bucket, in.SrcBucket, src.bi.Key) {
		return ObjectInfo{}, err != nil, err
	}
	if src.info.manifest != nil {
		return s.copyPartsByStore(ctx, in, src)
	}
	if src.bi.Size > backend.MaxCopySize {
		return ObjectInfo{}, false, nil
	}
	checksums, ok := copyChecksums(src.info.Checksums, in.ChecksumAlgorithm)
	if !ok {
		return ObjectInfo{}, false, nil
	}
	if in.Check != nil {
		if err := in.Check(src.info); err != nil {
			return ObjectInfo{}, true, err
		}
	}
	meta, headers := copyMetaOf(in, src.info)
	env, err := s.copyEnvelope(ctx, in, src, meta, headers, checksums)
	if err != nil || env.OID == ([crypto.OIDSize]byte{}) {
		return ObjectInfo{}, err != nil, err
	}
	flagged := false
	if in.Record != nil && in.Record.Body == nil {
		if flagged, err = s.HasObjectRecords(ctx, in.Bucket); err != nil {
			return ObjectInfo{}, true, err
		}
	}
	prev := s.peekManifest(ctx, in.Bucket, in.Key)
	old := <-prev
	out, err := s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: in.SrcBucket, SrcKey: in.SrcKey, SrcVersionID: src.bi.VersionID,
		SrcIfMatch: src.info.backendETag, Bucket: in.Bucket, Key: in.Key, Meta: env.Metadata(), Headers: storeHeadersFor(env, headers),
		Lock: in.Protect, ReplaceTags: true})
	if err != nil {
		return ObjectInfo{}, true, sourceChanged(err)
	}
	if err := s.checkStoreCopy(ctx, in, src, out, env.OID); err != nil {
		return ObjectInfo{}, true, err
	}
	if old.replacedBy(out.VersionID) {
		s.dropManifest(ctx, in.Bucket, in.Key, old, false)
	}
	kmsHeaders(env, &headers)
	s.remember(cacheKey{in.Bucket, in.Key, out.ETag, src.bi.Size}, resolved{src.info.Size, src.info.ETag, checksums})
	info = ObjectInfo{Bucket: in.Bucket, Key: in.Key, Size: src.info.Size, ETag: src.info.ETag,
		Meta: meta, Headers: headers, Encrypted: true, env: env, Checksums: checksums, origin: src.info.origin,
		backendETag: out.ETag, backendSize: src.bi.Size, VersionID: out.VersionID}
	return info, true, s.writeRecord(ctx, in.Bucket, in.Key, in.Record, flagged, info)
}

// copyMetaOf is the metadata and headers of a copy of src: the request's
// under REPLACE, else the source's with the request's storage class and
// redirect; the backend encryption is always the request's, as S3 has it.
func copyMetaOf(in CopyInput, src ObjectInfo) (map[string]string, backend.Headers) {
	meta, headers := src.Meta, src.Headers
	if in.ReplaceMeta {
		meta, headers = in.Meta, in.Headers
	} else {
		headers.StorageClass, headers.WebsiteRedirectLocation = in.Headers.StorageClass, in.Headers.WebsiteRedirectLocation
	}
	headers.SSE, headers.SSEKMSKeyID, headers.SSEContext, headers.SSEBucketKey =
		in.Headers.SSE, in.Headers.SSEKMSKeyID, in.Headers.SSEContext, in.Headers.SSEBucketKey
	return meta, headers
}

// copyEnvelope seals the envelope of a single-stream copy of src: a fresh
// data key and oid, wrapped for the copy's name with the source's size,
// MD5 and the kept checksums, the copy's metadata and the source's origin
// sealed with it. A zero envelope and no error mean the envelope would
// pass the store's metadata limit (a long origin beside long metadata):
// the copy is sealed again instead.
func (s *Store) copyEnvelope(ctx context.Context, in CopyInput, src storeSource, meta map[string]string, headers backend.Headers,
	checksums map[string]string) (crypto.Envelope, error) {
	if err := CheckMeta(meta); err != nil {
		return crypto.Envelope{}, err
	}
	om := objectMeta(meta, headers)
	if err := checkObjectMeta(om); err != nil {
		return crypto.Envelope{}, err
	}
	sum, err := src.plainMD5()
	if err != nil {
		return crypto.Envelope{}, integrityErr(in.SrcBucket, in.SrcKey, err)
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return crypto.Envelope{}, err
	}
	name := crypto.Name{Bucket: in.Bucket, Key: in.Key}
	wk, err := s.newWrapKey(ctx, in.KeyID, name, in.KMSContext, in.BucketKey)
	if err != nil {
		return crypto.Envelope{}, err
	}
	defer wk.Close()
	if err := checkMetaRoom(wk, om); err != nil {
		return crypto.Envelope{}, err
	}
	env, err := wk.Wrap(dk, name, crypto.Binding{PlainSize: src.info.Size, PlainMD5: sum, Checksums: checksums,
		KMSContext: in.KMSContext, BucketKey: in.BucketKey})
	if err != nil {
		return crypto.Envelope{}, fmt.Errorf("wrap data key: %w", err)
	}
	if env.SealedMeta, err = crypto.SealObjectMeta(dk, om); err != nil {
		return crypto.Envelope{}, fmt.Errorf("seal object metadata: %w", err)
	}
	if env.Origin, err = crypto.SealOrigin(dk, src.origin()); err != nil {
		return crypto.Envelope{}, fmt.Errorf("seal origin: %w", err)
	}
	if metaSize(env.Metadata()) > maxStoreMeta {
		return crypto.Envelope{}, nil
	}
	return env, nil
}

// sourceChanged turns the store's refusal of a copy conditional on the
// source's ETag into what it means: the source was written between its
// HEAD and the copy, which the client may retry.
func sourceChanged(err error) error {
	if backend.ErrorCode(err) == "PreconditionFailed" {
		return errorf("ConditionalRequestConflict", "A conflicting operation occurred: the copy source changed while it was copied. Retry the copy.")
	}
	return err
}

// checkStoreCopy makes sure the store copied the stream the envelope
// names: a copy of an object of S3's kind has the source's ETag (the MD5
// of the same bytes); any other answer (a store whose ETags are not MD5s,
// or that copied another version than asked) is checked by opening the
// copy's first segment with the origin's key, which only a copy of that
// stream passes. A copy that another write replaced before the check
// (the check's read, pinned to the copy's ETag and version, finds it gone,
// and the key holds no object with the copy's oid) was made and then
// replaced, as any write may be: that is the copy's success. A store that
// reads the copy under another ETag than its copy answered has it read
// unpinned. A copy that fails the check is removed (only that version,
// and only while the key holds it) and answers 500.
func (s *Store) checkStoreCopy(ctx context.Context, in CopyInput, src storeSource, out backend.CopyOutput, oid [crypto.OIDSize]byte) error {
	if strings.Trim(out.ETag, `"`) == src.info.backendETag {
		return nil
	}
	key, stream, err := src.info.streamKey(src.dk)
	if err == nil {
		err = s.openFirstSegment(ctx, backend.GetInput{Bucket: in.Bucket, Key: in.Key, VersionID: out.VersionID, IfMatch: out.ETag}, 0, key, stream, src.info.Size)
	}
	if backend.IsNotFound(err) || backend.ErrorCode(err) == "PreconditionFailed" {
		bi, herr := s.headObject(ctx, in.Bucket, in.Key, out.VersionID)
		if herr != nil && !backend.IsNotFound(herr) {
			return herr
		}
		env, _, perr := crypto.ParseMetadata(bi.Meta)
		if herr != nil || perr != nil || env.OID != oid {
			return nil // replaced by another write
		}
		out.ETag = strings.Trim(bi.ETag, `"`) // still the copy, under another ETag
		err = s.openFirstSegment(ctx, backend.GetInput{Bucket: in.Bucket, Key: in.Key, VersionID: out.VersionID, IfMatch: out.ETag}, 0, key, stream, src.info.Size)
	}
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, crypto.ErrAuth) && !errors.Is(err, crypto.ErrCorrupt):
		return err // the check could not read the copy: not a finding
	}
	s.log.Warn("copy: the store's copy is not the source's stream; removed", "bucket", in.Bucket, "key", in.Key, "err", err)
	s.removeWrongCopy(context.WithoutCancel(ctx), in.Bucket, in.Key, out)
	return integrityErr(in.Bucket, in.Key, fmt.Errorf("the store's copy of %s/%s is not its stream: %w", in.SrcBucket, in.SrcKey, err))
}

// openFirstSegment reads the first segment of a stream of plainSize bytes
// that starts at ciphertext offset start of the object in names (pinned
// by its IfMatch and VersionID), and opens it as stream's under dk: only
// that stream's first segment opens so (for an empty stream, its one
// empty segment).
func (s *Store) openFirstSegment(ctx context.Context, in backend.GetInput, start int64, dk *crypto.DataKey,
	stream crypto.Stream, plainSize int64) error {
	n := min(plainSize, crypto.SegmentSize)
	cOff, cLen := crypto.CipherRange(plainSize, 0, n)
	in.Range = &backend.ByteRange{Off: start + cOff, Len: cLen}
	obj, err := s.be.GetObject(ctx, in)
	if err != nil {
		return err
	}
	defer obj.Body.Close()
	r, err := crypto.NewReader(io.LimitReader(obj.Body, cLen), dk, stream, plainSize, 0, n)
	if err == nil {
		_, err = io.Copy(io.Discard, r)
	}
	return err
}

// removeWrongCopy deletes what a copy wrote after it proved not to be the
// source's stream: its version in a versioned bucket, else the key while
// it holds the copy's ETag (a write since stays).
func (s *Store) removeWrongCopy(ctx context.Context, bucket, key string, out backend.CopyOutput) {
	in := backend.DeleteInput{Bucket: bucket, Key: key, VersionID: out.VersionID}
	if out.VersionID == "" {
		in.IfMatch = out.ETag
	}
	if _, err := s.be.DeleteObjectVersion(ctx, in); err != nil {
		s.log.Warn("copy: could not remove the store's wrong copy", "bucket", bucket, "key", key, "err", err)
	}
}
