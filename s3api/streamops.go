package s3api

import (
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// streamingOps are the operations that take an aws-chunked body
// (x-amz-content-sha256 STREAMING-...): S3 takes one only for the object
// uploads, and refuses it elsewhere (a bucket configuration, a tag set).
var streamingOps = map[string]bool{"PutObject": true, "UploadPart": true}

// checkPayloadMode refuses an aws-chunked body for an operation that takes
// none, as S3 does, before anything of the body is read.
func checkPayloadMode(op string, res *sigv4.Result) error {
	switch res.PayloadMode {
	case sigv4.StreamingSignedPayload, sigv4.StreamingSignedPayloadTrail, sigv4.StreamingUnsignedPayloadTrail:
		if !streamingOps[op] {
			return s3err.New("InvalidRequest", "The value of x-amz-content-sha256 header is invalid.")
		}
	}
	return nil
}
