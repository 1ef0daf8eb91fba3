package sigv4

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// cutSource returns the first cut bytes of body, then ends the way a
// short request body ends: with io.EOF (the sender's Content-Length
// matched what it sent) or io.ErrUnexpectedEOF (net/http, when the
// connection closed before Content-Length bytes came).
type cutSource struct {
	r   *bytes.Reader
	end error
}

func (c *cutSource) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF {
		err = c.end
	}
	return n, err
}

func (c *cutSource) Close() error { return nil }

// wantIncomplete asserts that reading ended in an error that no caller can
// take for the end of the body: IncompleteBody, matching neither io.EOF nor
// io.ErrUnexpectedEOF, with no trailer exposed.
func wantIncomplete(t *testing.T, what string, res *Result, err error) {
	t.Helper()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("%s: read error %v; want an error that is not an end of stream", what, err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != CodeIncompleteBody || e.StatusCode != http.StatusBadRequest {
		t.Fatalf("%s: read error %v, want IncompleteBody/400", what, err)
	}
	if res.Trailer() != nil {
		t.Fatalf("%s: trailer exposed after a cut body", what)
	}
}

// TestCutBodies cuts a valid body of every payload mode at every byte
// offset (so at every structural point: inside a chunk header, inside
// data, right after data, before and inside the final chunk and the
// trailer) and checks that the reader never reports a clean end, whether
// the source then says io.EOF or io.ErrUnexpectedEOF, and whether the
// decoded length is declared or not.
func TestCutBodies(t *testing.T) {
	data := []byte("0123456789abcdef-tail")
	chunks := [][]byte{data[:16], data[16:]}
	crc := [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}
	modes := []struct {
		mode    string
		trailer [][2]string
		lf      bool // the minio-go framing of the trailer
	}{
		{mode: "sha256"},
		{mode: UnsignedPayload},
		{mode: StreamingSignedPayload},
		{mode: StreamingUnsignedPayloadTrail, trailer: crc},
		{mode: StreamingUnsignedPayloadTrail, trailer: crc, lf: true},
		{mode: StreamingSignedPayloadTrail, trailer: crc},
		{mode: StreamingSignedPayloadTrail, trailer: crc, lf: true},
	}
	for _, m := range modes {
		for _, decl := range []int{len(data), -1} {
			for _, end := range []error{io.EOF, io.ErrUnexpectedEOF} {
				name := fmt.Sprintf("%s/lf=%v/decoded=%d/%v", m.mode, m.lf, decl, end)
				t.Run(name, func(t *testing.T) {
					req, body := cutTestRequest(t, m.mode, data, chunks, m.trailer, m.lf, decl)
					if end == io.EOF { // the control: the whole body reads cleanly
						res, err := testVerifier().Verify(withBody(req, body))
						if err != nil {
							t.Fatal(err)
						}
						if got, err := io.ReadAll(res.Body); err != nil || !bytes.Equal(got, data) {
							t.Fatalf("whole body: %q, %v", got, err)
						}
					}
					for cut := 0; cut < len(body); cut++ {
						r := req.Clone(req.Context())
						r.Body = &cutSource{r: bytes.NewReader(body[:cut]), end: end}
						res, err := testVerifier().Verify(r)
						if err != nil {
							t.Fatal(err)
						}
						got, err := io.ReadAll(res.Body)
						wantIncomplete(t, fmt.Sprintf("cut at %d of %d (%q|%q)", cut, len(body), tail(body[:cut]), head(body[cut:])), res, err)
						if len(got) > cut {
							t.Fatalf("cut at %d: %d bytes decoded", cut, len(got))
						}
					}
				})
			}
		}
	}
}

func tail(b []byte) []byte { return b[max(0, len(b)-12):] }
func head(b []byte) []byte { return b[:min(len(b), 12)] }

// cutTestRequest returns a signed request for mode with its body. Plain
// modes carry data as it is (Content-Length len(data), which the cut
// bodies then fall short of); streaming modes the aws-chunked encoding of
// chunks with trailer, framed like minio-go when lf is set.
func cutTestRequest(t *testing.T, mode string, data []byte, chunks [][]byte, trailer [][2]string, lf bool, decl int) (*http.Request, []byte) {
	t.Helper()
	switch mode {
	case "sha256", UnsignedPayload:
		hash := mode
		if mode == "sha256" {
			hash = sha256Hex(data)
		}
		req, _ := http.NewRequest("PUT", "http://s3.local/bucket/cut", nil)
		req.ContentLength = int64(len(data))
		signHeader(t, req, hash, testNow)
		return req, data
	}
	trailerName := ""
	if trailer != nil {
		trailerName = trailer[0][0]
	}
	req, signer := signedStreamingRequest(t, mode, decl, trailerName)
	if mode != StreamingSignedPayload && mode != StreamingSignedPayloadTrail {
		signer = nil
	}
	return req, buildChunkedFramed(signer, chunks, trailer, lf)
}
