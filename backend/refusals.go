package backend

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// Refusals that are about s3seal's own configuration, not the request:
// the store turned down the credentials s3seal signs with, or the name it
// addressed the store by does not resolve. Each is the same answer for
// every request until an operator changes a setting, so s3seal names the
// setting instead of passing the store's code on as the client's fault.

// CredentialRefusal is the store's code when it refused the signature of
// a request, "" when it did not: an unknown access key, a signature that
// does not match (a wrong secret), an expired or invalid session token, a
// signing region the store does not serve, or a clock too far from the
// store's (RequestTimeTooSkewed).
func CredentialRefusal(err error) string {
	switch code := ErrorCode(err); code {
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken",
		"TokenRefreshRequired", "InvalidSecurity", "AuthorizationHeaderMalformed",
		"AuthorizationQueryParametersError", "RequestTimeTooSkewed", "InvalidClientTokenId":
		return code
	}
	return ""
}

// IsForbidden reports the store's 403 whatever its code: a bodiless HEAD's
// "Forbidden", an AccessDenied, a credential refusal. Only a signed request
// with a body tells which (CredentialRefusal).
func IsForbidden(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == http.StatusForbidden
}

// VirtualHostError is a request addressed virtual-hosted style
// (bucket.host) whose host name did not resolve: the store most likely
// serves buckets by path (S3Config.PathStyle), as Ceph RGW, MinIO and
// stores on an IP address or localhost do unless their DNS is set up for
// it.
type VirtualHostError struct {
	Host string // the name that did not resolve, bucket.host
	Err  error  // the resolver's error
}

func (e *VirtualHostError) Error() string {
	return "the store's address for a bucket, " + e.Host + ", does not resolve (" + e.Err.Error() +
		"): s3seal addresses the store virtual-hosted style (bucket.host); a store that serves buckets by path needs path-style addressing (--backend-path-style)"
}

func (e *VirtualHostError) Unwrap() error { return e.Err }

// IsVirtualHostFailure reports a VirtualHostError.
func IsVirtualHostFailure(err error) bool {
	var ve *VirtualHostError
	return errors.As(err, &ve)
}

// virtualHostHint is the HTTP client of a virtual-hosted backend: a name
// other than the endpoint's own that the resolver says does not exist is
// a VirtualHostError. A resolver that timed out or failed for a moment
// says nothing about the name, and is passed on as it is.
type virtualHostHint struct {
	next aws.HTTPClient
	host string // the endpoint's host name
}

func (c virtualHostHint) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.next.Do(req)
	var de *net.DNSError
	if err != nil && errors.As(err, &de) && de.IsNotFound && !errors.Is(err, context.Canceled) {
		if h := req.URL.Hostname(); !strings.EqualFold(h, c.host) && strings.HasSuffix(strings.ToLower(h), "."+strings.ToLower(c.host)) {
			return resp, &VirtualHostError{Host: h, Err: err}
		}
	}
	return resp, err
}
