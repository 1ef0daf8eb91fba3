package sigv4

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// FuzzChunkedReader feeds arbitrary bodies to the aws-chunked decoder in
// signed and unsigned mode: it must not panic, must never return more
// bytes than declared, and must only report io.EOF with exactly the
// declared length.
func FuzzChunkedReader(f *testing.F) {
	signer := &chainSigner{key: deriveKey(testSecret, "20240524", testRegion, "s3"), date: "20240524T120000Z",
		scope: "20240524/" + testRegion + "/s3/aws4_request", prevSig: "seed"}
	f.Add(buildChunked(nil, [][]byte{[]byte("hello")}, [][2]string{{"x-amz-checksum-crc32", "AAAAAA=="}}), false, int64(5))
	f.Add(buildChunked(signer, [][]byte{[]byte("hello"), []byte("world")}, nil), true, int64(10))
	f.Add([]byte("0\r\n\r\n"), false, int64(0))
	f.Add([]byte("ffffffffffffffff\r\n"), false, int64(-1))
	f.Fuzz(func(t *testing.T, body []byte, signed bool, decoded int64) {
		cfg := chunkConfig{decodedLength: decoded, trailer: true, declared: map[string]bool{"x-amz-checksum-crc32": true}}
		if decoded < -1 {
			cfg.decodedLength = -1
		}
		if signed {
			cfg.signer = &chunkSigner{key: signer.key, amzDate: signer.date, scope: signer.scope, prevSig: "seed"}
		}
		r := newChunkedReader(io.NopCloser(bytes.NewReader(body)), cfg)
		out, err := io.ReadAll(r)
		if len(out) > len(body) {
			t.Fatalf("decoded %d bytes from %d", len(out), len(body))
		}
		if cfg.decodedLength >= 0 && int64(len(out)) > cfg.decodedLength {
			t.Fatalf("decoded %d > declared %d", len(out), cfg.decodedLength)
		}
		if err == nil && cfg.decodedLength >= 0 && int64(len(out)) != cfg.decodedLength {
			t.Fatalf("clean EOF with %d bytes, declared %d", len(out), cfg.decodedLength)
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
