package sigv4

import (
	"context"
	"crypto/sha256"
	"encoding/hex"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestPresignedSDK(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	cases := []struct {
		method, path, body string
	}{
		{"GET", "/bucket/key%20with%20space", ""},
		{"HEAD", "/bucket/%C3%A9t%C3%A9", ""},
		{"PUT", "/bucket/upload%2Bme", "presigned put body"},
		{"DELETE", "/bucket/a%3Db", ""},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+tc.path, nil)
			u := presign(t, req, testNow.Add(-time.Minute), time.Hour)
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			var sendReq *http.Request
			if body != nil {
				sendReq, _ = http.NewRequest(tc.method, u, body)
			} else {
				sendReq, _ = http.NewRequest(tc.method, u, nil)
			}
			resp, err := srv.Client().Do(sendReq)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.take(t)
			if o.err != nil {
				t.Fatalf("verify: %v", o.err)
			}
			if !o.res.Presigned || o.res.PayloadMode != UnsignedPayload || string(o.body) != tc.body {
				t.Fatalf("result %+v body %q", o.res, o.body)
			}
		})
	}
}

func TestPresignedErrors(t *testing.T) {
	mk := func(t *testing.T, at time.Time, exp time.Duration) *http.Request {
		req, _ := http.NewRequest("GET", "http://s3.local/bucket/key", nil)
		u := presign(t, req, at, exp)
		r, _ := http.NewRequest("GET", u, nil)
		return r
	}
	setQ := func(k, v string) func(*http.Request) {
		return func(r *http.Request) {
			q := r.URL.Query()
			if v == "" {
				q.Del(k)
			} else {
				q.Set(k, v)
			}
			r.URL.RawQuery = q.Encode()
		}
	}
	cases := []struct {
		name   string
		at     time.Time
		exp    time.Duration
		mutate func(*http.Request)
		code   string
		status int
	}{
		{"ok", testNow, time.Hour, nil, "", 0},
		{"expired", testNow.Add(-2 * time.Hour), time.Hour, nil, CodeAccessDenied, 403},
		{"expired by one second", testNow.Add(-time.Hour - time.Second), time.Hour, nil, CodeAccessDenied, 403},
		{"just valid", testNow.Add(-time.Hour + time.Second), time.Hour, nil, "", 0},
		{"not yet valid", testNow.Add(time.Hour), time.Hour, nil, CodeAccessDenied, 403},
		{"future within skew", testNow.Add(5 * time.Minute), time.Hour, nil, "", 0},
		{"future at the skew limit", testNow.Add(15 * time.Minute), time.Hour, nil, "", 0},
		{"future one second past the skew", testNow.Add(15*time.Minute + time.Second), time.Hour, nil, CodeAccessDenied, 403},
		{"expires too long", testNow, time.Hour, setQ("X-Amz-Expires", "604801"), CodeAuthorizationQueryParametersErr, 403},
		{"expires zero", testNow, time.Hour, setQ("X-Amz-Expires", "0"), CodeAccessDenied, 403},
		{"expires missing", testNow, time.Hour, setQ("X-Amz-Expires", ""), CodeAuthorizationQueryParametersErr, 400},
		{"bad algorithm", testNow, time.Hour, setQ("X-Amz-Algorithm", "AWS4-HMAC-SHA1"), CodeAuthorizationQueryParametersErr, 400},
		{"tampered expires", testNow, time.Hour, setQ("X-Amz-Expires", "7200"), CodeSignatureDoesNotMatch, 403},
		{"tampered signature", testNow, time.Hour, setQ("X-Amz-Signature", strings.Repeat("0", 64)), CodeSignatureDoesNotMatch, 403},
		{"signature last digit changed", testNow, time.Hour, func(r *http.Request) {
			q := r.URL.Query()
			sig := q.Get("X-Amz-Signature")
			last := byte('0')
			if sig[len(sig)-1] == '0' {
				last = '1'
			}
			q.Set("X-Amz-Signature", sig[:len(sig)-1]+string(last))
			r.URL.RawQuery = q.Encode()
		}, CodeSignatureDoesNotMatch, 403},
		{"credential date not the X-Amz-Date", testNow, time.Hour, setQ("X-Amz-Credential", testAK+"/20240523/"+testRegion+"/s3/aws4_request"), CodeAuthorizationQueryParametersErr, 400},
		{"added query", testNow, time.Hour, setQ("versionId", "x"), CodeSignatureDoesNotMatch, 403},
		{"unknown key", testNow, time.Hour, setQ("X-Amz-Credential", "NOPE/20240524/"+testRegion+"/s3/aws4_request"), CodeInvalidAccessKeyID, 403},
		{"unsigned x-amz header", testNow, time.Hour, func(r *http.Request) { r.Header.Set("X-Amz-Copy-Source", "/b/k") }, CodeAccessDenied, 403},
		{"streaming not allowed", testNow, time.Hour, setQ("X-Amz-Content-Sha256", StreamingSignedPayload), CodeInvalidRequest, 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := mk(t, tc.at, tc.exp)
			if tc.mutate != nil {
				tc.mutate(r)
			}
			_, err := testVerifier().Verify(r)
			if tc.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			e := wantCode(t, err, tc.code, tc.status)
			if strings.HasPrefix(tc.name, "expired") && e.Message != "Request has expired." {
				t.Fatalf("message %q", e.Message)
			}
		})
	}
}

// A presigned PUT may carry its payload hash as a signed
// x-amz-content-sha256 header rather than in the query (the Go SDK's
// presigner leaves it there); the body is then checked against it.
func TestPresignedPayloadHashInHeader(t *testing.T) {
	srv := newVerifyServer(t, testVerifier(), false)
	body := "presigned body with a signed hash"
	sum := sha256.Sum256([]byte(body))
	for _, tc := range []struct {
		name, send string
		ok         bool
	}{{"matching body", body, true}, {"other body", "another body of other bytes!!!!!", false}} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("PUT", srv.URL+"/bucket/k", nil)
			req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
			q := req.URL.Query()
			q.Set("X-Amz-Expires", "3600")
			req.URL.RawQuery = q.Encode()
			u, _, err := v4.NewSigner().PresignHTTP(context.Background(), testCreds, req, hex.EncodeToString(sum[:]), "s3", testRegion,
				testNow.Add(-time.Minute), func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
			if err != nil {
				t.Fatal(err)
			}
			send, _ := http.NewRequest("PUT", u, strings.NewReader(tc.send))
			send.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
			resp, err := srv.Client().Do(send)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			o := srv.take(t)
			if tc.ok {
				if o.err != nil || string(o.body) != body {
					t.Fatalf("verify: %v, body %q", o.err, o.body)
				}
				return
			}
			wantCode(t, o.err, CodeXAmzContentSHA256Mismatch, 400)
		})
	}
}
