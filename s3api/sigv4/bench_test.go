package sigv4

import (
	"bytes"
	"io"
	"net/http"
	"testing"
)

func BenchmarkVerifyHeader(b *testing.B) {
	req, _ := http.NewRequest("GET", "http://s3.local/bucket/some/key.txt?versionId=abc", nil)
	req.Header.Set("X-Amz-Meta-A", "value")
	signHeader(b, req, UnsignedPayload, testNow)
	v := testVerifier()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(req); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkChunkedDecode64MiB(b *testing.B) {
	const size = 64 << 20
	chunk := bytes.Repeat([]byte{0x5a}, 64<<10)
	chunks := make([][]byte, size/len(chunk))
	for i := range chunks {
		chunks[i] = chunk
	}
	for _, signed := range []bool{false, true} {
		name := "unsigned"
		mode := StreamingUnsignedPayloadTrail
		if signed {
			name, mode = "signed", StreamingSignedPayload
		}
		b.Run(name, func(b *testing.B) {
			req, signer := signedStreamingRequest(b, mode, size, "")
			if !signed {
				signer = nil
			}
			body := buildChunked(signer, chunks, nil)
			v := testVerifier()
			buf := make([]byte, 256<<10)
			b.SetBytes(size)
			b.ResetTimer()
			for b.Loop() {
				res, err := v.Verify(withBody(req, body))
				if err != nil {
					b.Fatal(err)
				}
				if n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{res.Body}, buf); err != nil || n != size {
					b.Fatal(n, err)
				}
			}
		})
	}
}
