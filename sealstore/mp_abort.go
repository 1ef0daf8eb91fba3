package sealstore

import (
	"context"

	"github.com/s3seal/s3seal/backend"
)

// AbortMultipart ends an upload: the backend drops its parts and s3seal its
// state.
func (s *Store) AbortMultipart(ctx context.Context, bucket, key, uploadID string) error {
	flagged, err := s.HasObjectRecords(ctx, bucket)
	if err != nil {
		return err
	}
	if err := s.abortMultipart(ctx, bucket, key, uploadID); err != nil {
		return err
	}
	return s.dropPendingRecord(ctx, bucket, uploadID, flagged)
}

func (s *Store) abortMultipart(ctx context.Context, bucket, key, uploadID string) error {
	u, err := s.loadUpload(ctx, bucket, key, uploadID)
	if err != nil {
		return err
	}
	err = s.be.AbortMultipartUpload(ctx, bucket, key, uploadID)
	if err != nil && backend.ErrorCode(err) != "NoSuchUpload" {
		return err
	}
	_, keys, lerr := s.listRecords(ctx, u)
	if lerr == nil {
		s.dropKeys(ctx, bucket, keys)
	}
	s.forgetUpload(uploadKey{bucket, key, uploadID})
	if err != nil {
		return noSuchUpload()
	}
	return lerr
}
