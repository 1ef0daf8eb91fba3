package e2e

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// rawResp is an HTTP answer read in full.
type rawResp struct {
	Status int
	Header http.Header
	Body   []byte
}

// s3Error is the code and message of an S3 XML error body.
func (r rawResp) s3Error() (code, msg string) {
	var e struct {
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	_ = xml.Unmarshal(r.Body, &e)
	return e.Code, e.Message
}

// doRaw sends one request with a plain net/http client.
func doRaw(t *testing.T, client *http.Client, method, u string, body []byte, hdr http.Header) rawResp {
	t.Helper()
	var rd *bytes.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequestWithContext(ctxT(t), method, u, rd)
	} else {
		req, err = http.NewRequestWithContext(ctxT(t), method, u, nil)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	for k, vs := range hdr {
		if strings.EqualFold(k, "Host") {
			continue
		}
		req.Header[k] = vs
	}
	if client == nil {
		client = &http.Client{Timeout: time.Minute}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	if _, err := b.ReadFrom(resp.Body); err != nil {
		t.Fatalf("%s %s: reading body: %v", method, u, err)
	}
	return rawResp{Status: resp.StatusCode, Header: resp.Header, Body: b.Bytes()}
}

// wantS3Error fails unless r is an error with this status (and code, when
// not empty) whose message contains msgPart.
func wantS3Error(t *testing.T, what string, r rawResp, status int, code, msgPart string) {
	t.Helper()
	gotCode, gotMsg := r.s3Error()
	if r.Status != status || (code != "" && gotCode != code) || !strings.Contains(gotMsg, msgPart) {
		t.Errorf("%s: HTTP %d %q %q, want HTTP %d %q with message containing %q (body %s)", what, r.Status, gotCode, gotMsg, status, code, msgPart, r.Body)
	}
}

// wantNoObject fails if bucket/key exists (as seen through s3seal).
func wantNoObject(t *testing.T, c *s3.Client, bucket, key, what string) {
	t.Helper()
	_, err := c.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err == nil {
		t.Errorf("%s: object %s/%s exists, want none", what, bucket, key)
		return
	}
	if _, status := apiCode(err); status != http.StatusNotFound {
		t.Errorf("%s: HEAD %s/%s: %v, want 404", what, bucket, key, err)
	}
}

// curlResp runs curl and returns the status, headers and body it got.
func curlResp(t *testing.T, args ...string) rawResp {
	t.Helper()
	dir := t.TempDir()
	hdrFile, bodyFile := filepath.Join(dir, "headers"), filepath.Join(dir, "body")
	all := append([]string{"-sS", "--globoff", "-D", hdrFile, "-o", bodyFile, "-w", "%{http_code}"}, args...)
	out := runTool(t, cleanEnv(nil), "curl", all...)
	status, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil {
		t.Fatalf("curl %v: status %q", args, out)
	}
	h := http.Header{}
	for _, line := range strings.Split(string(readFile(t, hdrFile)), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			h.Add(k, strings.TrimSpace(v))
		}
	}
	return rawResp{Status: status, Header: h, Body: readFile(t, bodyFile)}
}

func etagOf(h http.Header) string { return strings.Trim(h.Get("Etag"), `"`) }

// presignSet is one client's presigned URLs for one key.
type presignSet struct{ Put, Get, Head, Delete string }

func sdkPresign(t *testing.T, c *s3.Client, bucket, key string, exp time.Duration) presignSet {
	t.Helper()
	ctx := ctxT(t)
	pc := s3.NewPresignClient(c, s3.WithPresignExpires(exp))
	b, k := aws.String(bucket), aws.String(key)
	put, err := pc.PresignPutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	get, err := pc.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	head, err := pc.PresignHeadObject(ctx, &s3.HeadObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	del, err := pc.PresignDeleteObject(ctx, &s3.DeleteObjectInput{Bucket: b, Key: k})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*struct {
		m string
		h http.Header
	}{{put.Method, put.SignedHeader}, {get.Method, get.SignedHeader}, {head.Method, head.SignedHeader}, {del.Method, del.SignedHeader}} {
		for name := range r.h {
			if !strings.EqualFold(name, "host") {
				t.Fatalf("presigned %s needs header %s; this test sends URLs alone", r.m, name)
			}
		}
	}
	return presignSet{Put: put.URL, Get: get.URL, Head: head.URL, Delete: del.URL}
}

const boto3PresignScript = `
import json, sys
import boto3
from botocore.config import Config

endpoint, ak, sk, bucket, key, mode = sys.argv[1:7]
cfg = Config(s3={"addressing_style": "path"})
if mode == "v4":
    cfg = Config(signature_version="s3v4", s3={"addressing_style": "path"})
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", config=cfg)
p = {"Bucket": bucket, "Key": key}
print(json.dumps({
    "Put": c.generate_presigned_url("put_object", Params=p, ExpiresIn=600),
    "Get": c.generate_presigned_url("get_object", Params=p, ExpiresIn=600),
    "Head": c.generate_presigned_url("head_object", Params=p, ExpiresIn=600),
    "Delete": c.generate_presigned_url("delete_object", Params=p, ExpiresIn=600),
}))
`

func boto3Presign(t *testing.T, p *sealProc, bucket, key, mode string) presignSet {
	t.Helper()
	py := requireBoto3(t)
	dir := t.TempDir()
	script := writeFile(t, dir, "presign.py", []byte(boto3PresignScript))
	env := cleanEnv(nil, "HOME="+dir, "AWS_CONFIG_FILE="+filepath.Join(dir, "none"), "AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "none"))
	out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, bucket, key, mode)
	var s presignSet
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("boto3 presign output %q: %v", out, err)
	}
	return s
}

// roundTripPresigned PUTs body through set.Put (with net/http or curl),
// reads it back through set.Get and set.Head, deletes it through
// set.Delete and checks it is gone.
func roundTripPresigned(t *testing.T, c *s3.Client, set presignSet, bucket, key string, body []byte, useCurl bool) {
	t.Helper()
	var r rawResp
	if useCurl {
		f := writeFile(t, t.TempDir(), "body.bin", body)
		r = curlResp(t, "-T", f, set.Put)
	} else {
		r = doRaw(t, nil, http.MethodPut, set.Put, body, nil)
	}
	if r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(body) {
		t.Fatalf("presigned PUT (curl=%v): HTTP %d ETag %q, want 200 %s; body %s", useCurl, r.Status, etagOf(r.Header), md5Hex(body), r.Body)
	}
	if useCurl {
		r = curlResp(t, set.Get)
	} else {
		r = doRaw(t, nil, http.MethodGet, set.Get, nil, nil)
	}
	if r.Status != http.StatusOK || !bytes.Equal(r.Body, body) || etagOf(r.Header) != md5Hex(body) {
		t.Errorf("presigned GET (curl=%v): HTTP %d, %d bytes (want %d identical), ETag %q", useCurl, r.Status, len(r.Body), len(body), etagOf(r.Header))
	}
	// The object is the same through a signed SDK GET.
	if got := getObj(t, c, bucket, key); !bytes.Equal(got, body) {
		t.Errorf("SDK GET after presigned PUT: body differs")
	}
	r = doRaw(t, nil, http.MethodHead, set.Head, nil, nil)
	if r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(body) || r.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("presigned HEAD: HTTP %d ETag %q length %q", r.Status, etagOf(r.Header), r.Header.Get("Content-Length"))
	}
	r = doRaw(t, nil, http.MethodDelete, set.Delete, nil, nil)
	if r.Status != http.StatusNoContent {
		t.Errorf("presigned DELETE: HTTP %d %s", r.Status, r.Body)
	}
	wantNoObject(t, c, bucket, key, "after presigned DELETE")
}

// TestPresignedRoundTrip uses URLs presigned by aws-sdk-go-v2 and by boto3
// (SigV4) with net/http and curl, the way old rclone and scylla-manager
// upload (a presigned PUT with a body).
func TestPresignedRoundTrip(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "presign")
	for i, tc := range []struct {
		name    string
		boto    bool
		curl    bool
		size    int
		keyName string
	}{
		{"sdk-nethttp", false, false, 200001, "sdk/net http"},
		{"sdk-curl", false, true, 3 << 20, "sdk/curl+plus"},
		{"sdk-empty", false, false, 0, "sdk/empty"},
		{"boto3-nethttp", true, false, 65537, "boto/net=http"},
		{"boto3-curl", true, true, 1 << 20, "boto/curl é"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := patternBytes(uint64(700+i), tc.size)
			var set presignSet
			if tc.boto {
				set = boto3Presign(t, p, "presign", tc.keyName, "v4")
				if !strings.Contains(set.Put, "X-Amz-Signature=") {
					t.Fatalf("boto3 with s3v4 made no SigV4 URL: %s", set.Put)
				}
			} else {
				set = sdkPresign(t, c, "presign", tc.keyName, 10*time.Minute)
			}
			if tc.curl {
				requireTool(t, "curl")
			}
			roundTripPresigned(t, c, set, "presign", tc.keyName, body, tc.curl)
		})
	}
}

// TestPresignedRefused checks what a presigned URL must not do: work after
// it expired, work with an altered signature, store a body that does not
// match a signed payload hash, or be accepted in Signature Version 2.
func TestPresignedRefused(t *testing.T) {
	t.Parallel()
	p, c := startWithBucket(t, sealOpts{}, mustCreateBucket, "refuse")
	original := []byte("the original object, which must survive every refused request")
	putObj(t, c, "refuse", "kept", original)
	wantKept := func(what string) {
		t.Helper()
		if got := getObj(t, c, "refuse", "kept"); !bytes.Equal(got, original) {
			t.Errorf("%s: existing object changed to %q", what, got)
		}
	}
	creds, err := c.Options().Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	signer := v4.NewSigner()
	// presignRaw presigns method on key with the SDK's v4 signer at
	// signing time at, with extra query parameters and headers.
	presignRaw := func(method, key string, at time.Time, expires int, payloadHash string, query url.Values, hdr http.Header) (string, http.Header) {
		t.Helper()
		u, _ := url.Parse(p.Endpoint + "/refuse/" + key)
		q := u.Query()
		q.Set("X-Amz-Expires", strconv.Itoa(expires))
		for k, vs := range query {
			q[k] = vs
		}
		u.RawQuery = q.Encode()
		req, _ := http.NewRequest(method, u.String(), nil)
		for k, vs := range hdr {
			req.Header[k] = vs
		}
		signed, sh, err := signer.PresignHTTP(context.Background(), creds, req, payloadHash, "s3", "us-east-1", at)
		if err != nil {
			t.Fatal(err)
		}
		return signed, sh
	}

	t.Run("expired-sdk-1s", func(t *testing.T) {
		set := sdkPresign(t, c, "refuse", "kept", time.Second)
		deadline := time.Now().Add(10 * time.Second)
		var r rawResp
		for {
			r = doRaw(t, nil, http.MethodGet, set.Get, nil, nil)
			if r.Status != http.StatusOK || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		wantS3Error(t, "GET with an expired 1s URL", r, http.StatusForbidden, "AccessDenied", "Request has expired")
		if bytes.Contains(r.Body, original) {
			t.Errorf("expired URL returned the object")
		}
		r = doRaw(t, nil, http.MethodPut, set.Put, []byte("late write"), nil)
		wantS3Error(t, "PUT with an expired 1s URL", r, http.StatusForbidden, "AccessDenied", "Request has expired")
		wantKept("expired PUT")
	})

	t.Run("expired-signed-in-past", func(t *testing.T) {
		u, _ := presignRaw(http.MethodGet, "kept", time.Now().Add(-10*time.Minute), 60, "UNSIGNED-PAYLOAD", nil, nil)
		r := doRaw(t, nil, http.MethodGet, u, nil, nil)
		wantS3Error(t, "GET signed 10 min ago valid 60 s", r, http.StatusForbidden, "AccessDenied", "Request has expired")
		u, _ = presignRaw(http.MethodDelete, "kept", time.Now().Add(-10*time.Minute), 60, "UNSIGNED-PAYLOAD", nil, nil)
		r = doRaw(t, nil, http.MethodDelete, u, nil, nil)
		wantS3Error(t, "DELETE signed 10 min ago valid 60 s", r, http.StatusForbidden, "AccessDenied", "Request has expired")
		wantKept("expired DELETE")
	})

	t.Run("altered-signature", func(t *testing.T) {
		set := sdkPresign(t, c, "refuse", "kept", 10*time.Minute)
		alter := func(raw string) string {
			u, _ := url.Parse(raw)
			q := u.Query()
			sig := []byte(q.Get("X-Amz-Signature"))
			if len(sig) != 64 {
				t.Fatalf("no signature in %s", raw)
			}
			if sig[10] == '0' {
				sig[10] = '1'
			} else {
				sig[10] = '0'
			}
			q.Set("X-Amz-Signature", string(sig))
			u.RawQuery = q.Encode()
			return u.String()
		}
		r := doRaw(t, nil, http.MethodGet, alter(set.Get), nil, nil)
		wantS3Error(t, "GET with altered signature", r, http.StatusForbidden, "SignatureDoesNotMatch", "")
		if bytes.Contains(r.Body, original) {
			t.Errorf("altered signature returned the object")
		}
		r = doRaw(t, nil, http.MethodPut, alter(set.Put), []byte("intruder"), nil)
		wantS3Error(t, "PUT with altered signature", r, http.StatusForbidden, "SignatureDoesNotMatch", "")
		r = doRaw(t, nil, http.MethodDelete, alter(set.Delete), nil, nil)
		wantS3Error(t, "DELETE with altered signature", r, http.StatusForbidden, "SignatureDoesNotMatch", "")
		wantKept("altered signature")
		// A valid URL for another key does not work for this one.
		other := sdkPresign(t, c, "refuse", "other", 10*time.Minute)
		r = doRaw(t, nil, http.MethodGet, strings.Replace(other.Get, "/refuse/other", "/refuse/kept", 1), nil, nil)
		wantS3Error(t, "GET with a URL signed for another key", r, http.StatusForbidden, "SignatureDoesNotMatch", "")
	})

	signedBody := patternBytes(801, 100000)
	wrongBody := append([]byte(nil), signedBody...)
	wrongBody[50000] ^= 1
	sum := sha256.Sum256(signedBody)
	hash := hex.EncodeToString(sum[:])

	// X-Amz-Content-Sha256 in the query string, as s3seal documents.
	t.Run("signed-sha256-query", func(t *testing.T) {
		q := url.Values{"X-Amz-Content-Sha256": {hash}}
		u, _ := presignRaw(http.MethodPut, "sha-q", time.Now(), 600, hash, q, nil)
		r := doRaw(t, nil, http.MethodPut, u, wrongBody, nil)
		wantS3Error(t, "presigned PUT (query sha256) with another body", r, http.StatusBadRequest, "XAmzContentSHA256Mismatch", "")
		wantNoObject(t, c, "refuse", "sha-q", "presigned PUT (query sha256) with another body")
		u, _ = presignRaw(http.MethodPut, "kept", time.Now(), 600, hash, q, nil)
		r = doRaw(t, nil, http.MethodPut, u, wrongBody, nil)
		wantS3Error(t, "presigned PUT (query sha256) over an existing key with another body", r, http.StatusBadRequest, "XAmzContentSHA256Mismatch", "")
		wantKept("presigned PUT with a body not matching its signed sha256")
		// Control: the signed body itself is stored.
		u, _ = presignRaw(http.MethodPut, "sha-q", time.Now(), 600, hash, q, nil)
		r = doRaw(t, nil, http.MethodPut, u, signedBody, nil)
		if r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(signedBody) {
			t.Errorf("presigned PUT (query sha256) with the signed body: HTTP %d %s", r.Status, r.Body)
		}
	})

	// X-Amz-Content-Sha256 as a signed header: how the AWS SDKs presign
	// with a known payload hash (the signer never hoists that header into
	// the query; S3 takes it from the header).
	t.Run("signed-sha256-header", func(t *testing.T) {
		hdr := http.Header{"X-Amz-Content-Sha256": {hash}}
		u, sh := presignRaw(http.MethodPut, "sha-h", time.Now(), 600, hash, nil, hdr)
		if !strings.Contains(strings.ToLower(u), "x-amz-content-sha256") {
			t.Fatalf("signer did not sign x-amz-content-sha256: %s", u)
		}
		r := doRaw(t, nil, http.MethodPut, u, wrongBody, sh)
		if r.Status/100 != 4 {
			t.Errorf("presigned PUT (header sha256) with another body: HTTP %d, want 4xx", r.Status)
		}
		wantNoObject(t, c, "refuse", "sha-h", "presigned PUT (header sha256) with another body")
		r = doRaw(t, nil, http.MethodPut, u, signedBody, sh)
		if r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(signedBody) {
			code, msg := r.s3Error()
			t.Errorf("presigned PUT with a signed x-amz-content-sha256 header and the matching body: HTTP %d %s %q, want 200 (S3 verifies the payload hash from the signed header)", r.Status, code, msg)
		}
	})

	t.Run("boto3-sigv2", func(t *testing.T) {
		set := boto3Presign(t, p, "refuse", "kept", "default")
		if !strings.Contains(set.Get, "AWSAccessKeyId=") || !strings.Contains(set.Get, "Signature=") {
			t.Fatalf("boto3 default config made no SigV2 URL for a custom us-east-1 endpoint: %s", set.Get)
		}
		r := doRaw(t, nil, http.MethodGet, set.Get, nil, nil)
		if code, msg := r.s3Error(); r.Status != 400 || code != "InvalidRequest" || !strings.Contains(msg, "Please use AWS4-HMAC-SHA256.") ||
			!strings.Contains(msg, "aws configure set default.s3.signature_version s3v4") {
			t.Errorf("GET with a SigV2 presigned URL: HTTP %d %s %q, want AWS's 400 InvalidRequest naming AWS4-HMAC-SHA256 and the aws CLI setting", r.Status, code, msg)
		}
		if bytes.Contains(r.Body, original) {
			t.Errorf("SigV2 URL returned the object")
		}
		r = doRaw(t, nil, http.MethodPut, set.Put, []byte("v2 write"), nil)
		if code, msg := r.s3Error(); r.Status != 400 || code != "InvalidRequest" || !strings.Contains(msg, "Please use AWS4-HMAC-SHA256.") {
			t.Errorf("PUT with a SigV2 presigned URL: HTTP %d %s %q", r.Status, code, msg)
		}
		wantKept("SigV2 PUT")
	})
}
