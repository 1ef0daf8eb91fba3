package backend

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The backend's server-side encryption (SSE-S3, SSE-KMS) covers the bytes
// s3seal has already sealed: s3seal passes the client's choice on, so the
// provider's KMS (its key policy, audit trail, key deletion) applies on top
// of s3seal's own encryption, and reports what the backend answers.
// Customer keys (SSE-C) are never passed: s3seal terminates them.

// setSSE sets a write's server-side encryption members from h.
func setSSE(h Headers, sse *types.ServerSideEncryption, keyID, ctx **string, bucketKey **bool) {
	if h.SSE == "" {
		return
	}
	*sse = types.ServerSideEncryption(h.SSE)
	*keyID = optString(h.SSEKMSKeyID)
	*ctx = optString(h.SSEContext)
	if h.SSEBucketKey {
		*bucketKey = aws.Bool(true)
	}
}

// readSSE records the server-side encryption a GET or HEAD reports.
func readSSE(h *Headers, sse types.ServerSideEncryption, keyID *string, bucketKey *bool) {
	h.SSE = string(sse)
	h.SSEKMSKeyID = aws.ToString(keyID)
	h.SSEBucketKey = aws.ToBool(bucketKey)
}
