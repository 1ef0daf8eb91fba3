package s3api

import (
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
	"github.com/s3seal/s3seal/sealstore"
)

// maxMetaSize is S3's limit on user metadata (keys plus values).
const maxMetaSize = 2 << 10

func (s *Server) putObject(req *request) error {
	if err := writePolicy.check(req.r.Header); err != nil {
		return err
	}
	cond, err := writeCondition(req.r.Header)
	if err != nil {
		return err
	}
	size := req.auth.DecodedLength
	if size < 0 {
		return noLength(req.r)
	}
	meta, headers, err := objectHeaders(req.r.Header)
	if err != nil {
		return err
	}
	checks, err := newBodyChecks(req.r.Header)
	if err != nil {
		return err
	}
	protect, err := protection(req)
	if err != nil {
		return err
	}
	record, err := s.recordOfWrite(req, req.r.Header)
	if err != nil {
		return err
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	backendSSE(req.r.Header, &headers)
	if err := s.bucketDefaultSSE(req.r.Context(), req.bucket, &headers, ck); err != nil {
		return err
	}
	sk, err := s.sealKeyOf(req.cred, req.bucket, req.key, &headers)
	if err != nil {
		return err
	}
	info, err := s.store.Put(req.r.Context(), sealstore.PutInput{
		Bucket: req.bucket, Key: req.key, Body: req.r.Body, Size: size,
		ContentMD5: checks.exp.ContentMD5, Declared: checks.declared(), Meta: meta, Headers: headers,
		KeyID: sk.keyID, KMSContext: sk.kmsContext, BucketKey: sk.bucketKey,
		Observe: checks.hasher, Finalize: checks.finalize(req.auth.Trailer), Cond: cond, Protect: protect,
		CustomerKey: ck, Record: record,
	})
	if err != nil {
		return err
	}
	req.w.Header().Set("ETag", quote(info.ETag))
	setSSEHeaders(req.w.Header(), info, ck)
	setVersionID(req.w.Header(), writtenVersion(info.VersionID))
	// The kept checksum (the client's algorithm, else the default
	// CRC64NVME) and its type, as S3 answers a PutObject.
	setChecksumHeaders(req.w.Header(), info)
	putTags, _ := parseTagHeader(req.r.Header.Get("X-Amz-Tagging"))
	s.setExpiration(req, info, append([]tag{}, putTags...))
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// noLength is S3's answer to a PUT whose body has no length it can read
// before the body (Content-Length, or x-amz-decoded-content-length of an
// aws-chunked body): 501 NotImplemented naming Transfer-Encoding for an
// HTTP-chunked body, which S3 does not take, else 411
// MissingContentLength.
func noLength(r *http.Request) error {
	if slices.Contains(r.TransferEncoding, "chunked") {
		e := s3err.New(s3err.NotImplemented, "A header you provided implies functionality that is not implemented")
		e.Fields = append(e.Fields, sigv4.Field{Name: "Header", Value: "Transfer-Encoding"})
		return e
	}
	return s3err.New(s3err.MissingContentLength, "")
}

// objectRange is the part of an object a GET or HEAD asks for: a Range
// header, or ?partNumber=, never both.
func objectRange(r *http.Request) (*sealstore.Range, error) {
	rng, err := parseRange(r.Header.Get("Range"))
	if err != nil || !r.URL.Query().Has("partNumber") {
		return rng, err
	}
	if rng != nil {
		return nil, s3err.New(s3err.InvalidRequest, "Cannot specify both Range header and partNumber query parameter")
	}
	n, err := partNumber(r.URL.Query().Get("partNumber"))
	if err != nil {
		return nil, err
	}
	return &sealstore.Range{Part: n}, nil
}

func (s *Server) getObject(req *request) error {
	if err := readPolicy.check(req.r.Header); err != nil {
		return err
	}
	rng, err := objectRange(req.r)
	if err != nil {
		return err
	}
	vid, err := versionParam(req.r)
	if err != nil {
		return err
	}
	if err := refuseReadSSE(req.r.Header); err != nil {
		return err
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	info, rd, err := s.store.Read(req.r.Context(), sealstore.ReadInput{Bucket: req.bucket, Key: req.key,
		VersionID: vid, Range: rng, CustomerKey: ck, PartChecksums: wantsChecksums(req.r), ContentID: req.boundTo})
	if err != nil {
		return readErr(req.w.Header(), err, vid)
	}
	defer rd.Close()
	h := req.w.Header()
	if err := checkConditions(req.r, info); err != nil {
		return conditionFailed(h, info, err)
	}
	setObjectHeaders(h, info, req.r.URL.Query())
	s.setProtectionHeaders(req, h, info, vid)
	echoVersion(h, vid)
	setSSEHeaders(h, info, ck)
	status := http.StatusOK
	h.Set("Content-Length", strconv.FormatInt(rd.Len, 10))
	if rd.Partial && rd.Len > 0 {
		status = http.StatusPartialContent
		h.Set("Content-Range", contentRange(rd.Off, rd.Len, info.Size))
		if wantsChecksums(req.r) {
			setRangeChecksumHeaders(h, info, rng, rd.Len)
		}
	} else if wantsChecksums(req.r) {
		setChecksumHeaders(h, info)
	}
	if vid == "" {
		s.setExpiration(req, info, nil) // a named version may be noncurrent: Expiration is not its rule
	}
	req.w.WriteHeader(status)
	if _, err := rd.WriteTo(req.w); err != nil {
		// Headers are gone: the only honest signal left is to cut the
		// connection, so the client sees a short body, never wrong bytes.
		noteErr(req.r, err)
		slog.ErrorContext(req.r.Context(), "GET aborted mid-stream", "bucket", req.bucket, "key", req.key, "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

func (s *Server) headObject(req *request) error {
	if err := readPolicy.check(req.r.Header); err != nil {
		return err
	}
	rng, err := objectRange(req.r)
	if err != nil {
		return err
	}
	vid, err := versionParam(req.r)
	if err != nil {
		return err
	}
	if err := refuseReadSSE(req.r.Header); err != nil {
		return err
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	info, err := s.store.Stat(req.r.Context(), sealstore.ReadInput{Bucket: req.bucket, Key: req.key, VersionID: vid, CustomerKey: ck,
		Range: rng, PartChecksums: wantsChecksums(req.r), ContentID: req.boundTo})
	if err != nil {
		return readErr(req.w.Header(), err, vid)
	}
	h := req.w.Header()
	if err := checkConditions(req.r, info); err != nil {
		return conditionFailed(h, info, err)
	}
	setObjectHeaders(h, info, req.r.URL.Query())
	s.setProtectionHeaders(req, h, info, vid)
	echoVersion(h, vid)
	setSSEHeaders(h, info, ck)
	status := http.StatusOK
	length := info.Size
	if rng != nil {
		off, n, err := sealstore.ResolveRange(rng, info)
		if err != nil {
			return err
		}
		length = n
		if n > 0 {
			status = http.StatusPartialContent
			h.Set("Content-Range", contentRange(off, n, info.Size))
		}
	}
	if status == http.StatusOK && wantsChecksums(req.r) {
		// The whole object, as GET answers it: an empty one asked for
		// by partNumber=1 or a suffix range included.
		setChecksumHeaders(h, info)
	} else if wantsChecksums(req.r) {
		setRangeChecksumHeaders(h, info, rng, length)
	}
	h.Set("Content-Length", strconv.FormatInt(length, 10))
	if vid == "" {
		s.setExpiration(req, info, nil) // a named version may be noncurrent: Expiration is not its rule
	}
	req.w.WriteHeader(status)
	return nil
}

// objectErr turns a bodiless 404 on an object into NoSuchKey.
func objectErr(err error) error {
	if sealstore.StoreCode(err) == "NotFound" {
		return s3err.New(s3err.NoSuchKey, "")
	}
	return err
}

// userMeta extracts the x-amz-meta-* headers, refused as S3 refuses them
// when together they exceed its limit: on a copy too, whatever its
// metadata directive.
func userMeta(h http.Header) (map[string]string, error) {
	meta := map[string]string{}
	total := 0
	for k, vs := range h {
		lk := strings.ToLower(k)
		name, ok := strings.CutPrefix(lk, "x-amz-meta-")
		if !ok {
			continue
		}
		v := strings.Join(vs, ",")
		meta[name] = v
		total += len(name) + len(v)
	}
	if total > maxMetaSize {
		return nil, s3err.New(s3err.MetadataTooLarge, "Your metadata headers exceed the maximum allowed metadata size")
	}
	return meta, nil
}

// objectHeaders extracts user metadata and the standard headers S3 stores.
func objectHeaders(h http.Header) (map[string]string, sealstore.Headers, error) {
	meta, err := userMeta(h)
	if err != nil {
		return nil, sealstore.Headers{}, err
	}
	if err := sealstore.CheckMeta(meta); err != nil {
		return nil, sealstore.Headers{}, err
	}
	class, redirect, err := classAndRedirect(h)
	if err != nil {
		return nil, sealstore.Headers{}, err
	}
	hdr := sealstore.Headers{
		ContentType:        defaultContentType(h.Get("Content-Type")),
		CacheControl:       h.Get("Cache-Control"),
		ContentDisposition: h.Get("Content-Disposition"),
		ContentEncoding:    stripAWSChunked(h.Get("Content-Encoding")),
		ContentLanguage:    h.Get("Content-Language"),
		Expires:            h.Get("Expires"),
	}
	hdr.StorageClass, hdr.WebsiteRedirectLocation = class, redirect
	return meta, hdr, nil
}

// defaultContentType is the Content-Type S3 stores and reports for an object
// written without one: binary/octet-stream. Stored explicitly, so the
// backend's own default (the SDK sends application/octet-stream) never
// shows through.
func defaultContentType(ct string) string {
	if ct == "" {
		return "binary/octet-stream"
	}
	return ct
}

// stripAWSChunked removes the transfer coding "aws-chunked", which
// describes the request body, not the object. The other codings are kept
// as the client wrote them, spaces included ("aws-chunked, deflate, gzip"
// is stored as "deflate, gzip"), as S3 does.
func stripAWSChunked(ce string) string {
	var keep []string
	for _, c := range strings.Split(ce, ",") {
		if t := strings.TrimSpace(c); t != "" && !strings.EqualFold(t, "aws-chunked") {
			keep = append(keep, c)
		}
	}
	return strings.TrimSpace(strings.Join(keep, ","))
}

// setObjectHeaders writes what GET and HEAD report of an object; response-*
// query parameters override the stored standard headers.
func setObjectHeaders(h http.Header, info sealstore.ObjectInfo, q map[string][]string) {
	h.Set("ETag", quote(info.ETag))
	setVersionID(h, info.VersionID)
	h.Set("Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	ct := defaultContentType(info.Headers.ContentType)
	set := func(name, stored, override string) {
		if vs := q[override]; len(vs) > 0 {
			stored = vs[0]
		}
		if stored != "" {
			h.Set(name, stored)
		}
	}
	set("Content-Type", ct, "response-content-type")
	set("Cache-Control", info.Headers.CacheControl, "response-cache-control")
	set("Content-Disposition", info.Headers.ContentDisposition, "response-content-disposition")
	set("Content-Encoding", info.Headers.ContentEncoding, "response-content-encoding")
	set("Content-Language", info.Headers.ContentLanguage, "response-content-language")
	set("Expires", info.Headers.Expires, "response-expires")
	for k, v := range info.Meta {
		h["X-Amz-Meta-"+k] = []string{v}
	}
	if info.StorageClass != "" && info.StorageClass != "STANDARD" {
		h.Set("x-amz-storage-class", info.StorageClass)
	}
	if v := info.Headers.WebsiteRedirectLocation; v != "" {
		h.Set("x-amz-website-redirect-location", v)
	}
	if _, ok := q["partNumber"]; ok && info.PartsCount > 0 {
		h.Set("x-amz-mp-parts-count", strconv.Itoa(info.PartsCount))
	}
}

// conditionFailed prepares the answer to a failed condition: a 304 carries
// the object's ETag and date (as S3's does), a 412 is a plain XML error
// without the object's headers.
func conditionFailed(h http.Header, info sealstore.ObjectInfo, err error) error {
	if toAPIError(err).Code == s3err.NotModified {
		h.Set("ETag", quote(info.ETag))
		h.Set("Last-Modified", info.LastModified.UTC().Format(http.TimeFormat))
	}
	return err
}

func quote(etag string) string { return `"` + etag + `"` }

func contentRange(off, n, size int64) string {
	return "bytes " + strconv.FormatInt(off, 10) + "-" + strconv.FormatInt(off+n-1, 10) + "/" + strconv.FormatInt(size, 10)
}

// parseRange parses a single "bytes=" range. Syntactically invalid or
// multi-range headers are ignored (the whole object is returned), as S3
// and RFC 9110 do.
func parseRange(v string) (*sealstore.Range, error) {
	spec, ok := strings.CutPrefix(strings.TrimSpace(v), "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil, nil
	}
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return nil, nil
	}
	if first == "" {
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return nil, nil
		}
		return &sealstore.Range{First: -1, SuffixLen: n}, nil
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return nil, nil
	}
	if last == "" {
		return &sealstore.Range{First: a, Last: -1}, nil
	}
	b, err := strconv.ParseInt(last, 10, 64)
	if err != nil || b < a {
		return nil, nil
	}
	return &sealstore.Range{First: a, Last: b}, nil
}

// checkConditions evaluates If-Match, If-Unmodified-Since, If-None-Match and
// If-Modified-Since against the plaintext ETag and date, in RFC 9110 order.
func checkConditions(r *http.Request, info sealstore.ObjectInfo) error {
	lm := info.LastModified.Truncate(time.Second)
	if im := r.Header.Get("If-Match"); im != "" {
		if !etagListMatches(im, info.ETag) {
			return s3err.New(s3err.PreconditionFailed, "")
		}
	} else if t, err := http.ParseTime(r.Header.Get("If-Unmodified-Since")); err == nil && lm.After(t) {
		return s3err.New(s3err.PreconditionFailed, "")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		if etagListMatches(inm, info.ETag) {
			return s3err.New(s3err.NotModified, "")
		}
	} else if t, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !lm.After(t) {
		return s3err.New(s3err.NotModified, "")
	}
	return nil
}

func etagListMatches(list, etag string) bool {
	for _, e := range strings.Split(list, ",") {
		e = strings.TrimSpace(e)
		e = strings.TrimPrefix(e, "W/")
		if e == "*" || strings.Trim(e, `"`) == etag {
			return true
		}
	}
	return false
}
