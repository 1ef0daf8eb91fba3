package retry

import (
	"context"

	"github.com/s3seal/s3seal/backend"
)

// Pass-through multipart methods without retries, so that store satisfies
// backend.Store. Placeholder: the retrying versions replace this file.

func (s *store) CreateMultipartUpload(ctx context.Context, in backend.CreateMultipartInput) (string, error) {
	return s.st.CreateMultipartUpload(ctx, in)
}

func (s *store) UploadPart(ctx context.Context, in backend.UploadPartInput) (string, error) {
	return s.st.UploadPart(ctx, in)
}

func (s *store) CompleteMultipartUpload(ctx context.Context, in backend.CompleteMultipartInput) (backend.CompleteMultipartOutput, error) {
	return s.st.CompleteMultipartUpload(ctx, in)
}

func (s *store) AbortMultipartUpload(ctx context.Context, bucket, key, uploadID string) error {
	return s.st.AbortMultipartUpload(ctx, bucket, key, uploadID)
}

func (s *store) ListParts(ctx context.Context, in backend.ListPartsInput) (backend.ListPartsOutput, error) {
	return s.st.ListParts(ctx, in)
}

func (s *store) ListMultipartUploads(ctx context.Context, in backend.ListUploadsInput) (backend.ListUploadsOutput, error) {
	return s.st.ListMultipartUploads(ctx, in)
}
