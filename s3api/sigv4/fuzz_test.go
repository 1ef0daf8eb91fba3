package sigv4

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// FuzzChunkedReader feeds arbitrary bodies to the aws-chunked decoder in
// signed and unsigned mode: it must not panic, must never return more
// bytes than declared, must only report io.EOF with exactly the declared
// length and the declared trailer, and must report every other end as an
// error that matches neither io.EOF nor io.ErrUnexpectedEOF. The same body
// ending in io.ErrUnexpectedEOF (a connection cut short of Content-Length)
// is never a clean end.
func FuzzChunkedReader(f *testing.F) {
	signer := &chainSigner{key: deriveKey(testSecret, "20240524", testRegion, "s3"), date: "20240524T120000Z",
		scope: "20240524/" + testRegion + "/s3/aws4_request", prevSig: "seed"}
	f.Add(buildChunked(nil, [][]byte{[]byte("hello")}, [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}), false, int64(5))
	f.Add(buildChunked(signer, [][]byte{[]byte("hello"), []byte("world")}, nil), true, int64(10))
	f.Add([]byte("0\r\n\r\n"), false, int64(0))
	f.Add([]byte("ffffffffffffffff\r\n"), false, int64(-1))
	f.Add(buildChunkedFramed(nil, [][]byte{[]byte("hello")}, [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}, true), false, int64(5))
	signer.prevSig = "seed"
	f.Add(buildChunkedFramed(signer, [][]byte{[]byte("hello")}, [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}, true), true, int64(5))
	f.Fuzz(func(t *testing.T, body []byte, signed bool, decoded int64) {
		for _, end := range []error{io.EOF, io.ErrUnexpectedEOF} {
			cfg := chunkConfig{decodedLength: decoded, trailer: true, declared: map[string]bool{"x-amz-checksum-crc32": true}}
			if decoded < -1 {
				cfg.decodedLength = -1
			}
			if signed {
				cfg.signer = &chunkSigner{key: signer.key, amzDate: signer.date, scope: signer.scope, prevSig: "seed"}
			}
			r := newChunkedReader(&cutSource{r: bytes.NewReader(body), end: end}, cfg)
			out, err := io.ReadAll(r)
			if len(out) > len(body) {
				t.Fatalf("decoded %d bytes from %d", len(out), len(body))
			}
			if cfg.decodedLength >= 0 && int64(len(out)) > cfg.decodedLength {
				t.Fatalf("decoded %d > declared %d", len(out), cfg.decodedLength)
			}
			if err == nil {
				if end != io.EOF {
					t.Fatalf("clean end of a body whose source ended in %v", end)
				}
				if cfg.decodedLength >= 0 && int64(len(out)) != cfg.decodedLength {
					t.Fatalf("clean EOF with %d bytes, declared %d", len(out), cfg.decodedLength)
				}
				if r.Trailer().Get("x-amz-checksum-crc32") == "" {
					t.Fatalf("clean EOF without the declared trailer")
				}
			} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("error %v reads as an end of stream", err)
			}
		}
	})
}

// FuzzPlainReader: a non-chunked body ends cleanly only with exactly
// Content-Length bytes (when known) and the signed SHA-256 (when signed),
// and only when the source ended in a bare io.EOF; every other end is an
// error that matches neither io.EOF nor io.ErrUnexpectedEOF.
func FuzzPlainReader(f *testing.F) {
	f.Add([]byte("hello"), int64(5), true, 5, false)
	f.Add([]byte("hello"), int64(-1), false, 3, true)
	f.Add([]byte(""), int64(0), true, 0, false)
	f.Fuzz(func(t *testing.T, body []byte, length int64, signed bool, cut int, unexpected bool) {
		if length < -1 {
			length = -1
		}
		if cut < 0 || cut > len(body) {
			cut = len(body)
		}
		end := io.EOF
		if unexpected {
			end = io.ErrUnexpectedEOF
		}
		p := &plainReader{src: &cutSource{r: bytes.NewReader(body[:cut]), end: end}, length: length}
		if signed {
			sum := sha256.Sum256(body)
			p.h, p.want = sha256.New(), sum[:]
		}
		out, err := io.ReadAll(p)
		if !bytes.HasPrefix(body[:cut], out) || err == nil && len(out) != cut {
			t.Fatalf("passed %d bytes of %d (err %v)", len(out), cut, err)
		}
		if err == nil {
			switch {
			case unexpected:
				t.Fatal("clean end of a body whose source ended in io.ErrUnexpectedEOF")
			case length >= 0 && int64(cut) != length:
				t.Fatalf("clean end with %d bytes, Content-Length %d", cut, length)
			case signed && cut != len(body):
				t.Fatalf("clean end of %d bytes of a %d-byte signed body", cut, len(body))
			}
		} else if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("error %v reads as an end of stream", err)
		}
	})
}

// FuzzCanonicalRequest: the canonical request builder must not panic and
// must be deterministic.
func FuzzCanonicalRequest(f *testing.F) {
	f.Add("GET", "/bucket/key%20x", "a=1&b=&c", "x-amz-meta-a", "  v  w ")
	f.Add("PUT", "/%E2%9C%93/%2F/", "prefix=a+b&x=%zz", "host", "")
	f.Add("DELETE", "", "", "content-length", "5")
	f.Fuzz(func(t *testing.T, method, path, query, hname, hval string) {
		u := &url.URL{Path: "/", RawQuery: query}
		if p, err := url.PathUnescape(path); err == nil {
			u.Path, u.RawPath = p, path
		}
		r := &http.Request{Method: method, URL: u, Host: "h", Header: http.Header{}}
		r.Header.Add(hname, hval)
		names := []string{"host", hname}
		a, errA := canonicalRequest(r, names, UnsignedPayload, "X-Amz-Signature")
		b, errB := canonicalRequest(r, names, UnsignedPayload, "X-Amz-Signature")
		if a != b || (errA == nil) != (errB == nil) {
			t.Fatalf("not deterministic: %q vs %q", a, b)
		}
	})
}
