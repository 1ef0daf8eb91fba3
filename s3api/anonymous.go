package s3api

import (
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// anonymousRefusal is S3's answer to an unsigned request for op where
// anonymous users are granted nothing; s3seal grants them nothing
// anywhere (every request acts as a credential). S3 names some operations
// in its refusal, and refuses a signed streaming payload, and response
// header overrides on GET and HEAD, before access.
func anonymousRefusal(op string, r *http.Request) error {
	switch r.Header.Get("X-Amz-Content-Sha256") {
	case sigv4.StreamingSignedPayload, sigv4.StreamingSignedPayloadTrail:
		return s3err.New("InvalidRequest", "Anonymous requests don't support this x-amz-content-sha256 value. Please use UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER.")
	}
	if (op == "GetObject" || op == "HeadObject") && hasResponseOverride(r) {
		return s3err.New("InvalidRequest", "Request specific response headers cannot be used for anonymous GET requests.")
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
	e := refusedBy("unsigned (anonymous) request: s3seal serves signed requests only")
	e.Message = msg
	return e
}

// hasResponseOverride reports whether a GET or HEAD asks for a response-*
// header override, which S3 allows in signed requests only.
func hasResponseOverride(r *http.Request) bool {
	for k := range r.URL.Query() {
		if strings.HasPrefix(k, "response-") {
			return true
		}
	}
	return false
}
