package backend

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A store that refuses the signature answers with a code s3seal reads as
// its own credentials refused; an AccessDenied (a bucket policy, a lock)
// is not one.
func TestCredentialRefusal(t *testing.T) {
	code := ""
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>no</Message></Error>`))
	}))
	defer srv.Close()
	c, err := NewS3(S3Config{Endpoint: srv.URL, AccessKey: "a", SecretKey: "b", PathStyle: true, MaxAttempts: 1})
	must(t, err)
	for _, tc := range []struct{ code, want string }{
		{"SignatureDoesNotMatch", "SignatureDoesNotMatch"},
		{"InvalidAccessKeyId", "InvalidAccessKeyId"},
		{"RequestTimeTooSkewed", "RequestTimeTooSkewed"},
		{"AccessDenied", ""},
	} {
		code = tc.code
		_, err := c.ListBuckets(context.Background())
		if got := CredentialRefusal(err); got != tc.want {
			t.Errorf("%s: CredentialRefusal = %q, want %q (%v)", tc.code, got, tc.want, err)
		}
		if !IsForbidden(err) {
			t.Errorf("%s: IsForbidden false for a 403 (%v)", tc.code, err)
		}
		// A HEAD's 403 has no body to name a code: only IsForbidden tells.
		err = c.HeadBucket(context.Background(), "bucket")
		if CredentialRefusal(err) != "" || !IsForbidden(err) {
			t.Errorf("%s: HEAD: CredentialRefusal %q, IsForbidden %v (%v)", tc.code, CredentialRefusal(err), IsForbidden(err), err)
		}
	}
}

// An endpoint addressed virtual-hosted style whose bucket names do not
// resolve (a store on localhost without wildcard DNS) fails with an error
// that names path-style addressing; the same store by path answers.
func TestVirtualHostFailureNamesPathStyle(t *testing.T) {
	if addrs, err := net.LookupHost("s3seal-probe.localhost"); err == nil {
		t.Skipf("this machine resolves subdomains of localhost (%v): nothing to fail", addrs)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	endpoint := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	c, err := NewS3(S3Config{Endpoint: endpoint, AccessKey: "a", SecretKey: "b", MaxAttempts: 1})
	must(t, err)
	err = c.HeadBucket(context.Background(), "bucket")
	if !IsVirtualHostFailure(err) || !strings.Contains(err.Error(), "--backend-path-style") || !strings.Contains(err.Error(), "bucket.localhost") {
		t.Fatalf("HeadBucket on a virtual-hosted localhost: %v, want a VirtualHostError naming --backend-path-style", err)
	}
	if ErrorCode(err) != "" {
		t.Fatalf("a name that does not resolve got a store code %q", ErrorCode(err))
	}
	// The endpoint's own name is not a bucket's: ListBuckets reaches it.
	if _, err := c.ListBuckets(context.Background()); IsVirtualHostFailure(err) {
		t.Fatalf("ListBuckets on the endpoint itself: %v", err)
	}
	c, err = NewS3(S3Config{Endpoint: endpoint, AccessKey: "a", SecretKey: "b", MaxAttempts: 1, PathStyle: true})
	must(t, err)
	if err := c.HeadBucket(context.Background(), "bucket"); err != nil {
		t.Fatalf("HeadBucket by path: %v", err)
	}
}
