package backend

import (
	"net/http"
	"strings"
)

// The embedded store keeps Object Lock, tags, bucket policies, CORS,
// lifecycle rules, ownership controls and ACLs in its sidecar
// (embedded_attrs*.go). A sub-resource it lacks would be named here and
// refused with 501 NotImplemented, naming the limit, rather than lost
// silently (gofakes3 takes an unknown PUT ?sub for an object write).

// embeddedUnsupportedSubs are the sub-resources refused (lower case).
var embeddedUnsupportedSubs = []string{}

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
	return ""
}
