package sigv4

import (
	"bytes"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestAuthAnswersAsAWS pins each authentication refusal to AWS's answer
// word for word: code, status, message and the extra elements S3 puts in
// the error body (versitygw's integration suite, written against AWS,
// checks all of them).
func TestAuthAnswersAsAWS(t *testing.T) {
	body := []byte("payload")
	signed := func(t *testing.T) *http.Request {
		req, _ := http.NewRequest("PUT", "http://s3.local/bucket/key", bytes.NewReader(body))
		signHeader(t, req, sha256Hex(body), testNow)
		return req
	}
	presigned := func(t *testing.T) *http.Request {
		req, _ := http.NewRequest("GET", "http://s3.local/bucket/key", nil)
		r, _ := http.NewRequest("GET", presign(t, req, testNow, time.Hour), nil)
		return r
	}
	setAuth := func(v string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", v) }
	}
	credRe := regexp.MustCompile("Credential=[^,]+,")
	setCred := func(c string) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Authorization", credRe.ReplaceAllString(r.Header.Get("Authorization"), "Credential="+c+","))
		}
	}
	setQ := func(k, v string) func(*http.Request) {
		return func(r *http.Request) {
			q := r.URL.Query()
			q.Set(k, v)
			r.URL.RawQuery = q.Encode()
		}
	}
	const sig = "5fb279ae552098ea7c5c807df54cdb159e74939e19449b29831552639ec34b29"
	const mal = "The authorization header is malformed; "
	// SigV2: AWS's words, then what to set in the client (aws CLI v1's
	// aws s3 presign signs with V2 unless told otherwise).
	const v2Words = "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256. " +
		"Configure your client for SigV4: aws CLI: aws configure set default.s3.signature_version s3v4; " +
		"boto3: Config(signature_version=\"s3v4\"); s3cmd: signature_v2 = False in ~/.s3cfg (no --signature-v2); " +
		"rclone: v2_auth = false in the remote (no --s3-v2-auth); mc: mc alias set ALIAS URL KEY SECRET --api S3v4."
	cases := []struct {
		name   string
		base   func(*testing.T) *http.Request
		mutate func(*http.Request)
		code   string
		status int
		msg    string
		fields []Field
	}{
		{"no space", signed, setAuth("invalid_header"), CodeInvalidArgument, 400,
			"Authorization header is invalid -- one and only one ' ' (space) required.",
			[]Field{{"ArgumentName", "Authorization"}, {"ArgumentValue", "invalid_header"}}},
		{"other scheme", signed, func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256", "AWS2-HMAC-SHA1", 1))
		}, CodeInvalidArgument, 400, "Unsupported Authorization Type",
			[]Field{{"ArgumentName", "Authorization"}, {"ArgumentValue", "AWS2-HMAC-SHA1"}}},
		{"sigv2 header", signed, setAuth("AWS seed_signature"), CodeInvalidRequest, 400,
			v2Words, nil},
		{"two components", signed, setAuth("AWS4-HMAC-SHA256 Credential=access/20250912/us-east-1/s3/aws4_request,Signature=" + sig),
			CodeAuthorizationHeaderMalformed, 400, mal + "the authorization header requires three components: Credential, SignedHeaders, and Signature.", nil},
		{"no Credential", signed, setAuth("AWS4-HMAC-SHA256 missing_creds=access/20250912/us-east-1/s3/aws4_request,SignedHeaders=content-length;x-amz-date,Signature=" + sig),
			CodeAuthorizationHeaderMalformed, 400, mal + "missing Credential.", nil},
		{"no SignedHeaders", signed, setAuth("AWS4-HMAC-SHA256 Credential=access/20250912/us-east-1/s3/aws4_request,missing=content-length;x-amz-date,Signature=" + sig),
			CodeAuthorizationHeaderMalformed, 400, mal + "missing SignedHeaders.", nil},
		{"no Signature", signed, setAuth("AWS4-HMAC-SHA256 Credential=access/20250912/us-east-1/s3/aws4_request,SignedHeaders=content-length;x-amz-date,missing=" + sig),
			CodeAuthorizationHeaderMalformed, 400, mal + "missing Signature.", nil},
		{"terminal before date", signed, setCred("access/32234/us-east-1/s3/aws_request"),
			CodeAuthorizationHeaderMalformed, 400, mal + `incorrect terminal "aws_request". This endpoint uses "aws4_request".`, nil},
		{"service before date", signed, setCred("access/32234/us-east-1/ec2/aws4_request"),
			CodeAuthorizationHeaderMalformed, 400, mal + `incorrect service "ec2". This endpoint belongs to "s3".`, nil},
		{"bad date", signed, func(r *http.Request) { r.Header.Set("X-Amz-Date", "03032006") },
			CodeAccessDenied, 403, "AWS authentication requires a valid Date or x-amz-date header.", nil},
		{"bad payload mode", signed, func(r *http.Request) { r.Header.Set("X-Amz-Content-Sha256", "invalid_sha256") },
			CodeInvalidArgument, 400, "x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value.",
			[]Field{{"ArgumentName", "x-amz-content-sha256"}, {"ArgumentValue", "invalid_sha256"}}},
		{"unsigned x-amz headers", signed, func(r *http.Request) {
			r.Header.Set("X-Amz-Tagging", "a=b")
			r.Header.Set("X-Amz-Copy-Source", "b/k")
		}, CodeAccessDenied, 403, "There were headers present in the request which were not signed",
			[]Field{{"HeadersNotSigned", "x-amz-copy-source, x-amz-tagging"}}},
		{"sigv2 query", presigned, func(r *http.Request) { r.URL.RawQuery = "AWSAccessKeyId=AK&Expires=1&Signature=abc" },
			CodeInvalidRequest, 400, v2Words, nil},
		{"query algorithm", presigned, setQ("X-Amz-Algorithm", "AWS4-SHA256"), CodeAuthorizationQueryParametersErr, 400,
			`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256 and AWS4-ECDSA-P256-SHA256"`, nil},
		{"query sigv4a", presigned, setQ("X-Amz-Algorithm", "AWS4-ECDSA-P256-SHA256"), CodeAuthorizationQueryParametersErr, 400,
			`X-Amz-Algorithm only supports "AWS4-HMAC-SHA256"`, nil},
		{"expires not a number", presigned, setQ("X-Amz-Expires", "invalid_value"), CodeAuthorizationQueryParametersErr, 400,
			"X-Amz-Expires should be a number", nil},
		{"expires negative", presigned, setQ("X-Amz-Expires", "-3"), CodeAuthorizationQueryParametersErr, 403,
			"X-Amz-Expires must be non-negative", nil},
		{"expires over a week", presigned, setQ("X-Amz-Expires", "60580000"), CodeAuthorizationQueryParametersErr, 403,
			"X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds", nil},
		{"security token", presigned, setQ("X-Amz-Security-Token", "my_token"), CodeAuthorizationQueryParametersErr, 400,
			"Authorization with X-Amz-Security-Token is not supported", nil},
		{"expired", func(t *testing.T) *http.Request {
			req, _ := http.NewRequest("GET", "http://s3.local/bucket/key", nil)
			r, _ := http.NewRequest("GET", presign(t, req, testNow.Add(-2*time.Hour), 900*time.Second), nil)
			return r
		}, nil, CodeAccessDenied, 403, "Request has expired.",
			[]Field{{"X-Amz-Expires", "900"}, {"Expires", "2024-05-24T10:15:00Z"}, {"ServerTime", "2024-05-24T12:00:00Z"}}},
		{"anonymous", signed, func(r *http.Request) { r.Header.Del("Authorization") }, CodeAccessDenied, 403, "Access Denied.", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.base(t)
			if tc.mutate != nil {
				tc.mutate(r)
			}
			_, err := testVerifier().Verify(r)
			e := wantCode(t, err, tc.code, tc.status)
			if e.Message != tc.msg {
				t.Errorf("message %q\n   want %q", e.Message, tc.msg)
			}
			if !equalFields(e.Fields, tc.fields) {
				t.Errorf("fields %v, want %v", e.Fields, tc.fields)
			}
		})
	}
}

// A body that does not hash to its x-amz-content-sha256 names both hashes,
// as S3 does.
func TestContentSHA256MismatchNamesHashes(t *testing.T) {
	const claimed = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b854"
	req, _ := http.NewRequest("PUT", "http://s3.local/bucket/key?tagging", http.NoBody)
	signHeader(t, req, claimed, testNow)
	res, err := testVerifier().Verify(req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	e := wantCode(t, err, CodeXAmzContentSHA256Mismatch, 400)
	want := []Field{{"ClientComputedContentSHA256", claimed},
		{"S3ComputedContentSHA256", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}
	if !equalFields(e.Fields, want) {
		t.Fatalf("fields %v, want %v", e.Fields, want)
	}
}

func equalFields(a, b []Field) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
