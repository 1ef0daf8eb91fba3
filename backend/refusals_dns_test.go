package backend

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"testing"
)

// dnsFailing is an HTTP client whose every request fails to resolve with
// err, as the transport reports it.
type dnsFailing struct{ err *net.DNSError }

func (c dnsFailing) Do(req *http.Request) (*http.Response, error) {
	return nil, &url.Error{Op: req.Method, URL: req.URL.String(), Err: &net.OpError{Op: "dial", Net: "tcp", Err: c.err}}
}

// Only a name the resolver says does not exist (NXDOMAIN, "no such host")
// is a hint at path-style addressing. A resolver that timed out or failed
// for a moment (SERVFAIL, an unreachable DNS server) says nothing about
// the name: calling that --backend-path-style sends the operator to change
// a setting that is right, and /readyz (which HEADs a bucket) would take
// every replica out of its load balancer with the wrong reason.
func TestVirtualHostHintOnlyForNamesThatDoNotExist(t *testing.T) {
	req, _ := http.NewRequest(http.MethodHead, "https://bucket.s3.example.com/", nil)
	for _, tc := range []struct {
		name string
		err  *net.DNSError
		hint bool
	}{
		{"no such host", &net.DNSError{Err: "no such host", Name: "bucket.s3.example.com", IsNotFound: true}, true},
		{"resolver timeout", &net.DNSError{Err: "i/o timeout", Name: "bucket.s3.example.com", IsTimeout: true, IsTemporary: true}, false},
		{"server misbehaving", &net.DNSError{Err: "server misbehaving", Name: "bucket.s3.example.com", IsTemporary: true}, false},
	} {
		_, err := virtualHostHint{next: dnsFailing{tc.err}, host: "s3.example.com"}.Do(req)
		var de *net.DNSError
		if !errors.As(err, &de) {
			t.Fatalf("%s: the resolver's error is lost: %v", tc.name, err)
		}
		if got := IsVirtualHostFailure(err); got != tc.hint {
			t.Errorf("%s: IsVirtualHostFailure = %v, want %v (%v)", tc.name, got, tc.hint, err)
		}
	}
}

// The endpoint's host compared with the request's: case and a trailing
// dot of a fully qualified endpoint do not make the endpoint's own name
// a bucket's.
func TestVirtualHostHintEndpointNameForms(t *testing.T) {
	nx := &net.DNSError{Err: "no such host", IsNotFound: true}
	for _, tc := range []struct {
		endpointHost, url string
		hint              bool
	}{
		{"S3.Example.COM", "https://bucket.s3.example.com/k", true},
		{"s3.example.com", "https://s3.example.com/bucket/k", false},
		{"s3.example.com", "https://S3.EXAMPLE.COM/bucket/k", false},
		{"s3.example.com", "https://bucket.other.com/k", false},
		{"s3.example.com", "https://xs3.example.com/k", false},
	} {
		req, _ := http.NewRequest(http.MethodGet, tc.url, nil)
		_, err := virtualHostHint{next: dnsFailing{nx}, host: tc.endpointHost}.Do(req)
		if got := IsVirtualHostFailure(err); got != tc.hint {
			t.Errorf("endpoint %s, request %s: IsVirtualHostFailure = %v, want %v", tc.endpointHost, tc.url, got, tc.hint)
		}
	}
}
