package s3api

import (
	"net/http"

	"github.com/s3seal/s3seal/s3api/sigv4"
)

// anonymousRefusal is S3's answer to an unsigned request for op where
// anonymous users are granted nothing; s3seal grants them nothing
// anywhere (every request acts as a credential). S3 names some operations
// in its refusal, and refuses a signed streaming payload before access.
func anonymousRefusal(op string, r *http.Request) error {
	switch r.Header.Get("X-Amz-Content-Sha256") {
	case sigv4.StreamingSignedPayload, sigv4.StreamingSignedPayloadTrail:
		return apiErr("InvalidRequest", "Anonymous requests don't support this x-amz-content-sha256 value. Please use UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER.")
	}
	msg := "Access Denied."
	switch op {
	case "CreateBucket", "PutBucketAcl", "PutObjectAcl":
		msg = "Anonymous users cannot invoke this API. Please authenticate."
	case "CreateMultipartUpload":
		msg = "Anonymous users cannot initiate multipart uploads. Please authenticate."
	case "CopyObject":
		msg = "Anonymous users cannot copy objects. Please authenticate."
	case "PutBucketOwnershipControls", "DeleteBucketOwnershipControls":
		msg = "s3:PutBucketOwnershipControls does not support Anonymous requests!"
	case "GetBucketOwnershipControls":
		msg = "s3:GetBucketOwnershipControls does not support Anonymous requests!"
	case "NotImplemented":
		if r.URL.Query().Has("select") {
			msg = "Anonymous users cannot invoke this API. Please authenticate."
		}
	}
	return apiErr("AccessDenied", msg)
}
