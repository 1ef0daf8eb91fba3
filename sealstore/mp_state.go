package sealstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// upload is a multipart upload in progress, as any s3seal process can
// rebuild it from the backend.
type upload struct {
	bucket, key, id string
	prefix          string
	dk              *crypto.DataKey
	env             crypto.Envelope
	checksumAlg     string             // lower-case algorithm the client chose at creation, or ""
	checksumType    string             // "COMPOSITE" or "FULL_OBJECT" when checksumAlg is set
	lock            backend.Protection // the lock asked at creation, for the manifest
	sse             backend.Headers    // the backend encryption asked at creation (SSE fields only)
	storeCopy       bool               // the upload of a copy the store makes (CreateMultipartInput.storeCopy)
}

type uploadKey struct{ bucket, key, id string }

// loadUpload finds the upload's state and unwraps its data key (readUpload).
// An upload s3seal holds no state for is NoSuchUpload, as S3 answers for
// an unknown or finished upload id. Loaded uploads are cached: the state
// of an upload id never changes.
func (s *Store) loadUpload(ctx context.Context, bucket, key, uploadID string) (*upload, error) {
	if u, ok := s.uploads.Get(uploadKey{bucket, key, uploadID}); ok {
		return u, nil
	}
	u, err := s.readUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return nil, err
	}
	s.uploads.Add(uploadKey{bucket, key, uploadID}, u)
	return u, nil
}

// forgetUpload drops an ended (or new) upload from this process's caches.
func (s *Store) forgetUpload(k uploadKey) {
	s.uploads.Remove(k)
	s.listedUploads.Remove(k)
}

// readUpload reads the upload's state from the store, unwraps its data key
// for (bucket, key) and opens its sealed settings, which must name this
// upload id: the store can neither change the checksum algorithm and type
// an upload was created with nor pass one upload's state off as another's.
// A state without sealed settings was written by a release before them
// and is read as that release read it, from its plain entries, so that
// uploads an older process starts keep working through newer ones
// (FORMAT.md, "Upload state", says what a store can do with that).
func (s *Store) readUpload(ctx context.Context, bucket, key, uploadID string) (*upload, error) {
	prefix := uploadPrefix(bucket, key, uploadID)
	bi, err := s.be.HeadObject(ctx, bucket, prefix+infoName)
	if backend.IsNotFound(err) {
		return nil, s.missingUpload(ctx, bucket, err)
	}
	if err != nil {
		return nil, err
	}
	env, encrypted, err := crypto.ParseMetadata(bi.Meta)
	if err == nil && (!encrypted || !env.Multipart) {
		err = fmt.Errorf("upload state without a multipart envelope")
	}
	if err != nil {
		return nil, integrityErr(bucket, prefix+infoName, err)
	}
	dk, _, err := s.kr.Unwrap(ctx, env, crypto.Name{Bucket: bucket, Key: key})
	if err != nil {
		return nil, s.unwrapErr(bucket, prefix+infoName, err)
	}
	set, err := uploadSettings(dk, bi.Meta, uploadID)
	if err != nil {
		return nil, integrityErr(bucket, prefix+infoName, err)
	}
	return &upload{bucket: bucket, key: key, id: uploadID, prefix: prefix, dk: dk, env: env,
		checksumAlg: set[metaChecksumAlg], checksumType: set[metaChecksumType], storeCopy: set[metaStoreCopy] == "1",
		lock: lockOfMeta(bi.Meta), sse: sseOfState(env, bi.Meta)}, nil
}

// uploadSettings gives the settings of the upload whose state metadata is
// meta (its checksum algorithm and type, whether it is a store copy's),
// from its sealed settings (readUpload).
func uploadSettings(dk *crypto.DataKey, meta map[string]string, uploadID string) (map[string]string, error) {
	v, ok := meta[metaSettings]
	if !ok {
		// An earlier release's state: its plain entries, as that release
		// read them (rolling upgrades, uploads in progress at one).
		if id, err := b64url.DecodeString(meta[metaUploadID]); err != nil || string(id) != uploadID {
			return nil, errors.New("upload state without sealed settings names another upload")
		}
		return map[string]string{metaChecksumAlg: meta[metaChecksumAlg], metaChecksumType: meta[metaChecksumType]}, nil
	}
	set, err := crypto.OpenUploadSettings(dk, v)
	if err != nil {
		return nil, err
	}
	if set[metaUploadID] != uploadID {
		return nil, errors.New("upload state sealed for another upload")
	}
	return set, nil
}

// contentKey checks the customer key of a part (or a completion) against
// the upload's: an upload created with one needs that very key with each
// part, one created without refuses a key.
func (u *upload) contentKey(ck *crypto.CustomerKey) (*crypto.DataKey, error) {
	keyed := u.env.CustomerCheck != nil
	switch {
	case keyed && ck == nil:
		return nil, errorf("InvalidRequest", "The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.")
	case !keyed && ck != nil:
		return nil, errorf("InvalidRequest", "The multipart upload initiate did not request encryption. Subsequent part requests must not include encryption parameters.")
	case ck == nil:
		return u.dk, nil
	}
	c, err := u.dk.ForCustomer(ck, u.env.CustomerCheck)
	if errors.Is(err, crypto.ErrCustomerKey) {
		return nil, customerKeyMismatch()
	}
	return c, err
}

// Upload-level backend encryption kept beside the envelope in the upload
// state's metadata (not secret: the backend reports it), so parts and the
// completion report it as S3 does.
const (
	metaSSE          = "sse"
	metaSSEKMSKeyID  = "sse-kms-key-id"
	metaSSEBucketKey = "sse-bucket-key"
)

func sseMeta(state map[string]string, h backend.Headers) {
	if h.SSE == "" {
		return
	}
	state[metaSSE] = h.SSE
	if h.SSEKMSKeyID != "" {
		state[metaSSEKMSKeyID] = h.SSEKMSKeyID
	}
	if h.SSEBucketKey {
		state[metaSSEBucketKey] = "true"
	}
}

// sseOfState is the encryption an upload's parts and completion report:
// its KMS key when s3seal seals it under one, else the store's.
func sseOfState(env crypto.Envelope, meta map[string]string) backend.Headers {
	var h backend.Headers
	if env.External() {
		kmsHeaders(env, &h)
		return h
	}
	return sseOfMeta(meta)
}

func sseOfMeta(meta map[string]string) backend.Headers {
	return backend.Headers{SSE: meta[metaSSE], SSEKMSKeyID: meta[metaSSEKMSKeyID], SSEBucketKey: meta[metaSSEBucketKey] == "true"}
}

// UploadChecksum returns the checksum algorithm (lower case) and type the
// upload was created with, or "" for none.
func (s *Store) UploadChecksum(ctx context.Context, bucket, key, uploadID string) (alg, typ string, err error) {
	u, err := s.loadUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return "", "", err
	}
	return u.checksumAlg, u.checksumType, nil
}

// missingUpload is the answer for an upload without state: NoSuchBucket
// when its bucket is gone (S3 names the bucket first), else NoSuchUpload.
func (s *Store) missingUpload(ctx context.Context, bucket string, err error) error {
	if backend.ErrorCode(err) != "NoSuchBucket" {
		err = s.be.HeadBucket(ctx, bucket)
	}
	switch {
	case backend.IsNotFound(err):
		return errorf("NoSuchBucket", "The specified bucket does not exist.")
	case err != nil:
		return err
	}
	return noSuchUpload()
}

func noSuchUpload() error {
	return errorf("NoSuchUpload", "The specified multipart upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.")
}
