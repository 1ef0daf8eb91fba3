package sealstore

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/crypto"
)

// ErrCopyConditionIgnored: the store copied an object although the copy
// named a source ETag it does not have. Rewrap relies on that condition to
// leave alone an object a client writes during the run (else the new
// object would get the old one's wrapped key, and be lost); on such a store
// it refuses to run unless told no client writes to the bucket meanwhile.
var ErrCopyConditionIgnored = errors.New("the object store ignores x-amz-copy-source-if-match")

// probeCopyCondition checks, with a scratch object under ReservedPrefix,
// that the store refuses a copy whose source ETag condition fails.
func (s *Store) probeCopyCondition(ctx context.Context, bucket string) error {
	key := ReservedPrefix + "rewrap-probe"
	body := []byte("s3seal rewrap probe")
	if _, err := s.be.PutObject(ctx, backend.PutInput{Bucket: bucket, Key: key, Body: bytes.NewReader(body), Size: int64(len(body))}); err != nil {
		return err
	}
	defer s.dropKeys(context.WithoutCancel(ctx), bucket, []string{key})
	_, err := s.be.CopyObject(ctx, backend.CopyInput{SrcBucket: bucket, SrcKey: key, Bucket: bucket, Key: key,
		SrcIfMatch: "00000000000000000000000000000000", Meta: map[string]string{"probe": "1"}})
	switch {
	case err == nil:
		return ErrCopyConditionIgnored
	case backend.ErrorCode(err) == "PreconditionFailed":
		return nil
	}
	return err
}

// rewrapUploads reports the uploads in progress whose data key is under
// another key than opt.To: their object will carry the envelope its
// upload was created with (a backend upload's metadata cannot change), so
// such an upload must be completed or aborted, and the run repeated,
// before the old key may leave the keyring.
func (s *Store) rewrapUploads(ctx context.Context, bucket string, opt RewrapOptions, report func(RewrapResult)) error {
	return s.listAll(ctx, bucket, uploadsPrefix, func(e backend.ListEntry) error {
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
		report(RewrapResult{Key: string(key), From: env.KeyID, Status: RewrapInProgress})
		return ctx.Err()
	})
}
