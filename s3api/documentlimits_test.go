package s3api

import (
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/s3seal/s3seal/s3api/cors"
)

// endlessBody is a request body of n bytes of one repeated document
// fragment that counts what the server reads of it.
type endlessBody struct {
	left, read int64
}

func (b *endlessBody) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), b.left))
	for i := range p[:n] {
		p[i] = "<Object><Key>k</Key></Object>"[(b.read+int64(i))%29]
	}
	b.left -= int64(n)
	b.read += int64(n)
	return n, nil
}

// adminLimitServer is an in-process s3seal with one admin credential
// (ak/sk) over the embedded store, sub-resources going to a fake store,
// and a bucket "bkt".
func adminLimitServer(t *testing.T) *httptest.Server {
	t.Helper()
	creds := Credentials{"ak": {AccessKey: "ak", SecretKey: "sk", Read: []string{"*"}, Write: []string{"*"}, Admin: true}}
	srv := newTestServerFw(t, Config{Credentials: creds}, &fakeForwarder{})
	if _, err := sdkClient(srv.URL, "ak", "sk").CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String("bkt")}); err != nil {
		t.Fatal(err)
	}
	return srv
}

// Every request document s3seal reads whole is read through its bound:
// a 100 MB document, sent without a length as a streaming client would,
// is refused with the S3 error past the bound after s3seal has read at
// most the bound and one byte, and its heap grows by a small multiple of
// the bound, not by the body. A document of exactly the bound is read
// whole and judged on what it says.
func TestDocumentReadsBounded(t *testing.T) {
	srv := adminLimitServer(t)
	api := srv.Config.Handler.(*Server)
	md5Header := http.Header{"Content-Md5": {"1B2M2Y8AsgTpgAmY7PhCfg=="}}
	tooBig := "<Code>MaxMessageLengthExceeded</Code>"
	for _, tc := range []struct {
		name, method, target string
		header               http.Header
		limit                int64
		past                 string // what marks the answer past the bound
	}{
		{"DeleteObjects", "POST", "/bkt?delete", md5Header, maxXMLBody, tooBig},
		{"CompleteMultipartUpload", "POST", "/bkt/k?uploadId=u", nil, maxCompleteBody, tooBig},
		{"CreateBucket", "PUT", "/bkt2", nil, maxXMLBody, tooBig},
		{"PutObjectTagging", "PUT", "/bkt/k?tagging", nil, maxXMLBody, tooBig},
		{"PutBucketTagging", "PUT", "/bkt?tagging", md5Header, maxXMLBody, tooBig},
		{"PutBucketPolicy", "PUT", "/bkt?policy", nil, maxPolicyBody,
			"<Code>MalformedPolicy</Code><Message>Policy exceeds the maximum allowed document size.</Message>"},
		{"PutBucketCors", "PUT", "/bkt?cors", md5Header, cors.MaxBody, tooBig},
		{"PutBucketLifecycle", "PUT", "/bkt?lifecycle", md5Header, maxXMLBody, tooBig},
		{"PutBucketWebsite", "PUT", "/bkt?website", nil, maxWebsiteBody, tooBig},
		{"PutBucketAcl", "PUT", "/bkt?acl", nil, maxXMLBody, tooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			send := func(size int64) (*httptest.ResponseRecorder, int64, uint64) {
				body := &endlessBody{left: size}
				req := httptest.NewRequest(tc.method, srv.URL+tc.target, body)
				req.ContentLength = -1
				req.TransferEncoding = []string{"chunked"}
				for k, v := range tc.header {
					req.Header[k] = v
				}
				req.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
				if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
					req, "UNSIGNED-PAYLOAD", "s3", "us-east-1", time.Now()); err != nil {
					t.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rec := httptest.NewRecorder()
				api.ServeHTTP(rec, req)
				runtime.ReadMemStats(&after)
				return rec, body.read, after.TotalAlloc - before.TotalAlloc
			}
			rec, read, grown := send(100 << 20)
			if rec.Code != 400 || !strings.Contains(rec.Body.String(), tc.past) {
				t.Fatalf("%d %s, want 400 %s", rec.Code, rec.Body, tc.past)
			}
			if read > tc.limit+1 {
				t.Errorf("read %d bytes of the body, bound %d", read, tc.limit)
			}
			if grown > uint64(8*tc.limit+4<<20) {
				t.Errorf("allocated %d bytes for a body bounded at %d", grown, tc.limit)
			}
			t.Logf("bound %d: read %d bytes of 100 MiB, allocated %d KiB", tc.limit, read, grown>>10)
			if rec, read, _ := send(tc.limit); read != tc.limit || strings.Contains(rec.Body.String(), tc.past) {
				t.Errorf("a body of exactly the bound: read %d bytes of %d, answered %d %s", read, tc.limit, rec.Code, rec.Body)
			}
		})
	}
}

// sendDoc sends an admin's signed request with body and its Content-MD5.
func sendDoc(t *testing.T, url, method, target, body string) (int, string) {
	t.Helper()
	sum := md5.Sum([]byte(body))
	r, got := doSigned(t, method, url+target, http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(sum[:])}}, body)
	return r.StatusCode, got
}

// padded is doc grown with white space before its closing tag (or
// brace) to n bytes.
func padded(doc string, n int) string {
	i := strings.LastIndexAny(doc, "<}")
	return doc[:i] + strings.Repeat(" ", n-len(doc)) + doc[i:]
}

// S3's counts and sizes of request documents: a document at the limit is
// taken, one past it refused with S3's code and status.
func TestDocumentLimitsAtAndPast(t *testing.T) {
	srv := adminLimitServer(t)
	keys := func(n int) string {
		var b strings.Builder
		b.WriteString("<Delete>")
		for i := range n {
			fmt.Fprintf(&b, "<Object><Key>k%d</Key></Object>", i)
		}
		return b.String() + "</Delete>"
	}
	tags := func(n, klen, vlen int) string {
		var b strings.Builder
		b.WriteString("<Tagging><TagSet>")
		for i := range n {
			k := fmt.Sprintf("%0*d", klen, i)
			fmt.Fprintf(&b, "<Tag><Key>%s</Key><Value>%s</Value></Tag>", k, strings.Repeat("v", vlen))
		}
		return b.String() + "</TagSet></Tagging>"
	}
	corsRules := func(n int) string {
		return "<CORSConfiguration>" + strings.Repeat("<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>", n) + "</CORSConfiguration>"
	}
	lifecycle := func(n int) string {
		var b strings.Builder
		b.WriteString("<LifecycleConfiguration>")
		for i := range n {
			fmt.Fprintf(&b, "<Rule><ID>r%d</ID><Filter><Prefix>p%d/</Prefix></Filter><Status>Enabled</Status><Expiration><Days>1</Days></Expiration></Rule>", i, i)
		}
		return b.String() + "</LifecycleConfiguration>"
	}
	policy := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"s3:GetObject","Resource":"arn:aws:s3:::bkt/*"}]}`
	for _, tc := range []struct {
		name, method, target, body string
		status                     int
		code                       string
	}{
		{"1000 keys to delete", "POST", "/bkt?delete", keys(1000), 200, ""},
		{"1001 keys to delete", "POST", "/bkt?delete", keys(1001), 400, "MalformedXML"},
		{"10 object tags", "PUT", "/bkt/k?tagging", tags(10, 128, 256), 200, ""},
		{"11 object tags", "PUT", "/bkt/k?tagging", tags(11, 1, 1), 400, "BadRequest"},
		{"a tag key of 129", "PUT", "/bkt/k?tagging", tags(1, 129, 1), 400, "InvalidTag"},
		{"a tag value of 257", "PUT", "/bkt/k?tagging", tags(1, 1, 257), 400, "InvalidTag"},
		{"50 bucket tags", "PUT", "/bkt?tagging", tags(50, 128, 256), 204, ""},
		{"51 bucket tags", "PUT", "/bkt?tagging", tags(51, 1, 1), 400, "BadRequest"},
		{"100 CORS rules", "PUT", "/bkt?cors", corsRules(100), 200, ""},
		{"101 CORS rules", "PUT", "/bkt?cors", corsRules(101), 400, "MalformedXML"},
		{"a CORS configuration of 64 KiB", "PUT", "/bkt?cors", padded(corsRules(1), cors.MaxBody), 200, ""},
		{"a CORS configuration past 64 KiB", "PUT", "/bkt?cors", padded(corsRules(1), cors.MaxBody+1), 400, "MaxMessageLengthExceeded"},
		{"1000 lifecycle rules", "PUT", "/bkt?lifecycle", lifecycle(1000), 200, ""},
		{"1001 lifecycle rules", "PUT", "/bkt?lifecycle", lifecycle(1001), 400, "MalformedXML"},
		{"no lifecycle rule", "PUT", "/bkt?lifecycle", lifecycle(0), 400, "MalformedXML"},
		{"a policy of 20 KiB", "PUT", "/bkt?policy", padded(policy, maxPolicyBody), 204, ""},
		{"a policy past 20 KiB", "PUT", "/bkt?policy", padded(policy, maxPolicyBody+1), 400, "MalformedPolicy"},
	} {
		status, body := sendDoc(t, srv.URL, tc.method, tc.target, tc.body)
		if status != tc.status || tc.code != "" && !strings.Contains(body, "<Code>"+tc.code+"</Code>") {
			t.Errorf("%s (%d bytes): %d %s, want %d %s", tc.name, len(tc.body), status, body, tc.status, tc.code)
		}
	}
}

// A completion naming S3's 10 000 parts, each with a SHA-256, fits the
// body bound and reaches the store; one naming 10 001 does too and is
// refused for the parts it names (none was uploaded), in bounded time.
func TestCompleteManyParts(t *testing.T) {
	srv := adminLimitServer(t)
	ctx := context.Background()
	up, err := sdkClient(srv.URL, "ak", "sk").CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String("bkt"), Key: aws.String("k")})
	if err != nil {
		t.Fatal(err)
	}
	doc := func(n int) string {
		var b strings.Builder
		b.WriteString("<CompleteMultipartUpload>")
		for i := 1; i <= n; i++ {
			fmt.Fprintf(&b, `<Part><PartNumber>%d</PartNumber><ETag>"%032x"</ETag><ChecksumSHA256>%s</ChecksumSHA256></Part>`,
				i, i, base64.StdEncoding.EncodeToString(make([]byte, 32)))
		}
		return b.String() + "</CompleteMultipartUpload>"
	}
	for _, n := range []int{10000, 10001} {
		body := doc(n)
		if len(body) > maxCompleteBody {
			t.Fatalf("%d parts take %d bytes, past the bound %d", n, len(body), maxCompleteBody)
		}
		start := time.Now()
		status, got := sendDoc(t, srv.URL, "POST", "/bkt/k?uploadId="+*up.UploadId, body)
		if status != 400 || !strings.Contains(got, "<Code>InvalidPart</Code>") {
			t.Fatalf("%d parts: %d %s", n, status, got)
		}
		t.Logf("%d parts (%d bytes): InvalidPart in %v", n, len(body), time.Since(start))
	}
}
