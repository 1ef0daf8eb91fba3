package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// result builds the Result and its verifying body for a request whose
// signature has been checked.
func (v *Verifier) result(r *http.Request, s *signed, key []byte, mode string, presigned bool) (*Result, error) {
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	res := &Result{AccessKey: s.accessKey, Region: s.region, Presigned: presigned, PayloadMode: mode, Trailer: func() http.Header { return nil }}
	switch mode {
	case StreamingSignedPayload, StreamingSignedPayloadTrail, StreamingUnsignedPayloadTrail:
		decoded := int64(-1)
		if d := r.Header.Get("X-Amz-Decoded-Content-Length"); d != "" {
			n, err := strconv.ParseInt(d, 10, 64)
			if err != nil || n < 0 {
				// S3 reads a malformed length as none.
				return nil, newErr(CodeMissingContentLength, http.StatusLengthRequired, "You must provide the Content-Length HTTP header.")
			}
			decoded = n
		}
		cfg := chunkConfig{decodedLength: decoded, declared: declaredTrailers(r.Header), minChunk: v.minChunk}
		if mode != StreamingUnsignedPayloadTrail {
			cfg.signer = &chunkSigner{key: key, amzDate: s.amzDate, scope: scope(s), prevSig: s.signature}
		}
		cfg.trailer = mode != StreamingSignedPayload
		cr := newChunkedReader(body, cfg)
		res.Body = cr
		res.DecodedLength = decoded
		res.Trailer = cr.Trailer
	default:
		pr := &plainReader{src: body, length: r.ContentLength}
		if mode != UnsignedPayload {
			pr.want, _ = hex.DecodeString(mode)
			pr.h = sha256.New()
		}
		res.Body = pr
		res.DecodedLength = r.ContentLength
	}
	return res, nil
}

// declaredTrailers returns the lower-cased names listed in x-amz-trailer.
func declaredTrailers(h http.Header) map[string]bool {
	m := map[string]bool{}
	for _, v := range h.Values("X-Amz-Trailer") {
		for name := range strings.SplitSeq(v, ",") {
			if name = strings.ToLower(strings.TrimSpace(name)); name != "" {
				m[name] = true
			}
		}
	}
	return m
}

// plainReader passes a non-chunked body through, checking its length
// against Content-Length (when known) and its SHA-256 (when signed). It
// returns io.EOF only when the source returned a bare io.EOF and every
// check passed; any other end (io.ErrUnexpectedEOF, a wrapped io.EOF) is
// IncompleteBody.
type plainReader struct {
	src    io.ReadCloser
	length int64 // -1 if unknown
	n      int64
	h      hash.Hash // nil for UNSIGNED-PAYLOAD
	want   []byte
	err    error
}

const msgShortBody = "You did not provide the number of bytes specified by the Content-Length HTTP header."

func (p *plainReader) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.src.Read(b)
	if n > 0 {
		p.n += int64(n)
		if p.h != nil {
			p.h.Write(b[:n])
		}
		if p.length >= 0 && p.n > p.length {
			p.err = errIncomplete("The request body is longer than Content-Length.")
			return n, p.err
		}
	}
	switch {
	case err == io.EOF:
		p.err = p.finish()
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		p.err = errIncomplete(msgShortBody)
	case err != nil:
		p.err = err
	}
	if p.err != nil {
		return n, p.err
	}
	return n, nil
}

func (p *plainReader) finish() error {
	if p.length >= 0 && p.n != p.length {
		return errIncomplete(msgShortBody)
	}
	if sum := p.h; sum != nil && !hmac.Equal(sum.Sum(nil), p.want) {
		return newErr(CodeXAmzContentSHA256Mismatch, http.StatusBadRequest, "The provided 'x-amz-content-sha256' header does not match what was computed.").with(
			"ClientComputedContentSHA256", hex.EncodeToString(p.want), "S3ComputedContentSHA256", hex.EncodeToString(sum.Sum(nil)))
	}
	return io.EOF
}

// Close closes the original request body.
func (p *plainReader) Close() error { return p.src.Close() }
