package s3api

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// Object Lock and tags are the backend's to enforce: s3seal checks them as
// S3 does, so that the client gets S3's errors whatever the backend, and
// passes them on (sealstore.Protection).

// S3's limits on tags.
const (
	maxObjectTags = 10
	maxBucketTags = 50
	maxTagKey     = 128 // Unicode characters
	maxTagValue   = 256
)

// protection reads the lock, tagging and ACL headers of a PUT, copy or
// CreateMultipartUpload.
func protection(req *request) (sealstore.Protection, error) {
	return protectionOf(req.r.Header, req.cred)
}

// protectionOf reads them from h (a request's headers or a POST form's
// fields) for a request made with cred.
func protectionOf(h http.Header, cred Credential) (sealstore.Protection, error) {
	p, err := objectACL(h, cred)
	if err != nil {
		return p, err
	}
	mode, until := h.Get("X-Amz-Object-Lock-Mode"), h.Get("X-Amz-Object-Lock-Retain-Until-Date")
	if (mode == "") != (until == "") {
		return p, s3err.New(s3err.InvalidArgument, "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied.")
	}
	if mode != "" {
		if mode != "GOVERNANCE" && mode != "COMPLIANCE" {
			return p, s3err.New(s3err.InvalidArgument, "Unknown wormMode directive.")
		}
		t, err := parseRetainUntil(until)
		if err != nil {
			return p, err
		}
		p.LockMode, p.RetainUntil = mode, t
	}
	if v := h.Get("X-Amz-Object-Lock-Legal-Hold"); v != "" {
		if v != "ON" && v != "OFF" {
			return p, s3err.New(s3err.InvalidArgument, "Legal Hold must be either of 'ON' or 'OFF'")
		}
		p.LegalHold = v
	}
	if v := h.Get("X-Amz-Tagging"); strings.TrimSpace(v) != "" {
		tags, err := parseTagHeader(v)
		if err != nil {
			return p, err
		}
		p.Tagging = encodeTags(tags)
	}
	return p, nil
}

// parseRetainUntil reads an ISO 8601 date that must lie in the future.
func parseRetainUntil(v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		e := s3err.New(s3err.InvalidArgument, "The retain until date must be provided in ISO 8601 format")
		e.Fields = []sigv4.Field{{Name: "ArgumentName", Value: "x-amz-object-lock-retain-until-date"}, {Name: "ArgumentValue", Value: v}}
		return time.Time{}, e
	}
	if !t.After(time.Now()) {
		return time.Time{}, s3err.New(s3err.InvalidArgument, "The retain until date must be in the future!")
	}
	return t, nil
}

// tag is one object or bucket tag.
type tag struct {
	Key   string `xml:"Key"`
	Value string `xml:"Value"`
}

// tagging is the body of Put/GetObjectTagging and Put/GetBucketTagging.
type tagging struct {
	XMLName xml.Name `xml:"Tagging"`
	TagSet  struct {
		Tags []tag `xml:"Tag"`
	} `xml:"TagSet"`
}

// parseTagHeader reads x-amz-tagging (URL query encoding, "k1=v1&k2=v2").
func parseTagHeader(v string) ([]tag, error) {
	var tags []tag
	for _, kv := range strings.Split(v, "&") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(val)
		if err1 != nil || err2 != nil || k == "" {
			// A pair without a key ("=v") is bad encoding, as S3 has
			// it, not an invalid key.
			return nil, s3err.New(s3err.InvalidArgument, "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
		}
		for _, t := range tags {
			if t.Key == dk {
				return nil, s3err.New(s3err.InvalidArgument, "The header 'x-amz-tagging' shall be encoded as UTF-8 then URLEncoded URL query parameters without tag name duplicates.")
			}
		}
		tags = append(tags, tag{dk, dv})
	}
	return tags, checkTags(tags, maxObjectTags)
}

// parseTagBody reads a Tagging document and checks it against limit
// tags (10 for objects, 50 for buckets).
func parseTagBody(body []byte, limit int) ([]tag, error) {
	var t tagging
	if err := decodeXML(body, &t); err != nil {
		return nil, err
	}
	return t.TagSet.Tags, checkTags(t.TagSet.Tags, limit)
}

// checkTags applies S3's rules: at most limit tags, keys of 1 to 128 and
// values of at most 256 Unicode characters, no key twice, no "aws:" keys.
func checkTags(tags []tag, limit int) error {
	if len(tags) > limit {
		if limit == maxObjectTags {
			return s3err.New(s3err.BadRequest, "Object tags cannot be greater than 10")
		}
		return s3err.New(s3err.InvalidTag, "Bucket tag count cannot be greater than 50")
	}
	seen := map[string]bool{}
	for _, t := range tags {
		switch {
		case !utf8.ValidString(t.Key) || !utf8.ValidString(t.Value):
			return s3err.New(s3err.InvalidTag, "The TagKey and TagValue you have provided must be valid UTF-8.")
		case t.Key == "" || utf8.RuneCountInString(t.Key) > maxTagKey || !tagChars(t.Key):
			return s3err.New(s3err.InvalidTag, "The TagKey you have provided is invalid")
		case utf8.RuneCountInString(t.Value) > maxTagValue || !tagChars(t.Value):
			return s3err.New(s3err.InvalidTag, "The TagValue you have provided is invalid")
		case strings.HasPrefix(strings.ToLower(t.Key), "aws:"):
			return s3err.New(s3err.InvalidTag, "Your TagKey cannot be prefixed with aws:")
		case seen[t.Key]:
			return s3err.New(s3err.InvalidTag, "Cannot provide multiple Tags with the same key")
		}
		seen[t.Key] = true
	}
	return nil
}

// tagChars reports whether s holds only what S3 allows in a tag: letters,
// digits, spaces and + - = . _ : / @.
func tagChars(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsNumber(r) && !unicode.IsSpace(r) && !strings.ContainsRune("+-=._:/@", r) {
			return false
		}
	}
	return true
}

// encodeTags is the x-amz-tagging form of tags.
func encodeTags(tags []tag) string {
	parts := make([]string, len(tags))
	for i, t := range tags {
		parts[i] = strings.ReplaceAll(url.QueryEscape(t.Key)+"="+url.QueryEscape(t.Value), "+", "%20")
	}
	return strings.Join(parts, "&")
}

// copyProtection is the lock and tags of a copy: the lock headers as
// given; the tags of x-amz-tagging with x-amz-tagging-directive REPLACE,
// else (COPY, the default) the source's, asked from the backend, which the
// caller must be allowed to read (s3:GetObjectTagging). A backend without
// tags (501) has none to copy.
func (s *Server) copyProtection(req *request, src copySrc) (sealstore.Protection, error) {
	p, err := protection(req)
	if err != nil {
		return p, err
	}
	switch req.r.Header.Get("X-Amz-Tagging-Directive") {
	case "REPLACE":
		return p, nil
	case "", "COPY":
	default:
		return p, s3err.New(s3err.InvalidArgument, "Unknown tagging directive.")
	}
	p.Tagging = ""
	if !s.store.HasSettings() {
		return p, nil
	}
	out, err := s.store.Setting(req.r.Context(), sealstore.ObjectTagging,
		sealstore.SettingRef{Bucket: src.bucket, Key: src.key, VersionID: src.versionID})
	if sealstore.StoreCode(err) == "NotImplemented" {
		return p, nil
	}
	if err != nil {
		return p, forwardErr(err)
	}
	var t tagging
	if err := decodeXML(out.Body, &t); err != nil {
		return p, s3err.New(s3err.InternalError, "The object store answered ?tagging of the copy source with something other than its tags.")
	}
	if len(t.TagSet.Tags) > 0 {
		// Carrying the tags reads them: S3 decides it as the caller's
		// s3:GetObjectTagging on the source, besides the GetObject that
		// copySource decided. A source without tags reads none.
		if _, err := s.authorizeKey(req, "GetObjectTagging", src.bucket, src.key, src.versionID); err != nil {
			return p, err
		}
	}
	p.Tagging = encodeTags(t.TagSet.Tags)
	return p, nil
}

// bypassCtx is the request's context, marked to pass
// x-amz-bypass-governance-retention on when the client sent it. Only
// admin credentials may send it: on S3, s3:BypassGovernanceRetention is a
// permission of its own that a write grant does not give, and a GOVERNANCE
// lock is there to keep backups from the writers that make them.
func bypassCtx(req *request) (context.Context, error) {
	if err := checkBypass(req); err != nil || !bypassAsked(req.r.Header) {
		return req.r.Context(), err
	}
	return sealstore.WithBypassGovernance(req.r.Context()), nil
}

// checkBypass refuses x-amz-bypass-governance-retention: true from a
// credential that is not an admin.
func checkBypass(req *request) error {
	if bypassAsked(req.r.Header) && !req.cred.Admin {
		return s3err.New(s3err.AccessDenied, "Only credentials marked \"admin\": true may bypass a GOVERNANCE retention (x-amz-bypass-governance-retention).")
	}
	return nil
}

// bypassHeader is S3's x-amz-bypass-governance-retention. S3 reads it as
// a boolean: "true" (any case) bypasses, any other value is false.
const bypassHeader = "X-Amz-Bypass-Governance-Retention"

func bypassAsked(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get(bypassHeader)), "true")
}

// createLockedBucket creates a bucket with Object Lock enabled (which
// enables versioning). Its ACL and object ownership are s3seal's
// (createBucket keeps them), never passed on.
func (s *Server) createLockedBucket(req *request, body []byte) error {
	if !s.store.HasSettings() {
		return s3err.New(s3err.NotImplemented, "s3seal does not implement Object Lock on this backend.")
	}
	if err := s.store.CreateLockedBucket(req.r.Context(), req.bucket, body); err != nil {
		return forwardErr(err)
	}
	return nil // createBucket answers, once the rest is done
}

// lockRefusal passes on the backend's refusals of what s3seal passed on
// (a lock on a bucket without Object Lock, a malformed tag), which are
// about the client's request, with their status (storeRefusal): AWS's
// words for its own lock codes (s3err's table; the embedded store's and
// moto's lack the period), the store's for any other. nil for any other
// error.
func lockRefusal(be *sealstore.StoreError) *s3err.Error {
	switch be.Code {
	case "InvalidRequest", "InvalidArgument", "InvalidTag", "MalformedXML", "BadRequest",
		"InvalidBucketState", "ObjectLockConfigurationNotFoundError", "NoSuchObjectLockConfiguration":
		if be.StatusCode >= 400 && be.StatusCode < 500 {
			return storeRefusal(be)
		}
	case "NotImplemented": // the embedded store names its limit
		return s3err.New(s3err.NotImplemented, storeWords(be))
	}
	return nil
}

// lockEnabled reports whether CreateBucket asks for Object Lock.
func lockEnabled(h http.Header) bool {
	return strings.EqualFold(strings.TrimSpace(h.Get("X-Amz-Bucket-Object-Lock-Enabled")), "true")
}

// setProtectionHeaders reports on GET and HEAD what the backend enforces
// on the object: its tag count and lock.
//
// The lock headers show only to a caller that may read them, as S3 has
// it: the retention to one allowed s3:GetObjectRetention, the legal hold
// to one allowed s3:GetObjectLegalHold, on the version read (vid, or the
// current one).
func (s *Server) setProtectionHeaders(req *request, h http.Header, info sealstore.ObjectInfo, vid string) {
	if info.TagCount > 0 {
		h.Set("x-amz-tagging-count", strconv.Itoa(info.TagCount))
	}
	may := func(op string) bool {
		_, err := s.authorizeKey(req, op, req.bucket, req.key, vid)
		return err == nil
	}
	if (info.Lock.LockMode != "" || !info.Lock.RetainUntil.IsZero()) && may("GetObjectRetention") {
		if info.Lock.LockMode != "" {
			h.Set("x-amz-object-lock-mode", info.Lock.LockMode)
		}
		if !info.Lock.RetainUntil.IsZero() {
			h.Set("x-amz-object-lock-retain-until-date", info.Lock.RetainUntil.UTC().Format(time.RFC3339))
		}
	}
	if info.Lock.LegalHold != "" && may("GetObjectLegalHold") {
		h.Set("x-amz-object-lock-legal-hold", info.Lock.LegalHold)
	}
}

// S3's canned ACLs for objects.
var cannedACLs = []string{"private", "public-read", "public-read-write", "authenticated-read",
	"aws-exec-read", "bucket-owner-read", "bucket-owner-full-control"}

// objectGrants are the x-amz-grant-* headers objects take, by suffix.
var objectGrants = []string{"read", "read-acp", "write-acp", "full-control"}

// objectACL checks x-amz-acl and x-amz-grant-* as S3 does. The ACL is
// not the store's: s3seal keeps it (objectACLOfWrite), so none goes on.
func objectACL(h http.Header, _ Credential) (sealstore.Protection, error) {
	var p sealstore.Protection
	acl := strings.TrimSpace(h.Get("X-Amz-Acl"))
	grants := map[string]string{}
	for name, vs := range h {
		suffix, ok := strings.CutPrefix(strings.ToLower(name), "x-amz-grant-")
		if !ok || len(vs) == 0 {
			continue
		}
		if !slices.Contains(objectGrants, suffix) {
			return p, s3err.New(s3err.NotImplemented, "s3seal does not implement the header "+http.CanonicalHeaderKey(name)+" on objects")
		}
		grants[suffix] = strings.Join(vs, ",")
	}
	if acl != "" && !slices.Contains(cannedACLs, acl) {
		return p, s3err.New(s3err.InvalidArgument, "")
	}
	if acl != "" && len(grants) > 0 {
		return p, s3err.New(s3err.InvalidRequest, "Specifying both Canned ACLs and Header Grants is not allowed")
	}
	return p, nil
}
