package e2e

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// rawSigner signs hand-made requests to one s3seal with the SDK's v4
// signer, so that a test can then tamper with what it sends.
type rawSigner struct {
	t        *testing.T
	endpoint string
	creds    aws.Credentials
	signer   *v4.Signer
}

func newRawSigner(t *testing.T, p *sealProc) *rawSigner {
	return &rawSigner{t: t, endpoint: p.Endpoint, signer: v4.NewSigner(),
		creds: aws.Credentials{AccessKeyID: p.AccessKey, SecretAccessKey: p.SecretKey}}
}

// signedPut builds a PUT of path whose signature covers hdr, payloadHash
// (sent as x-amz-content-sha256) and Content-Length length, signed at at.
// It returns the request (without body) and its seed signature.
func (s *rawSigner) signedPut(path string, hdr http.Header, payloadHash string, length int64, at time.Time) (*http.Request, string) {
	s.t.Helper()
	req, err := http.NewRequest(http.MethodPut, s.endpoint+path, nil)
	if err != nil {
		s.t.Fatal(err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	req.Header.Set("X-Amz-Content-Sha256", payloadHash)
	req.ContentLength = length
	if err := s.signer.SignHTTP(context.Background(), s.creds, req, payloadHash, "s3", "us-east-1", at); err != nil {
		s.t.Fatal(err)
	}
	auth := req.Header.Get("Authorization")
	i := strings.LastIndex(auth, "Signature=")
	if i < 0 {
		s.t.Fatalf("no signature in %q", auth)
	}
	return req, auth[i+len("Signature="):]
}

// send sends req with body (exactly len(body) bytes on the wire).
func (s *rawSigner) send(req *http.Request, body []byte) rawResp {
	s.t.Helper()
	req = req.WithContext(ctxT(s.t))
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("PUT %s: %v", req.URL, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return rawResp{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// chunkSigner computes aws-chunked chunk signatures
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD), chained from the seed signature.
type chunkSigner struct {
	key            []byte
	amzDate, scope string
	prev           string
}

func newChunkSigner(secret string, at time.Time, seed string) *chunkSigner {
	at = at.UTC()
	date := at.Format("20060102")
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, "us-east-1")
	k = hmacSHA256(k, "s3")
	k = hmacSHA256(k, "aws4_request")
	return &chunkSigner{key: k, amzDate: at.Format("20060102T150405Z"), scope: date + "/us-east-1/s3/aws4_request", prev: seed}
}

func (c *chunkSigner) sign(chunk []byte) string {
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + c.amzDate + "\n" + c.scope + "\n" + c.prev + "\n" + sha256Hex(nil) + "\n" + sha256Hex(chunk)
	c.prev = hex.EncodeToString(hmacSHA256(c.key, sts))
	return c.prev
}

// encodeSignedChunks frames data as a signed aws-chunked body of 64 KiB
// chunks; badChunk >= 0 corrupts that chunk's signature.
func encodeSignedChunks(cs *chunkSigner, data []byte, badChunk int) []byte {
	var out bytes.Buffer
	for i := 0; ; i++ {
		n := min(len(data), 64<<10)
		chunk := data[:n]
		data = data[n:]
		sig := cs.sign(chunk)
		if i == badChunk {
			b := []byte(sig)
			b[0] = "01"[boolInt(b[0] == '0')]
			sig = string(b)
		}
		fmt.Fprintf(&out, "%x;chunk-signature=%s\r\n", n, sig)
		out.Write(chunk)
		out.WriteString("\r\n")
		if n == 0 {
			return out.Bytes()
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// backendSnapshot is an object as the backend (moto) holds it.
type backendSnapshot struct {
	etag string
	data []byte
	meta map[string]string
}

func snapshotBackend(t *testing.T, mc *s3.Client, bucket, key string) backendSnapshot {
	t.Helper()
	data, meta, out := rawObject(t, mc, bucket, key)
	return backendSnapshot{etag: aws.ToString(out.ETag), data: data, meta: meta}
}

// TestNegativeUploads sends PUTs that a correct S3 must refuse, each to a
// fresh key and over an existing object, and checks on the backend itself
// (moto) that no object appeared and the existing one is unchanged.
func TestNegativeUploads(t *testing.T) {
	t.Parallel()
	m := startMoto(t)
	p := startS3seal(t, sealOpts{Backend: m})
	c := sdkFor(t, p)
	mc := motoClient(t, m)
	rs := newRawSigner(t, p)
	const bucket = "neg"
	mustCreateBucket(t, c, bucket)
	original := patternBytes(901, 150001)
	putObj(t, c, bucket, "kept", original)
	before := snapshotBackend(t, mc, bucket, "kept")
	if bytes.Contains(before.data, original[:4096]) {
		t.Fatal("backend holds plaintext")
	}

	body := patternBytes(902, 150000)
	other := append([]byte(nil), body...)
	other[len(other)-1] ^= 0xff
	otherMD5 := md5.Sum(other)

	// Controls: the well-formed versions of the crafted requests work, so
	// a refusal below is about the tampering, not the crafting.
	t.Run("controls", func(t *testing.T) {
		req, _ := rs.signedPut("/"+bucket+"/ok-plain", nil, sha256Hex(body), int64(len(body)), time.Now())
		if r := rs.send(req, body); r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(body) {
			t.Fatalf("signed PUT control: HTTP %d %s", r.Status, r.Body)
		}
		now := time.Now()
		req, seed := rs.signedPut("/"+bucket+"/ok-chunked", chunkedHeaders(len(body)), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
			int64(len(encodeSignedChunks(newChunkSigner("x", now, "s"), body, -1))), now)
		enc := encodeSignedChunks(newChunkSigner(p.SecretKey, now, seed), body, -1)
		if r := rs.send(req, enc); r.Status != http.StatusOK || etagOf(r.Header) != md5Hex(body) {
			t.Fatalf("signed aws-chunked PUT control: HTTP %d %s", r.Status, r.Body)
		}
		if got := getObj(t, c, bucket, "ok-chunked"); !bytes.Equal(got, body) {
			t.Fatalf("signed aws-chunked PUT control: stored body differs")
		}
	})

	cases := []struct {
		name   string
		status int
		code   string
		// send crafts and sends the request for path.
		send func(t *testing.T, path string) rawResp
	}{
		{"content-sha256-mismatch", 400, "XAmzContentSHA256Mismatch", func(t *testing.T, path string) rawResp {
			req, _ := rs.signedPut(path, nil, sha256Hex(body), int64(len(other)), time.Now())
			return rs.send(req, other)
		}},
		{"chunk-signature-bad", 403, "SignatureDoesNotMatch", func(t *testing.T, path string) rawResp {
			return sendChunked(t, rs, p.SecretKey, path, body, len(body), 1, 0)
		}},
		{"chunk-last-signature-bad", 403, "SignatureDoesNotMatch", func(t *testing.T, path string) rawResp {
			return sendChunked(t, rs, p.SecretKey, path, body, len(body), 3, 0) // the final, empty chunk
		}},
		{"chunked-truncated", 400, "IncompleteBody", func(t *testing.T, path string) rawResp {
			return sendChunked(t, rs, p.SecretKey, path, body, len(body), -1, 100000)
		}},
		{"chunked-longer-than-decoded-length", 400, "IncompleteBody", func(t *testing.T, path string) rawResp {
			return sendChunked(t, rs, p.SecretKey, path, body, len(body)-1000, -1, 0)
		}},
		{"clock-skew-past", 403, "RequestTimeTooSkewed", func(t *testing.T, path string) rawResp {
			req, _ := rs.signedPut(path, nil, sha256Hex(body), int64(len(body)), time.Now().Add(-16*time.Minute))
			return rs.send(req, body)
		}},
		{"clock-skew-future", 403, "RequestTimeTooSkewed", func(t *testing.T, path string) rawResp {
			req, _ := rs.signedPut(path, nil, sha256Hex(body), int64(len(body)), time.Now().Add(16*time.Minute))
			return rs.send(req, body)
		}},
		{"content-md5-mismatch", 400, "BadDigest", func(t *testing.T, path string) rawResp {
			h := http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(otherMD5[:])}}
			req, _ := rs.signedPut(path, h, sha256Hex(body), int64(len(body)), time.Now())
			return rs.send(req, body)
		}},
		{"content-md5-mismatch-unsigned-payload", 400, "BadDigest", func(t *testing.T, path string) rawResp {
			h := http.Header{"Content-Md5": {base64.StdEncoding.EncodeToString(otherMD5[:])}}
			req, _ := rs.signedPut(path, h, "UNSIGNED-PAYLOAD", int64(len(body)), time.Now())
			return rs.send(req, body)
		}},
		{"checksum-crc32-mismatch", 400, "BadDigest", func(t *testing.T, path string) rawResp {
			h := http.Header{"X-Amz-Checksum-Crc32": {crc32B64(other)}}
			req, _ := rs.signedPut(path, h, "UNSIGNED-PAYLOAD", int64(len(body)), time.Now())
			return rs.send(req, body)
		}},
		{"checksum-crc32-trailer-mismatch", 400, "BadDigest", func(t *testing.T, path string) rawResp {
			var enc bytes.Buffer
			for d := body; ; {
				n := min(len(d), 64<<10)
				fmt.Fprintf(&enc, "%x\r\n", n)
				enc.Write(d[:n])
				if n == 0 {
					break
				}
				enc.WriteString("\r\n")
				d = d[n:]
			}
			fmt.Fprintf(&enc, "x-amz-checksum-crc32:%s\r\n\r\n", crc32B64(other))
			h := http.Header{"Content-Encoding": {"aws-chunked"}, "X-Amz-Decoded-Content-Length": {strconv.Itoa(len(body))}, "X-Amz-Trailer": {"x-amz-checksum-crc32"}}
			req, _ := rs.signedPut(path, h, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", int64(enc.Len()), time.Now())
			return rs.send(req, enc.Bytes())
		}},
		{"checksum-sha256-malformed", 400, "InvalidRequest", func(t *testing.T, path string) rawResp {
			h := http.Header{"X-Amz-Checksum-Sha256": {"not*base64*at*all"}}
			req, _ := rs.signedPut(path, h, sha256Hex(body), int64(len(body)), time.Now())
			return rs.send(req, body)
		}},
		{"checksum-sha256-wrong-length", 400, "InvalidRequest", func(t *testing.T, path string) rawResp {
			h := http.Header{"X-Amz-Checksum-Sha256": {crc32B64(body)}} // valid base64, 4 bytes
			req, _ := rs.signedPut(path, h, sha256Hex(body), int64(len(body)), time.Now())
			return rs.send(req, body)
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, key := range []string{"fresh-" + tc.name, "kept"} {
				r := tc.send(t, "/"+bucket+"/"+key)
				wantS3Error(t, tc.name+" on "+key, r, tc.status, tc.code, "")
				// The backend itself: no object under a fresh key ...
				_, err := mc.HeadObject(ctxT(t), &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String("fresh-" + tc.name)})
				if _, status := apiCode(err); status != http.StatusNotFound {
					t.Errorf("%s: backend HEAD fresh key: %v, want 404 (a refused PUT was published)", tc.name, err)
				}
				// ... and the existing object untouched.
				now := snapshotBackend(t, mc, bucket, "kept")
				if now.etag != before.etag || !bytes.Equal(now.data, before.data) || !mapsEqual(now.meta, before.meta) {
					t.Errorf("%s on %s: backend object 'kept' changed (ETag %s -> %s)", tc.name, key, before.etag, now.etag)
				}
			}
		})
	}
	if got := getObj(t, c, bucket, "kept"); !bytes.Equal(got, original) {
		t.Errorf("existing object reads back differently after the refused requests")
	}
	l, err := mc.ListObjectsV2(ctxT(t), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range l.Contents {
		if k := aws.ToString(o.Key); !strings.HasPrefix(k, ".s3seal/") { // s3seal's own (the bucket's owner document)
			keys = append(keys, k)
		}
	}
	if strings.Join(keys, ",") != "kept,ok-chunked,ok-plain" {
		t.Errorf("backend keys after the refused requests: %q, want kept, ok-chunked, ok-plain", keys)
	}
}

func chunkedHeaders(decoded int) http.Header {
	return http.Header{"Content-Encoding": {"aws-chunked"}, "X-Amz-Decoded-Content-Length": {strconv.Itoa(decoded)}}
}

// sendChunked sends data as a signed aws-chunked body declaring decoded as
// its decoded length; badChunk >= 0 corrupts that chunk's signature;
// cutAt > 0 sends only the first cutAt bytes of the encoded body.
func sendChunked(t *testing.T, rs *rawSigner, secret, path string, data []byte, decoded, badChunk, cutAt int) rawResp {
	t.Helper()
	now := time.Now()
	size := len(encodeSignedChunks(newChunkSigner("x", now, "s"), data, -1))
	if cutAt > 0 {
		size = cutAt
	}
	req, seed := rs.signedPut(path, chunkedHeaders(decoded), "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", int64(size), now)
	enc := encodeSignedChunks(newChunkSigner(secret, now, seed), data, badChunk)
	if cutAt > 0 {
		enc = enc[:cutAt]
	}
	return rs.send(req, enc)
}
