package s3api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func r1hmac(k []byte, s string) []byte {
	m := hmac.New(sha256.New, k)
	m.Write([]byte(s))
	return m.Sum(nil)
}

// r1SendCut sends a PUT with an aws-chunked body in payload mode mode,
// whose full framing would be fullLen bytes but of which only sent is
// written before the client closes its write side. sign (when not nil)
// receives the seed signature, date, scope and key to build chunk
// signatures. It returns the status the server answered (0 if none).
func r1SendCut(t *testing.T, addr, path, mode string, decoded int, extra map[string]string, body func(seed, date, scope string, key []byte) (sent string, fullLen int), teChunked bool) (int, string) {
	t.Helper()
	now := time.Now().UTC()
	req, _ := http.NewRequest(http.MethodPut, "http://"+addr+path, nil)
	req.Header.Set("X-Amz-Content-Sha256", mode)
	req.Header.Set("X-Amz-Decoded-Content-Length", fmt.Sprint(decoded))
	req.Header.Set("Content-Encoding", "aws-chunked")
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	// Content-Length is not signed by the SDK signer; set it on the wire.
	if err := v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "ak", SecretAccessKey: "sk"}, req,
		mode, "s3", "us-east-1", now); err != nil {
		t.Fatal(err)
	}
	auth := req.Header.Get("Authorization")
	seed := auth[strings.LastIndex(auth, "Signature=")+len("Signature="):]
	date := now.Format("20060102T150405Z")
	scope := now.Format("20060102") + "/us-east-1/s3/aws4_request"
	key := r1hmac(r1hmac(r1hmac(r1hmac([]byte("AWS4sk"), now.Format("20060102")), "us-east-1"), "s3"), "aws4_request")
	sent, full := body(seed, date, scope, key)

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var b strings.Builder
	if teChunked {
		// The HTTP body ends cleanly (Transfer-Encoding: chunked, last
		// chunk sent): only the aws-chunked content inside is cut, and the
		// connection stays open for the answer.
		fmt.Fprintf(&b, "PUT %s HTTP/1.1\r\nHost: %s\r\nTransfer-Encoding: chunked\r\n", path, req.Host)
		sent = fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(sent), sent)
	} else {
		fmt.Fprintf(&b, "PUT %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", path, req.Host, full)
	}
	for k, vs := range req.Header {
		for _, v := range vs {
			fmt.Fprintf(&b, "%s: %s\r\n", k, v)
		}
	}
	b.WriteString("\r\n")
	b.WriteString(sent)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	if !teChunked {
		c.(*net.TCPConn).CloseWrite() // the body is cut here
	}
	code, msg, _ := readStatus(c, 5*time.Second)
	return code, msg
}

func r1ChunkSig(prev, date, scope string, key, data []byte) string {
	const empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	h := sha256.Sum256(data)
	sts := "AWS4-HMAC-SHA256-PAYLOAD\n" + date + "\n" + scope + "\n" + prev + "\n" + empty + "\n" + hex.EncodeToString(h[:])
	return hex.EncodeToString(r1hmac(key, sts))
}

// An aws-chunked body cut after the last data
// byte of the declared length (before the chunk's CRLF, the final 0-chunk
// and the trailer) was stored as a complete object. In the signed mode the
// last chunk's signature was never checked: a chunk with a bogus signature
// was stored.
func TestCutChunkedBodyNeverStored(t *testing.T) {
	srv := newTestServer(t, SingleCredential("ak", "sk"))
	addr := strings.TrimPrefix(srv, "http://")
	c := sdkClient(srv, "ak", "sk")
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("bkt1")}); err != nil {
		t.Fatal(err)
	}
	const bogus = "0000000000000000000000000000000000000000000000000000000000000000"
	cases := []struct {
		name, mode string
		extra      map[string]string
		body       func(seed, date, scope string, key []byte) (string, int)
	}{
		{"signed-bogus-last-chunk-sig", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", nil,
			func(seed, date, scope string, key []byte) (string, int) {
				s1 := r1ChunkSig(seed, date, scope, key, []byte("hello "))
				sent := "6;chunk-signature=" + s1 + "\r\nhello \r\n" + "6;chunk-signature=" + bogus + "\r\nEVIL!!"
				return sent, len(sent) + 2 + 86 + 4
			}},
		{"signed-cut-before-final-chunk", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", nil,
			func(seed, date, scope string, key []byte) (string, int) {
				s1 := r1ChunkSig(seed, date, scope, key, []byte("hello "))
				s2 := r1ChunkSig(s1, date, scope, key, []byte("world!"))
				sent := "6;chunk-signature=" + s1 + "\r\nhello \r\n" + "6;chunk-signature=" + s2 + "\r\nworld!\r\n"
				return sent, len(sent) + 86 + 4
			}},
		{"unsigned-trailer-cut-before-trailer", "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
			map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32"},
			func(seed, date, scope string, key []byte) (string, int) {
				sent := "c\r\nhello world!\r\n0\r\n"
				// the trailer would carry a checksum that does not match
				return sent, len(sent) + len("x-amz-checksum-crc32:AAAAAA==\r\n\r\n")
			}},
		{"unsigned-trailer-none-declared-cut-before-final-chunk", "STREAMING-UNSIGNED-PAYLOAD-TRAILER", nil,
			func(seed, date, scope string, key []byte) (string, int) {
				sent := "c\r\nhello world!"
				return sent, len(sent) + 7
			}},
		{"signed-trailer-cut-before-trailer-sig", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
			map[string]string{"X-Amz-Trailer": "x-amz-checksum-crc32"},
			func(seed, date, scope string, key []byte) (string, int) {
				s1 := r1ChunkSig(seed, date, scope, key, []byte("hello world!"))
				s2 := r1ChunkSig(s1, date, scope, key, nil)
				sent := "c;chunk-signature=" + s1 + "\r\nhello world!\r\n" + "0;chunk-signature=" + s2 + "\r\n"
				return sent, len(sent) + 200
			}},
	}
	for _, tc := range cases {
		for _, te := range []bool{false, true} {
			name := tc.name
			if te {
				name += "-te-chunked"
			}
			t.Run(name, func(t *testing.T) {
				key := "/bkt1/" + name
				code, msg := r1SendCut(t, addr, key, tc.mode, 12, tc.extra, tc.body, te)
				t.Logf("server answered %d %.200s", code, msg)
				time.Sleep(200 * time.Millisecond) // let the handler finish
				out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String("bkt1"), Key: aws.String(name)})
				if err == nil {
					data, _ := io.ReadAll(out.Body)
					out.Body.Close()
					t.Errorf("cut body was stored: GET %q = %q", name, data)
				}
			})
		}
	}
}
