package embedded

import (
	"encoding/xml"
	"io"
	"net/http"
	"strings"
	"time"
)

// Object Lock on the embedded store: a bucket created with
// x-amz-bucket-object-lock-enabled keeps its configuration (and default
// retention) in its sidecar record, each version its retention and legal
// hold in its own; deletes are refused here while they hold
// (attrs_write.go).

// maxSubBody bounds a sub-resource request body (S3's documents are far
// smaller; a policy is at most 20 KB).
const maxSubBody = 64 << 10

var errMalformedXML = &mpError{http.StatusBadRequest, "MalformedXML",
	"The XML you provided was not well-formed or did not validate against our published schema."}

func errNoLockConfig() error {
	return &mpError{http.StatusBadRequest, "InvalidRequest", "Bucket is missing ObjectLockConfiguration"}
}

// readSubBody reads a sub-resource request's body, bounded.
func readSubBody(r *http.Request, limit int) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, &mpError{http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size."}
	}
	return b, nil
}

// parseLockHeaders reads x-amz-object-lock-* of a write into o.
func parseLockHeaders(h http.Header, o *objAttrs) error {
	mode, until := h.Get("X-Amz-Object-Lock-Mode"), h.Get("X-Amz-Object-Lock-Retain-Until-Date")
	if (mode == "") != (until == "") {
		return &mpError{http.StatusBadRequest, "InvalidArgument", "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied."}
	}
	if mode != "" {
		if mode != "GOVERNANCE" && mode != "COMPLIANCE" {
			return &mpError{http.StatusBadRequest, "InvalidArgument", "Unknown wormMode directive."}
		}
		t, err := retainUntil(until)
		if err != nil {
			return err
		}
		o.Mode, o.RetainUntil = mode, t
	}
	if v := h.Get("X-Amz-Object-Lock-Legal-Hold"); v != "" {
		if v != "ON" && v != "OFF" {
			return &mpError{http.StatusBadRequest, "InvalidArgument", "Legal Hold must be either of 'ON' or 'OFF'"}
		}
		o.LegalHold = v
	}
	return nil
}

func retainUntil(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(v))
	if err != nil {
		return t, &mpError{http.StatusBadRequest, "InvalidArgument", "The retain until date must be provided in ISO 8601 format"}
	}
	if !t.After(time.Now()) {
		return t, &mpError{http.StatusBadRequest, "InvalidArgument", "The retain until date must be in the future!"}
	}
	return t.UTC(), nil
}

// setAttrHeaders reports a version's tag count and lock on GET and HEAD.
func setAttrHeaders(h http.Header, o objAttrs) {
	if len(o.Tags) > 0 {
		h.Set("X-Amz-Tagging-Count", itoa(len(o.Tags)))
	}
	if o.Mode != "" {
		h.Set("X-Amz-Object-Lock-Mode", o.Mode)
		h.Set("X-Amz-Object-Lock-Retain-Until-Date", o.RetainUntil.UTC().Format(time.RFC3339))
	}
	if o.LegalHold != "" {
		h.Set("X-Amz-Object-Lock-Legal-Hold", o.LegalHold)
	}
}

// lockBucket returns the bucket's record, or InvalidRequest when it has
// no Object Lock (retention and legal hold need one).
func (h *attrsHandler) lockBucket(bucket string) error {
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	if !b.LockEnabled {
		return errNoLockConfig()
	}
	return nil
}

// lockedVersion starts a GET or PUT of ?retention or ?legal-hold: it
// resolves the version asked for (or the current one) and checks that the
// bucket has Object Lock.
func (h *attrsHandler) lockedVersion(r *http.Request, bucket, key string) (vid string, named bool, err error) {
	if r.Method != http.MethodGet && r.Method != http.MethodPut {
		return "", false, errMethod()
	}
	if vid, named, err = h.headVersion(r, bucket, key); err != nil {
		return "", false, err
	}
	return vid, named, h.lockBucket(bucket)
}

type retentionDoc struct {
	XMLName         xml.Name `xml:"Retention"`
	NS              string   `xml:"xmlns,attr,omitempty"`
	Mode            string   `xml:"Mode,omitempty"`
	RetainUntilDate string   `xml:"RetainUntilDate,omitempty"`
}

func (h *attrsHandler) serveRetention(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	vid, named, err := h.lockedVersion(r, bucket, key)
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet {
		o, err := h.a.object(bucket, key, vid)
		if err != nil {
			return err
		}
		if o.Mode == "" {
			return errNoObjectLock()
		}
		setVersionHeader(w, vid, named)
		return writeXML(w, retentionDoc{NS: s3XMLNS, Mode: o.Mode, RetainUntilDate: o.RetainUntil.UTC().Format(time.RFC3339)})
	}
	body, err := readSubBody(r, maxSubBody)
	if err != nil {
		return err
	}
	var doc retentionDoc
	if xml.Unmarshal(body, &doc) != nil {
		return errMalformedXML
	}
	var until time.Time
	switch {
	case doc.Mode == "" && doc.RetainUntilDate == "":
	case doc.Mode != "GOVERNANCE" && doc.Mode != "COMPLIANCE":
		return errMalformedXML
	default:
		if until, err = retainUntil(doc.RetainUntilDate); err != nil {
			return err
		}
	}
	defer h.lockKeys(bucket, key)()
	err = h.a.updateObject(bucket, key, vid, func(o *objAttrs) error {
		if o.Mode != "" && o.RetainUntil.After(time.Now()) {
			weaker := doc.Mode != o.Mode || until.Before(o.RetainUntil)
			if weaker && (o.Mode == "COMPLIANCE" || !bypass(r)) {
				return errLocked
			}
		}
		o.Mode, o.RetainUntil = doc.Mode, until
		return nil
	})
	if err != nil {
		return err
	}
	setVersionHeader(w, vid, named)
	w.WriteHeader(http.StatusOK)
	return nil
}

type legalHoldDoc struct {
	XMLName xml.Name `xml:"LegalHold"`
	NS      string   `xml:"xmlns,attr,omitempty"`
	Status  string   `xml:"Status"`
}

func (h *attrsHandler) serveLegalHold(w http.ResponseWriter, r *http.Request, bucket, key string) error {
	vid, named, err := h.lockedVersion(r, bucket, key)
	if err != nil {
		return err
	}
	if r.Method == http.MethodGet {
		o, err := h.a.object(bucket, key, vid)
		if err != nil {
			return err
		}
		if o.LegalHold == "" {
			return errNoObjectLock()
		}
		setVersionHeader(w, vid, named)
		return writeXML(w, legalHoldDoc{NS: s3XMLNS, Status: o.LegalHold})
	}
	body, err := readSubBody(r, maxSubBody)
	if err != nil {
		return err
	}
	var doc legalHoldDoc
	if xml.Unmarshal(body, &doc) != nil || (doc.Status != "ON" && doc.Status != "OFF") {
		return errMalformedXML
	}
	defer h.lockKeys(bucket, key)()
	if err := h.a.updateObject(bucket, key, vid, func(o *objAttrs) error { o.LegalHold = doc.Status; return nil }); err != nil {
		return err
	}
	setVersionHeader(w, vid, named)
	w.WriteHeader(http.StatusOK)
	return nil
}

func errNoObjectLock() error {
	return &mpError{http.StatusNotFound, "NoSuchObjectLockConfiguration", "The specified object does not have a ObjectLock configuration."}
}

func errMethod() error {
	return &mpError{http.StatusMethodNotAllowed, "MethodNotAllowed", "The specified method is not allowed against this resource."}
}

func setVersionHeader(w http.ResponseWriter, vid string, named bool) {
	if named && vid != "null" {
		w.Header().Set("X-Amz-Version-Id", vid)
	}
}

type lockConfigDoc struct {
	XMLName           xml.Name `xml:"ObjectLockConfiguration"`
	NS                string   `xml:"xmlns,attr,omitempty"`
	ObjectLockEnabled string   `xml:"ObjectLockEnabled,omitempty"`
	Rule              *struct {
		DefaultRetention *struct {
			Mode  string `xml:"Mode,omitempty"`
			Days  *int   `xml:"Days,omitempty"`
			Years *int   `xml:"Years,omitempty"`
		} `xml:"DefaultRetention"`
	} `xml:"Rule,omitempty"`
}

// serveObjectLock is Get/PutObjectLockConfiguration.
func (h *attrsHandler) serveObjectLock(w http.ResponseWriter, r *http.Request, bucket string) error {
	b, err := h.a.bucket(bucket)
	if err != nil {
		return err
	}
	switch r.Method {
	case http.MethodGet:
		if !b.LockEnabled {
			return &mpError{http.StatusNotFound, "ObjectLockConfigurationNotFoundError", "Object Lock configuration does not exist for this bucket."}
		}
		doc := lockConfigDoc{NS: s3XMLNS, ObjectLockEnabled: "Enabled"}
		if b.Lock != nil {
			doc.Rule = &struct {
				DefaultRetention *struct {
					Mode  string `xml:"Mode,omitempty"`
					Days  *int   `xml:"Days,omitempty"`
					Years *int   `xml:"Years,omitempty"`
				} `xml:"DefaultRetention"`
			}{}
			doc.Rule.DefaultRetention = &struct {
				Mode  string `xml:"Mode,omitempty"`
				Days  *int   `xml:"Days,omitempty"`
				Years *int   `xml:"Years,omitempty"`
			}{Mode: b.Lock.Mode}
			if b.Lock.Days > 0 {
				doc.Rule.DefaultRetention.Days = &b.Lock.Days
			}
			if b.Lock.Years > 0 {
				doc.Rule.DefaultRetention.Years = &b.Lock.Years
			}
		}
		return writeXML(w, doc)
	case http.MethodPut:
	default:
		return errMethod()
	}
	body, err := readSubBody(r, maxSubBody)
	if err != nil {
		return err
	}
	var doc lockConfigDoc
	if xml.Unmarshal(body, &doc) != nil || doc.ObjectLockEnabled != "Enabled" {
		return errMalformedXML
	}
	var rule *lockRule
	if doc.Rule != nil {
		d := doc.Rule.DefaultRetention
		if d == nil || (d.Mode != "GOVERNANCE" && d.Mode != "COMPLIANCE") || (d.Days == nil) == (d.Years == nil) {
			return errMalformedXML
		}
		rule = &lockRule{Mode: d.Mode}
		if d.Days != nil {
			rule.Days = *d.Days
		} else {
			rule.Years = *d.Years
		}
		if rule.Days < 0 || rule.Years < 0 || rule.Days+rule.Years == 0 {
			return &mpError{http.StatusBadRequest, "InvalidRetentionPeriod", "Default retention period must be a positive integer value."}
		}
		if rule.Days > 36500 || rule.Years > 100 {
			return &mpError{http.StatusBadRequest, "InvalidArgument", "Default retention period is too large."}
		}
	}
	// S3 enables Object Lock on an existing bucket whose versioning is
	// enabled, on no other.
	if !b.LockEnabled && !h.versioningEnabled(r, bucket) {
		return &mpError{http.StatusConflict, "InvalidBucketState", "Object Lock configuration cannot be enabled on existing buckets."}
	}
	if err := h.a.updateBucket(bucket, func(b *bucketAttrs) error { b.LockEnabled, b.Lock = true, rule; return nil }); err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
