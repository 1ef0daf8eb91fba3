package sealstore

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// MinPartSize is S3's smallest part but the last (5 MiB).
const MinPartSize = 5 << 20

// CreateMultipartInput starts a multipart upload.
type CreateMultipartInput struct {
	Bucket, Key string
	Meta        map[string]string // user metadata, lower-case keys without "x-amz-meta-"
	Headers     backend.Headers
	KeyID       string // master key for the object; "" means the primary
	// KMSContext and BucketKey go with a KeyID held outside s3seal, as
	// in PutInput.
	KMSContext string
	BucketKey  bool
	// ChecksumAlgorithm is the lower-case algorithm every part must carry
	// (x-amz-checksum-algorithm), or "". ChecksumType is "COMPOSITE" or
	// "FULL_OBJECT" (x-amz-checksum-type) when it is set.
	ChecksumAlgorithm, ChecksumType string
	// Protect is the completed object's lock and tags: the backend upload
	// carries them, so the backend object gets them at completion.
	Protect backend.Protection
	// CustomerKey, when set, seals the object with the client's key
	// (SSE-C); every part must then carry the same key.
	CustomerKey *crypto.CustomerKey
	// Record, when its Body is set, is kept as the upload's pending
	// record, which its completion makes the object's (recordwrites.go).
	Record *RecordWrite
	// storeCopy marks the upload of a copy the store makes of a multipart
	// object (copy_parts.go): no client knows its id, so s3seal gc aborts
	// it once it is older than gc's minimum age.
	storeCopy bool
}

// CreateMultipart starts an upload: a fresh data key and oid for the
// object, wrapped into the metadata the backend upload carries and into the
// upload's state object, from which any s3seal process serves its parts.
func (s *Store) CreateMultipart(ctx context.Context, in CreateMultipartInput) (string, error) {
	flagged := false
	if in.Record != nil {
		var err error
		if flagged, err = s.HasObjectRecords(ctx, in.Bucket); err != nil {
			return "", err
		}
	}
	id, content, err := s.createMultipart(ctx, in)
	if err != nil {
		return id, err
	}
	return id, s.keepPendingRecord(ctx, in.Bucket, id, content, flagged, in.Record)
}

func (s *Store) createMultipart(ctx context.Context, in CreateMultipartInput) (id, content string, err error) {
	if err := CheckNewKey(in.Key); err != nil {
		return "", "", err
	}
	if err := CheckMeta(in.Meta); err != nil {
		return "", "", err
	}
	om := objectMeta(in.Meta, in.Headers)
	if err := checkObjectMeta(om); err != nil {
		return "", "", err
	}
	dk, err := crypto.NewDataKey()
	if err != nil {
		return "", "", err
	}
	_, check, err := sealKey(dk, in.CustomerKey)
	if err != nil {
		return "", "", err
	}
	name := crypto.Name{Bucket: in.Bucket, Key: in.Key}
	wk, err := s.newWrapKey(ctx, in.KeyID, name, in.KMSContext, in.BucketKey)
	if err != nil {
		return "", "", err
	}
	defer wk.Close()
	if err := checkMetaRoom(wk, om); err != nil {
		return "", "", err
	}
	env, err := wk.Wrap(dk, name, crypto.Binding{Multipart: true, CustomerCheck: check, KMSContext: in.KMSContext, BucketKey: in.BucketKey})
	if err != nil {
		return "", "", fmt.Errorf("wrap data key: %w", err)
	}
	// The upload's state holds the envelope alone; the object, made of
	// the backend upload, also its sealed metadata.
	state := env.Metadata()
	if env.SealedMeta, err = crypto.SealObjectMeta(dk, om); err != nil {
		return "", "", fmt.Errorf("seal object metadata: %w", err)
	}
	// Writes elsewhere look for this upload's object once the bucket
	// says no more that it holds none.
	if err := s.dropSinglePart(ctx, in.Bucket); err != nil {
		return "", "", err
	}
	id, err = s.be.CreateMultipartUpload(ctx, backend.CreateMultipartInput{Bucket: in.Bucket, Key: in.Key, Meta: env.Metadata(), Headers: storeHeadersFor(env, in.Headers), Protect: in.Protect})
	if err != nil {
		return "", "", err
	}
	state[metaKey], state[metaUploadID] = b64url.EncodeToString([]byte(in.Key)), b64url.EncodeToString([]byte(id))
	if in.ChecksumAlgorithm != "" {
		state[metaChecksumAlg], state[metaChecksumType] = in.ChecksumAlgorithm, in.ChecksumType
	}
	if in.storeCopy {
		state[metaStoreCopy] = "1"
	}
	if state[metaSettings], err = sealSettings(dk, id, in.ChecksumAlgorithm, in.ChecksumType, in.storeCopy); err != nil {
		return "", "", s.abandonUpload(ctx, in.Bucket, in.Key, id, err)
	}
	lockMeta(state, in.Protect)
	if !env.External() { // a KMS key's upload reports its key from the envelope
		sseMeta(state, in.Headers)
	}
	if n := metaSize(state); n > maxStoreMeta {
		// A long key and a KMS key's envelope: the state would not fit.
		return "", "", s.abandonUpload(ctx, in.Bucket, in.Key, id, errorf("KeyTooLongError",
			"Your key is too long for a multipart upload sealed under this master key: the upload's state would take %d bytes of the store's %d of metadata. Use a shorter key, or a single PUT.", n, maxStoreMeta))
	}
	prefix := uploadPrefix(in.Bucket, in.Key, id)
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: in.Bucket, Key: prefix + infoName,
		Body: bytes.NewReader(nil), Meta: state}); err != nil {
		return "", "", s.abandonUpload(ctx, in.Bucket, in.Key, id, err)
	}
	// Upload ids are the store's: one that gives an ended upload's id
	// again must not find that upload's settings here.
	s.forgetUpload(uploadKey{in.Bucket, in.Key, id})
	return id, hex.EncodeToString(env.OID[:]), nil
}

// abandonUpload takes back a backend upload whose state could not be
// written (without it the upload is useless) and returns err.
func (s *Store) abandonUpload(ctx context.Context, bucket, key, id string, err error) error {
	if aerr := s.be.AbortMultipartUpload(context.WithoutCancel(ctx), bucket, key, id); aerr != nil {
		s.log.Warn("multipart: could not abort an upload whose state was not written; s3seal gc removes it",
			"bucket", bucket, "key", key, "upload_id", id, "err", aerr)
	}
	return err
}

// sealSettings seals an upload's id, checksum algorithm and type for its
// state (uploadSettings opens them).
func sealSettings(dk *crypto.DataKey, uploadID, alg, typ string, storeCopy bool) (string, error) {
	set := map[string]string{metaUploadID: uploadID}
	if alg != "" {
		set[metaChecksumAlg], set[metaChecksumType] = alg, typ
	}
	if storeCopy {
		set[metaStoreCopy] = "1"
	}
	return crypto.SealUploadSettings(dk, set)
}
