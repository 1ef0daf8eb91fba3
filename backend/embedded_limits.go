package backend

import (
	"net/http"
	"strings"
)

// The embedded store (gofakes3) has no Object Lock, tags, bucket policies,
// CORS, lifecycle rules, ownership controls or ACLs. gofakes3 would take a
// PUT ?tagging for an object write and ignore lock headers, so the
// embedded handler refuses them all with 501 NotImplemented, naming the
// limit, rather than lose them silently.

// embeddedUnsupportedSubs are the sub-resources refused (lower case).
var embeddedUnsupportedSubs = []string{"tagging", "retention", "legal-hold", "object-lock",
	"policy", "cors", "lifecycle", "ownershipcontrols", "acl"}

// SubresourceLimits is a store that knows, without asking it, which
// sub-resources it lacks: s3api asks before its own access checks, so a
// client hears the 501 the store would answer rather than a 403 for a
// request that could not succeed for anyone (clients such as s3cmd's
// info take a 501 for "none here", a 403 for a failure).
type SubresourceLimits interface {
	// SubresourceLimit returns the message of the 501 a request for the
	// sub-resource named (as in the query, any case) gets, or "".
	SubresourceLimit(name string) string
}

var _ SubresourceLimits = (*S3)(nil)

// SubresourceLimit is the embedded store's limit; "" on other stores.
func (c *S3) SubresourceLimit(name string) string {
	if !c.embedded {
		return ""
	}
	return subresourceLimit(name)
}

func subresourceLimit(name string) string {
	for _, sub := range embeddedUnsupportedSubs {
		if strings.EqualFold(name, sub) {
			return "The embedded store does not implement ?" + sub +
				" (Object Lock, tags, bucket policies and configurations); use an S3 backend that does (--backend-endpoint)."
		}
	}
	return ""
}

// embeddedLimit returns the message of the 501 answer r gets, or "".
func embeddedLimit(r *http.Request) string {
	for k := range r.URL.Query() {
		if msg := subresourceLimit(k); msg != "" {
			return msg
		}
	}
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return ""
	}
	if v := r.Header.Get("X-Amz-Bucket-Object-Lock-Enabled"); v != "" && !strings.EqualFold(v, "false") {
		return "The embedded store does not implement Object Lock; use an S3 backend that does (--backend-endpoint)."
	}
	for k, vs := range r.Header {
		lk := strings.ToLower(k)
		set := len(vs) > 0 && strings.TrimSpace(vs[0]) != ""
		if set && strings.HasPrefix(lk, "x-amz-object-lock-") {
			return "The embedded store does not implement Object Lock; use an S3 backend that does (--backend-endpoint)."
		}
		if set && (strings.HasPrefix(lk, "x-amz-grant-") || (lk == "x-amz-acl" &&
			!strings.EqualFold(vs[0], "private") && !strings.EqualFold(vs[0], "bucket-owner-full-control"))) {
			return "The embedded store does not implement ACLs; use an S3 backend that does (--backend-endpoint)."
		}
		if set && lk == "x-amz-tagging" {
			return "The embedded store does not implement object tags; use an S3 backend that does (--backend-endpoint)."
		}
	}
	return ""
}
