package sigv4

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// awsExampleRequest is the "PUT Object" example of the AWS S3 docs
// (sigv4-streaming and sigv4-streaming-trailers): 65536 + 1024 bytes of 'a'.
func awsExampleRequest(trailer bool) (*http.Request, *Verifier) {
	data := bytes.Repeat([]byte{'a'}, 66560)
	var body bytes.Buffer
	var seed, signedHeaders string
	var sigs []string
	if !trailer {
		seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
		sigs = []string{"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
			"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
			"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"}
		signedHeaders = "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class"
	} else {
		seed = "106e2a8a18243abcf37539882f36619c00e2dfc72633413f02d3b74544bfeb8e"
		sigs = []string{"b474d8862b1487a5145d686f57f013e54db672cee1c953b3010fb58501ef5aa2",
			"1c1344b170168f8e65b41376b44b20fe354e373826ccbbe2c1d40a8cae51e5c7",
			"2ca2aba2005185cf7159c6277faf83795951dd77a3a99e6e65d5c9f85863f992"}
		signedHeaders = "content-encoding;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class;x-amz-trailer"
	}
	fmt.Fprintf(&body, "10000;chunk-signature=%s\r\n%s\r\n", sigs[0], data[:65536])
	fmt.Fprintf(&body, "400;chunk-signature=%s\r\n%s\r\n", sigs[1], data[65536:])
	fmt.Fprintf(&body, "0;chunk-signature=%s\r\n", sigs[2])
	mode := StreamingSignedPayload
	if trailer {
		mode = StreamingSignedPayloadTrail
		body.WriteString("x-amz-checksum-crc32c:sOO8/Q==\r\n")
		// The docs print 63bddb24...843f here: that is the signature of
		// the trailer with the first line of the string to sign
		// AWS4-HMAC-SHA256-PAYLOAD instead of AWS4-HMAC-SHA256-TRAILER
		// (TestAWSPublishedTrailerSignatureRefused derives it, and checks
		// it is refused). The seed and chunk signatures above are the
		// published ones; this one is the AWS4-HMAC-SHA256-TRAILER
		// signature over "name:value\n" on the published chain, on which
		// two independent implementations agree (this package's
		// chainSigner, and minio-go's signer: e2e TestMinioGoChecksums
		// sends its signed trailers). Nothing weaker is accepted.
		body.WriteString("x-amz-trailer-signature:d81f82fc3505edab99d459891051a732e8730629a2e4a59689829ca17fe2e435\r\n")
	}
	body.WriteString("\r\n")
	req, _ := http.NewRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", bytes.NewReader(body.Bytes()))
	req.Header.Set("X-Amz-Date", "20130524T000000Z")
	req.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	req.Header.Set("X-Amz-Content-Sha256", mode)
	req.Header.Set("Content-Encoding", "aws-chunked")
	req.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	if trailer {
		req.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32c")
	} else {
		req.Header.Set("Content-Length", strconv.Itoa(body.Len()))
	}
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders="+signedHeaders+",Signature="+seed)
	v := NewVerifier(StaticCredentials{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		WithClock(func() time.Time { return time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC) }))
	return req, v
}

// TestAWSStreamingExample checks the published AWS example signatures.
func TestAWSStreamingExample(t *testing.T) {
	for _, trailer := range []bool{false, true} {
		t.Run(fmt.Sprint("trailer=", trailer), func(t *testing.T) {
			req, v := awsExampleRequest(trailer)
			res, err := v.Verify(req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, bytes.Repeat([]byte{'a'}, 66560)) {
				t.Fatalf("decoded %d bytes", len(got))
			}
			if trailer && res.Trailer().Get("x-amz-checksum-crc32c") != "sOO8/Q==" {
				t.Fatalf("trailer %v", res.Trailer())
			}
		})
	}
}

// chainSigner signs aws-chunked bodies for tests, written independently
// of chunkSigner.
type chainSigner struct {
	key     []byte
	date    string
	scope   string
	prevSig string
}

func (s *chainSigner) sign(kind string, lastHash string) string {
	mac := hmac.New(sha256.New, s.key)
	parts := []string{kind, s.date, s.scope, s.prevSig}
	if kind == "AWS4-HMAC-SHA256-PAYLOAD" {
		parts = append(parts, sha256Hex(nil))
	}
	parts = append(parts, lastHash)
	mac.Write([]byte(strings.Join(parts, "\n")))
	s.prevSig = hex.EncodeToString(mac.Sum(nil))
	return s.prevSig
}

// buildChunked builds a signed (signer != nil) or unsigned aws-chunked body.
func buildChunked(signer *chainSigner, chunks [][]byte, trailers [][2]string) []byte {
	return buildChunkedFramed(signer, chunks, trailers, false)
}

// buildChunkedFramed is buildChunked; with lf set it frames the trailer
// the way minio-go does: each trailer as "name:value\n" (the bytes it
// signs), then CRLF, then the signature line (when signed) and CRLF.
func buildChunkedFramed(signer *chainSigner, chunks [][]byte, trailers [][2]string, lf bool) []byte {
	var b bytes.Buffer
	for _, c := range append(chunks, nil) {
		fmt.Fprintf(&b, "%x", len(c))
		if signer != nil {
			b.WriteString(";chunk-signature=" + signer.sign("AWS4-HMAC-SHA256-PAYLOAD", sha256Hex(c)))
		}
		b.WriteString("\r\n")
		if len(c) > 0 {
			b.Write(c)
			b.WriteString("\r\n")
		}
	}
	var canon strings.Builder
	for _, kv := range trailers {
		canon.WriteString(kv[0] + ":" + kv[1] + "\n")
		if lf {
			fmt.Fprintf(&b, "%s:%s\n", kv[0], kv[1])
		} else {
			fmt.Fprintf(&b, "%s:%s\r\n", kv[0], kv[1])
		}
	}
	if lf && trailers != nil {
		b.WriteString("\r\n")
	}
	if signer != nil && trailers != nil {
		fmt.Fprintf(&b, "x-amz-trailer-signature:%s\r\n", signer.sign("AWS4-HMAC-SHA256-TRAILER", sha256Hex([]byte(canon.String()))))
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// signedStreamingRequest returns a header-signed streaming request (seed
// signature from the SDK's signer) and a signer continuing its chain;
// decodedLen < 0 leaves out x-amz-decoded-content-length.
func signedStreamingRequest(t testing.TB, mode string, decodedLen int, trailer string) (*http.Request, *chainSigner) {
	req, _ := http.NewRequest("PUT", "http://s3.local/bucket/streamed", nil)
	req.Header.Set("Content-Encoding", "aws-chunked")
	if decodedLen >= 0 {
		req.Header.Set("X-Amz-Decoded-Content-Length", strconv.Itoa(decodedLen))
	}
	if trailer != "" {
		req.Header.Set("X-Amz-Trailer", trailer)
	}
	signHeader(t, req, mode, testNow)
	auth := req.Header.Get("Authorization")
	seed := auth[strings.LastIndex(auth, "Signature=")+len("Signature="):]
	return req, &chainSigner{
		key: deriveKey(testSecret, "20240524", testRegion, "s3"), date: testNow.Format(iso8601),
		scope: "20240524/" + testRegion + "/s3/aws4_request", prevSig: seed,
	}
}

func withBody(r *http.Request, b []byte) *http.Request {
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(b))
	r.ContentLength = int64(len(b))
	return r
}

func TestSignedChunkedTamper(t *testing.T) {
	chunks := [][]byte{bytes.Repeat([]byte("x"), 8192), bytes.Repeat([]byte("y"), 8192), []byte("tail")}
	want := bytes.Join(chunks, nil)
	crc := [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}
	type tc struct {
		name    string
		mode    string
		trailer [][2]string
		edit    func([]byte) []byte
		declLen int
		code    string
	}
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
	}
	flipAt := func(i int) func([]byte) []byte {
		return func(b []byte) []byte { b = bytes.Clone(b); b[i] ^= 1; return b }
	}
	hdr := len(fmt.Sprintf("2000;chunk-signature=%064d\r\n", 0))
	cases := []tc{
		{name: "ok", mode: StreamingSignedPayload},
		{name: "ok trailer", mode: StreamingSignedPayloadTrail, trailer: crc},
		{name: "data chunk 1", mode: StreamingSignedPayload, edit: flipAt(hdr + 5), code: CodeSignatureDoesNotMatch},
		{name: "data chunk 2", mode: StreamingSignedPayload, edit: flipAt(2*hdr + 8194 + 5), code: CodeSignatureDoesNotMatch},
		{name: "signature chunk 1", mode: StreamingSignedPayload, edit: flipAt(hdr - 3), code: CodeSignatureDoesNotMatch},
		{name: "size", mode: StreamingSignedPayload, edit: replace("2000;", "1fff;"), code: CodeIncompleteBody},
		{name: "swap chunks", mode: StreamingSignedPayload, edit: func(b []byte) []byte {
			return append(append(bytes.Clone(b[hdr+8194:2*(hdr+8194)]), b[:hdr+8194]...), b[2*(hdr+8194):]...)
		}, code: CodeSignatureDoesNotMatch},
		{name: "truncate", mode: StreamingSignedPayload, edit: func(b []byte) []byte { return b[:len(b)-40] }, code: CodeIncompleteBody},
		{name: "drop final chunk", mode: StreamingSignedPayload, edit: func(b []byte) []byte { return b[:bytes.LastIndex(b, []byte("0;chunk"))] }, code: CodeIncompleteBody},
		{name: "extend", mode: StreamingSignedPayload, edit: func(b []byte) []byte { return append(bytes.Clone(b), "junk"...) }, code: CodeIncompleteBody},
		{name: "decoded length short", mode: StreamingSignedPayload, declLen: len(want) + 1, code: CodeIncompleteBody},
		{name: "decoded length long", mode: StreamingSignedPayload, declLen: len(want) - 1, code: CodeIncompleteBody},
		{name: "trailer value", mode: StreamingSignedPayloadTrail, trailer: crc, edit: replace("AAAAAA==", "AAAAAB=="), code: CodeSignatureDoesNotMatch},
		{name: "trailer signature", mode: StreamingSignedPayloadTrail, trailer: crc, edit: func(b []byte) []byte {
			i := bytes.Index(b, []byte("x-amz-trailer-signature:")) + 30
			return flipAt(i)(b)
		}, code: CodeSignatureDoesNotMatch},
		{name: "trailer signature missing", mode: StreamingSignedPayloadTrail, trailer: crc, edit: func(b []byte) []byte {
			i := bytes.Index(b, []byte("x-amz-trailer-signature:"))
			return append(bytes.Clone(b[:i]), "\r\n"...)
		}, code: CodeIncompleteBody},
		{name: "long header line", mode: StreamingSignedPayload, edit: func(b []byte) []byte {
			return append([]byte(strings.Repeat("0", 5000)), b...)
		}, code: CodeIncompleteBody},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			decl := len(want)
			if c.declLen != 0 {
				decl = c.declLen
			}
			trailerHdr := ""
			if c.trailer != nil {
				trailerHdr = c.trailer[0][0]
			}
			req, signer := signedStreamingRequest(t, c.mode, decl, trailerHdr)
			body := buildChunked(signer, chunks, c.trailer)
			if c.edit != nil {
				body = c.edit(body)
			}
			res, err := testVerifier().Verify(withBody(req, body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			if c.code == "" {
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("read %d bytes, err %v", len(got), err)
				}
				if c.trailer != nil && res.Trailer().Get(c.trailer[0][0]) != c.trailer[0][1] {
					t.Fatalf("trailer %v", res.Trailer())
				}
				return
			}
			var status int
			switch c.code {
			case CodeSignatureDoesNotMatch:
				status = 403
			default:
				status = 400
			}
			wantCode(t, err, c.code, status)
			if res.Trailer() != nil {
				t.Fatal("trailer exposed after failure")
			}
		})
	}
}

func TestUnsignedChunkedTrailer(t *testing.T) {
	data := []byte("hello unsigned trailer")
	req, _ := signedStreamingRequest(t, StreamingUnsignedPayloadTrail, len(data), "x-amz-checksum-sha256")
	cases := []struct {
		name string
		body []byte
		code string
	}{
		{"ok", buildChunked(nil, [][]byte{data[:5], data[5:]}, [][2]string{{"x-amz-checksum-sha256", "v"}}), ""},
		{"missing trailer", buildChunked(nil, [][]byte{data}, nil), CodeMalformedTrailerError},
		{"undeclared trailer", buildChunked(nil, [][]byte{data}, [][2]string{{"x-amz-checksum-sha256", "v"}, {"x-other", "1"}}), CodeMalformedTrailerError},
		{"signature ext in unsigned", []byte("16;chunk-signature=" + strings.Repeat("a", 64) + "\r\n" + string(data) + "\r\n0\r\n\r\n"), CodeIncompleteBody},
		{"bad hex", []byte("zz\r\n"), CodeIncompleteBody},
		{"signed size", []byte("+16\r\n" + string(data) + "\r\n0\r\n\r\n"), CodeIncompleteBody},
		{"lf only", []byte("16\n" + string(data) + "\r\n0\r\n\r\n"), CodeIncompleteBody},
		{"empty", nil, CodeIncompleteBody},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, err := testVerifier().Verify(withBody(req, c.body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			if c.code == "" {
				if err != nil || !bytes.Equal(got, data) || res.Trailer().Get("X-Amz-Checksum-Sha256") != "v" {
					t.Fatalf("got %q err %v trailer %v", got, err, res.Trailer())
				}
				return
			}
			wantCode(t, err, c.code, 400)
		})
	}
}

// TestChunkedSmallReads reads one byte at a time across chunk boundaries.
func TestChunkedSmallReads(t *testing.T) {
	chunks := [][]byte{[]byte("abc"), []byte("defgh"), []byte("i")}
	req, signer := signedStreamingRequest(t, StreamingSignedPayload, 9, "")
	res, err := testVerifier().Verify(withBody(req, buildChunked(signer, chunks, nil)))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	buf := make([]byte, 1)
	for {
		n, err := res.Body.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(out) != "abcdefghi" {
		t.Fatalf("got %q", out)
	}
}
