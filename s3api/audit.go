package s3api

import (
	"log/slog"
	"net/http"
	"net/url"

	"github.com/s3seal/s3seal/access"
	"github.com/s3seal/s3seal/audit"
	"github.com/s3seal/s3seal/internal/reqid"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// Auditor keeps the audit trail of access decisions (an *audit.Writer):
// Config.Audit. Access fails when the trail cannot be written.
type Auditor interface {
	Access(audit.Access) error
}

// The rules the front decides by itself, before package access does
// (access.Decision.Rule names the others).
const (
	ruleSignature     = "signature"        // the request's signature, or its credential, did not verify
	ruleCredLists     = "credential-lists" // the credential's read and write lists
	ruleAnonymous     = "anonymous"        // an unsigned request, refused as S3 refuses one
	ruleCredential    = "credential"       // an operation on no bucket (ListBuckets) or creating one: the credential alone
	ruleBeingCreated  = "bucket-being-created"
	ruleNoSuchBucket  = "no-such-bucket" // the bucket does not exist: the operation answers NoSuchBucket
	ruleExpectedOwner = "expected-bucket-owner"
	rulePostPolicy    = "post-policy" // a POST upload's form, refused by its signed policy (expired, a condition failed)
)

// audit records one access decision on the trail: who (p, or the
// access key a refused request claimed), the operation as its S3 action,
// the bucket, key and version it names, and the rule. Without a trail it
// does nothing. When the trail cannot be written the request is refused
// (503 ServiceUnavailable): s3seal fails closed rather than act
// unrecorded.
func (s *Server) audit(r *http.Request, p access.Principal, op, bucket, key string, allow bool, rule, reason string) error {
	if s.cfg.Audit == nil {
		return nil
	}
	var q url.Values
	if r.URL.RawQuery != "" {
		q = r.URL.Query()
	}
	action, _ := access.ActionOf(op, bucket, key, q.Has("versionId"))
	if action == "" {
		action = op // no action of its own (DeleteObjects decides each key)
	}
	ak := p.AccessKey
	if ak == "" && rule == ruleSignature {
		ak = claimedAccessKey(r)
	}
	err := s.cfg.Audit.Access(audit.Access{RequestID: reqid.From(r.Context()), AccessKey: ak, Account: p.Account,
		Op: action, Bucket: bucket, Key: key, VersionID: q.Get("versionId"), Allow: allow, Rule: rule, Reason: reason})
	if err != nil {
		slog.ErrorContext(r.Context(), "request refused: the audit trail cannot be written", "error", err)
		return s3err.New(s3err.ServiceUnavailable, "s3seal cannot write its audit trail; please retry later")
	}
	return nil
}

// auditRefusal records a refusal the front took before package access
// decides, and returns err (or the trail's own failure).
func (s *Server) auditRefusal(r *http.Request, p access.Principal, op, bucket, key, rule string, err error) error {
	// As the client is answered (sigv4's errors included) and as the
	// log's "access refused" says it.
	ae := toAPIError(err)
	reason := ae.Why
	if reason == "" {
		reason = ae.Message
	}
	if aerr := s.audit(r, p, op, bucket, key, false, rule, reason); aerr != nil {
		return aerr
	}
	return err
}
