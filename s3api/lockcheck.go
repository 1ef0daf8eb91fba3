package s3api

import (
	"bytes"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
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
func (s *Server) lockBucketState(req *request) error {
	st, err := s.store.BucketVersioning(req.r.Context(), req.bucket)
	if err != nil {
		return versionErr(err)
	}
	if st != "Enabled" {
		return s3err.New(s3err.InvalidBucketState, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
	}
	return nil
}

// bucketLockOn reads whether the request's bucket has Object Lock.
func (s *Server) bucketLockOn(req *request) (bool, error) {
	out, err := s.store.Setting(req.r.Context(), sealstore.BucketObjectLock, sealstore.SettingRef{Bucket: req.bucket})
	var c lockConfigDoc
	switch code := sealstore.StoreCode(err); {
	case code == "ObjectLockConfigurationNotFoundError" || code == "NoSuchObjectLockConfiguration":
		return false, nil
	case err != nil:
		return false, forwardErr(err)
	case decodeXML(out.Body, &c) != nil:
		return false, s3err.New(s3err.InternalError, "The object store answered ?object-lock with something other than its document.")
	}
	return c.ObjectLockEnabled == "Enabled", nil
}

// errObjectLocked is S3's refusal of a change a lock forbids.
func errObjectLocked() error {
	return s3err.New(s3err.AccessDenied, "Access Denied because object protected by object lock.")
}

// lockForbidsSuspend refuses to suspend versioning on a bucket with
// Object Lock (409 InvalidBucketState, as S3 answers): locked versions
// need versioning. A store without Object Lock, or a bucket it cannot
// find, is left to the store's own answer.
func (s *Server) lockForbidsSuspend(req *request) error {
	if !s.store.HasSettings() {
		return nil
	}
	if on, err := s.bucketLockOn(req); err != nil || !on {
		return nil
	}
	return s3err.New(s3err.InvalidBucketState, "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.")
}

// lockedDeleteErr is the answer to a DeleteObject of a version the store
// refused with AccessDenied: S3's "protected by object lock" when the
// version is under a legal hold or an unexpired retention (moto words it
// "Access Denied", s3seal's table too), the store's refusal otherwise.
func (s *Server) lockedDeleteErr(req *request, vid string, err error) error {
	if vid == "" || sealstore.StoreCode(err) != "AccessDenied" {
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

// uploadLockAllowed refuses, as S3 does at once, a CreateMultipartUpload
// asking for a retention or legal hold in a bucket without Object Lock:
// s3seal keeps an upload's lock until completion (sealstore), so a store
// would only judge it then, after every part was sent (moto never does).
func (s *Server) uploadLockAllowed(req *request, p sealstore.Protection) error {
	if !p.Locks() || !s.store.HasSettings() {
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
