package s3api

import (
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	s3policy "github.com/s3seal/s3seal/access/policy"
)

// A bucket's policy is evaluated by s3seal (package policy), against the
// principal the request acts as, the S3 action and resource its operation
// is, and the condition keys the request answers (policyValues). The
// policy is the bucket's document "policy", as its owner put it.

// policyActions maps s3seal's operation names to S3's actions, where the
// name differs; object operations on a version (a versionId in the
// query) are in versionActions. An operation on a key acts on the object
// resource, the others on the bucket.
var policyActions = map[string]string{
	"ListObjects":                     "s3:ListBucket",
	"ListObjectsV2":                   "s3:ListBucket",
	"HeadBucket":                      "s3:ListBucket",
	"ListObjectVersions":              "s3:ListBucketVersions",
	"ListMultipartUploads":            "s3:ListBucketMultipartUploads",
	"ListParts":                       "s3:ListMultipartUploadParts",
	"HeadObject":                      "s3:GetObject",
	"CopyObject":                      "s3:PutObject",
	"CreateMultipartUpload":           "s3:PutObject",
	"UploadPart":                      "s3:PutObject",
	"UploadPartCopy":                  "s3:PutObject",
	"CompleteMultipartUpload":         "s3:PutObject",
	"DeleteObjects":                   "s3:DeleteObject",
	"DeleteObjectTagging":             "s3:DeleteObjectTagging",
	"GetBucketCors":                   "s3:GetBucketCORS",
	"PutBucketCors":                   "s3:PutBucketCORS",
	"DeleteBucketCors":                "s3:PutBucketCORS",
	"GetBucketLifecycle":              "s3:GetLifecycleConfiguration",
	"PutBucketLifecycle":              "s3:PutLifecycleConfiguration",
	"DeleteBucketLifecycle":           "s3:PutLifecycleConfiguration",
	"GetBucketLifecycleConfiguration": "s3:GetLifecycleConfiguration",
	"PutBucketLifecycleConfiguration": "s3:PutLifecycleConfiguration",
	"GetObjectLockConfiguration":      "s3:GetBucketObjectLockConfiguration",
	"PutObjectLockConfiguration":      "s3:PutBucketObjectLockConfiguration",
	"DeleteBucketOwnershipControls":   "s3:PutBucketOwnershipControls",
	"GetBucketEncryption":             "s3:GetEncryptionConfiguration",
	"PutBucketEncryption":             "s3:PutEncryptionConfiguration",
	"DeleteBucketEncryption":          "s3:PutEncryptionConfiguration",
	"GetPublicAccessBlock":            "s3:GetBucketPublicAccessBlock",
	"PutPublicAccessBlock":            "s3:PutBucketPublicAccessBlock",
	"DeletePublicAccessBlock":         "s3:PutBucketPublicAccessBlock",
	"GetBucketPublicAccessBlock":      "s3:GetBucketPublicAccessBlock",
	"PutBucketPublicAccessBlock":      "s3:PutBucketPublicAccessBlock",
	"DeleteBucketPublicAccessBlock":   "s3:PutBucketPublicAccessBlock",
	"DeleteBucketTagging":             "s3:PutBucketTagging",
	"DeleteBucketWebsite":             "s3:DeleteBucketWebsite",
	"GetBucketPolicyStatus":           "s3:GetBucketPolicyStatus",
}

// versionActions are the actions of object operations on a version.
var versionActions = map[string]string{
	"s3:GetObject":           "s3:GetObjectVersion",
	"s3:DeleteObject":        "s3:DeleteObjectVersion",
	"s3:GetObjectTagging":    "s3:GetObjectVersionTagging",
	"s3:PutObjectTagging":    "s3:PutObjectVersionTagging",
	"s3:DeleteObjectTagging": "s3:DeleteObjectVersionTagging",
	"s3:GetObjectAcl":        "s3:GetObjectVersionAcl",
	"s3:PutObjectAcl":        "s3:PutObjectVersionAcl",
	"s3:GetObjectAttributes": "s3:GetObjectVersionAttributes",
}

// notActions are the routes' names for refusals, which no policy decides.
var notActions = map[string]bool{"NotImplemented": true, "MethodNotAllowed": true,
	"InvalidRequest": true, "InvalidArgument": true}

// policyActionOf is the S3 action and resource ARN of operation op on
// req's bucket and key; "" when op is no action a policy names.
func policyActionOf(req *request, op string) (action, resource string) {
	if notActions[op] || op == "" || op == "DeleteObjects" {
		// DeleteObjects is no action of its own: each key it lists is
		// decided as its own DeleteObject (keyauth.go), as S3 decides it.
		return "", ""
	}
	action = policyActions[op]
	if action == "" {
		action = "s3:" + op
	}
	resource = "arn:aws:s3:::" + req.bucket
	if req.key != "" {
		resource += "/" + req.key
		if _, ok := req.r.URL.Query()["versionId"]; ok {
			if v := versionActions[action]; v != "" {
				action = v
			}
		}
	}
	return action, resource
}

// policyOps are the operations on the policy itself: S3 lets the bucket
// owner's account (its root user) do them even when the policy denies it,
// so that a policy can always be taken back.
var policyOps = map[string]bool{"GetBucketPolicy": true, "PutBucketPolicy": true, "DeleteBucketPolicy": true}

// policyDecision is what the bucket's policy says of req.
func (s *Server) policyDecision(req *request, op string, docs map[string][]byte) decision {
	doc, ok := docs[docPolicy]
	if !ok {
		return decideNone
	}
	action, resource := policyActionOf(req, op)
	if action == "" {
		return decideNone
	}
	owner := func() bool { return s.ownerDecision(req, op, docs) == decideAllow }
	if policyOps[op] && !req.who.isAnonymous() && owner() {
		return decideNone
	}
	p, err := s3policy.Cached(doc)
	if err != nil {
		// s3seal parsed it when it was put: a document that no longer
		// parses (a newer s3seal's) denies, never grants.
		return decideDeny
	}
	var skip func(s3policy.Statement) bool
	if publicAccessBlockOf(docs).RestrictPublicBuckets && p.IsPublic() {
		// A public policy grants only within the owner's account.
		isOwner := !req.who.isAnonymous() && owner()
		skip = func(st s3policy.Statement) bool { return st.Public() && !isOwner }
	}
	r := s3policy.Request{Who: policyWho(req.who), Action: action, Resource: resource, Values: s.policyValues(req)}
	switch p.Evaluate(r, skip) {
	case s3policy.Deny:
		return decideDeny
	case s3policy.Allow:
		return decideAllow
	}
	return decideNone
}

// policyWho is p by the names a policy may give it.
func policyWho(p principal) s3policy.Who {
	if p.isAnonymous() {
		return s3policy.Who{Anonymous: true}
	}
	return s3policy.Who{AWS: []string{p.Account, p.ARN(), p.RootARN(), p.AccessKey}, Canonical: p.CanonicalID}
}

// policyValues answers the condition keys of req. Keys s3seal does not
// know, and keys the request does not have, are absent: a condition on
// them is false, or true for a negated operator, ...IfExists and Null as
// S3 evaluates them.
func (s *Server) policyValues(req *request) s3policy.Values {
	r := req.r
	q := r.URL.Query()
	now := time.Now().UTC()
	var tagsOnce sync.Once
	var existing url.Values
	var existingOK bool
	one := func(v string) ([]string, bool) { return []string{v}, true }
	header := func(name string) ([]string, bool) {
		v, ok := r.Header[http.CanonicalHeaderKey(name)]
		return v, ok && len(v) > 0
	}
	return func(key string) ([]string, bool) {
		switch key {
		case "aws:sourceip":
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				host = r.RemoteAddr
			}
			return one(host)
		case "aws:securetransport":
			return one(strconv.FormatBool(r.TLS != nil))
		case "aws:currenttime":
			return one(now.Format(time.RFC3339))
		case "aws:epochtime":
			return one(strconv.FormatInt(now.Unix(), 10))
		case "aws:referer":
			return header("Referer")
		case "aws:useragent":
			return header("User-Agent")
		case "aws:principaltype":
			if req.who.isAnonymous() {
				return one("Anonymous")
			}
			return one("User")
		case "aws:principalarn", "aws:principalaccount", "aws:username", "aws:userid":
			if req.who.isAnonymous() {
				if key == "aws:userid" {
					return one("anonymous")
				}
				return nil, false
			}
			switch key {
			case "aws:principalarn":
				return one(req.who.ARN())
			case "aws:principalaccount":
				return one(req.who.Account)
			}
			return one(req.who.AccessKey)
		case "s3:prefix", "s3:delimiter", "s3:max-keys":
			v, ok := q[strings.TrimPrefix(key, "s3:")]
			return v, ok
		case "s3:versionid":
			v, ok := q["versionId"]
			return v, ok
		case "s3:signatureversion":
			if req.auth == nil {
				return nil, false
			}
			return one("AWS4-HMAC-SHA256")
		case "s3:authtype":
			switch {
			case req.auth == nil:
				return nil, false
			case req.auth.Presigned:
				return one("REST-QUERY-STRING")
			}
			return one("REST-HEADER")
		case "s3:x-amz-copy-source":
			v := r.Header.Get("X-Amz-Copy-Source")
			if v == "" {
				return nil, false
			}
			if dec, err := url.PathUnescape(v); err == nil {
				v = dec
			}
			return one(strings.TrimPrefix(v, "/"))
		case "s3:requestobjecttagkeys":
			tags, ok := requestTags(r.Header.Get("X-Amz-Tagging"))
			if !ok {
				return nil, false
			}
			keys := make([]string, 0, len(tags))
			for k := range tags {
				keys = append(keys, k)
			}
			return keys, true
		}
		if name, ok := strings.CutPrefix(key, "s3:object-lock-"); ok {
			// s3:object-lock-mode, -retain-until-date, -legal-hold.
			return header("X-Amz-Object-Lock-" + name)
		}
		if name, ok := strings.CutPrefix(key, "s3:x-amz-"); ok {
			return header("X-Amz-" + name)
		}
		if tag, ok := strings.CutPrefix(key, "s3:requestobjecttag/"); ok {
			tags, _ := requestTags(r.Header.Get("X-Amz-Tagging"))
			v, ok := tags[tag]
			return v, ok
		}
		if tag, ok := strings.CutPrefix(key, "s3:existingobjecttag/"); ok && req.key != "" {
			tagsOnce.Do(func() { existing, existingOK = s.existingTags(req) })
			if !existingOK {
				return nil, false
			}
			v, ok := existing[tag]
			return v, ok
		}
		return nil, false
	}
}

// requestTags reads x-amz-tagging ("k=v&k2=v2").
func requestTags(h string) (url.Values, bool) {
	if h == "" {
		return nil, false
	}
	v, err := url.ParseQuery(h)
	return v, err == nil
}

// existingTags are the tags of req's object (its version when the query
// names one), as the store keeps them; false when it has none to give.
func (s *Server) existingTags(req *request) (url.Values, bool) {
	enc, err := s.store.Backend().ObjectTagging(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("versionId"))
	if err != nil {
		return nil, false
	}
	v, err := url.ParseQuery(enc)
	return v, err == nil
}
