package s3api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// doSigned signs and sends a hand-made request with the test credential
// and a body, and returns the answer with its body read.
func doSigned(t *testing.T, method, url string, h http.Header, body string) (*http.Response, string) {
	t.Helper()
	return doSignedAs(t, "ak", "sk", method, url, h, body)
}

// doSignedAs is doSigned by the credential ak (secret sk).
func doSignedAs(t *testing.T, ak, sk, method, url string, h http.Header, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	for k, v := range h {
		req.Header[k] = v
	}
	sum := sha256.Sum256([]byte(body))
	hash := hex.EncodeToString(sum[:])
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: ak, SecretAccessKey: sk},
		req, hash, "s3", "us-east-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// Only the aws-chunked coding is removed from Content-Encoding; the
// others stay as the client wrote them (s3-tests
// test_object_content_encoding_aws_chunked).
func TestContentEncodingKeepsOtherCodings(t *testing.T) {
	url, _, _ := newBucketServer(t, SingleCredential("ak", "sk"))
	for sent, want := range map[string]string{
		"aws-chunked, deflate, gzip": "deflate, gzip",
		"deflate, aws-chunked, gzip": "deflate, gzip",
		"gzip,aws-chunked":           "gzip",
		"AWS-Chunked":                "",
		"br":                         "br",
	} {
		r, body := doSigned(t, http.MethodPut, url+"/bkt/k", http.Header{"Content-Encoding": {sent}}, "data")
		if r.StatusCode != 200 {
			t.Fatalf("PUT %q: %d %s", sent, r.StatusCode, body)
		}
		r, _ = doSigned(t, http.MethodHead, url+"/bkt/k", nil, "")
		if got := r.Header.Get("Content-Encoding"); got != want {
			t.Errorf("sent %q: stored %q, want %q", sent, got, want)
		}
	}
}

// ListObjectsV2 echoes continuation-token and start-after whenever the
// request had them, even empty, with KeyCount always (s3-tests
// test_bucket_listv2_continuationtoken_empty).
func TestListV2EchoesRequestFields(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	for _, k := range []string{"bar", "baz", "foo", "quxx"} {
		if err := put(ctx, c, "bkt", k); err != nil {
			t.Fatal(err)
		}
	}
	for query, want := range map[string][]string{
		"list-type=2&continuation-token=":               {"<ContinuationToken></ContinuationToken>", "<KeyCount>4</KeyCount>"},
		"list-type=2&start-after=":                      {"<StartAfter></StartAfter>", "<KeyCount>4</KeyCount>"},
		"list-type=2&start-after=baz":                   {"<StartAfter>baz</StartAfter>", "<KeyCount>2</KeyCount>"},
		"list-type=2&start-after=baz&encoding-type=url": {"<StartAfter>baz</StartAfter>", "<EncodingType>url</EncodingType>"},
		"list-type=2": {"<KeyCount>4</KeyCount>"},
	} {
		r, body := doSigned(t, http.MethodGet, url+"/bkt?"+query, nil, "")
		if r.StatusCode != 200 {
			t.Fatalf("%s: %d %s", query, r.StatusCode, body)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: no %s in %s", query, w, body)
			}
		}
		if query == "list-type=2" && (strings.Contains(body, "<ContinuationToken>") || strings.Contains(body, "<StartAfter>")) {
			t.Errorf("%s: echoes what was not sent: %s", query, body)
		}
	}
	// The SDK reads the echo.
	out, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt"), ContinuationToken: aws.String("")})
	if err != nil || out.ContinuationToken == nil || *out.ContinuationToken != "" || aws.ToInt32(out.KeyCount) != 4 {
		t.Fatalf("SDK: %v %v", out, err)
	}
}

// User metadata keeps the bytes the client sent, non-ASCII UTF-8 included
// (what boto3 sends for x-amz-meta-meta1 = "Hello World\xe9"), through
// PUT, GET, HEAD and a copy.
func TestUserMetadataBytesKept(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	const v = "Hello World\xc3\xa9 \xe2\x82\xac"
	r, body := doSigned(t, http.MethodPut, url+"/bkt/k", http.Header{"X-Amz-Meta-Meta1": {v}}, "bar")
	if r.StatusCode != 200 {
		t.Fatalf("PUT: %d %s", r.StatusCode, body)
	}
	r, _ = doSigned(t, http.MethodPut, url+"/bkt/k2", http.Header{"X-Amz-Copy-Source": {"/bkt/k"}}, "")
	if r.StatusCode != 200 {
		t.Fatalf("copy: %d", r.StatusCode)
	}
	for _, k := range []string{"k", "k2"} {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			r, _ := doSigned(t, m, url+"/bkt/"+k, nil, "")
			if got := r.Header.Get("X-Amz-Meta-Meta1"); got != v {
				t.Errorf("%s %s: %q, want %q", m, k, got, v)
			}
		}
	}
	out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil || out.Metadata["meta1"] != v {
		t.Fatalf("SDK: %q %v", out.Metadata, err)
	}
}

// DeleteBucket answers S3's codes: NoSuchBucket for a missing bucket,
// BucketNotEmpty while a client object is in it; a bucket whose only
// content is s3seal's own (a multipart upload's state) is deleted.
func TestDeleteBucketAnswers(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	c := sdkClient(url, "ak", "sk")
	ctx := context.Background()
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("nope")}); apiCode(err) != "NoSuchBucket" {
		t.Fatalf("missing bucket: %v", err)
	}
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	if err := put(ctx, c, "bkt", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("up")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("bkt")})
	if r, ok := errors.AsType[*smithyhttp.ResponseError](err); apiCode(err) != "BucketNotEmpty" || !ok || r.HTTPStatusCode() != 409 {
		t.Fatalf("with an object: %v", err)
	}
	if _, err := c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("bkt"), Key: aws.String("k")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatalf("emptied bucket: %v", err)
	}
}
