package s3api

import (
	"cmp"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

func (s *Server) copyObject(req *request) error {
	if err := writePolicy.check(req.r.Header); err != nil {
		return err
	}
	cond, err := writeCondition(req.r.Header)
	if err != nil {
		return err
	}
	src, err := s.copySource(req)
	if err != nil {
		return err
	}
	srcBucket, srcKey, srcVersion := src.bucket, src.key, src.versionID
	record, err := s.recordOfWrite(req, req.r.Header)
	if err != nil {
		return err
	}
	// The copy gets the algorithm the client asks for (x-amz-checksum-
	// algorithm), else the source's, else the default, computed afresh over
	// the plaintext as it is copied.
	var asked checksum.Algorithm
	if v := req.r.Header.Get("X-Amz-Checksum-Algorithm"); v != "" {
		a, ok := checksum.ParseAlgorithm(v)
		if !ok {
			return s3err.New(s3err.InvalidRequest, "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")
		}
		asked = a
	}
	hasher := &lazyHasher{}
	var srcVersionSeen string
	in := sealstore.CopyInput{Cond: cond, SrcBucket: srcBucket, SrcKey: srcKey, SrcVersionID: srcVersion,
		SrcContentID: src.bound,
		Bucket:       req.bucket, Key: req.key,
		Check: func(src sealstore.ObjectInfo) error {
			srcVersionSeen = cmp.Or(src.VersionID, srcVersion)
			alg := asked
			if alg == "" {
				alg = copyChecksum(src)
			}
			hasher.h = checksum.NewHasher(alg)
			return checkCopySource(req.r.Header, src)
		},
		Observe: hasher,
		Finalize: func() (map[string]string, error) {
			return map[string]string{string(hasher.h.Algorithm()): hasher.h.Base64()}, nil
		},
		ChecksumAlgorithm: strings.ToLower(string(asked)),
	}
	switch d := req.r.Header.Get("X-Amz-Metadata-Directive"); d {
	case "", "COPY":
		if _, err := userMeta(req.r.Header); err != nil {
			return err
		}
		if in.Headers.StorageClass, in.Headers.WebsiteRedirectLocation, err = classAndRedirect(req.r.Header); err != nil {
			return err
		}
	case "REPLACE":
		in.ReplaceMeta = true
		if in.Meta, in.Headers, err = objectHeaders(req.r.Header); err != nil {
			return err
		}
	default:
		return s3err.New(s3err.InvalidArgument, "Unknown metadata directive.")
	}
	if in.Protect, err = s.copyProtection(req, src); err != nil {
		return err
	}
	if in.CustomerKey, err = customerKey(req.r); err != nil {
		return err
	}
	if in.SrcCustomerKey, err = copySourceKey(req.r); err != nil {
		return err
	}
	backendSSE(req.r.Header, &in.Headers)
	sseAsked := in.Headers.SSE != ""
	if err := s.bucketDefaultSSE(req.r.Context(), req.bucket, &in.Headers, in.CustomerKey); err != nil {
		return err
	}
	in.DefaultSSE = !sseAsked && in.Headers.SSE != ""
	sk, err := s.sealKeyOf(req.cred, req.bucket, req.key, &in.Headers)
	if err != nil {
		return err
	}
	in.KeyID, in.KMSContext, in.BucketKey = sk.keyID, sk.kmsContext, sk.bucketKey
	in.Record = record
	ka := s.startKeepAlive(req)
	info, err := s.store.Copy(req.r.Context(), in)
	if err != nil {
		return ka.finish(nil, objectErr(versionErr(err)))
	}
	ka.extra = map[string]string{}
	if vid := writtenVersion(info.VersionID); vid != "" {
		ka.extra["x-amz-version-id"] = vid
	}
	if srcVersionSeen != "" {
		ka.extra["x-amz-copy-source-version-id"] = srcVersionSeen
	}
	addSSEHeaders(ka, info, in.CustomerKey)
	res := copyObjectResult{Xmlns: s3ns, ETag: quote(info.ETag), LastModified: s3Time(time.Now()), partChecksums: checksumsOf(info.Checksums)}
	if len(info.Checksums) > 0 {
		res.ChecksumType = checksumType(info.Checksums)
	}
	return ka.finish(res, nil)
}

// copyChecksum picks the checksum algorithm for a copy of src.
func copyChecksum(src sealstore.ObjectInfo) checksum.Algorithm {
	for alg := range src.Checksums {
		if a, ok := checksum.ParseAlgorithm(alg); ok {
			return a
		}
	}
	return defaultChecksum
}

// copySrc is a copy's source: its bucket, key and version ("" the
// current one), and the content the caller was allowed to read ("" any).
type copySrc struct {
	bucket, key, versionID string
	bound                  string
}

// copySource is the request's x-amz-copy-source, which the caller's
// credential must be allowed to read, and the source bucket's documents
// allow it to read (copysource.go).
func (s *Server) copySource(req *request) (src copySrc, err error) {
	if src.bucket, src.key, src.versionID, err = parseCopySource(req.r.Header.Get("X-Amz-Copy-Source")); err != nil {
		return copySrc{}, err
	}
	if err := req.cred.check(accRead, src.bucket); err != nil {
		return copySrc{}, err
	}
	if src.bound, err = s.authorizeCopySource(req, src.bucket, src.key, src.versionID); err != nil {
		return copySrc{}, err
	}
	return src, nil
}

// parseCopySource reads "bucket/key" or "/bucket/key", URL-encoded, as
// x-amz-copy-source carries it, with ?versionId= naming a version.
func parseCopySource(v string) (bucket, key, versionID string, err error) {
	src, query, _ := strings.Cut(v, "?")
	if versionID, err = copySourceVersionID(query); err != nil {
		return "", "", "", err
	}
	dec, err := url.PathUnescape(src)
	if err != nil || !utf8.ValidString(dec) {
		return "", "", "", s3err.New(s3err.InvalidArgument, "Invalid copy source encoding")
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(dec, "/"), "/")
	if !validCopyBucket(bucket) {
		return "", "", "", s3err.New(s3err.InvalidArgument, "Invalid copy source bucket name")
	}
	if !validCopyKey(key) {
		return "", "", "", s3err.New(s3err.InvalidArgument, "Invalid copy source object key")
	}
	return bucket, key, versionID, nil
}

// copySourceVersionID is the versionId a copy source's query names ("" for
// none). Parameters are read one by one: url.ParseQuery skips one it
// cannot decode, so a versionId of "%zz" would go unseen and the current
// version be copied in place of the one asked for. A versionId that cannot
// be decoded is InvalidArgument, as a malformed one is; other parameters
// are ignored, as S3 ignores them.
func copySourceVersionID(query string) (string, error) {
	vid, found := "", false
	for pair := range strings.SplitSeq(query, "&") {
		k, v, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(k); err != nil || k != "versionId" || found {
			continue
		}
		found = true
		dec, err := url.QueryUnescape(v)
		if err != nil {
			return "", s3err.New(s3err.InvalidArgument, "Invalid version id specified")
		}
		if vid, err = checkVersionID(dec); err != nil {
			return "", err
		}
	}
	return vid, nil
}

// validCopyBucket is S3's check of a copy source's bucket: a name of
// letters, digits, dots, hyphens and underscores (legacy names included),
// not an IP address, of 3 characters or more ("." and ".." are no bucket).
func validCopyBucket(b string) bool {
	if len(b) < 3 || net.ParseIP(b) != nil {
		return false
	}
	for _, r := range b {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune(".-_", r)) {
			return false
		}
	}
	return true
}

// validCopyKey is S3's check of a copy source's key: not empty, and its
// "." and ".." segments, resolved as a path, neither climb above the
// bucket nor leave nothing.
func validCopyKey(k string) bool {
	depth := 0
	for seg := range strings.SplitSeq(k, "/") {
		switch seg {
		case ".":
		case "..":
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return depth > 0 && k != ""
}

// checkCopySource evaluates the x-amz-copy-source-if-* conditions against
// the source's plaintext ETag and date; all failures are 412.
func checkCopySource(h http.Header, src sealstore.ObjectInfo) error {
	// As S3 documents: an ETag condition, when given, decides over its
	// date counterpart (if-match over if-unmodified-since, if-none-match
	// over if-modified-since); every failure is 412.
	lm := src.LastModified.Truncate(time.Second)
	if im := h.Get("X-Amz-Copy-Source-If-Match"); im != "" {
		if !etagListMatches(im, src.ETag) {
			return s3err.New(s3err.PreconditionFailed, "")
		}
	} else if t, err := http.ParseTime(h.Get("X-Amz-Copy-Source-If-Unmodified-Since")); err == nil && lm.After(t) {
		return s3err.New(s3err.PreconditionFailed, "")
	}
	if inm := h.Get("X-Amz-Copy-Source-If-None-Match"); inm != "" {
		if etagListMatches(inm, src.ETag) {
			return s3err.New(s3err.PreconditionFailed, "")
		}
	} else if t, err := http.ParseTime(h.Get("X-Amz-Copy-Source-If-Modified-Since")); err == nil && !lm.After(t) {
		return s3err.New(s3err.PreconditionFailed, "")
	}
	return nil
}
