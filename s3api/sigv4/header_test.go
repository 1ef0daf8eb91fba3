package sigv4

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"
)

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// TestHeaderSignedSDK signs requests with aws-sdk-go-v2's signer and checks
// that they verify after a trip through a real HTTP server.
func TestHeaderSignedSDK(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	cases := []struct {
		name, method, path, query string
		headers                   map[string][]string
		body                      string
		unsigned                  bool
	}{
		{name: "get root", method: "GET", path: "/"},
		{name: "space", method: "GET", path: "/bucket/key%20with%20space"},
		{name: "unicode", method: "PUT", path: "/bucket/%C3%A9t%C3%A9/%E2%9C%93.txt", body: "hello"},
		{name: "plus", method: "GET", path: "/bucket/a%2Bb"},
		{name: "equals", method: "GET", path: "/bucket/a%3Db%3D"},
		{name: "encoded slash", method: "GET", path: "/bucket/dir%2Ffile"},
		{name: "double slash", method: "GET", path: "/bucket//x/"},
		{name: "reserved", method: "GET", path: "/bucket/%21%24%26%27%28%29%2A%2C%3B%3A%40"},
		{name: "query", method: "GET", path: "/bucket", query: "list-type=2&prefix=a%20b%2Bc&delimiter=%2F&empty=&uploads="},
		{name: "query unicode", method: "GET", path: "/bucket", query: "prefix=%C3%A9&marker=a%3Db"},
		{name: "multi headers", method: "PUT", path: "/bucket/k", body: "data",
			headers: map[string][]string{"X-Amz-Meta-Multi": {"a", "b  c"}, "X-Amz-Meta-Space": {"x   y"}}},
		{name: "unsigned payload", method: "PUT", path: "/bucket/k", body: "unsigned body", unsigned: true},
		{name: "delete", method: "DELETE", path: "/bucket/k"},
		{name: "head", method: "HEAD", path: "/bucket/k"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u := srv.URL + tc.path
			if tc.query != "" {
				u += "?" + tc.query
			}
			req, err := http.NewRequest(tc.method, u, strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body == "" {
				req.Body, req.ContentLength = http.NoBody, 0
			}
			for k, vs := range tc.headers {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			ph := sha256Hex([]byte(tc.body))
			if tc.unsigned {
				ph = UnsignedPayload
			}
			signHeader(t, req, ph, testNow.Add(-time.Minute))
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.take(t)
			if o.err != nil {
				t.Fatalf("verify: %v", o.err)
			}
			if string(o.body) != tc.body {
				t.Fatalf("body = %q, want %q", o.body, tc.body)
			}
			if o.res.AccessKey != testAK || o.res.Region != testRegion || o.res.Presigned {
				t.Fatalf("result = %+v", o.res)
			}
			if o.res.DecodedLength != int64(len(tc.body)) {
				t.Fatalf("DecodedLength = %d, want %d", o.res.DecodedLength, len(tc.body))
			}
		})
	}
}

// TestHeaderSignedErrors covers each failure of header authentication.
func TestHeaderSignedErrors(t *testing.T) {
	body := []byte("payload")
	base := func(t *testing.T) *http.Request {
		req, _ := http.NewRequest("PUT", "http://s3.local/bucket/key", bytes.NewReader(body))
		req.Header.Set("X-Amz-Meta-A", "1")
		signHeader(t, req, sha256Hex(body), testNow)
		return req
	}
	cases := []struct {
		name   string
		mutate func(*http.Request)
		opts   []Option
		code   string
		status int
	}{
		{"no auth", func(r *http.Request) { r.Header.Del("Authorization") }, nil, CodeAccessDenied, 403},
		{"v2 header", func(r *http.Request) { r.Header.Set("Authorization", "AWS AKIDEXAMPLE:c2lnbmF0dXJl") }, nil, CodeInvalidRequest, 400},
		{"sigv4a", func(r *http.Request) { r.Header.Set("Authorization", "AWS4-ECDSA-P256-SHA256 Credential=x") }, nil, CodeInvalidArgument, 400},
		{"unknown key", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), testAK, "AKIDUNKNOWN", 1))
		}, nil, CodeInvalidAccessKeyID, 403},
		{"wrong secret", nil, []Option{}, "", 0}, // replaced below
		{"tampered header", func(r *http.Request) { r.Header.Set("X-Amz-Meta-A", "2") }, nil, CodeSignatureDoesNotMatch, 403},
		{"tampered path", func(r *http.Request) { r.URL.Path = "/bucket/other" }, nil, CodeSignatureDoesNotMatch, 403},
		{"tampered method", func(r *http.Request) { r.Method = "DELETE" }, nil, CodeSignatureDoesNotMatch, 403},
		{"tampered query", func(r *http.Request) { r.URL.RawQuery = "acl=" }, nil, CodeSignatureDoesNotMatch, 403},
		{"tampered host", func(r *http.Request) { r.Host = "evil.local" }, nil, CodeSignatureDoesNotMatch, 403},
		{"unsigned x-amz header", func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source", "/b/secret") }, nil, CodeAccessDenied, 403},
		{"missing content sha", func(r *http.Request) { r.Header.Del("X-Amz-Content-Sha256") }, nil, CodeInvalidRequest, 400},
		{"bad content sha", func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "nothex") }, nil, CodeInvalidArgument, 400},
		{"missing date", func(r *http.Request) { r.Header.Del("X-Amz-Date") }, nil, CodeAccessDenied, 403},
		{"bad date", func(r *http.Request) { r.Header.Set("X-Amz-Date", "yesterday") }, nil, CodeAccessDenied, 403},
		{"skew past", nil, []Option{WithClock(func() time.Time { return testNow.Add(16 * time.Minute) })}, CodeRequestTimeTooSkewed, 403},
		{"skew future", nil, []Option{WithClock(func() time.Time { return testNow.Add(-16 * time.Minute) })}, CodeRequestTimeTooSkewed, 403},
		{"custom skew", nil, []Option{WithMaxSkew(time.Minute), WithClock(func() time.Time { return testNow.Add(2 * time.Minute) })}, CodeRequestTimeTooSkewed, 403},
		{"malformed auth", func(r *http.Request) { r.Header.Set("Authorization", "AWS4-HMAC-SHA256 garbage") }, nil, CodeAuthorizationHeaderMalformed, 400},
		{"missing signature", func(r *http.Request) {
			a := r.Header.Get("Authorization")
			r.Header.Set("Authorization", a[:strings.Index(a, ", Signature=")])
		}, nil, CodeAuthorizationHeaderMalformed, 400},
		{"wrong service", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/s3/", "/ec2/", 1))
		}, nil, CodeAuthorizationHeaderMalformed, 400},
		{"short credential", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/aws4_request", "", 1))
		}, nil, CodeAuthorizationHeaderMalformed, 400},
		{"credential date mismatch", func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/20240524/", "/20240523/", 1))
		}, nil, CodeAuthorizationHeaderMalformed, 400},
		{"host not signed", func(r *http.Request) {
			a := strings.Replace(r.Header.Get("Authorization"), ";host;", ";", 1)
			r.Header.Set("Authorization", strings.Replace(a, "SignedHeaders=host;", "SignedHeaders=", 1))
		}, nil, CodeAccessDenied, 403},
		{"both mechanisms", func(r *http.Request) { r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256" }, nil, CodeInvalidArgument, 400},
		{"v2 query", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "AWSAccessKeyId=AK&Expires=1&Signature=abc"
		}, nil, CodeInvalidRequest, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := base(t)
			v := testVerifier(tc.opts...)
			code, status := tc.code, tc.status
			if tc.name == "wrong secret" {
				v = NewVerifier(StaticCredentials{testAK: "other"}, WithClock(func() time.Time { return testNow }))
				code, status = CodeSignatureDoesNotMatch, 403
			}
			if tc.mutate != nil {
				tc.mutate(req)
			}
			_, err := v.Verify(req)
			e := wantCode(t, err, code, status)
			if strings.Contains(e.Error(), testSecret) {
				t.Fatal("secret leaked into error")
			}
		})
	}
	// The untouched request verifies, so the cases above fail for their reason.
	if _, err := testVerifier().Verify(base(t)); err != nil {
		t.Fatalf("baseline: %v", err)
	}
}

func TestDateHeaderFallback(t *testing.T) {
	req, _ := http.NewRequest("GET", "http://s3.local/b/k", nil)
	signHeader(t, req, UnsignedPayload, testNow)
	// Re-sign with Date instead of X-Amz-Date: build the request by hand.
	req.Header.Del("X-Amz-Date")
	req.Header.Set("Date", testNow.Format(http.TimeFormat))
	s := &signed{accessKey: testAK, date: "20240524", region: testRegion, amzDate: testNow.Format(iso8601),
		signedHeaders: []string{"date", "host", "x-amz-content-sha256"}}
	creq, err := canonicalRequest(req, s.signedHeaders, UnsignedPayload, "")
	if err != nil {
		t.Fatal(err)
	}
	sts := algorithm + "\n" + s.amzDate + "\n" + scope(s) + "\n" + sha256Hex([]byte(creq))
	sig := hex.EncodeToString(hmacSHA256(deriveKey(testSecret, s.date, testRegion, "s3"), sts))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+testAK+"/20240524/"+testRegion+"/s3/aws4_request,SignedHeaders=date;host;x-amz-content-sha256,Signature="+sig)
	if _, err := testVerifier().Verify(req); err != nil {
		t.Fatal(err)
	}
}

func TestPayloadSHA256(t *testing.T) {
	body := []byte("the body")
	cases := []struct {
		name    string
		sent    []byte
		cl      int64
		code    string
		wantErr bool
	}{
		{"ok", body, int64(len(body)), "", false},
		{"tampered", []byte("the bodY"), int64(len(body)), CodeXAmzContentSHA256Mismatch, true},
		{"short", body[:4], int64(len(body)), CodeIncompleteBody, true},
		{"long", append(body, 'x'), int64(len(body)), CodeIncompleteBody, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("PUT", "http://s3.local/b/k", bytes.NewReader(body))
			signHeader(t, req, sha256Hex(body), testNow)
			req.Body = readCloser{bytes.NewReader(tc.sent)}
			req.ContentLength = tc.cl
			res, err := testVerifier().Verify(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(res.Body)
			if !tc.wantErr {
				if err != nil || !bytes.Equal(got, body) {
					t.Fatalf("got %q, %v", got, err)
				}
				return
			}
			wantCode(t, err, tc.code, 400)
			// Errors are sticky.
			if _, err2 := res.Body.Read(make([]byte, 1)); err2 != err {
				t.Fatalf("second read error %v, want sticky %v", err2, err)
			}
		})
	}
}

func TestKeyCacheBounded(t *testing.T) {
	v := testVerifier(WithKeyCacheSize(2))
	for _, region := range []string{"r1", "r2", "r3", "r4"} {
		k := v.keys.get(testSecret, keyCacheID{testAK, "20240524", region, "s3"})
		if !bytes.Equal(k, deriveKey(testSecret, "20240524", region, "s3")) {
			t.Fatal("wrong key")
		}
	}
	if n := v.keys.len(); n > 2 {
		t.Fatalf("cache holds %d keys, want <= 2", n)
	}
	// A rotated secret for the same scope is not served from the cache.
	id := keyCacheID{testAK, "20240524", "r4", "s3"}
	if bytes.Equal(v.keys.get("rotated", id), deriveKey(testSecret, "20240524", "r4", "s3")) {
		t.Fatal("stale key served after rotation")
	}
}
