package s3api

import (
	"encoding/xml"
	"net/http"
	"strings"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// An object version's retention and legal hold (S3's Object Lock, kept
// and enforced by the store): each request is judged on the version it
// names, read from a HEAD, before the store sees it, so that the answer is
// S3's whatever the store checks (moto checks none of this).

// lockSettingHandler serves GET and PUT of a retention or legal hold: a
// missing bucket first (whatever the body), then the body, then the
// version (NoSuchKey, a bucket without Object Lock, the retention rules),
// pinned to the version judged; two changes of one key from this process
// never both judge the state before either.
func (s *Server) lockSettingHandler(sr settingRoute) handler {
	return func(req *request) error {
		ref, err := s.settingRequest(req, sr)
		if err != nil {
			return err
		}
		lockOn, err := s.bucketLockOn(req)
		if err != nil {
			return err
		}
		var body []byte
		if req.r.Method == http.MethodPut {
			if body, err = s.settingBody(req, sr); err != nil {
				return err
			}
			defer s.lockOps.lock(req.bucket, req.key)()
		}
		if err := s.lockTarget(req, sr.setting, &ref, body, lockOn); err != nil {
			return err
		}
		ctx := req.r.Context()
		if req.r.Method == http.MethodPut {
			// Only the "true" checkBypass judged, from an admin, goes on.
			o := sealstore.SettingOptions{BypassGovernance: sr.setting == sealstore.ObjectRetention && req.cred.Admin && bypassAsked(req.r.Header)}
			d, err := s.store.PutSetting(ctx, sr.setting, ref, body, o)
			if err != nil {
				return s.settingErr(req, sr, ref, err)
			}
			return s.answerSetting(req, sr, d, nil)
		}
		d, err := s.store.Setting(ctx, sr.setting, ref)
		if err != nil {
			return s.settingErr(req, sr, ref, err)
		}
		doc, ok := answerDoc(sr.doc(), d.Body)
		switch {
		case ok && sr.setting == sealstore.ObjectLegalHold && !hasLegalHold(d.Body):
			return errNoLegalHold()
		case !ok && sr.setting == sealstore.ObjectRetention:
			if doc, err = s.retentionFromHead(req, ref.VersionID); err != nil {
				return err
			}
		case !ok:
			return s3err.New(s3err.InternalError, "The object store answered ?"+sr.setting.Param()+" with something other than its document; it was not passed on.")
		}
		return s.answerSetting(req, sr, d, doc)
	}
}

// checkRetention checks a Retention document as S3 does and returns it
// re-encoded from the values judged, the date in UTC (lockdoc.go).
func checkRetention(body []byte) ([]byte, error) {
	n, err := parseLockDoc(body, "Retention", retentionSchema)
	if err != nil {
		return nil, err
	}
	mode, _ := n.value("Mode")
	date, _ := n.value("RetainUntilDate")
	doc := &retentionDoc{}
	if mode == "" && date == "" {
		return encodeLockDoc(doc) // removes a GOVERNANCE retention (with the bypass header)
	}
	if mode != "GOVERNANCE" && mode != "COMPLIANCE" {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	until, err := parseRetainUntil(strings.TrimSpace(date))
	if err != nil {
		return nil, err
	}
	doc.Mode, doc.RetainUntilDate = mode, retainUntilText(until)
	return encodeLockDoc(doc)
}

// checkLegalHold checks a LegalHold document and returns it re-encoded.
func checkLegalHold(body []byte) ([]byte, error) {
	n, err := parseLockDoc(body, "LegalHold", legalHoldSchema)
	if err != nil {
		return nil, err
	}
	status, _ := n.value("Status")
	if status != "ON" && status != "OFF" {
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	return encodeLockDoc(&legalHoldDoc{Status: status})
}

// lockTarget answers, for a retention or legal-hold request whose body
// (if any) was judged, what S3 answers for its object: NoSuchKey (or
// NoSuchVersion) for a missing one, from a HEAD, whatever the bucket
// (moto answers 500 for a missing key); then the bucket needs Object Lock
// (400 InvalidRequest); then a PutObjectRetention must pass
// retentionRule. It pins in to the version it judged.
func (s *Server) lockTarget(req *request, k sealstore.Setting, ref *sealstore.SettingRef, body []byte, lockOn bool) error {
	// An empty versionId names no version: S3's 400, on every store (the
	// embedded one refuses it, moto answered 500).
	vid, err := versionParam(req.r)
	if err != nil {
		return err
	}
	lock, err := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, vid)
	if isDeleteMarker(err) {
		return readErr(req.w.Header(), err, vid)
	}
	if sealstore.IsNotFound(err) {
		if vid != "" {
			return s3err.New(s3err.NoSuchVersion, "")
		}
		return s3err.New(s3err.NoSuchKey, "")
	}
	if err != nil {
		return readErr(req.w.Header(), err, vid)
	}
	if !lockOn {
		return errMissingLockConfig()
	}
	if req.r.Method != http.MethodPut {
		return nil
	}
	if vid == "" && lock.VersionID != "" && lock.VersionID != "null" {
		ref.VersionID = lock.VersionID
	}
	if k == sealstore.ObjectRetention {
		return retentionRule(req, body, lock.Protection)
	}
	return nil
}

// errMissingLockConfig is S3's answer to a retention or legal hold in a
// bucket without Object Lock (its words, without a period).
func errMissingLockConfig() error {
	return s3err.New(s3err.InvalidRequest, "Bucket is missing Object Lock Configuration")
}

// retentionRule refuses a PutObjectRetention that S3 refuses on the
// version's current retention cur (read from a HEAD, where every store
// reports it): an unexpired COMPLIANCE retention is never shortened,
// removed or changed to GOVERNANCE, bypass or not; an unexpired GOVERNANCE
// one is shortened, removed or changed to COMPLIANCE only with the bypass
// (which only admins may send, checkBypass). Extending either is anyone's
// who may write.
func retentionRule(req *request, body []byte, cur sealstore.Protection) error {
	var r struct {
		Mode            string `xml:"Mode"`
		RetainUntilDate string `xml:"RetainUntilDate"`
	}
	if err := xml.Unmarshal(body, &r); err != nil {
		return s3err.New(s3err.MalformedXML, "")
	}
	if cur.LockMode == "" || !cur.RetainUntil.After(time.Now()) {
		return nil
	}
	until, _ := time.Parse(time.RFC3339Nano, strings.TrimSpace(r.RetainUntilDate))
	shorter := r.Mode == "" || until.Truncate(time.Second).Before(cur.RetainUntil.Truncate(time.Second))
	switch cur.LockMode {
	case "COMPLIANCE":
		if shorter || r.Mode != "COMPLIANCE" {
			return errObjectLocked()
		}
	case "GOVERNANCE":
		bypass := req.cred.Admin && bypassAsked(req.r.Header)
		if !bypass && (shorter || r.Mode != "GOVERNANCE") {
			return errObjectLocked()
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
func (s *Server) retentionFromHead(req *request, vid string) ([]byte, error) {
	lock, err := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, vid)
	if err != nil {
		return nil, readErr(req.w.Header(), err, vid)
	}
	if lock.LockMode == "" || lock.RetainUntil.IsZero() {
		return nil, s3err.New(s3err.NoSuchObjectLockConfiguration, "The specified object does not have a ObjectLock configuration.")
	}
	doc := retentionDoc{Mode: lock.LockMode, RetainUntilDate: lock.RetainUntil.UTC().Format(time.RFC3339)}
	doc.setNS()
	out, err := xml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), out...), nil
}

// errNoLegalHold is S3's answer to GetObjectLegalHold on a version that
// never had one (moto answers a LegalHold without Status).
func errNoLegalHold() error {
	return s3err.New(s3err.NoSuchObjectLockConfiguration, "")
}

// hasLegalHold reports a LegalHold answer that names a Status.
func hasLegalHold(body []byte) bool {
	var d legalHoldDoc
	return decodeXML(body, &d) == nil && strings.TrimSpace(d.Status) != ""
}
