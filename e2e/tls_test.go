package e2e

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"hash/crc32"
	"hash/crc64"
	"io"
	"math/big"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// testTLS is a throw-away CA and a server certificate it signed for
// 127.0.0.1 and localhost, written as PEM files.
type testTLS struct {
	CAFile, CertFile, KeyFile string
	Pool                      *x509.CertPool
}

func newTestTLS(t *testing.T) *testTLS {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "s3seal e2e test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	pemOf := func(typ string, der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}) }
	tt := &testTLS{
		CAFile:   writeFile(t, dir, "ca.pem", pemOf("CERTIFICATE", caDER)),
		CertFile: writeFile(t, dir, "server.pem", pemOf("CERTIFICATE", srvDER)),
		KeyFile:  writeFile(t, dir, "server-key.pem", pemOf("EC PRIVATE KEY", keyDER)),
		Pool:     x509.NewCertPool(),
	}
	tt.Pool.AddCert(caCert)
	return tt
}

// startTLSS3seal runs s3seal (embedded store) serving HTTPS with tt.
func startTLSS3seal(t *testing.T, tt *testTLS, o sealOpts) *sealProc {
	t.Helper()
	o.TLSCert, o.TLSKey, o.TLSRoots = tt.CertFile, tt.KeyFile, tt.Pool
	p := startS3seal(t, o)
	if !strings.HasPrefix(p.Endpoint, "https://") {
		t.Fatalf("endpoint %s is not https", p.Endpoint)
	}
	return p
}

// sentRequest is what a recorder saw of one request.
type sentRequest struct {
	Method, Path string
	Header       http.Header
	Proto        string // protocol of the response
}

// reqRecorder is an http.RoundTripper that remembers every request's
// headers and the protocol its response came over.
type reqRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []sentRequest
}

func (r *reqRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	s := sentRequest{Method: req.Method, Path: req.URL.Path, Header: req.Header.Clone()}
	if resp != nil {
		s.Proto = resp.Proto
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, s)
	r.mu.Unlock()
	return resp, err
}

// last returns the last recorded request with this method and path.
func (r *reqRecorder) last(method, path string) (sentRequest, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.reqs) - 1; i >= 0; i-- {
		if r.reqs[i].Method == method && r.reqs[i].Path == path {
			return r.reqs[i], true
		}
	}
	return sentRequest{}, false
}

// newDefaultSDKClient builds an aws-sdk-go-v2 client with the SDK's DEFAULT
// checksum settings (calculation and validation WhenSupported), trusting
// roots (nil: system roots), recording every request. h2 forces HTTP/2
// negotiation over TLS.
func newDefaultSDKClient(t *testing.T, endpoint, ak, sk string, roots *x509.CertPool, h2 bool) (*s3.Client, *reqRecorder) {
	t.Helper()
	tr := loopbackTransport()
	tr.TLSClientConfig = &tls.Config{RootCAs: roots}
	tr.ForceAttemptHTTP2 = h2
	t.Cleanup(tr.CloseIdleConnections)
	rec := &reqRecorder{next: tr}
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(ak, sk, ""),
		HTTPClient:  &http.Client{Transport: rec},
		Retryer:     func() aws.Retryer { return aws.NopRetryer{} },
		// What config.LoadDefaultConfig resolves to when nothing is
		// configured (a bare aws.Config leaves them unset, which the S3
		// client treats as "only when required").
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenSupported,
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.UsePathStyle = true
	})
	return c, rec
}

func crc32B64(b []byte) string {
	var s [4]byte
	binary.BigEndian.PutUint32(s[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(s[:])
}

var crc64NVMETable = crc64.MakeTable(0x9a6c9329ac4bc9b5) // CRC-64/NVME, reflected

func crc64NVMEB64(b []byte) string {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], crc64.Checksum(b, crc64NVMETable))
	return base64.StdEncoding.EncodeToString(s[:])
}

// checksumSizes are the body sizes the checksum tests send.
var checksumSizes = []int{0, 1, 65535, 65536, 65537, 5 << 20}

// TestTLSDefaultChecksums drives s3seal with aws-sdk-go-v2 on its default
// checksum settings: over HTTPS (HTTP/2 and HTTP/1.1) PutObject sends an
// aws-chunked body with STREAMING-UNSIGNED-PAYLOAD-TRAILER and an
// x-amz-checksum-crc32 trailer; over plain HTTP the checksum comes as a
// header. Either way the object keeps the CRC32 and reports it back.
func TestTLSDefaultChecksums(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	ps := startTLSS3seal(t, tt, sealOpts{})
	p := startS3seal(t, sealOpts{})
	for _, v := range []struct {
		name     string
		p        *sealProc
		h2       bool
		trailer  bool
		wantHTTP string
	}{
		{"https-h2", ps, true, true, "HTTP/2.0"},
		{"https-h1", ps, false, true, "HTTP/1.1"},
		{"http", p, false, false, "HTTP/1.1"},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			c, rec := newDefaultSDKClient(t, v.p.Endpoint, v.p.AccessKey, v.p.SecretKey, tt.Pool, v.h2)
			ctx := ctxT(t)
			bucket := "ck-" + v.name
			mustCreateBucket(t, c, bucket)
			var keys []types.ObjectIdentifier
			for i, size := range checksumSizes {
				key := fmt.Sprintf("obj-%d", size)
				keys = append(keys, types.ObjectIdentifier{Key: aws.String(key)})
				body := patternBytes(uint64(500+i), size)
				want := crc32B64(body)
				out, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(body)})
				if err != nil {
					t.Fatalf("PutObject %d bytes: %v", size, err)
				}
				if got := unquote(out.ETag); got != md5Hex(body) {
					t.Errorf("PutObject %d bytes: ETag %s, want %s", size, got, md5Hex(body))
				}
				if got := aws.ToString(out.ChecksumCRC32); got != want {
					t.Errorf("PutObject %d bytes: response x-amz-checksum-crc32 %q, want %q", size, got, want)
				}
				sent, ok := rec.last(http.MethodPut, "/"+bucket+"/"+key)
				if !ok {
					t.Fatalf("PutObject %d bytes: request not recorded", size)
				}
				if sent.Proto != v.wantHTTP {
					t.Errorf("PutObject %d bytes: response over %s, want %s", size, sent.Proto, v.wantHTTP)
				}
				if v.trailer && size > 0 { // an empty body gets its checksum as a header
					if m, tr := sent.Header.Get("X-Amz-Content-Sha256"), sent.Header.Get("X-Amz-Trailer"); m != "STREAMING-UNSIGNED-PAYLOAD-TRAILER" || !strings.EqualFold(tr, "x-amz-checksum-crc32") {
						t.Errorf("PutObject %d bytes over TLS: x-amz-content-sha256 %q x-amz-trailer %q; the SDK did not use the trailer path this test is for", size, m, tr)
					}
				} else if got := sent.Header.Get("X-Amz-Checksum-Crc32"); got != want {
					t.Errorf("PutObject %d bytes over HTTP: sent x-amz-checksum-crc32 header %q, want %q", size, got, want)
				}

				g, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatalf("GetObject %d bytes: %v", size, err)
				}
				got, err := io.ReadAll(g.Body)
				g.Body.Close()
				if err != nil || !bytes.Equal(got, body) {
					t.Errorf("GetObject %d bytes: %d bytes back (err %v), want identical", size, len(got), err)
				}
				if c := aws.ToString(g.ChecksumCRC32); c != want {
					t.Errorf("GetObject %d bytes checksum mode: x-amz-checksum-crc32 %q, want %q", size, c, want)
				}
				if unquote(g.ETag) != md5Hex(body) {
					t.Errorf("GetObject %d bytes: ETag %s, want %s", size, unquote(g.ETag), md5Hex(body))
				}
				h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatalf("HeadObject %d bytes: %v", size, err)
				}
				if c := aws.ToString(h.ChecksumCRC32); c != want {
					t.Errorf("HeadObject %d bytes checksum mode: x-amz-checksum-crc32 %q, want %q", size, c, want)
				}
				if aws.ToInt64(h.ContentLength) != int64(size) || unquote(h.ETag) != md5Hex(body) {
					t.Errorf("HeadObject %d bytes: length %d ETag %s", size, aws.ToInt64(h.ContentLength), unquote(h.ETag))
				}
				if h.ChecksumCRC64NVME != nil {
					t.Errorf("HeadObject %d bytes: unexpected CRC64NVME %q besides the client's CRC32", size, *h.ChecksumCRC64NVME)
				}
			}

			// Without checksum mode no checksum is reported.
			h, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("obj-1")})
			if err != nil {
				t.Fatal(err)
			}
			if h.ChecksumCRC32 != nil {
				t.Errorf("HeadObject without checksum mode reported x-amz-checksum-crc32 %q", *h.ChecksumCRC32)
			}

			// A client that sends no checksum gets CRC64NVME kept for it.
			plain := newSDKClient(t, v.p.Endpoint, v.p.AccessKey, v.p.SecretKey, true)
			if v.trailer {
				plain, _ = newDefaultSDKClient(t, v.p.Endpoint, v.p.AccessKey, v.p.SecretKey, tt.Pool, v.h2)
				plain = s3.New(plain.Options(), func(o *s3.Options) {
					o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
				})
			}
			body := patternBytes(599, 70001)
			putObj(t, plain, bucket, "nocrc", body)
			h, err = c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("nocrc"), ChecksumMode: types.ChecksumModeEnabled})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := aws.ToString(h.ChecksumCRC64NVME), crc64NVMEB64(body); got != want {
				t.Errorf("HeadObject of an object PUT without checksum: x-amz-checksum-crc64nvme %q, want %q", got, want)
			}
			keys = append(keys, types.ObjectIdentifier{Key: aws.String("nocrc")})

			// DeleteObjects with the SDK's default request checksum.
			del, err := c.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(bucket), Delete: &types.Delete{Objects: keys}})
			if err != nil {
				t.Fatalf("DeleteObjects: %v", err)
			}
			if len(del.Deleted) != len(keys) || len(del.Errors) != 0 {
				t.Errorf("DeleteObjects: %d deleted, %d errors, want %d deleted", len(del.Deleted), len(del.Errors), len(keys))
			}
			if sent, ok := rec.last(http.MethodPost, "/"+bucket); ok && sent.Header.Get("Content-Md5") == "" && sent.Header.Get("X-Amz-Checksum-Crc32") == "" && sent.Header.Get("X-Amz-Trailer") == "" {
				t.Logf("DeleteObjects sent neither Content-MD5 nor a CRC32 (headers %v)", sent.Header)
			}
			l, err := c.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Contents) != 0 {
				t.Errorf("after DeleteObjects %d objects remain", len(l.Contents))
			}
		})
	}
}

// TestTLSHTTP2 checks that s3seal negotiates HTTP/2 over TLS with a plain
// net/http client, and still speaks HTTP/1.1 to a client that wants it.
func TestTLSHTTP2(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	p := startTLSS3seal(t, tt, sealOpts{})
	for _, h2 := range []bool{true, false} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: tt.Pool}, ForceAttemptHTTP2: h2}
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		resp, err := client.Get(p.Endpoint + "/healthz")
		if err != nil {
			t.Fatalf("GET /healthz over TLS (h2=%v): %v", h2, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := "HTTP/1.1"
		if h2 {
			want = "HTTP/2.0"
		}
		if resp.Proto != want || resp.StatusCode != http.StatusOK {
			t.Errorf("GET /healthz (ForceAttemptHTTP2=%v): %s %s, want %s 200", h2, resp.Proto, resp.Status, want)
		}
		tr.CloseIdleConnections()
	}
	// A client that does not trust the CA must fail the handshake.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(p.Endpoint + "/healthz")
	if err == nil {
		resp.Body.Close()
		t.Errorf("GET with system roots succeeded against a test-CA certificate")
	}
}

const boto3TLSScript = `
import base64, hashlib, json, sys, zlib
import boto3
from botocore.config import Config

endpoint, ak, sk, ca, bucket = sys.argv[1:6]
sent = []
def record(request, **kwargs):
    sent.append({k.lower(): (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()})
c = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=ak, aws_secret_access_key=sk,
                 region_name="us-east-1", verify=ca,
                 config=Config(signature_version="s3v4", s3={"addressing_style": "path"},
                               retries={"max_attempts": 1, "mode": "standard"}))
c.meta.events.register("before-send.s3.PutObject", record)
c.create_bucket(Bucket=bucket)
out = []
for size in (0, 1, 65537, 300000):
    body = bytes((i * 7 + size) % 251 for i in range(size))
    key = "boto/%d" % size
    put = c.put_object(Bucket=bucket, Key=key, Body=body)
    get = c.get_object(Bucket=bucket, Key=key)
    got = get["Body"].read()
    head = c.head_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
    crc = base64.b64encode((zlib.crc32(body) & 0xffffffff).to_bytes(4, "big")).decode()
    out.append({"size": size, "md5": hashlib.md5(body).hexdigest(), "crc32": crc,
                "put_etag": put["ETag"].strip('"'), "get_etag": get["ETag"].strip('"'),
                "head_etag": head["ETag"].strip('"'), "head_len": head["ContentLength"],
                "head_crc32": head.get("ChecksumCRC32", ""), "same": got == body,
                "sent_sha256": sent[-1].get("x-amz-content-sha256", ""), "sent_trailer": sent[-1].get("x-amz-trailer", "")})
print(json.dumps(out))
`

// TestTLSBoto3 runs boto3 (SigV4, verify= the test CA) against s3seal over
// HTTPS: botocore sends its default CRC32 as an aws-chunked trailer there.
func TestTLSBoto3(t *testing.T) {
	t.Parallel()
	py := requireBoto3(t)
	tt := newTestTLS(t)
	p := startTLSS3seal(t, tt, sealOpts{})
	dir := t.TempDir()
	script := writeFile(t, dir, "boto3_tls.py", []byte(boto3TLSScript))
	env := isolatedPythonEnv(dir, "AWS_EC2_METADATA_DISABLED=true")
	out := runTool(t, env, py, script, p.Endpoint, p.AccessKey, p.SecretKey, tt.CAFile, "boto-tls")
	var res []struct {
		Size        int    `json:"size"`
		Md5         string `json:"md5"`
		Crc32       string `json:"crc32"`
		Put         string `json:"put_etag"`
		Get         string `json:"get_etag"`
		Head        string `json:"head_etag"`
		HeadLen     int    `json:"head_len"`
		HeadCRC     string `json:"head_crc32"`
		Same        bool   `json:"same"`
		SentSHA     string `json:"sent_sha256"`
		SentTrailer string `json:"sent_trailer"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res) != 4 {
		t.Fatalf("boto3 output %q: %v", out, err)
	}
	for _, r := range res {
		if !r.Same || r.Put != r.Md5 || r.Get != r.Md5 || r.Head != r.Md5 || r.HeadLen != r.Size {
			t.Errorf("boto3 %d bytes over HTTPS: %+v", r.Size, r)
		}
		if r.HeadCRC != r.Crc32 {
			t.Errorf("boto3 %d bytes: head_object ChecksumCRC32 %q, want %q", r.Size, r.HeadCRC, r.Crc32)
		}
		if r.Size > 0 && (r.SentSHA != "STREAMING-UNSIGNED-PAYLOAD-TRAILER" || !strings.EqualFold(r.SentTrailer, "x-amz-checksum-crc32")) {
			t.Errorf("boto3 %d bytes: sent x-amz-content-sha256 %q x-amz-trailer %q (not the trailer path)", r.Size, r.SentSHA, r.SentTrailer)
		}
	}
}

// TestTLSAWSCLI runs the aws CLI over HTTPS with AWS_CA_BUNDLE naming the
// test CA.
func TestTLSAWSCLI(t *testing.T) {
	t.Parallel()
	tt := newTestTLS(t)
	p := startTLSS3seal(t, tt, sealOpts{})
	a := newAWSCLI(t, p)
	a.env = append(a.env, "AWS_CA_BUNDLE="+tt.CAFile)
	src := t.TempDir()
	files := map[string][]byte{"empty": {}, "one": {'x'}, "seg1": patternBytes(61, 65537), "big": patternBytes(62, 2<<20+3)}
	a.run("s3", "mb", "s3://cli-tls")
	for name, data := range files {
		f := writeFile(t, src, name, data)
		if name == "big" {
			a.run("s3", "cp", "--no-progress", f, "s3://cli-tls/"+name)
		} else {
			var put struct{ ETag, ChecksumCRC32 string }
			if err := json.Unmarshal([]byte(a.run("s3api", "put-object", "--bucket", "cli-tls", "--key", name, "--body", f)), &put); err != nil {
				t.Fatalf("put-object JSON: %v", err)
			}
			if strings.Trim(put.ETag, `"`) != md5Hex(data) {
				t.Errorf("put-object %s: ETag %s, want %s", name, put.ETag, md5Hex(data))
			}
		}
	}
	dst := t.TempDir()
	for name, data := range files {
		out := filepath.Join(dst, name)
		a.run("s3", "cp", "--no-progress", "s3://cli-tls/"+name, out)
		if got := readFile(t, out); !bytes.Equal(got, data) {
			t.Errorf("aws s3 cp down %s over HTTPS: %d bytes, want %d identical", name, len(got), len(data))
		}
		var head struct {
			ETag              string
			ContentLength     int64
			ChecksumCRC32     string
			ChecksumCRC64NVME string
		}
		if err := json.Unmarshal([]byte(a.run("s3api", "head-object", "--bucket", "cli-tls", "--key", name, "--checksum-mode", "ENABLED")), &head); err != nil {
			t.Fatalf("head-object JSON: %v", err)
		}
		if strings.Trim(head.ETag, `"`) != md5Hex(data) || head.ContentLength != int64(len(data)) {
			t.Errorf("head-object %s: ETag %s length %d, want %s %d", name, head.ETag, head.ContentLength, md5Hex(data), len(data))
		}
		// The CLI sends CRC32 by default; an object it sent none for keeps
		// CRC64NVME. Either way checksum mode must report the right one.
		if head.ChecksumCRC32 != crc32B64(data) && head.ChecksumCRC64NVME != crc64NVMEB64(data) {
			t.Errorf("head-object %s --checksum-mode ENABLED: CRC32 %q CRC64NVME %q, want CRC32 %s or CRC64NVME %s",
				name, head.ChecksumCRC32, head.ChecksumCRC64NVME, crc32B64(data), crc64NVMEB64(data))
		}
	}
}
