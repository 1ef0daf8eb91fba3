package s3api

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/s3seal/s3seal/sealstore"
)

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestAccessPerCredential(t *testing.T) {
	creds := Credentials{
		"admin": {AccessKey: "admin", SecretKey: "admin-secret", Read: []string{"*"}, Write: []string{"*"}},
		"ro":    {AccessKey: "ro", SecretKey: "ro-secret", Read: []string{"shared"}},
		"team":  {AccessKey: "team", SecretKey: "team-secret", Write: []string{"team"}},
	}
	creds = oneAccount(creds) // one account, as every credential was before owners (issue 22)
	url := newTestServer(t, creds)
	ctx := context.Background()
	admin, ro, team := sdkClient(url, "admin", "admin-secret"), sdkClient(url, "ro", "ro-secret"), sdkClient(url, "team", "team-secret")
	for _, b := range []string{"shared", "team", "private"} {
		if _, err := admin.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(b)}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String("o"), Body: strings.NewReader("x")}); err != nil {
			t.Fatal(err)
		}
	}
	lb, err := ro.ListBuckets(ctx, &s3.ListBucketsInput{})
	if err != nil || len(lb.Buckets) != 1 || *lb.Buckets[0].Name != "shared" {
		t.Fatalf("ro sees %v (%v), want only shared", lb, err)
	}
	if _, err := ro.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("shared"), Key: aws.String("o")}); err != nil {
		t.Fatalf("ro read shared: %v", err)
	}
	for name, err := range map[string]error{
		"ro put shared":   put(ctx, ro, "shared", "n"),
		"ro get private":  get(ctx, ro, "private", "o"),
		"team put shared": put(ctx, team, "shared", "n"),
	} {
		if apiCode(err) != "AccessDenied" {
			t.Errorf("%s: %v, want AccessDenied", name, err)
		}
	}
	if err := put(ctx, team, "team", "n"); err != nil {
		t.Fatalf("team writes its bucket: %v", err)
	}
	// Write access implies read access.
	if err := get(ctx, team, "team", "o"); err != nil {
		t.Fatalf("team reads the bucket it may write: %v", err)
	}
	// Copy needs read access to the source as well as write to the target.
	_, err = team.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("team"), Key: aws.String("stolen"), CopySource: aws.String("private/o")})
	if apiCode(err) != "AccessDenied" {
		t.Fatalf("copy from an unreadable bucket: %v", err)
	}
	_, err = sdkClient(url, "admin", "wrong").ListBuckets(ctx, &s3.ListBucketsInput{})
	if apiCode(err) != "SignatureDoesNotMatch" {
		t.Fatalf("wrong secret: %v", err)
	}
}

func put(ctx context.Context, c *s3.Client, b, k string) error {
	_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(b), Key: aws.String(k), Body: strings.NewReader("data")})
	return err
}

func get(ctx context.Context, c *s3.Client, b, k string) error {
	_, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(b), Key: aws.String(k)})
	return err
}

func TestUnimplementedAndUnsigned(t *testing.T) {
	url := newTestServer(t, SingleCredential("ak", "sk"))
	ctx := context.Background()
	c := sdkClient(url, "ak", "sk")
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt1")}); err != nil {
		t.Fatal(err)
	}
	_, err := c.PutBucketAccelerateConfiguration(ctx, &s3.PutBucketAccelerateConfigurationInput{Bucket: aws.String("bkt1"),
		AccelerateConfiguration: &types.AccelerateConfiguration{Status: types.BucketAccelerateStatusEnabled}})
	if apiCode(err) != "NotImplemented" {
		t.Fatalf("accelerate: %v, want NotImplemented", err)
	}
	// The message names the operation and the client settings that avoid it.
	for _, want := range []string{"PUT ?accelerate", "leave those off in the client"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("accelerate: message lacks %q: %v", want, err)
		}
	}
	resp, err := http.Get(url + "/bkt1/k")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 403 || !bytes.Contains(body, []byte("<Code>AccessDenied</Code>")) {
		t.Fatalf("unsigned GET: %d %s", resp.StatusCode, body)
	}
	resp, err = http.Get(url + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	resp.Body.Close()
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt1"), Key: aws.String(".s3seal/x"), Body: strings.NewReader("x")})
	if apiCode(err) != "InvalidArgument" {
		t.Fatalf("reserved key: %v", err)
	}
	_, err = c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt1"), Key: aws.String("k"), Body: strings.NewReader("x"),
		Metadata: map[string]string{"s3seal-kid": "evil"}})
	if apiCode(err) != "InvalidArgument" {
		t.Fatalf("reserved metadata: %v", err)
	}
}

func TestParseRange(t *testing.T) {
	cases := map[string]*sealstore.Range{
		"":              nil,
		"bytes=0-9":     {First: 0, Last: 9},
		"bytes=5-":      {First: 5, Last: -1},
		"bytes=-7":      {First: -1, SuffixLen: 7},
		"bytes=9-3":     nil, // invalid: ignored, whole object
		"bytes=0-1,4-5": nil, // multi-range: ignored
		"items=0-1":     nil,
		"bytes=a-b":     nil,
	}
	for in, want := range cases {
		got, err := parseRange(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if (got == nil) != (want == nil) || (got != nil && *got != *want) {
			t.Errorf("%q: got %+v want %+v", in, got, want)
		}
	}
}

func TestCheckConditions(t *testing.T) {
	info := sealstore.ObjectInfo{ETag: "abc"}
	cases := []struct {
		hdr  map[string]string
		want string
	}{
		{map[string]string{"If-Match": `"abc"`}, ""},
		{map[string]string{"If-Match": `"zzz"`}, "PreconditionFailed"},
		{map[string]string{"If-Match": `*`}, ""},
		{map[string]string{"If-None-Match": `"abc"`}, "NotModified"},
		{map[string]string{"If-None-Match": `"x", "abc"`}, "NotModified"},
		{map[string]string{"If-None-Match": `"zzz"`}, ""},
		{map[string]string{"If-Modified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}, ""},
		{map[string]string{"If-Unmodified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}, "PreconditionFailed"},
		// If-Match wins over If-Unmodified-Since, as RFC 9110 orders them.
		{map[string]string{"If-Match": `"abc"`, "If-Unmodified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"}, ""},
	}
	info.LastModified = mustTime(t, "Tue, 03 Jan 2006 15:04:05 GMT")
	for _, c := range cases {
		r := httptest.NewRequest("GET", "/b/k", nil)
		for k, v := range c.hdr {
			r.Header.Set(k, v)
		}
		err := checkConditions(r, info)
		got := ""
		if err != nil {
			got = string(toAPIError(err).Code)
		}
		if got != c.want {
			t.Errorf("%v: got %q want %q", c.hdr, got, c.want)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	tm, err := http.ParseTime(s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func TestStripAWSChunkedAndCopySource(t *testing.T) {
	if got := stripAWSChunked("aws-chunked,gzip"); got != "gzip" {
		t.Fatalf("got %q", got)
	}
	if got := stripAWSChunked("aws-chunked"); got != "" {
		t.Fatalf("got %q", got)
	}
	b, k, _, err := parseCopySource("/bkt/dir/a%20b%2Bc")
	if err != nil || b != "bkt" || k != "dir/a b+c" {
		t.Fatalf("%q %q %v", b, k, err)
	}
	if _, k, v, err := parseCopySource("bkt/k%3Fx?versionId=1%2B2345678901234567890"); err != nil || k != "k?x" || v != "1+2345678901234567890" {
		t.Fatalf("version id: %q %q %v", k, v, err)
	}
	if _, _, _, err := parseCopySource("bkt/k?versionId="); toAPIError(err).Code != "InvalidArgument" {
		t.Fatalf("empty version id: %v", err)
	}
	if _, _, _, err := parseCopySource("nokey"); toAPIError(err).Code != "InvalidArgument" {
		t.Fatalf("no key: %v", err)
	}
}

func TestDeleteObjectsChecksBody(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if err := put(ctx, c, "bkt", "keep"); err != nil {
		t.Fatal(err)
	}
	del := &s3.DeleteObjectsInput{Bucket: aws.String("bkt"), Delete: &types.Delete{Objects: []types.ObjectIdentifier{{Key: aws.String("keep")}}}}
	// A checksum header that does not match the XML body: refused, nothing deleted.
	_, err := c.DeleteObjects(ctx, del, func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, smithyhttp.AddHeaderValue("X-Amz-Checksum-Crc32", "AAAAAA=="))
	})
	if apiCode(err) != "BadDigest" {
		t.Fatalf("forged checksum: %v, want BadDigest", err)
	}
	if err := get(ctx, c, "bkt", "keep"); err != nil {
		t.Fatalf("object deleted by a request that failed its checksum: %v", err)
	}
	// The SDK's own checksum (CRC32 by default when asked) passes.
	out, err := c.DeleteObjects(ctx, del, func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported })
	if err != nil || len(out.Deleted) != 1 {
		t.Fatalf("delete: %+v %v", out, err)
	}
}

func TestCopyChecksumAlgorithm(t *testing.T) {
	_, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("src"), Body: strings.NewReader("hello"),
		ChecksumAlgorithm: types.ChecksumAlgorithmSha256}); err != nil {
		t.Fatal(err)
	}
	head := func(key string) *s3.HeadObjectOutput {
		out, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	src := head("src")
	if aws.ToString(src.ChecksumSHA256) == "" {
		t.Fatal("no SHA-256 kept for the source")
	}
	// Without a request the copy keeps the source's algorithm.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("same"), CopySource: aws.String("bkt/src")}); err != nil {
		t.Fatal(err)
	}
	if got := aws.ToString(head("same").ChecksumSHA256); got != aws.ToString(src.ChecksumSHA256) {
		t.Fatalf("copy checksum %q, want the source's %q", got, aws.ToString(src.ChecksumSHA256))
	}
	// x-amz-checksum-algorithm picks another one.
	if _, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: aws.String("bkt"), Key: aws.String("crc"), CopySource: aws.String("bkt/src"),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32c}); err != nil {
		t.Fatal(err)
	}
	if got := head("crc"); aws.ToString(got.ChecksumCRC32C) != "mnG7TA==" || got.ChecksumSHA256 != nil {
		t.Fatalf("copy with CRC32C asked: crc32c=%q sha256=%v", aws.ToString(got.ChecksumCRC32C), got.ChecksumSHA256)
	}
}

func TestConditionalAnswersHeaders(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("bkt"), Key: aws.String("gz"), Body: strings.NewReader("x"),
		ContentEncoding: aws.String("gzip"), Metadata: map[string]string{"m": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	send := func(h, v string) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, url+"/bkt/gz", nil)
		req.Header.Set(h, v)
		if err := signRequest(ctx, req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	r := send("If-None-Match", aws.ToString(out.ETag))
	if r.StatusCode != 304 || r.Header.Get("ETag") != aws.ToString(out.ETag) || r.Header.Get("Last-Modified") == "" {
		t.Fatalf("304: %d %v", r.StatusCode, r.Header)
	}
	r = send("If-Match", `"other"`)
	if r.StatusCode != 412 || r.Header.Get("Content-Encoding") != "" || r.Header.Get("X-Amz-Meta-M") != "" {
		t.Fatalf("412 carries the object's headers: %d %v", r.StatusCode, r.Header)
	}
}

// signRequest signs a hand-made request with the test credential.
func signRequest(ctx context.Context, req *http.Request) error {
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	req.Header.Set("X-Amz-Content-Sha256", empty)
	return v4.NewSigner().SignHTTP(ctx, aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req, empty, "s3", "us-east-1", time.Now())
}
