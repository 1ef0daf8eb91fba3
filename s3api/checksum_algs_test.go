package s3api

import (
	"bytes"
	"context"
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
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/s3seal/s3seal/checksum"
)

var newAlgorithms = []checksum.Algorithm{checksum.SHA512, checksum.MD5, checksum.XXHASH64, checksum.XXHASH3, checksum.XXHASH128}

func b64sum(a checksum.Algorithm, data []byte) string {
	h := checksum.NewHasher(a)
	h.Write(data)
	return h.Base64()
}

// putChecksummed PUTs data to url+path with the checksum header name:value
// sent as a header (mode "header", a signed literal payload) or as the
// trailer of an aws-chunked body, signed (STREAMING-AWS4-HMAC-SHA256-
// PAYLOAD-TRAILER) or not (STREAMING-UNSIGNED-PAYLOAD-TRAILER).
func putChecksummed(t *testing.T, url, path, mode string, data []byte, name, value string) *http.Response {
	t.Helper()
	now := time.Now().UTC()
	req, _ := http.NewRequest(http.MethodPut, url+path, nil)
	hash := mode
	body := data
	switch mode {
	case "header":
		hash = hexSHA(data)
		req.Header.Set(name, value)
	default:
		req.Header.Set("Content-Encoding", "aws-chunked")
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(len(data)))
		req.Header.Set("X-Amz-Trailer", name)
	}
	signed := mode == "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	encode := func(ss *streamSigner) []byte {
		var b bytes.Buffer
		for _, c := range [][]byte{data, nil} {
			fmt.Fprintf(&b, "%x", len(c))
			if ss != nil {
				b.WriteString(";chunk-signature=" + ss.chunk(c))
			}
			b.WriteString("\r\n")
			if len(c) > 0 {
				b.Write(c)
				b.WriteString("\r\n")
			}
		}
		line := name + ":" + value
		b.WriteString(line + "\r\n")
		if ss != nil {
			b.WriteString("x-amz-trailer-signature:" + ss.trailer(line+"\n") + "\r\n")
		}
		b.WriteString("\r\n")
		return b.Bytes()
	}
	if mode != "header" {
		var ss *streamSigner
		if signed {
			ss = newStreamSigner("x", now, "seed") // only the length matters before signing
		}
		body = encode(ss)
	}
	req.ContentLength = int64(len(body))
	signAt(t, req, hash, now)
	if signed {
		auth := req.Header.Get("Authorization")
		body = encode(newStreamSigner("sk", now, auth[strings.LastIndex(auth, "Signature=")+len("Signature="):]))
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// signAt signs req for ak/sk with payload hash hash.
func signAt(t *testing.T, req *http.Request, hash string, at time.Time) {
	t.Helper()
	req.Header.Set("X-Amz-Content-Sha256", hash)
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"},
		req, hash, "s3", "us-east-1", at); err != nil {
		t.Fatal(err)
	}
}

// TestNewAlgorithmsPutHeadersAndTrailers: SHA512, MD5, XXHASH64, XXHASH3
// and XXHASH128 are accepted in a header, a signed trailer and an unsigned
// trailer; the PUT answer and a HEAD with x-amz-checksum-mode report the
// value and its type; a wrong value is 400 BadDigest with S3's message and
// stores nothing.
func TestNewAlgorithmsPutHeadersAndTrailers(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	data := bytes.Repeat([]byte("new checksum algorithms "), 300)
	for _, a := range newAlgorithms {
		for _, mode := range []string{"header", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER", "STREAMING-UNSIGNED-PAYLOAD-TRAILER"} {
			t.Run(string(a)+"/"+mode, func(t *testing.T) {
				key := strings.ToLower(string(a)) + "-" + mode
				good := b64sum(a, data)
				resp := putChecksummed(t, url, "/bkt/"+key, mode, data, a.HeaderName(), good)
				msg, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("PUT: %d %s", resp.StatusCode, msg)
				}
				if resp.Header.Get(a.HeaderName()) != good || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
					t.Fatalf("PUT answer: %s=%q type %q", a.HeaderName(), resp.Header.Get(a.HeaderName()), resp.Header.Get("X-Amz-Checksum-Type"))
				}
				head, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String(key), ChecksumMode: types.ChecksumModeEnabled})
				if err != nil {
					t.Fatal(err)
				}
				if got := headChecksum(head, a); got != good || head.ChecksumType != types.ChecksumTypeFullObject {
					t.Fatalf("HEAD: %s %q type %q, want %q FULL_OBJECT", a, got, head.ChecksumType, good)
				}

				bad := b64sum(a, []byte("something else"))
				resp = putChecksummed(t, url, "/bkt/bad-"+key, mode, data, a.HeaderName(), bad)
				msg, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				want := "<Message>The " + string(a) + " you specified did not match the calculated checksum.</Message>"
				if resp.StatusCode != 400 || !bytes.Contains(msg, []byte("<Code>BadDigest</Code>")) || !bytes.Contains(msg, []byte(want)) {
					t.Fatalf("bad %s: %d %s", a, resp.StatusCode, msg)
				}
				if _, err := c.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String("bkt"), Key: aws.String("bad-" + key)}); err == nil {
					t.Fatal("an upload with a wrong checksum was stored")
				}
			})
		}
	}
}

// headChecksum is the HEAD answer's value for a.
func headChecksum(h *s3.HeadObjectOutput, a checksum.Algorithm) string {
	return aws.ToString(map[checksum.Algorithm]*string{checksum.CRC32: h.ChecksumCRC32, checksum.CRC32C: h.ChecksumCRC32C,
		checksum.CRC64NVME: h.ChecksumCRC64NVME, checksum.SHA1: h.ChecksumSHA1, checksum.SHA256: h.ChecksumSHA256,
		checksum.SHA512: h.ChecksumSHA512, checksum.MD5: h.ChecksumMD5, checksum.XXHASH64: h.ChecksumXXHASH64,
		checksum.XXHASH3: h.ChecksumXXHASH3, checksum.XXHASH128: h.ChecksumXXHASH128}[a])
}

// TestChecksumInPutAndCopyAnswers: PutObject answers with the kept
// checksum and its type even when the client named no algorithm (the
// default CRC64NVME); CopyObject's XML result carries the copy's checksum,
// computed on the copied plaintext with the algorithm asked for, and its
// type.
func TestChecksumInPutAndCopyAnswers(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	data := []byte("copy me, checksum me")
	req, _ := http.NewRequest(http.MethodPut, url+"/bkt/plain", bytes.NewReader(data))
	signAt(t, req, hexSHA(data), time.Now())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Amz-Checksum-Crc64nvme"); resp.StatusCode != 200 || got != b64sum(checksum.CRC64NVME, data) || resp.Header.Get("X-Amz-Checksum-Type") != "FULL_OBJECT" {
		t.Fatalf("PUT without a checksum: %d crc64nvme %q type %q", resp.StatusCode, got, resp.Header.Get("X-Amz-Checksum-Type"))
	}
	put, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: b, Key: aws.String("sha512"), Body: bytes.NewReader(data), ChecksumAlgorithm: types.ChecksumAlgorithmSha512})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(put.ChecksumSHA512) != b64sum(checksum.SHA512, data) || put.ChecksumType != types.ChecksumTypeFullObject {
		t.Fatalf("PutObject SHA512 answer: %q %q", aws.ToString(put.ChecksumSHA512), put.ChecksumType)
	}
	cp, err := c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy"), CopySource: aws.String("bkt/plain"),
		ChecksumAlgorithm: types.ChecksumAlgorithmXxhash128})
	if err != nil {
		t.Fatal(err)
	}
	r := cp.CopyObjectResult
	if r == nil || aws.ToString(r.ChecksumXXHASH128) != b64sum(checksum.XXHASH128, data) || r.ChecksumType != types.ChecksumTypeFullObject || r.ChecksumCRC64NVME != nil {
		t.Fatalf("CopyObject result %+v, want XXHASH128 %s FULL_OBJECT", r, b64sum(checksum.XXHASH128, data))
	}
	// Without an algorithm the copy keeps the source's (SHA512 here).
	cp, err = c.CopyObject(ctx, &s3.CopyObjectInput{Bucket: b, Key: aws.String("copy2"), CopySource: aws.String("bkt/sha512")})
	if err != nil {
		t.Fatal(err)
	}
	if aws.ToString(cp.CopyObjectResult.ChecksumSHA512) != b64sum(checksum.SHA512, data) {
		t.Fatalf("CopyObject result %+v, want the source's SHA512", cp.CopyObjectResult)
	}
}

// TestMultipartNewAlgorithms: the new algorithms are COMPOSITE only; a
// FULL_OBJECT upload with one is refused as S3 refuses it, and a COMPOSITE
// one completes with the checksum of the part checksums, "-N", in the
// CompleteMultipartUpload result.
func TestMultipartNewAlgorithms(t *testing.T) {
	url, ctx, c := newBucketServer(t, SingleCredential("ak", "sk"))
	b := aws.String("bkt")
	parts := [][]byte{bytes.Repeat([]byte("p"), 5<<20), []byte("tail")}
	for _, a := range newAlgorithms {
		t.Run(string(a), func(t *testing.T) {
			key := aws.String("mp-" + string(a))
			_, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: key,
				ChecksumAlgorithm: types.ChecksumAlgorithm(a), ChecksumType: types.ChecksumTypeFullObject})
			if apiCode(err) != "InvalidRequest" {
				t.Fatalf("FULL_OBJECT %s: %v, want InvalidRequest", a, err)
			}
			cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: b, Key: key, ChecksumAlgorithm: types.ChecksumAlgorithm(a)})
			if err != nil {
				t.Fatal(err)
			}
			if cr.ChecksumType != types.ChecksumTypeComposite {
				t.Fatalf("default type %q", cr.ChecksumType)
			}
			var done []types.CompletedPart
			var raw []byte
			for i, p := range parts {
				sum := b64sum(a, p)
				req, _ := http.NewRequest(http.MethodPut, fmt.Sprintf("%s/bkt/%s?partNumber=%d&uploadId=%s", url, *key, i+1, *cr.UploadId), bytes.NewReader(p))
				req.Header.Set(a.HeaderName(), sum)
				signAt(t, req, hexSHA(p), time.Now())
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 || resp.Header.Get(a.HeaderName()) != sum {
					t.Fatalf("UploadPart %d: %d %q", i+1, resp.StatusCode, resp.Header.Get(a.HeaderName()))
				}
				cp := types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: aws.String(resp.Header.Get("ETag"))}
				setPartChecksum(&cp, a, sum)
				done = append(done, cp)
				h := checksum.NewHasher(a)
				h.Write(p)
				raw = append(raw, h.Sum()...)
			}
			out, err := c.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: b, Key: key, UploadId: cr.UploadId,
				MultipartUpload: &types.CompletedMultipartUpload{Parts: done}})
			if err != nil {
				t.Fatal(err)
			}
			want := b64sum(a, raw) + "-2"
			if got := completeChecksum(out, a); got != want || out.ChecksumType != types.ChecksumTypeComposite {
				t.Fatalf("Complete: %q %q, want %q COMPOSITE", got, out.ChecksumType, want)
			}
		})
	}
}

func setPartChecksum(p *types.CompletedPart, a checksum.Algorithm, v string) {
	switch a {
	case checksum.SHA512:
		p.ChecksumSHA512 = &v
	case checksum.MD5:
		p.ChecksumMD5 = &v
	case checksum.XXHASH64:
		p.ChecksumXXHASH64 = &v
	case checksum.XXHASH3:
		p.ChecksumXXHASH3 = &v
	case checksum.XXHASH128:
		p.ChecksumXXHASH128 = &v
	}
}

func completeChecksum(o *s3.CompleteMultipartUploadOutput, a checksum.Algorithm) string {
	return aws.ToString(map[checksum.Algorithm]*string{checksum.SHA512: o.ChecksumSHA512, checksum.MD5: o.ChecksumMD5,
		checksum.XXHASH64: o.ChecksumXXHASH64, checksum.XXHASH3: o.ChecksumXXHASH3, checksum.XXHASH128: o.ChecksumXXHASH128}[a])
}
