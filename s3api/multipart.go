package s3api

import (
	"cmp"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// maxCompleteBody bounds a CompleteMultipartUpload body: 10,000 parts with
// an ETag and a checksum each fit in well under 4 MiB.
const maxCompleteBody = 4 << 20

func (s *Server) createMultipartUpload(req *request) error {
	if err := writePolicy.check(req.r.Header); err != nil {
		return err
	}
	meta, headers, err := objectHeaders(req.r.Header)
	if err != nil {
		return err
	}
	in := sealstore.CreateMultipartInput{Bucket: req.bucket, Key: req.key, Meta: meta, Headers: headers, KeyID: req.cred.KeyID}
	if in.Protect, err = protection(req); err != nil {
		return err
	}
	if err := s.uploadLockAllowed(req, in.Protect); err != nil {
		return err
	}
	if in.Record, err = s.recordOfWrite(req, req.r.Header); err != nil {
		return err
	}
	if in.CustomerKey, err = customerKey(req.r); err != nil {
		return err
	}
	backendSSE(req.r.Header, &in.Headers)
	if err := s.bucketDefaultSSE(req.r.Context(), req.bucket, &in.Headers, in.CustomerKey); err != nil {
		return err
	}
	sk, err := s.sealKeyOf(req.cred, req.bucket, req.key, &in.Headers)
	if err != nil {
		return err
	}
	in.KeyID, in.KMSContext, in.BucketKey = sk.keyID, sk.kmsContext, sk.bucketKey
	typ, err := uploadChecksumType(req.r.Header.Get("X-Amz-Checksum-Type"))
	if err != nil {
		return err
	}
	if v := req.r.Header.Get("X-Amz-Checksum-Algorithm"); v != "" {
		a, ok := checksum.ParseAlgorithm(v)
		if !ok {
			return s3err.New(s3err.InvalidRequest, "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, MD5, SHA1, SHA256, SHA512, XXHASH128, XXHASH3, XXHASH64]")
		}
		if typ == "" {
			typ = checksum.DefaultType(a)
		}
		if !checksum.TypeSupported(a, typ) {
			return s3err.New(s3err.InvalidRequest, "The "+typ+" checksum type cannot be used with the "+strings.ToLower(string(a))+" checksum algorithm.")
		}
		in.ChecksumAlgorithm, in.ChecksumType = strings.ToLower(string(a)), typ
		req.w.Header().Set("X-Amz-Checksum-Algorithm", string(a))
		req.w.Header().Set("X-Amz-Checksum-Type", typ)
	} else if typ != "" {
		return s3err.New(s3err.InvalidRequest, "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.")
	}
	id, err := s.store.CreateMultipart(req.r.Context(), in)
	if err != nil {
		return err
	}
	setSSEHeaders(req.w.Header(), sealstore.ObjectInfo{Headers: in.Headers, CustomerKeyed: in.CustomerKey != nil}, in.CustomerKey)
	writeXML(req.w, http.StatusOK, initiateMultipartUploadResult{Xmlns: s3ns, Bucket: req.bucket, Key: req.key, UploadID: id})
	return nil
}

// partNumber parses ?partNumber=: 1 to 10000.
func partNumber(q string) (int, error) {
	n, err := strconv.Atoi(q)
	if err != nil || n < 1 || n > sealstore.MaxParts {
		return 0, s3err.New(s3err.InvalidArgument, "Part number must be an integer between 1 and 10000, inclusive.")
	}
	return n, nil
}

// partRequest checks an UploadPart or UploadPartCopy request's headers and
// returns its part number.
func partRequest(req *request) (int, error) {
	if err := partPolicy.check(req.r.Header); err != nil {
		return 0, err
	}
	return partNumber(req.r.URL.Query().Get("partNumber"))
}

func (s *Server) uploadPart(req *request) error {
	q := req.r.URL.Query()
	n, err := partRequest(req)
	if err != nil {
		return err
	}
	size := req.auth.DecodedLength
	if size < 0 {
		return noLength(req.r)
	}
	checks, err := newBodyChecks(req.r.Header)
	if err != nil {
		return err
	}
	uploadAlg, err := s.partHasher(req, checks, false)
	if err != nil {
		return err
	}
	if !uploadAlg {
		checks.keepDefault()
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	pi, err := s.store.UploadPart(req.r.Context(), sealstore.UploadPartInput{
		Bucket: req.bucket, Key: req.key, UploadID: q.Get("uploadId"), PartNumber: n,
		Body: req.r.Body, Size: size, ContentMD5: checks.exp.ContentMD5,
		Observe: checks.observer(), Finalize: checks.finalize(req.auth.Trailer),
		CustomerKey: ck,
	})
	if err != nil {
		return err
	}
	setSSEHeaders(req.w.Header(), sealstore.ObjectInfo{Headers: pi.Encryption, CustomerKeyed: ck != nil}, ck)
	req.w.Header().Set("ETag", quote(pi.ETag))
	if checks.exp.Algorithm != "" || uploadAlg {
		setChecksumHeaders(req.w.Header(), sealstore.ObjectInfo{Checksums: clientChecksums("", pi.Checksums)})
	}
	req.w.WriteHeader(http.StatusOK)
	return nil
}

// partHasher makes a part of a FULL_OBJECT upload keep the checksum
// algorithm its upload was created with when the part itself names none
// (the completion combines them; the part's answer reports it); a part of
// a COMPOSITE upload must name it (a copied part, which cannot, takes
// it), and a part naming another algorithm is refused, as S3 does. It
// reports whether the upload has an algorithm.
func (s *Server) partHasher(req *request, checks *bodyChecks, copied bool) (bool, error) {
	q := req.r.URL.Query()
	alg, typ, err := s.store.UploadChecksum(req.r.Context(), req.bucket, req.key, q.Get("uploadId"))
	if err != nil || alg == "" {
		return false, err
	}
	a, _ := checksum.ParseAlgorithm(alg)
	mismatch := func(actual string) error {
		return s3err.New(s3err.InvalidRequest, "Checksum Type mismatch occurred, expected checksum Type: "+strings.ToUpper(alg)+", actual checksum Type: "+actual)
	}
	switch checks.exp.Algorithm {
	case "":
		if strings.EqualFold(typ, "COMPOSITE") && !copied {
			return false, mismatch("null")
		}
		checks.hasher = checksum.NewHasher(a)
	case a:
	default:
		return false, mismatch(strings.ToUpper(string(checks.exp.Algorithm)))
	}
	return true, nil
}

var copyRangeRE = regexp.MustCompile(`^bytes=(\d{1,19})-(\d{1,19})$`)

// parseCopySourceRange reads x-amz-copy-source-range: "bytes=first-last",
// zero-based and inclusive, first <= last. Anything else is InvalidArgument,
// as in S3. Whether the range lies inside the source is copyRangeWithin's
// to say, once the source's size is known.
func parseCopySourceRange(v string) (*sealstore.Range, error) {
	bad := s3err.New(s3err.InvalidArgument, "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy")
	m := copyRangeRE.FindStringSubmatch(v)
	if m == nil {
		return nil, bad
	}
	first, err1 := strconv.ParseInt(m[1], 10, 64)
	last, err2 := strconv.ParseInt(m[2], 10, 64)
	if err1 != nil || err2 != nil || last < first {
		return nil, bad
	}
	return &sealstore.Range{First: first, Last: last}, nil
}

// copyRangeWithin refuses a copy range (nil: the whole source) that ends
// past a source of size bytes with InvalidRange.
func copyRangeWithin(rng *sealstore.Range, size int64) error {
	if rng != nil && rng.Last >= size {
		return s3err.New(s3err.InvalidRange, "")
	}
	return nil
}

func (s *Server) uploadPartCopy(req *request) error {
	q := req.r.URL.Query()
	n, err := partRequest(req)
	if err != nil {
		return err
	}
	src, err := s.copySource(req)
	srcBucket, srcKey, srcVersion := src.bucket, src.key, src.versionID
	if err != nil {
		// S3 names a missing destination bucket before a bad source.
		if be := s.store.HeadBucket(req.r.Context(), req.bucket); sealstore.IsNotFound(be) {
			return s3err.New(s3err.NoSuchBucket, "")
		}
		return err
	}
	var rng *sealstore.Range
	if v := req.r.Header.Get("X-Amz-Copy-Source-Range"); v != "" {
		if rng, err = parseCopySourceRange(v); err != nil {
			return err
		}
	}
	checks := &bodyChecks{exp: &checksum.Expected{}, hasher: checksum.NewHasher(defaultChecksum)}
	hasAlg, err := s.partHasher(req, checks, true)
	if err != nil {
		return err
	}
	ck, err := customerKey(req.r)
	if err != nil {
		return err
	}
	srcCK, err := copySourceKey(req.r)
	if err != nil {
		return err
	}
	ka := s.startKeepAlive(req)
	pi, err := s.store.UploadPartCopy(req.r.Context(), sealstore.UploadPartCopyInput{
		SrcBucket: srcBucket, SrcKey: srcKey, SrcVersionID: srcVersion, SrcContentID: src.bound, Range: rng,
		Bucket: req.bucket, Key: req.key, UploadID: q.Get("uploadId"), PartNumber: n,
		Check: func(src sealstore.ObjectInfo) error {
			if v := cmp.Or(src.VersionID, srcVersion); v != "" {
				ka.extra = map[string]string{"x-amz-copy-source-version-id": v}
			}
			if err := copyRangeWithin(rng, src.Size); err != nil {
				return err
			}
			return checkCopySource(req.r.Header, src)
		},
		Observe: checks.hasher, Finalize: checks.finalize(nil),
		SrcCustomerKey: srcCK, CustomerKey: ck,
	})
	if err != nil {
		ka.extra = nil
		err = objectErr(versionErr(sourceVersionErr(err, srcVersion)))
		if toAPIError(err).Code == s3err.NoSuchKey && srcBucket != req.bucket {
			// A source in a missing bucket: S3 names the bucket.
			if be := s.store.HeadBucket(req.r.Context(), srcBucket); sealstore.IsNotFound(be) {
				err = s3err.New(s3err.NoSuchBucket, "")
			}
		}
		return ka.finish(nil, err)
	}
	addSSEHeaders(ka, sealstore.ObjectInfo{Headers: pi.Encryption, CustomerKeyed: ck != nil}, ck)
	res := copyPartResult{Xmlns: s3ns, ETag: quote(pi.ETag), LastModified: s3Time(time.Now())}
	if hasAlg {
		// As S3: a copied part reports a checksum only for an upload
		// created with an algorithm (s3seal keeps its CRC64NVME anyway).
		res.partChecksums = checksumsOf(pi.Checksums)
	}
	return ka.finish(res, nil)
}

func (s *Server) completeMultipartUpload(req *request) error {
	if err := completePolicy.check(req.r.Header); err != nil {
		return err
	}
	body, err := readCompleteBody(req, maxCompleteBody)
	if err != nil {
		return err
	}
	var cmu completeMultipartUpload
	if err := decodeXML(body, &cmu); err != nil {
		return err
	}
	if err := checkCompleteParts(&cmu); err != nil {
		return err
	}
	expSums, expType, err := completeChecksumHeaders(req.r.Header)
	if err != nil {
		return err
	}
	if req.r.Header.Get("If-Match") != "" && req.r.Header.Get("If-None-Match") != "" {
		return s3err.New(s3err.NotImplemented, "") // as S3: the two together are not supported
	}
	cond, err := writeCondition(req.r.Header)
	if err != nil {
		return err
	}
	in := sealstore.CompleteInput{Bucket: req.bucket, Key: req.key, UploadID: req.r.URL.Query().Get("uploadId"),
		Cond: cond, ExpectSize: -1,
		ExpectChecksumType: expType, ExpectChecksums: expSums}
	if v := req.r.Header.Get("X-Amz-Mp-Object-Size"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return s3err.New(s3err.InvalidRequest, "Value for x-amz-mp-object-size header is invalid.")
		}
		if n < 0 {
			return s3err.New(s3err.InvalidRequest, "Value for x-amz-mp-object-size header is less than zero: '"+v+"'")
		}
		in.ExpectSize = n
	}
	for _, p := range cmu.Parts {
		in.Parts = append(in.Parts, sealstore.CompletePart{PartNumber: *p.PartNumber, ETag: *p.ETag, Checksums: p.asMap()})
	}
	if in.CustomerKey, err = customerKey(req.r); err != nil {
		return err
	}
	if err := s.compositePartSums(req, in.Parts); err != nil {
		return err
	}
	ka := s.startKeepAlive(req)
	info, err := s.store.CompleteMultipart(req.r.Context(), in)
	if err != nil {
		return ka.finish(nil, err)
	}
	if vid := writtenVersion(info.VersionID); vid != "" {
		ka.extra = map[string]string{"x-amz-version-id": vid}
	}
	addSSEHeaders(ka, info, in.CustomerKey)
	res := completeMultipartUploadResult{Xmlns: s3ns, Location: objectLocation(req.r),
		Bucket: req.bucket, Key: req.key, ETag: quote(info.ETag), partChecksums: checksumsOf(info.Checksums)}
	if len(info.Checksums) > 0 {
		res.ChecksumType = checksumType(info.Checksums)
	}
	return ka.finish(res, nil)
}

func (s *Server) abortMultipartUpload(req *request) error {
	if err := s.abortCondition(req); err != nil {
		return err
	}
	if err := s.store.AbortMultipart(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("uploadId")); err != nil {
		return err
	}
	req.w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) listParts(req *request) error {
	q := req.r.URL.Query()
	marker, err := countArg(q.Get("part-number-marker"), 0)
	if err != nil {
		return err
	}
	maxParts, err := countArg(q.Get("max-parts"), 1000)
	if err != nil {
		return err
	}
	maxParts = min(maxParts, 1000)
	page, err := s.store.ListParts(req.r.Context(), req.bucket, req.key, q.Get("uploadId"), marker, maxParts)
	if err != nil {
		return err
	}
	initiator := s.objectOwners(req)(sealstore.UploadRecordKey(q.Get("uploadId")))
	out := listPartsResult{Xmlns: s3ns, Bucket: req.bucket, Key: req.key, UploadID: q.Get("uploadId"),
		Initiator: initiator, Owner: initiator, StorageClass: "STANDARD", PartNumberMarker: marker,
		NextPartNumberMarker: page.NextMarker, MaxParts: maxParts, IsTruncated: page.IsTruncated,
		ChecksumType: page.ChecksumType}
	if page.ChecksumAlgorithm != "" {
		out.ChecksumAlgorithm = strings.ToUpper(page.ChecksumAlgorithm)
	} else {
		out.ChecksumAlgorithm, out.ChecksumType = "null", "null" // S3's words for an upload without one
	}
	for _, p := range page.Parts {
		out.Parts = append(out.Parts, listedPart{PartNumber: p.PartNumber, LastModified: s3Time(p.LastModified),
			ETag: quote(p.ETag), Size: p.Size, partChecksums: checksumsOf(clientChecksums(page.ChecksumAlgorithm, p.Checksums))})
	}
	writeXML(req.w, http.StatusOK, out)
	return nil
}

func (s *Server) listMultipartUploads(req *request) error {
	q := req.r.URL.Query()
	in := sealstore.ListUploadsInput{Bucket: req.bucket, Prefix: q.Get("prefix"), Delimiter: q.Get("delimiter"),
		KeyMarker: q.Get("key-marker"), UploadIDMarker: q.Get("upload-id-marker")}
	maxUploads, err := countArg(q.Get("max-uploads"), 1000)
	if err != nil {
		return err
	}
	maxUploads = min(maxUploads, 1000)
	in.MaxUploads = int32(maxUploads)
	encode, err := encodingType(q)
	if err != nil {
		return err
	}
	if maxUploads == 0 {
		in.MaxUploads = 1 // the store's 0 is its default, 1000
	}
	out, err := s.store.ListUploads(req.r.Context(), in)
	if err != nil {
		return bucketErr(err)
	}
	if maxUploads == 0 { // lists none, but says whether there are more (as max-parts=0)
		more := out.IsTruncated || len(out.Uploads)+len(out.CommonPrefixes) > 0
		out = sealstore.ListUploadsOutput{IsTruncated: more}
	}
	enc := encoder(encode)
	res := listMultipartUploadsResult{Xmlns: s3ns, Bucket: req.bucket, KeyMarker: enc(in.KeyMarker), UploadIDMarker: in.UploadIDMarker,
		NextKeyMarker: enc(out.NextKeyMarker), NextUploadIDMarker: out.NextUploadIDMarker, Prefix: enc(in.Prefix),
		Delimiter: enc(in.Delimiter), MaxUploads: maxUploads, IsTruncated: out.IsTruncated}
	if encode {
		res.EncodingType = "url"
	}
	sums, err := s.store.UploadChecksums(req.r.Context(), req.bucket, out.Uploads)
	if err != nil {
		return bucketErr(err)
	}
	owners := s.objectOwners(req)
	for i, u := range out.Uploads {
		class := u.StorageClass
		if class == "" {
			class = "STANDARD"
		}
		res.Uploads = append(res.Uploads, listedUpload{Key: enc(u.Key), UploadID: u.UploadID, Initiator: owners(sealstore.UploadRecordKey(u.UploadID)),
			Owner: owners(sealstore.UploadRecordKey(u.UploadID)), StorageClass: class, Initiated: s3Time(u.Initiated),
			ChecksumAlgorithm: strings.ToUpper(sums[i].Algorithm), ChecksumType: sums[i].Type})
	}
	for _, p := range out.CommonPrefixes {
		res.CommonPrefixes = append(res.CommonPrefixes, commonPrefix{Prefix: enc(p)})
	}
	writeXML(req.w, http.StatusOK, res)
	return nil
}

// objectLocation is a completed upload's Location: the absolute URL the
// request addressed the object with (path or virtual-hosted style), as S3
// gives it.
func objectLocation(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.EscapedPath()
}
