package s3api

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/backend"
)

// S3's Object Lock rules that s3seal checks itself, so that the answer is
// S3's whatever the store behind it checks (moto checks none of these):
// the lock configuration document, the bucket state each request needs,
// and which retention changes need the bypass or are refused outright.

// checkLockConfig checks an ObjectLockConfiguration as S3 does and
// returns it re-encoded from the values judged (lockdoc.go):
// ObjectLockEnabled is "Enabled" (a lock cannot be switched off), a
// default retention has a mode of GOVERNANCE or COMPLIANCE (upper case)
// and exactly one of Days and Years (MalformedXML otherwise), a positive
// whole number (InvalidRetentionPeriod).
func checkLockConfig(body []byte) ([]byte, error) {
	n, err := parseLockDoc(body, "ObjectLockConfiguration", lockConfSchema)
	if err != nil {
		return nil, err
	}
	doc := &lockConfigDoc{}
	if doc.ObjectLockEnabled, _ = n.value("ObjectLockEnabled"); doc.ObjectLockEnabled != "Enabled" {
		return nil, apiErr("MalformedXML", "")
	}
	rule := n.nodes["Rule"]
	if rule == nil {
		return encodeLockDoc(doc)
	}
	d := rule.nodes["DefaultRetention"]
	mode, _ := d.value("Mode")
	days, hasDays := d.value("Days")
	years, hasYears := d.value("Years")
	if d == nil || (mode != "GOVERNANCE" && mode != "COMPLIANCE") || hasDays == hasYears {
		return nil, apiErr("MalformedXML", "")
	}
	period := days
	if hasYears {
		period = years
	}
	p, err := strconv.Atoi(strings.TrimSpace(period))
	if err != nil || p <= 0 {
		return nil, err400("InvalidRetentionPeriod", "Default retention period must be a positive integer value.")
	}
	doc.Rule = &lockRule{DefaultRetention: &lockDefault{Mode: mode}}
	if hasYears {
		doc.Rule.DefaultRetention.Years = strconv.Itoa(p)
	} else {
		doc.Rule.DefaultRetention.Days = strconv.Itoa(p)
	}
	return encodeLockDoc(doc)
}

// dropZeroPeriods leaves out a Days or Years of 0 from an answer: S3 takes
// only positive periods, so a 0 (moto answers <Years>0</Years> beside the
// Days it was given) stands for the element the configuration lacks.
func (c *lockConfigDoc) dropZeroPeriods() {
	if c.Rule == nil || c.Rule.DefaultRetention == nil {
		return
	}
	d := c.Rule.DefaultRetention
	if strings.TrimSpace(d.Days) == "0" {
		d.Days = ""
	}
	if strings.TrimSpace(d.Years) == "0" {
		d.Years = ""
	}
}

// lockBucketState answers, before anything else of a lock request, what
// S3 answers for the bucket: NoSuchBucket for a missing one;
// PutObjectLockConfiguration needs versioning Enabled (409
// InvalidBucketState; S3 lets a versioned bucket take Object Lock after
// its creation), a retention or legal hold needs Object Lock on the bucket
// (400 InvalidRequest).
func (s *Server) lockBucketState(req *request, sr subresource) error {
	ctx := req.r.Context()
	switch {
	case sr.name == "object-lock" && !sr.object && req.r.Method == http.MethodPut:
		st, err := s.store.Backend().GetBucketVersioning(ctx, req.bucket)
		if err != nil {
			return versionErr(err)
		}
		if st != "Enabled" {
			return &APIError{Code: "InvalidBucketState", StatusCode: http.StatusConflict,
				Message: "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration."}
		}
	case sr.object && (sr.name == "retention" || sr.name == "legal-hold"):
		out, err := s.cfg.Forwarder.Forward(ctx, backend.RawRequest{Method: http.MethodGet, Bucket: req.bucket,
			Query: url.Values{"object-lock": {""}}, Header: http.Header{}})
		var c lockConfigDoc
		switch code := backend.ErrorCode(err); {
		case code == "ObjectLockConfigurationNotFoundError" || code == "NoSuchObjectLockConfiguration":
		case err != nil:
			return forwardErr(err)
		case decodeXML(out.Body, &c) != nil:
			return apiErr("InternalError", "The object store answered ?object-lock with something other than its document.")
		case c.ObjectLockEnabled == "Enabled":
			return nil
		}
		return apiErr("InvalidRequest", "Bucket is missing ObjectLockConfiguration")
	}
	return nil
}

// retentionRule refuses a PutObjectRetention that S3 refuses on the
// version's current retention (read from a HEAD, where every store
// reports it): an unexpired COMPLIANCE retention is never shortened,
// removed or changed to GOVERNANCE, bypass or not; an unexpired GOVERNANCE
// one is shortened, removed or changed to COMPLIANCE only with the bypass
// (which only admins may send, checkBypass). Extending either is anyone's
// who may write. It also pins the request to the version it judged.
func (s *Server) retentionRule(req *request, in *backend.RawRequest) error {
	var r struct {
		Mode            string `xml:"Mode"`
		RetainUntilDate string `xml:"RetainUntilDate"`
	}
	if err := xml.Unmarshal(in.Body, &r); err != nil {
		return apiErr("MalformedXML", "")
	}
	vid := in.Query.Get("versionId")
	info, err := s.store.Backend().HeadObjectVersion(req.r.Context(), req.bucket, req.key, vid)
	if backend.IsNotFound(err) {
		// s3seal's answer, not the store's (moto answers 500).
		if vid != "" {
			return apiErr("NoSuchVersion", "")
		}
		return apiErr("NoSuchKey", "")
	}
	if err != nil {
		return readErr(req.w.Header(), err, vid)
	}
	if vid == "" && info.VersionID != "" && info.VersionID != "null" {
		in.Query.Set("versionId", info.VersionID)
	}
	cur := info.Lock
	if cur.LockMode == "" || !cur.RetainUntil.After(time.Now()) {
		return nil
	}
	until, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.RetainUntilDate))
	shorter := r.Mode == "" || until.Truncate(time.Second).Before(cur.RetainUntil.Truncate(time.Second))
	denied := apiErr("AccessDenied", "Access Denied because object protected by object lock.")
	switch cur.LockMode {
	case "COMPLIANCE":
		if shorter || r.Mode != "COMPLIANCE" {
			return denied
		}
	case "GOVERNANCE":
		bypass := req.cred.Admin && bypassAsked(req.r.Header)
		if !bypass && (shorter || r.Mode != "GOVERNANCE") {
			return denied
		}
	}
	return nil
}

// retentionFromHead answers GetObjectRetention from the version's HEAD
// when the store's answer to GET ?retention is not a Retention document
// (moto has no GetObjectRetention and answers with the object's bytes,
// which are never passed on): the lock headers of a HEAD are the store's
// own report of the same retention. No retention there is S3's 404
// NoSuchObjectLockConfiguration.
func (s *Server) retentionFromHead(req *request, in backend.RawRequest) ([]byte, error) {
	vid := in.Query.Get("versionId")
	info, err := s.store.Backend().HeadObjectVersion(req.r.Context(), req.bucket, req.key, vid)
	if err != nil {
		return nil, readErr(req.w.Header(), err, vid)
	}
	if info.Lock.LockMode == "" || info.Lock.RetainUntil.IsZero() {
		return nil, &APIError{Code: "NoSuchObjectLockConfiguration", StatusCode: http.StatusNotFound,
			Message: "The specified object does not have a ObjectLock configuration."}
	}
	doc := retentionDoc{Mode: info.Lock.LockMode, RetainUntilDate: info.Lock.RetainUntil.UTC().Format(time.RFC3339)}
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), out...), nil
}

// lockForbidsSuspend refuses to suspend versioning on a bucket with
// Object Lock (409 InvalidBucketState, as S3 answers): locked versions
// need versioning. A store without Object Lock, or a bucket it cannot
// find, is left to the store's own answer.
func (s *Server) lockForbidsSuspend(req *request) error {
	if s.cfg.Forwarder == nil {
		return nil
	}
	if l, ok := s.cfg.Forwarder.(backend.SubresourceLimits); ok && l.SubresourceLimit("object-lock") != "" {
		return nil
	}
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), backend.RawRequest{Method: http.MethodGet, Bucket: req.bucket,
		Query: url.Values{"object-lock": {""}}, Header: http.Header{}})
	var c lockConfigDoc
	if err != nil || decodeXML(out.Body, &c) != nil || c.ObjectLockEnabled != "Enabled" {
		return nil
	}
	return &APIError{Code: "InvalidBucketState", StatusCode: http.StatusConflict,
		Message: "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed."}
}
