package s3api

import (
	"bytes"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
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
// whole number (InvalidRetentionPeriod) of at most 100 years or 36500
// days (InvalidArgument, "too large"). An empty body is
// MissingRequestBodyError.
func checkLockConfig(body []byte) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		// S3's words for an empty body, without a period.
		return nil, s3err.New(s3err.MissingRequestBodyError, "Request Body is empty")
	}
	n, err := parseLockDoc(body, "ObjectLockConfiguration", lockConfSchema)
	if err != nil {
		return nil, err
	}
	doc := &lockConfigDoc{}
	if doc.ObjectLockEnabled, _ = n.value("ObjectLockEnabled"); doc.ObjectLockEnabled != "Enabled" {
		return nil, s3err.New(s3err.MalformedXML, "")
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
		return nil, s3err.New(s3err.MalformedXML, "")
	}
	period := days
	if hasYears {
		period = years
	}
	p, err := strconv.Atoi(strings.TrimSpace(period))
	if err != nil || p <= 0 {
		return nil, s3err.New(s3err.InvalidRetentionPeriod, "Default retention period must be a positive integer value.")
	}
	if (hasYears && p > maxLockYears) || (hasDays && p > maxLockYears*365) {
		return nil, s3err.New(s3err.InvalidArgument, "Default retention period too large.")
	}
	doc.Rule = &lockRule{DefaultRetention: &lockDefault{Mode: mode}}
	if hasYears {
		doc.Rule.DefaultRetention.Years = strconv.Itoa(p)
	} else {
		doc.Rule.DefaultRetention.Days = strconv.Itoa(p)
	}
	return encodeLockDoc(doc)
}

// maxLockYears is S3's longest default retention: 100 years (36500 days).
const maxLockYears = 100

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

// lockBucketState answers, for PutObjectLockConfiguration, what S3
// answers for the bucket before anything else: it needs versioning
// Enabled (409 InvalidBucketState; S3 lets a versioned bucket take Object
// Lock after its creation). The bucket's part of a retention or legal
// hold request is objectLockOn's, its object's lockTarget's.
func (s *Server) lockBucketState(req *request, sr subresource) error {
	ctx := req.r.Context()
	if sr.name == "object-lock" && !sr.object && req.r.Method == http.MethodPut {
		st, err := s.store.BucketVersioning(ctx, req.bucket)
		if err != nil {
			return versionErr(err)
		}
		if st != "Enabled" {
			return s3err.New(s3err.InvalidBucketState, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
		}
	}
	return nil
}

// isLockSub reports a retention or legal-hold request.
func isLockSub(sr subresource) bool {
	return sr.object && (sr.name == "retention" || sr.name == "legal-hold")
}

// objectLockOn reads, for a retention or legal-hold request and before its
// body is, whether the bucket has Object Lock: a missing bucket is S3's
// first answer (NoSuchBucket), whatever the body.
func (s *Server) objectLockOn(req *request, sr subresource) (bool, error) {
	if !isLockSub(sr) {
		return false, nil
	}
	return s.bucketLockOn(req)
}

// bucketLockOn reads whether the request's bucket has Object Lock.
func (s *Server) bucketLockOn(req *request) (bool, error) {
	out, err := s.cfg.Forwarder.Forward(req.r.Context(), backend.RawRequest{Method: http.MethodGet, Bucket: req.bucket,
		Query: url.Values{"object-lock": {""}}, Header: http.Header{}})
	var c lockConfigDoc
	switch code := backend.ErrorCode(err); {
	case code == "ObjectLockConfigurationNotFoundError" || code == "NoSuchObjectLockConfiguration":
		return false, nil
	case err != nil:
		return false, forwardErr(err)
	case decodeXML(out.Body, &c) != nil:
		return false, s3err.New(s3err.InternalError, "The object store answered ?object-lock with something other than its document.")
	}
	return c.ObjectLockEnabled == "Enabled", nil
}

// lockTarget answers, for a retention or legal-hold request whose body
// (if any) was judged, what S3 answers for its object: NoSuchKey (or
// NoSuchVersion) for a missing one, from a HEAD, whatever the bucket
// (moto answers 500 for a missing key); then the bucket needs Object Lock
// (400 InvalidRequest); then a PutObjectRetention must pass
// retentionRule. It pins in to the version it judged.
func (s *Server) lockTarget(req *request, sr subresource, in *backend.RawRequest, lockOn bool) error {
	if !isLockSub(sr) {
		return nil
	}
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
	if backend.IsNotFound(err) {
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
		in.Query.Set("versionId", lock.VersionID)
	}
	if sr.name == "retention" {
		return retentionRule(req, in.Body, lock.Protection)
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
func retentionRule(req *request, body []byte, cur backend.Protection) error {
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

// errObjectLocked is S3's refusal of a change a lock forbids.
func errObjectLocked() error {
	return s3err.New(s3err.AccessDenied, "Access Denied because object protected by object lock.")
}

// retentionFromHead answers GetObjectRetention from the version's HEAD
// when the store's answer to GET ?retention is not a Retention document
// (moto has no GetObjectRetention and answers with the object's bytes,
// which are never passed on): the lock headers of a HEAD are the store's
// own report of the same retention. No retention there is S3's 404
// NoSuchObjectLockConfiguration.
func (s *Server) retentionFromHead(req *request, in backend.RawRequest) ([]byte, error) {
	vid := in.Query.Get("versionId")
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

// lockForbidsSuspend refuses to suspend versioning on a bucket with
// Object Lock (409 InvalidBucketState, as S3 answers): locked versions
// need versioning. A store without Object Lock, or a bucket it cannot
// find, is left to the store's own answer.
func (s *Server) lockForbidsSuspend(req *request) error {
	if s.cfg.Forwarder == nil {
		return nil
	}
	if on, err := s.bucketLockOn(req); err != nil || !on {
		return nil
	}
	return s3err.New(s3err.InvalidBucketState, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
}

// errNoLegalHold is S3's answer to GetObjectLegalHold on a version that
// never had one (moto answers a LegalHold without Status).
func errNoLegalHold() error {
	return s3err.New(s3err.NoSuchObjectLockConfiguration, "")
}

// lockedDeleteErr is the answer to a DeleteObject of a version the store
// refused with AccessDenied: S3's "protected by object lock" when the
// version is under a legal hold or an unexpired retention (moto words it
// "Access Denied", s3seal's table too), the store's refusal otherwise.
func (s *Server) lockedDeleteErr(req *request, vid string, err error) error {
	if vid == "" || backend.ErrorCode(err) != "AccessDenied" {
		return err
	}
	st, herr := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, vid)
	if herr != nil {
		return err
	}
	l := st.Protection
	if l.LegalHold == "ON" || (l.LockMode != "" && l.RetainUntil.After(time.Now())) {
		return errObjectLocked()
	}
	return err
}

// hasLegalHold reports a LegalHold answer that names a Status.
func hasLegalHold(body []byte) bool {
	var d legalHoldDoc
	return decodeXML(body, &d) == nil && strings.TrimSpace(d.Status) != ""
}

// uploadLockAllowed refuses, as S3 does at once, a CreateMultipartUpload
// asking for a retention or legal hold in a bucket without Object Lock:
// s3seal keeps an upload's lock until completion (sealstore), so a store
// would only judge it then, after every part was sent (moto never does).
func (s *Server) uploadLockAllowed(req *request, p backend.Protection) error {
	if !p.Locks() || s.cfg.Forwarder == nil {
		return nil
	}
	on, err := s.bucketLockOn(req)
	if err != nil {
		return err
	}
	if !on {
		return s3err.New(s3err.InvalidRequest, "Bucket is missing ObjectLockConfiguration")
	}
	return nil
}

// keyLocks serializes requests on one (bucket, key) within the process:
// a retention or legal-hold change is judged on a HEAD of the version and
// then forwarded, and two such changes at once must not both be judged on
// the state before either (the first's extension would let the second's
// shortening through). Entries live while someone holds or waits for them.
type keyLocks struct {
	mu sync.Mutex
	m  map[string]*keyLock
}

type keyLock struct {
	sync.Mutex
	users int
}

// lock takes the lock of bucket/key and returns its release.
func (k *keyLocks) lock(bucket, key string) (unlock func()) {
	name := bucket + "\x00" + key
	k.mu.Lock()
	if k.m == nil {
		k.m = map[string]*keyLock{}
	}
	l := k.m[name]
	if l == nil {
		l = &keyLock{}
		k.m[name] = l
	}
	l.users++
	k.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		k.mu.Lock()
		if l.users--; l.users == 0 {
			delete(k.m, name)
		}
		k.mu.Unlock()
	}
}

// lockConfigWithoutDocs answers an ObjectLockConfiguration the store
// refused because the bucket holds objects (moto's "InvalidBucket: Bucket
// needs to be empty"; AWS and RGW take it on a bucket with objects): when
// s3seal's bucket documents are all the bucket holds, the change is made
// again with them set aside (sealstore.WithoutBucketDocs). Any other
// failure, or a bucket with other objects, keeps the store's answer.
func (s *Server) lockConfigWithoutDocs(req *request, in backend.RawRequest, out *backend.RawResponse, err error) (*backend.RawResponse, error) {
	if backend.ErrorCode(err) != "InvalidBucket" {
		return out, err
	}
	refused := err
	ran, err := s.store.WithoutBucketDocs(req.r.Context(), req.bucket, func() error {
		out, err = s.cfg.Forwarder.Forward(req.r.Context(), in)
		return err
	})
	if !ran && err == nil {
		return out, refused
	}
	slog.InfoContext(req.r.Context(), "object-lock: the store refused the configuration on a bucket holding only s3seal's documents; made it with them set aside",
		"bucket", req.bucket, "err", err)
	return out, err
}
