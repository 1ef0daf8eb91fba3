package s3api

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// checkCompleteParts refuses a CompleteMultipartUpload part list as S3
// does before it looks at the upload: a part without PartNumber or ETag is
// MalformedXML, a PartNumber below 1 InvalidArgument, a part checksum that
// is not base64 of its algorithm's size, or more than one checksum on a
// part, InvalidArgument.
func checkCompleteParts(cmu *completeMultipartUpload) error {
	for _, p := range cmu.Parts {
		if p.PartNumber == nil || p.ETag == nil {
			return s3err.New(s3err.MalformedXML, "")
		}
	}
	for _, p := range cmu.Parts {
		if *p.PartNumber < 1 {
			return s3err.New(s3err.InvalidArgument, "PartNumber must be >= 1")
		}
		sums := p.asMap()
		if len(sums) > 1 {
			return s3err.New(s3err.InvalidArgument, "Invalid Base64 or multiple checksums present in request")
		}
		for alg, v := range sums {
			a, _ := checksum.ParseAlgorithm(alg)
			if b, err := base64.StdEncoding.Strict().DecodeString(v); err != nil || len(b) != a.Size() {
				return s3err.New(s3err.InvalidArgument, "Invalid Base64 or multiple checksums present in request")
			}
		}
	}
	return nil
}

// completeChecksumHeaders reads the object checksum a completion states:
// at most one x-amz-checksum-<alg> (InvalidRequest otherwise), each value
// base64 of the algorithm's size, optionally followed by "-N" (a COMPOSITE
// value; BadDigest otherwise), and x-amz-checksum-type COMPOSITE or
// FULL_OBJECT in any case.
func completeChecksumHeaders(h http.Header) (sums map[string]string, typ string, err error) {
	if typ, err = uploadChecksumType(h.Get("X-Amz-Checksum-Type")); err != nil {
		return nil, "", err
	}
	for _, a := range checksum.Algorithms {
		vals := h.Values(a.HeaderName())
		if len(vals) == 0 {
			continue
		}
		if sums != nil || len(vals) > 1 {
			return nil, "", s3err.New(s3err.InvalidRequest, "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.")
		}
		v := strings.TrimSpace(vals[0])
		if !validFinalChecksum(a, v) {
			// BadDigest, as s3-tests expects (test_multipart_checksum_sha256);
			// versitygw's suite expects InvalidRequest here.
			return nil, "", s3err.New(s3err.BadDigest, "The "+string(a)+" you specified did not match the calculated checksum.")
		}
		sums = map[string]string{strings.ToLower(string(a)): v}
	}
	return sums, typ, nil
}

func validFinalChecksum(a checksum.Algorithm, v string) bool {
	b64, n, composite := strings.Cut(v, "-")
	if composite {
		if k, err := strconv.Atoi(n); err != nil || k < 1 || strconv.Itoa(k) != n {
			return false
		}
	}
	b, err := base64.StdEncoding.Strict().DecodeString(b64)
	return err == nil && len(b) == a.Size()
}

// compositePartSums: the completion of a COMPOSITE upload must list each
// part's checksum, as S3 requires. An upload the store cannot find is left
// to the store's answer (NoSuchUpload, or a completion already done).
func (s *Server) compositePartSums(req *request, parts []sealstore.CompletePart) error {
	alg, typ, err := s.store.UploadChecksum(req.r.Context(), req.bucket, req.key, req.r.URL.Query().Get("uploadId"))
	if err != nil || typ != checksum.Composite {
		return nil
	}
	for _, p := range parts {
		if p.Checksums[alg] == "" {
			return s3err.New(s3err.InvalidRequest, "The upload was created using a "+alg+" checksum. The complete request must include the checksum for each part. It was missing for part "+strconv.Itoa(p.PartNumber)+" in the request.")
		}
	}
	return nil
}
