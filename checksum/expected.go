package checksum

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"net/http"
	"strings"
)

// Expected is what a request declared about its payload checksums.
type Expected struct {
	// ContentMD5 is the decoded Content-MD5, nil if absent.
	ContentMD5 []byte
	// Algorithm is the flexible checksum the request uses: from an
	// x-amz-checksum-* header, x-amz-trailer or x-amz-sdk-checksum-algorithm.
	// Empty if none.
	Algorithm Algorithm
	// Value is the decoded digest given in a header; nil if the value comes
	// in the trailer (InTrailer) or was not given at all.
	Value []byte
	// InTrailer is true when x-amz-trailer announced the checksum.
	InTrailer bool
}

// FromHeaders reads Content-MD5, x-amz-checksum-*, x-amz-trailer and
// x-amz-sdk-checksum-algorithm. It fails like S3: a Content-MD5 that is not
// base64 of 16 bytes is InvalidDigest; a checksum value that is not base64
// of the algorithm's digest size, more than one checksum, an unknown
// algorithm or an x-amz-sdk-checksum-algorithm that disagrees with the
// header or trailer is InvalidRequest. All errors are *Error with status 400.
func FromHeaders(h http.Header) (*Expected, error) {
	e := &Expected{}
	if v := h.Values("Content-Md5"); len(v) > 0 {
		b, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(v[0]))
		if len(v) > 1 || err != nil || len(b) != md5.Size {
			return nil, newErr(CodeInvalidDigest, "The Content-MD5 you specified was invalid.")
		}
		e.ContentMD5 = b
	}
	n := 0
	for name, vals := range h {
		if _, ok := algorithmForHeader(name); ok {
			n += len(vals)
		}
	}
	if n > 1 {
		return nil, newErr(CodeInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
	}
	for name, vals := range h {
		a, ok := algorithmForHeader(name)
		if !ok {
			if strings.HasPrefix(strings.ToLower(name), "x-amz-checksum-") && !strings.EqualFold(name, "x-amz-checksum-type") && !strings.EqualFold(name, "x-amz-checksum-algorithm") {
				return nil, newErr(CodeInvalidRequest, "The algorithm type you specified in x-amz-checksum- header is invalid.")
			}
			continue
		}
		if e.Algorithm != "" || len(vals) != 1 {
			return nil, newErr(CodeInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		b, err := decodeValue(a, vals[0])
		if err != nil {
			return nil, err
		}
		e.Algorithm, e.Value = a, b
	}
	for _, v := range h.Values("X-Amz-Trailer") {
		for name := range strings.SplitSeq(v, ",") {
			if strings.TrimSpace(name) == "" {
				continue
			}
			a, ok := algorithmForHeader(name)
			if !ok {
				return nil, newErr(CodeInvalidRequest, "The value specified in the x-amz-trailer header is not supported.")
			}
			if e.Algorithm != "" {
				return nil, newErr(CodeInvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
			}
			e.Algorithm, e.InTrailer = a, true
		}
	}
	if v := h.Get("X-Amz-Sdk-Checksum-Algorithm"); v != "" {
		a, ok := ParseAlgorithm(v)
		if !ok {
			return nil, newErr(CodeInvalidRequest, "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256, SHA512, MD5, XXHASH64, XXHASH3, XXHASH128]")
		}
		if e.Algorithm != "" && e.Algorithm != a {
			return nil, newErr(CodeInvalidRequest, "Value for x-amz-sdk-checksum-algorithm header is invalid.")
		}
		e.Algorithm = a
	}
	return e, nil
}

func decodeValue(a Algorithm, v string) ([]byte, error) {
	b, err := base64.StdEncoding.Strict().DecodeString(strings.TrimSpace(v))
	if err != nil || len(b) != a.Size() {
		return nil, newErr(CodeInvalidRequest, "Value for %s header is invalid.", a.HeaderName())
	}
	return b, nil
}

// Hasher is an io.Writer that computes the expected flexible checksum over
// the plaintext written to it. It does not check Content-MD5: the object
// layer computes MD5 for the ETag and checks Content-MD5 with it (MD5 as a
// flexible checksum, x-amz-checksum-md5, is hashed here like the others).
// Writes never fail.
type Hasher struct {
	alg  Algorithm
	flex hash.Hash // nil if no flexible checksum
}

// NewHasher returns a Hasher for e's algorithm (one that computes nothing
// if e has none).
func (e *Expected) NewHasher() *Hasher { return NewHasher(e.Algorithm) }

// NewHasher returns a Hasher computing a (nothing if a is empty).
// It panics on an unknown algorithm.
func NewHasher(a Algorithm) *Hasher {
	h := &Hasher{alg: a}
	if a != "" {
		h.flex = a.New()
	}
	return h
}

// Write implements io.Writer; it never returns an error.
func (h *Hasher) Write(p []byte) (int, error) {
	if h.flex != nil {
		h.flex.Write(p)
	}
	return len(p), nil
}

// Algorithm returns the flexible checksum algorithm, "" if none.
func (h *Hasher) Algorithm() Algorithm { return h.alg }

// Sum returns the flexible checksum digest (big-endian), nil if none.
func (h *Hasher) Sum() []byte {
	if h.flex == nil {
		return nil
	}
	return h.flex.Sum(nil)
}

// Base64 returns the flexible checksum as S3 prints it in x-amz-checksum-*,
// "" if none.
func (h *Hasher) Base64() string {
	if h.flex == nil {
		return ""
	}
	return base64.StdEncoding.EncodeToString(h.flex.Sum(nil))
}

// Verify compares the flexible checksum h computed with what the request
// declared; Content-MD5 is the caller's to check against its own MD5.
// trailer holds the trailing headers (may be nil); it is read only when the
// checksum was announced in x-amz-trailer. It returns BadDigest for a
// mismatch, InvalidRequest for a malformed or missing trailer value; nil if
// all match.
func (e *Expected) Verify(h *Hasher, trailer http.Header) error {
	if e.Algorithm == "" {
		return nil
	}
	want := e.Value
	if e.InTrailer {
		v := trailer.Get(e.Algorithm.HeaderName())
		if v == "" {
			return newErr(CodeInvalidRequest, "The trailer did not carry the announced %s.", e.Algorithm.HeaderName())
		}
		b, err := decodeValue(e.Algorithm, v)
		if err != nil {
			return newErr(CodeInvalidRequest, "Value for %s trailing header is invalid.", e.Algorithm.HeaderName())
		}
		want = b
	}
	if want == nil {
		return nil // only x-amz-sdk-checksum-algorithm: compute, nothing to compare
	}
	if h.alg != e.Algorithm || subtle.ConstantTimeCompare(want, h.Sum()) != 1 {
		return newErr(CodeBadDigest, "The %s you specified did not match the calculated checksum.", e.Algorithm)
	}
	return nil
}
