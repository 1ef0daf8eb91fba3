package checksum

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestCheckValues uses the published check values for "123456789".
func TestCheckValues(t *testing.T) {
	cases := []struct {
		a    Algorithm
		want uint64
	}{
		{CRC32, 0xCBF43926},
		{CRC32C, 0xE3069283},
		{CRC64NVME, 0xAE8B14860A799888},
	}
	for _, c := range cases {
		h := c.a.New()
		h.Write([]byte("123456789"))
		sum := h.Sum(nil)
		var got uint64
		if len(sum) == 4 {
			got = uint64(binary.BigEndian.Uint32(sum))
		} else {
			got = binary.BigEndian.Uint64(sum)
		}
		if got != c.want || len(sum) != c.a.Size() {
			t.Errorf("%s = %#x (%d bytes), want %#x", c.a, got, len(sum), c.want)
		}
	}
}

// sdkComputes lists the algorithms the go.mod's aws-sdk-go-v2 computes
// itself (service/internal/checksum knows SHA512 but not MD5 or xxHash).
var sdkComputes = map[Algorithm]bool{CRC32: true, CRC32C: true, CRC64NVME: true, SHA1: true, SHA256: true, SHA512: true}

// TestMatchesSDK: the values aws-sdk-go-v2 puts in x-amz-checksum-* for
// each algorithm must equal ours.
func TestMatchesSDK(t *testing.T) {
	payload := bytes.Repeat([]byte("s3seal checksum "), 777)
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		got = r.Header.Clone()
	}))
	defer srv.Close()
	cl := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), UsePathStyle: true,
		Retryer: aws.NopRetryer{}, Credentials: aws.AnonymousCredentials{}})
	for _, a := range Algorithms {
		if !sdkComputes[a] {
			continue // the SDK cannot compute it; TestDigestVectors covers it
		}
		t.Run(string(a), func(t *testing.T) {
			_, err := cl.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String("b"), Key: aws.String("k"),
				Body: bytes.NewReader(payload), ChecksumAlgorithm: types.ChecksumAlgorithm(a)})
			if err != nil {
				t.Fatal(err)
			}
			sdk := got.Get(a.HeaderName())
			if sdk == "" {
				t.Fatalf("SDK sent no %s; headers %v", a.HeaderName(), got)
			}
			h := NewHasher(a)
			h.Write(payload)
			if h.Base64() != sdk {
				t.Fatalf("ours %s, SDK %s", h.Base64(), sdk)
			}
			e, err := FromHeaders(got)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Verify(h, nil); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFromHeadersAndVerify(t *testing.T) {
	data := []byte("hello world")
	sum := func(a Algorithm) string { h := a.New(); h.Write(data); return b64(h.Sum(nil)) }
	md := md5.Sum(data)
	cases := []struct {
		name    string
		h       http.Header
		trailer http.Header
		parse   string // expected FromHeaders error code
		verify  string // expected Verify error code
		alg     Algorithm
	}{
		{name: "none", h: http.Header{}},
		{name: "md5 ok", h: http.Header{"Content-Md5": {b64(md[:])}}},
		{name: "md5 is the caller's check", h: http.Header{"Content-Md5": {b64(make([]byte, 16))}}},
		{name: "md5 malformed", h: http.Header{"Content-Md5": {"not base64!"}}, parse: CodeInvalidDigest},
		{name: "md5 short", h: http.Header{"Content-Md5": {b64([]byte("short"))}}, parse: CodeInvalidDigest},
		{name: "crc32 ok", h: http.Header{"X-Amz-Checksum-Crc32": {sum(CRC32)}}, alg: CRC32},
		{name: "crc32c ok", h: http.Header{"X-Amz-Checksum-Crc32c": {sum(CRC32C)}}, alg: CRC32C},
		{name: "crc64 ok", h: http.Header{"X-Amz-Checksum-Crc64nvme": {sum(CRC64NVME)}}, alg: CRC64NVME},
		{name: "sha1 ok", h: http.Header{"X-Amz-Checksum-Sha1": {sum(SHA1)}}, alg: SHA1},
		{name: "sha256 ok", h: http.Header{"X-Amz-Checksum-Sha256": {sum(SHA256)}}, alg: SHA256},
		{name: "crc32 mismatch", h: http.Header{"X-Amz-Checksum-Crc32": {sum(CRC32C)}}, verify: CodeBadDigest, alg: CRC32},
		{name: "sha256 malformed", h: http.Header{"X-Amz-Checksum-Sha256": {"bad"}}, parse: CodeInvalidRequest},
		{name: "wrong length", h: http.Header{"X-Amz-Checksum-Crc32": {sum(SHA1)}}, parse: CodeInvalidRequest},
		{name: "two checksums", h: http.Header{"X-Amz-Checksum-Crc32": {sum(CRC32)}, "X-Amz-Checksum-Sha1": {sum(SHA1)}}, parse: CodeInvalidRequest},
		{name: "unknown checksum header", h: http.Header{"X-Amz-Checksum-Md4": {"x"}}, parse: CodeInvalidRequest},
		{name: "sdk algorithm disagrees", h: http.Header{"X-Amz-Checksum-Crc32": {sum(CRC32)}, "X-Amz-Sdk-Checksum-Algorithm": {"SHA256"}}, parse: CodeInvalidRequest},
		{name: "sdk algorithm unknown", h: http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"MD4"}}, parse: CodeInvalidRequest},
		{name: "sdk algorithm only", h: http.Header{"X-Amz-Sdk-Checksum-Algorithm": {"crc32c"}}, alg: CRC32C},
		{name: "trailer ok", h: http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc32"}},
			trailer: http.Header{"X-Amz-Checksum-Crc32": {sum(CRC32)}}, alg: CRC32},
		{name: "trailer mismatch", h: http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc64nvme"}},
			trailer: http.Header{"X-Amz-Checksum-Crc64nvme": {b64(make([]byte, 8))}}, verify: CodeBadDigest, alg: CRC64NVME},
		{name: "trailer missing", h: http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc32"}}, verify: CodeInvalidRequest, alg: CRC32},
		{name: "trailer malformed", h: http.Header{"X-Amz-Trailer": {"x-amz-checksum-crc32"}},
			trailer: http.Header{"X-Amz-Checksum-Crc32": {"!!"}}, verify: CodeInvalidRequest, alg: CRC32},
		{name: "trailer unsupported", h: http.Header{"X-Amz-Trailer": {"x-amz-meta-foo"}}, parse: CodeInvalidRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := FromHeaders(c.h)
			if c.parse != "" {
				wantCode(t, err, c.parse)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Algorithm != c.alg {
				t.Fatalf("algorithm %q, want %q", e.Algorithm, c.alg)
			}
			h := e.NewHasher()
			io.Copy(h, bytes.NewReader(data))
			err = e.Verify(h, c.trailer)
			if c.verify == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			ce := wantCode(t, err, c.verify)
			if c.verify == CodeBadDigest && c.alg != "" && ce.Message != "The "+string(c.alg)+" you specified did not match the calculated checksum." {
				t.Fatalf("message %q", ce.Message)
			}
			if c.name == "trailer malformed" && ce.Message != "Value for x-amz-checksum-crc32 trailing header is invalid." {
				t.Fatalf("message %q", ce.Message)
			}
		})
	}
}

func TestParseAlgorithm(t *testing.T) {
	for _, a := range Algorithms {
		if got, ok := ParseAlgorithm(string(a) + " "); !ok || got != a {
			t.Errorf("ParseAlgorithm(%q) = %q, %v", a, got, ok)
		}
		if got, ok := algorithmForHeader(a.HeaderName()); !ok || got != a {
			t.Errorf("algorithmForHeader(%q) = %q", a.HeaderName(), got)
		}
	}
	if _, ok := ParseAlgorithm("MD4"); ok {
		t.Error("MD4 accepted as flexible checksum")
	}
}

func wantCode(t *testing.T, err error, code string) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != code || e.StatusCode != 400 {
		t.Fatalf("error %v, want %s/400", err, code)
	}
	return e
}

func BenchmarkHasherCRC32(b *testing.B) {
	buf := make([]byte, 1<<20)
	h := NewHasher(CRC32)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		h.Write(buf)
	}
}
