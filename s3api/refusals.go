package s3api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// refusedBy is AccessDenied, in S3's words for the client, with why (the
// rule that refused it) for the log.
func refusedBy(why string) *s3err.Error {
	e := s3err.New(s3err.AccessDenied, "")
	e.Why = why
	return e
}

// check refuses a request the credential's read and write lists do not
// allow on bucket.
func (c Credential) check(need bucketNeed, bucket string) error {
	switch {
	case need == accRead && !c.canRead(bucket):
		return refusedBy(fmt.Sprintf("the credential may not read bucket %q (not in its read or write list)", bucket))
	case need == accWrite && !c.canWrite(bucket):
		return refusedBy(fmt.Sprintf("the credential may not write bucket %q (not in its write list)", bucket))
	}
	return nil
}

// logRefusal logs a 403 answer at INFO: the access key (the one verified,
// else the one the request claims), the bucket, the operation and why:
// the rule, else the answer's message, else the store's refusal. Never a
// secret: access keys are not.
func logRefusal(r *http.Request, ae *s3err.Error, err error) {
	var op, bucket, key string
	if ri := infoFrom(r.Context()); ri != nil {
		op, bucket, key = ri.op, ri.bucket, ri.accessKey
	}
	if key == "" {
		key = claimedAccessKey(r)
	}
	why := ae.Why
	var be *sealstore.StoreError
	switch {
	case why != "":
	case errors.As(err, &be):
		why = "the object store refused it (" + be.Code + ")"
	default:
		why = ae.Message
	}
	slog.InfoContext(r.Context(), "access refused", "access_key", key, "bucket", bucket, "op", op,
		"code", ae.Code, "why", why)
}

// claimedAccessKey is the access key a request names, verified or not:
// from a SigV4 Authorization header or presigned URL, or SigV2's.
func claimedAccessKey(r *http.Request) string {
	q := r.URL.Query()
	if c := q.Get("X-Amz-Credential"); c != "" {
		k, _, _ := strings.Cut(c, "/")
		return k
	}
	if k := q.Get("AWSAccessKeyId"); k != "" {
		return k
	}
	auth := r.Header.Get("Authorization")
	if _, c, ok := strings.Cut(auth, "Credential="); ok {
		k, _, _ := strings.Cut(c, "/")
		return k
	}
	if v2, ok := strings.CutPrefix(auth, "AWS "); ok {
		k, _, _ := strings.Cut(v2, ":")
		return k
	}
	return ""
}

// anonymousRefusal is S3's answer to an unsigned request for op where
// anonymous users are granted nothing; s3seal grants them nothing
// anywhere (every request acts as a credential). S3 names some operations
// in its refusal, and refuses a signed streaming payload, and response
// header overrides on GET and HEAD, before access.
func anonymousRefusal(op string, r *http.Request) error {
	switch r.Header.Get("X-Amz-Content-Sha256") {
	case sigv4.StreamingSignedPayload, sigv4.StreamingSignedPayloadTrail:
		return s3err.New(s3err.InvalidRequest, "Anonymous requests don't support this x-amz-content-sha256 value. Please use UNSIGNED-PAYLOAD or STREAMING-UNSIGNED-PAYLOAD-TRAILER.")
	}
	if (op == "GetObject" || op == "HeadObject") && hasResponseOverride(r) {
		return s3err.New(s3err.InvalidRequest, "Request specific response headers cannot be used for anonymous GET requests.")
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
