package sealstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// ErrCopyConditionIgnored means the store copied an object although the copy
// named a source ETag it does not have (a CopyObject or an UploadPartCopy),
// or completed a multipart copy although its If-Match named another ETag.
// Rewrap relies on those conditions to leave alone an object a client
// writes during the run (else the new object would get the old one's
// wrapped key, or be overwritten by the old data, and be lost); on such a
// store it refuses to run unless told no client writes to the bucket
// meanwhile.
var ErrCopyConditionIgnored = errors.New("the object store ignores x-amz-copy-source-if-match or If-Match on a copy")

// probePrefix names the scratch objects and uploads of the probes of the
// store's copy conditions (rewrap's, and the one store copies rely on); a
// probe lives for seconds, so s3seal gc removes any older than its MinAge
// (left by a killed run or a failed clean-up).
const probePrefix = ReservedPrefix + "rewrap-probe-"

// probeETag is the ETag the probes' conditions name: no object has it.
const probeETag = "00000000000000000000000000000000"

// probeKey is a fresh scratch key under probePrefix.
func probeKey() (string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return "", err
	}
	return probePrefix + hex.EncodeToString(rnd[:]), nil
}

// CheckCopyConditions checks, with a scratch object under ReservedPrefix
// (a random name, so that two runs do not meet; removed at once), that
// the store refuses each conditional request rewrap makes when its
// condition fails: a CopyObject and an UploadPartCopy whose source ETag
// is not the object's, and a CompleteMultipartUpload whose If-Match is
// not the key's ETag. ErrCopyConditionIgnored when the store goes ahead:
// Rewrap then runs only with NoWriters. Rewrap checks before changing
// anything; a dry run, which does not, may call it to tell whether the
// real run will need NoWriters.
func (s *Store) CheckCopyConditions(ctx context.Context, bucket string) error {
	key, err := probeKey()
	if err != nil {
		return err
	}
	body := []byte("s3seal rewrap probe")
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body))}); err != nil {
		return err
	}
	dctx := context.WithoutCancel(ctx)
	defer s.dropKeys(dctx, bucket, []string{key})
	refused := func(err error) error {
		honoured, err := refusedByCondition(err)
		if err == nil && !honoured {
			return ErrCopyConditionIgnored
		}
		return err
	}
	_, err = s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key,
		SrcIfMatch: probeETag, Meta: map[string]string{"probe": "1"}})
	if err := refused(err); err != nil {
		return err
	}
	id, err := s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: bucket, Key: key})
	if err != nil {
		return err
	}
	defer func() {
		if err := s.be.AbortMultipartUpload(dctx, bucket, key, id); err != nil {
			s.log.Warn("rewrap: could not abort the probe's upload; s3seal gc removes it", "bucket", bucket, "key", key, "err", err)
		}
	}()
	part := backend.UploadPartCopyInput{Bucket: bucket, Key: key, UploadID: id, PartNumber: 1,
		SrcBucket: bucket, SrcKey: key, SrcIfMatch: probeETag, First: 0, Last: int64(len(body)) - 1}
	_, err = s.be.UploadPartCopy(ctx, part)
	if err := refused(err); err != nil {
		return err
	}
	part.SrcIfMatch = ""
	pe, err := s.be.UploadPartCopy(ctx, part)
	if err != nil {
		return err
	}
	_, err = s.be.CompleteMultipartUpload(ctx, backend.CompleteMultipartInput{Bucket: bucket, Key: key, UploadID: id,
		Parts: []backend.CompletedPart{{PartNumber: 1, ETag: pe}}, IfMatch: probeETag})
	return refused(err)
}

// oldUploads lists the uploads in progress whose data key is under
// another key than opt.To, as the key of their upload record and the
// object key they will complete to.
func (s *Store) oldUploads(ctx context.Context, bucket string, opt RewrapOptions) (map[string]RewrapResult, error) {
	found := map[string]RewrapResult{}
	err := s.listAll(ctx, bucket, uploadsPrefix, func(e backend.ListEntry) error {
		if !strings.HasSuffix(e.Key, "/"+infoName) {
			return nil
		}
		bi, err := s.be.HeadObject(ctx, bucket, e.Key)
		if backend.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		env, enc, err := crypto.ParseMetadata(bi.Meta)
		key, kerr := b64url.DecodeString(bi.Meta[metaKey])
		if err != nil || !enc || kerr != nil || !strings.HasPrefix(string(key), opt.Prefix) || env.KeyID == opt.To {
			return nil
		}
		found[e.Key] = RewrapResult{Key: string(key), From: env.KeyID, Status: RewrapInProgress}
		return ctx.Err()
	})
	return found, err
}

// rewrapUploads ends a run. The uploads under another key than opt.To
// still in progress are reported: their object will carry the envelope
// its upload was created with (a backend upload's metadata cannot
// change), so each must be completed or aborted, and the run repeated,
// before the old key may leave the keyring. An upload listed in before (at
// the start of the run) that has since gone was completed or aborted
// during the run, perhaps after the listing passed its key: its object is
// rewrapped now.
func (s *Store) rewrapUploads(ctx context.Context, bucket string, opt RewrapOptions, before map[string]RewrapResult,
	report func(RewrapResult)) error {
	after, err := s.oldUploads(ctx, bucket, opt)
	if err != nil {
		return err
	}
	for _, r := range after {
		report(r)
	}
	for rec, r := range before {
		if _, ok := after[rec]; ok {
			continue
		}
		if _, err := s.be.HeadObject(ctx, bucket, r.Key); backend.IsNotFound(err) {
			continue // aborted
		}
		report(s.rewrapOne(ctx, bucket, backend.ListEntry{Key: r.Key}, opt))
	}
	return ctx.Err()
}
