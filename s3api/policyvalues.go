package s3api

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	s3policy "github.com/s3seal/s3seal/access/policy"
)

// A bucket's policy is evaluated by package access (its language:
// package access/policy) against the principal the request acts as, the
// S3 action and resource its operation is, and the condition keys the
// request answers, which only the request can: policyValues.

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
	// A header or query parameter given more than once is the value the
	// operation reads, its first: a condition must judge what the
	// operation does (a repeated prefix= or x-amz-acl whose other value
	// met the condition would act on the one that did not).
	first := func(v []string) ([]string, bool) {
		if len(v) == 0 {
			return nil, false
		}
		return v[:1], true
	}
	header := func(name string) ([]string, bool) { return first(r.Header.Values(name)) }
	param := func(name string) ([]string, bool) { return first(q[name]) }
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
			if req.who.Anonymous() {
				return one("Anonymous")
			}
			return one("User")
		case "aws:principalarn", "aws:principalaccount", "aws:username", "aws:userid":
			if req.who.Anonymous() {
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
			return param(strings.TrimPrefix(key, "s3:"))
		case "s3:versionid":
			return param("versionId")
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
	enc, err := s.store.ObjectTags(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("versionId"))
	if err != nil {
		return nil, false
	}
	v, err := url.ParseQuery(enc)
	return v, err == nil
}
