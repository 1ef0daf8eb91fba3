package checksum

import (
	"encoding/hex"
	"net/http"
	"testing"
)

// TestDigestVectors checks every algorithm against published values, as
// hex of the digest bytes S3 base64-encodes. SHA-512 and MD5: FIPS 180-4
// and RFC 1321 ("abc", ""). xxHash: "Hello world" from the AWS CRT's own
// tests (awslabs/aws-c-checksums tests/xxhash_test.c, which fixes the byte
// order S3 uses: the canonical big-endian form, high half first for
// XXH128), "" from the xxHash reference (Cyan4973/xxHash).
func TestDigestVectors(t *testing.T) {
	cases := []struct {
		a          Algorithm
		in, digest string
	}{
		{SHA512, "abc", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
		{SHA512, "", "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"},
		{MD5, "abc", "900150983cd24fb0d6963f7d28e17f72"},
		{MD5, "", "d41d8cd98f00b204e9800998ecf8427e"},
		{XXHASH64, "Hello world", "c500b0c912b376d8"},
		{XXHASH64, "", "ef46db3751d8e999"},
		{XXHASH3, "Hello world", "b6acb9d84a38ff74"},
		{XXHASH3, "", "2d06800538d394c2"},
		{XXHASH128, "Hello world", "7351f89812f97382b91d05b31e04dd7f"},
		{XXHASH128, "", "99aa06d3014798d86001c324468d497f"},
	}
	for _, c := range cases {
		h := NewHasher(c.a)
		h.Write([]byte(c.in))
		if got := hex.EncodeToString(h.Sum()); got != c.digest || len(h.Sum()) != c.a.Size() {
			t.Errorf("%s(%q) = %s (%d bytes), want %s", c.a, c.in, got, len(h.Sum()), c.digest)
		}
	}
}

// TestNewAlgorithmsInHeadersAndTrailers: each new algorithm is read from
// its x-amz-checksum-* header, from x-amz-trailer and from
// x-amz-sdk-checksum-algorithm, and a wrong value is BadDigest with S3's
// message.
func TestNewAlgorithmsInHeadersAndTrailers(t *testing.T) {
	data := []byte("hello world")
	for _, a := range []Algorithm{SHA512, MD5, XXHASH64, XXHASH3, XXHASH128} {
		t.Run(string(a), func(t *testing.T) {
			good := sumOf(a, data)
			bad := sumOf(a, []byte("other"))
			hdr := http.CanonicalHeaderKey(a.HeaderName())
			for _, c := range []struct {
				name           string
				h, trailer     http.Header
				wantBadDigest  bool
				wantValueKnown bool
			}{
				{name: "header", h: http.Header{hdr: {good}}},
				{name: "header mismatch", h: http.Header{hdr: {bad}}, wantBadDigest: true},
				{name: "trailer", h: http.Header{"X-Amz-Trailer": {a.HeaderName()}}, trailer: http.Header{hdr: {good}}},
				{name: "trailer mismatch", h: http.Header{"X-Amz-Trailer": {a.HeaderName()}}, trailer: http.Header{hdr: {bad}}, wantBadDigest: true},
				{name: "sdk algorithm", h: http.Header{"X-Amz-Sdk-Checksum-Algorithm": {string(a)}}},
			} {
				e, err := FromHeaders(c.h)
				if err != nil {
					t.Fatalf("%s: %v", c.name, err)
				}
				if e.Algorithm != a {
					t.Fatalf("%s: algorithm %q", c.name, e.Algorithm)
				}
				h := e.NewHasher()
				h.Write(data)
				if h.Base64() != good {
					t.Fatalf("%s: computed %s, want %s", c.name, h.Base64(), good)
				}
				err = e.Verify(h, c.trailer)
				if !c.wantBadDigest {
					if err != nil {
						t.Fatalf("%s: %v", c.name, err)
					}
					continue
				}
				ce := wantCode(t, err, CodeBadDigest)
				if ce.Message != "The "+string(a)+" you specified did not match the calculated checksum." {
					t.Fatalf("%s: message %q", c.name, ce.Message)
				}
			}
			// A value of another algorithm's size is malformed.
			if _, err := FromHeaders(http.Header{hdr: {sumOf(CRC32, data)}}); err == nil {
				t.Fatal("a 4-byte value accepted")
			}
		})
	}
}

// TestMultipartTypes: the new algorithms are COMPOSITE only, as S3 has it
// (a FULL_OBJECT value cannot be combined from part digests for them).
func TestMultipartTypes(t *testing.T) {
	for _, a := range []Algorithm{SHA512, MD5, XXHASH64, XXHASH3, XXHASH128} {
		if DefaultType(a) != Composite || !TypeSupported(a, Composite) || TypeSupported(a, FullObject) {
			t.Errorf("%s: default %s, composite %v, full object %v", a, DefaultType(a), TypeSupported(a, Composite), TypeSupported(a, FullObject))
		}
	}
}
