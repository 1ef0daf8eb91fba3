package sigv4

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// captured is one raw request as a real SDK sent it.
type captured struct {
	req  *http.Request
	body []byte
}

func (c captured) replay(body []byte) *http.Request {
	r := c.req.Clone(context.Background())
	r.Body = io.NopCloser(bytes.NewReader(body))
	return r
}

// captureSDK runs op with an S3 client pointed at a server (TLS or not)
// that records the request and answers 200.
func captureSDK(t *testing.T, useTLS bool, op func(*s3.Client) error) captured {
	t.Helper()
	var (
		mu  sync.Mutex
		got []captured
	)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, captured{req: r.Clone(context.Background()), body: b})
		mu.Unlock()
		w.Header().Set("ETag", `"d41d8cd98f00b204e9800998ecf8427e"`)
	})
	srv := httptest.NewServer(h)
	if useTLS {
		srv.Close()
		srv = httptest.NewTLSServer(h)
	}
	defer srv.Close()
	client := s3.New(s3.Options{
		Region:       testRegion,
		BaseEndpoint: aws.String(srv.URL),
		UsePathStyle: true,
		HTTPClient:   srv.Client(),
		Retryer:      aws.NopRetryer{},
		// The default of current SDKs (LoadDefaultConfig resolves it).
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return testCreds, nil
		}),
	})
	if err := op(client); err != nil {
		t.Fatalf("sdk call: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("captured %d requests", len(got))
	}
	return got[0]
}

func realClockVerifier() *Verifier { return NewVerifier(StaticCredentials{testAK: testSecret}) }

// TestSDKPutObjectTLSTrailer: over HTTPS the SDK sends an aws-chunked body
// with STREAMING-UNSIGNED-PAYLOAD-TRAILER and an x-amz-checksum-crc32
// trailer.
func TestSDKPutObjectTLSTrailer(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789abcdef"), 5000) // 80000 bytes
	c := captureSDK(t, true, func(cl *s3.Client) error {
		_, err := cl.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String("dir/key with space+plus=é"),
			// An unseekable body makes the SDK stream with a trailer checksum.
			Body: struct{ io.Reader }{bytes.NewReader(payload)}, ContentLength: aws.Int64(int64(len(payload))),
		})
		return err
	})
	if got := c.req.Header.Get("X-Amz-Content-Sha256"); got != StreamingUnsignedPayloadTrail {
		t.Fatalf("SDK sent x-amz-content-sha256 %q; test assumes %s", got, StreamingUnsignedPayloadTrail)
	}
	v := realClockVerifier()
	res, err := v.Verify(c.replay(c.body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) || res.DecodedLength != int64(len(payload)) {
		t.Fatalf("decoded %d bytes (DecodedLength %d), want %d", len(got), res.DecodedLength, len(payload))
	}
	if res.Trailer().Get("X-Amz-Checksum-Crc32") == "" {
		t.Fatalf("trailer = %v, want x-amz-checksum-crc32", res.Trailer())
	}

	// Tampering with the captured body must fail.
	tamper := map[string][]byte{
		"truncated":          c.body[:len(c.body)-10],
		"cut mid chunk":      c.body[:len(c.body)/2],
		"extended":           append(bytes.Clone(c.body), "0\r\n\r\n"...),
		"size grown":         growFirstChunk(c.body),
		"undeclared trailer": bytes.Replace(c.body, []byte("x-amz-checksum-crc32:"), []byte("x-amz-checksum-crc33:"), 1),
		"no final chunk":     c.body[:bytes.LastIndex(c.body, []byte("0\r\nx-amz"))],
	}
	for name, b := range tamper {
		t.Run(name, func(t *testing.T) {
			if bytes.Equal(b, c.body) {
				t.Fatal("tamper did not change the body")
			}
			res, err := v.Verify(c.replay(b))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadAll(res.Body); err == nil {
				t.Fatal("tampered body read without error")
			}
			if res.Trailer() != nil {
				t.Fatal("trailer exposed after failure")
			}
		})
	}
}

// TestSDKPutObjectPlainHTTP: over HTTP the SDK signs the payload SHA-256
// and sends the checksum as a header.
func TestSDKPutObjectPlainHTTP(t *testing.T) {
	payload := []byte(strings.Repeat("plain http ", 1000))
	c := captureSDK(t, false, func(cl *s3.Client) error {
		_, err := cl.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: aws.String("bucket"), Key: aws.String("ü/ñ key"), Body: bytes.NewReader(payload),
			Metadata: map[string]string{"Multi": "a  b"},
		})
		return err
	})
	v := realClockVerifier()
	res, err := v.Verify(c.replay(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.ReadAll(res.Body); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("body %d bytes, err %v", len(got), err)
	}
	bad := bytes.Clone(c.body)
	bad[0] ^= 1
	res, err = v.Verify(c.replay(bad))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	wantCode(t, err, CodeXAmzContentSHA256Mismatch, 400)
}

// TestSDKListAndPresign exercises query signing and the presign client.
func TestSDKListAndPresign(t *testing.T) {
	c := captureSDK(t, false, func(cl *s3.Client) error {
		_, err := cl.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{
			Bucket: aws.String("bucket"), Prefix: aws.String("a b+c=d/é"), Delimiter: aws.String("/"),
			StartAfter: aws.String("~!*'()"),
		})
		return err
	})
	if _, err := realClockVerifier().Verify(c.replay(nil)); err != nil {
		t.Fatalf("ListObjectsV2: %v", err)
	}

	srv := newVerifyServer(t, realClockVerifier(), false)
	pc := s3.NewPresignClient(s3.New(s3.Options{
		Region: testRegion, BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) { return testCreds, nil }),
	}))
	put, err := pc.PresignPutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("bucket"), Key: aws.String("pre signed+key")})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(put.Method, put.URL, strings.NewReader("presigned body"))
	for k, vs := range put.SignedHeader {
		req.Header[k] = vs
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.take(t); o.err != nil || string(o.body) != "presigned body" {
		t.Fatalf("presigned PUT: %v %q", o.err, o.body)
	}
	get, err := pc.PresignGetObject(context.Background(), &s3.GetObjectInput{Bucket: aws.String("bucket"), Key: aws.String("ä/b")})
	if err != nil {
		t.Fatal(err)
	}
	resp, err = srv.Client().Get(get.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if o := srv.take(t); o.err != nil {
		t.Fatalf("presigned GET: %v", o.err)
	}
}

// growFirstChunk adds one to the size in the first chunk header.
func growFirstChunk(b []byte) []byte {
	i := bytes.Index(b, []byte("\r\n"))
	n, _ := strconv.ParseInt(string(b[:i]), 16, 64)
	return append([]byte(strconv.FormatInt(n+1, 16)), b[i:]...)
}
