package sigv4

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// TestChunkSizeRule: as S3, every aws-chunked data chunk but the last must
// hold at least 8 KiB; a smaller one followed by more data is
// InvalidChunkSizeError naming the chunk and its size.
func TestChunkSizeRule(t *testing.T) {
	v := NewVerifier(StaticCredentials{testAK: testSecret}, WithClock(func() time.Time { return testNow }))
	mk := func(sizes ...int) [][]byte {
		var cs [][]byte
		for i, n := range sizes {
			cs = append(cs, bytes.Repeat([]byte{byte('a' + i)}, n))
		}
		return cs
	}
	for _, tc := range []struct {
		sizes     []int
		bad, size int // 0: accepted
	}{
		{[]int{8192, 8192, 100}, 0, 0},
		{[]int{100}, 0, 0},
		{[]int{10000, 9500, 20}, 0, 0},
		{[]int{100, 8192, 100}, 1, 100},
		{[]int{8192, 10, 100}, 2, 10},
		{[]int{10000, 10, 8192}, 2, 10},
	} {
		for _, signed := range []bool{true, false} {
			chunks := mk(tc.sizes...)
			data := bytes.Join(chunks, nil)
			mode := StreamingUnsignedPayloadTrail
			if signed {
				mode = StreamingSignedPayload
			}
			req, signer := signedStreamingRequest(t, mode, len(data), "")
			if !signed {
				signer = nil
			}
			res, err := v.Verify(withBody(req, buildChunked(signer, chunks, nil)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(res.Body)
			if tc.bad == 0 {
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("%v signed=%v: %v", tc.sizes, signed, err)
				}
				continue
			}
			e := wantCode(t, err, CodeInvalidChunkSize, 400)
			want := []Field{{"Chunk", strconv.Itoa(tc.bad)}, {"BadChunkSize", strconv.Itoa(tc.size)}}
			if e.Message != "Only the last chunk is allowed to have a size less than 8192 bytes" || !equalFields(e.Fields, want) {
				t.Fatalf("%v signed=%v: %q %v", tc.sizes, signed, e.Message, e.Fields)
			}
		}
	}
}

// TestStreamingAnswersAsAWS pins the aws-chunked refusals to S3's words.
func TestStreamingAnswersAsAWS(t *testing.T) {
	data := []byte("dummy data")
	const trailerMsg = "The request contained trailing data that was not well-formed or did not conform to our published schema."
	for _, tc := range []struct {
		name, mode, trailer, decoded string
		body                         []byte
		code                         string
		status                       int
		msg                          string
	}{
		{"broken framing", StreamingUnsignedPayloadTrail, "", "10", []byte("j\r\ndummy data\r\n0\r\n\r\n"),
			CodeIncompleteBody, 400, "The request body terminated unexpectedly"},
		{"cut short", StreamingUnsignedPayloadTrail, "", "10", []byte("a\r\ndummy"),
			CodeIncompleteBody, 400, "The request body terminated unexpectedly"},
		{"shorter than decoded length", StreamingUnsignedPayloadTrail, "", "128", buildChunked(nil, [][]byte{data}, nil),
			CodeIncompleteBody, 400, "You did not provide the number of bytes specified by the Content-Length HTTP header"},
		{"longer than decoded length", StreamingUnsignedPayloadTrail, "", "5", buildChunked(nil, [][]byte{data}, nil),
			CodeIncompleteBody, 400, "You did not provide the number of bytes specified by the Content-Length HTTP header"},
		{"size past the data", StreamingUnsignedPayloadTrail, "", "10", []byte("B\r\ndummy data\r\n0\r\n\r\n"),
			CodeIncompleteBody, 400, "The request body terminated unexpectedly"},
		{"undeclared trailer", StreamingUnsignedPayloadTrail, "x-amz-checksum-sha1", "10",
			buildChunked(nil, [][]byte{data}, [][2]string{{"x-amz-checksum-crc32", "QWaN2w=="}}),
			CodeMalformedTrailerError, 400, trailerMsg},
		{"malformed decoded length", StreamingUnsignedPayloadTrail, "", "abc", buildChunked(nil, [][]byte{data}, nil),
			CodeMissingContentLength, 411, "You must provide the Content-Length HTTP header."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("PUT", "http://s3.local/bucket/streamed", nil)
			req.Header.Set("Content-Encoding", "aws-chunked")
			req.Header.Set("X-Amz-Decoded-Content-Length", tc.decoded)
			if tc.trailer != "" {
				req.Header.Set("X-Amz-Trailer", tc.trailer)
			}
			signHeader(t, req, tc.mode, testNow)
			res, err := testVerifier().Verify(withBody(req, tc.body))
			if err == nil {
				_, err = io.ReadAll(res.Body)
			}
			e := wantCode(t, err, tc.code, tc.status)
			if e.Message != tc.msg {
				t.Fatalf("message %q, want %q", e.Message, tc.msg)
			}
		})
	}
}

// A signed trailer whose signature line is mangled (its name, its length)
// is a body cut short, as S3 answers, whatever else is wrong with it.
func TestSignedTrailerWithoutSignatureLine(t *testing.T) {
	data := []byte("abcdefg")
	crc := [][2]string{{"x-amz-checksum-crc64nvme", "SmzZ/LTp1CA="}}
	for name, edit := range map[string]func([]byte) []byte{
		"name mangled": func(b []byte) []byte {
			return bytes.Replace(b, []byte("x-amz-trailer-signature:"), []byte("x-aminvalidrailer-signature:"), 1)
		},
		"signature one longer": func(b []byte) []byte {
			i := bytes.Index(b, []byte("x-amz-trailer-signature:")) + len("x-amz-trailer-signature:")
			return append(append(bytes.Clone(b[:i]), 'a'), b[i:]...)
		},
		"line ending lost": func(b []byte) []byte {
			i := bytes.Index(b, []byte("x-amz-trailer-signature:"))
			return append(append(bytes.Clone(b[:i-1]), "bcd"...), b[i:]...)
		},
	} {
		req, signer := signedStreamingRequest(t, StreamingSignedPayloadTrail, len(data), "x-amz-checksum-crc64nvme")
		res, err := testVerifier().Verify(withBody(req, edit(buildChunked(signer, [][]byte{data}, crc))))
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(res.Body)
		if e := wantCode(t, err, CodeIncompleteBody, 400); e.Message != "The request body terminated unexpectedly" {
			t.Fatalf("%s: message %q", name, e.Message)
		}
	}
	// With no trailing header at all before the empty line, the declared
	// trailer is what is missing: MalformedTrailerError.
	req, signer := signedStreamingRequest(t, StreamingSignedPayloadTrail, len(data), "x-amz-checksum-crc64nvme")
	body := buildChunked(signer, [][]byte{data}, crc)
	i := bytes.Index(body, []byte("x-amz-checksum-crc64nvme:"))
	body = append(append(bytes.Clone(body[:i]), "\r\n"...), body[i+len("x-amz-checksum-crc64nvme:SmzZ/LTp1CA=\r\n"):]...)
	res, err := testVerifier().Verify(withBody(req, body))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(res.Body)
	wantCode(t, err, CodeMalformedTrailerError, 400)
}
