package s3api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// refusedBy is AccessDenied, in S3's words for the client, with why (the
// rule that refused it) for the log.
func refusedBy(why string) *s3err.Error {
	e := s3err.New("AccessDenied", "")
	e.Why = why
	return e
}

// check refuses a request the credential's read and write lists do not
// allow on bucket.
func (c Credential) check(need access, bucket string) error {
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
	var be *backend.Error
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
