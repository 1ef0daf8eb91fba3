package s3api

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// defaultChecksum is computed for objects whose client named none, as S3
// does since 2025, so that any later GET can be checked end to end.
const defaultChecksum = checksum.Default

// bodyChecks prepares the checksum work for one upload: what the client
// declared (headers or trailer), and a hasher for the algorithm to keep.
// withDefault, when set, computes s3seal's default checksum beside the
// client's other one (see keepDefault).
type bodyChecks struct {
	exp         *checksum.Expected
	hasher      *checksum.Hasher
	withDefault *checksum.Hasher
}

func newBodyChecks(h http.Header) (*bodyChecks, error) {
	exp, err := checksum.FromHeaders(h)
	if err != nil {
		return nil, err
	}
	alg := exp.Algorithm
	if alg == "" {
		alg = defaultChecksum
	}
	return &bodyChecks{exp: exp, hasher: checksum.NewHasher(alg)}, nil
}

// keepDefault makes the checks also compute the default checksum when the
// kept one is another algorithm: a part of an upload created without an
// algorithm keeps it beside the client's, so that the completion can
// combine the object's FULL_OBJECT CRC64NVME as S3 does.
func (b *bodyChecks) keepDefault() {
	if b.hasher.Algorithm() != defaultChecksum {
		b.withDefault = checksum.NewHasher(defaultChecksum)
	}
}

// declared is the checksum the client gave in a header, before its body,
// as finalize will return it (nil: none, or one in the trailer): what lets
// sealstore stream the PUT.
func (b *bodyChecks) declared() map[string]string {
	if b.exp.Value == nil || b.withDefault != nil {
		return nil
	}
	return map[string]string{strings.ToLower(string(b.exp.Algorithm)): base64.StdEncoding.EncodeToString(b.exp.Value)}
}

// observer is the writer the body is hashed through.
func (b *bodyChecks) observer() io.Writer {
	if b.withDefault == nil {
		return b.hasher
	}
	return io.MultiWriter(b.hasher, b.withDefault)
}

// finalize verifies the declared checksum (from the trailer when the client
// sent one there) and returns the checksum to keep with the object.
func (b *bodyChecks) finalize(trailer func() http.Header) func() (map[string]string, error) {
	return func() (map[string]string, error) {
		var t http.Header
		if trailer != nil {
			t = trailer()
		}
		if err := b.exp.Verify(b.hasher, t); err != nil {
			return nil, err
		}
		sums := map[string]string{string(b.hasher.Algorithm()): b.hasher.Base64()}
		if b.withDefault != nil {
			sums[string(defaultChecksum)] = b.withDefault.Base64()
		}
		return sums, nil
	}
}

// clientChecksums is what S3 reports of a part's kept checksums: the one
// the client sent (or its upload's algorithm), without the default that
// s3seal keeps beside another (keepDefault). An upload created with an
// algorithm (alg) has no other.
func clientChecksums(alg string, sums map[string]string) map[string]string {
	def := strings.ToLower(string(defaultChecksum))
	if alg != "" || len(sums) < 2 || sums[def] == "" {
		return sums
	}
	out := make(map[string]string, len(sums)-1)
	for a, v := range sums {
		if a != def {
			out[a] = v
		}
	}
	return out
}

// verifyBody checks a small request body that s3seal reads whole (such as
// DeleteObjects XML) against its Content-MD5 and declared checksum.
func verifyBody(req *request, body []byte) error {
	checks, err := newBodyChecks(req.r.Header)
	if err != nil {
		return err
	}
	if want := checks.exp.ContentMD5; want != nil {
		got := md5.Sum(body)
		if subtle.ConstantTimeCompare(want, got[:]) != 1 {
			return s3err.New(s3err.BadDigest, "")
		}
	}
	_, _ = checks.hasher.Write(body)
	_, err = checks.finalize(req.auth.Trailer)()
	return err
}

// setChecksumHeaders reports the kept checksums as x-amz-checksum-*
// headers (only for whole objects: a range has no checksum of its own).
func setChecksumHeaders(h http.Header, info sealstore.ObjectInfo) {
	for alg, v := range info.Checksums {
		if a, ok := checksum.ParseAlgorithm(alg); ok {
			h.Set(a.HeaderName(), v)
		}
	}
	if len(info.Checksums) > 0 {
		h.Set("X-Amz-Checksum-Type", checksumType(info.Checksums))
	}
}

// checksumType is the type of kept checksums as S3 names it: COMPOSITE
// for a multipart checksum of part checksums (its value ends in "-N"),
// FULL_OBJECT otherwise.
func checksumType(cs map[string]string) string {
	for _, v := range cs {
		if strings.Contains(v, "-") {
			return checksum.Composite
		}
	}
	return checksum.FullObject
}

// listedChecksums names the algorithms of kept checksums (sorted) and
// their type, as the object and version listings show them.
func listedChecksums(cs map[string]string) ([]string, string) {
	var algs []string
	for alg := range cs {
		if a, ok := checksum.ParseAlgorithm(alg); ok {
			algs = append(algs, string(a))
		}
	}
	if len(algs) == 0 {
		return nil, ""
	}
	sort.Strings(algs)
	return algs, checksumType(cs)
}

// wantsChecksums reports x-amz-checksum-mode: ENABLED.
func wantsChecksums(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("X-Amz-Checksum-Mode"), "ENABLED")
}

// lazyHasher is a writer whose target is chosen once the copy source is
// known (its checksum algorithm is kept for the copy).
type lazyHasher struct{ h *checksum.Hasher }

func (l *lazyHasher) Write(p []byte) (int, error) {
	if l.h == nil {
		return len(p), nil
	}
	return l.h.Write(p)
}

var _ io.Writer = (*lazyHasher)(nil)
