package s3api

import (
	"net/http"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// Anonymous requests. Off by default (Config.AllowAnonymous), an unsigned
// request is refused as S3 refuses one where nothing is granted to
// everyone (anonymousRefusal). On, it acts as nobody (the zero
// access.Principal): it is in no credential's lists, so the lists do not
// allow it anything, and it is allowed only what a bucket's ACL grants
// AllUsers or its policy allows everyone (authorize). Never ListBuckets,
// CreateBucket, a change of an ACL or of ownership controls, a copy or a
// multipart upload (access.NeverAnonymous), which S3 refuses to anonymous
// users whatever the bucket grants, in its words (anonymousRefusal). Its
// body is taken as sent, unsigned: a PUT's integrity rests on Content-MD5
// or a checksum header when the client gives one, as in S3.

// serveAnonymous serves an unsigned request for op (serve's anonymous
// branch).
func (s *Server) serveAnonymous(w http.ResponseWriter, r *http.Request, op, bucket, key string, h handler) {
	if !s.cfg.AllowAnonymous || access.NeverAnonymous(op) || bucket == "" {
		writeError(w, r, s.auditRefusal(r, access.Principal{}, op, bucket, key, ruleAnonymous, anonymousRefusal(op, r)))
		return
	}
	switch mode := r.Header.Get("X-Amz-Content-Sha256"); mode {
	case "", sigv4.UnsignedPayload:
	default:
		// A signed stream cannot be verified, and S3 refuses it; an
		// unsigned trailer s3seal does not decode without a signature.
		writeError(w, r, s.auditRefusal(r, access.Principal{}, op, bucket, key, ruleAnonymous, anonymousRefusal(op, r)))
		return
	}
	if (op == "GetObject" || op == "HeadObject") && hasResponseOverride(r) {
		writeError(w, r, s.auditRefusal(r, access.Principal{}, op, bucket, key, ruleAnonymous, anonymousRefusal(op, r)))
		return
	}
	release, err := s.acquire(r, "")
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer release()
	res := &sigv4.Result{PayloadMode: sigv4.UnsignedPayload, DecodedLength: r.ContentLength}
	req := &request{w: w, r: r, bucket: bucket, key: key, auth: res}
	if err := checkExpectedOwner(r, ""); err != nil {
		writeError(w, r, s.auditRefusal(r, access.Principal{}, op, bucket, key, ruleExpectedOwner, err))
		return
	}
	if err := s.authorize(req, op); err != nil {
		writeError(w, r, s.refusedReadErr(req, op, err))
		return
	}
	if err := h(req); err != nil {
		writeError(w, r, s.missingKeyErr(req, op, err))
	}
}
