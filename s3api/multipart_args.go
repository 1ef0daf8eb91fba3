package s3api

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/s3seal/s3seal/checksum"
	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// countArg parses a listing's count or marker argument (max-parts,
// max-uploads, part-number-marker), in words AWS uses: a value that is no
// 32-bit integer "Provided V not an integer or within integer range", a
// negative one "Argument V must be an integer between 0 and 2147483647".
// An absent argument is def.
func countArg(v string, def int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, s3err.New(s3err.InvalidArgument, "Provided "+v+" not an integer or within integer range")
	}
	if n < 0 {
		return 0, s3err.New(s3err.InvalidArgument, "Argument "+v+" must be an integer between 0 and 2147483647")
	}
	return int(n), nil
}

// uploadChecksumType reads CreateMultipartUpload's x-amz-checksum-type in
// any case: COMPOSITE, FULL_OBJECT or absent ("").
func uploadChecksumType(v string) (string, error) {
	switch t := strings.ToUpper(strings.TrimSpace(v)); t {
	case "", checksum.Composite, checksum.FullObject:
		return t, nil
	}
	return "", s3err.New(s3err.InvalidRequest, "Value for x-amz-checksum-type header is invalid.")
}

// abortCondition evaluates AbortMultipartUpload's
// x-amz-if-match-initiated-time as S3 does: a time in the future is
// ignored; otherwise an upload initiated at another second is
// PreconditionFailed. An upload the listing does not show is left to the
// abort's own answer (NoSuchUpload).
func (s *Server) abortCondition(req *request) error {
	v := req.r.Header.Get("X-Amz-If-Match-Initiated-Time")
	if v == "" {
		return nil
	}
	want, err := http.ParseTime(v)
	if err != nil {
		return s3err.New(s3err.InvalidArgument, "Invalid value for x-amz-if-match-initiated-time.")
	}
	if want.After(time.Now()) {
		return nil
	}
	// The condition fails closed: an upload the listing does not show, a
	// listing that fails, or one that does not move on (a hostile or
	// broken store) keeps the upload, never aborts it unchecked.
	id := req.r.URL.Query().Get("uploadId")
	in := sealstore.ListUploadsInput{Bucket: req.bucket, Prefix: req.key, MaxUploads: 1000}
	for page := 0; page < maxAbortConditionPages; page++ {
		out, err := s.store.ListUploads(req.r.Context(), in)
		if err != nil {
			return err
		}
		for _, u := range out.Uploads {
			if u.Key == req.key && u.UploadID == id {
				if !u.Initiated.Truncate(time.Second).Equal(want.Truncate(time.Second)) {
					return s3err.New(s3err.PreconditionFailed, "")
				}
				return nil
			}
		}
		if !out.IsTruncated || out.NextKeyMarker == "" {
			return s3err.New(s3err.NoSuchUpload, "")
		}
		if out.NextKeyMarker == in.KeyMarker && out.NextUploadIDMarker == in.UploadIDMarker {
			break
		}
		in.KeyMarker, in.UploadIDMarker = out.NextKeyMarker, out.NextUploadIDMarker
	}
	return s3err.New(s3err.ServiceUnavailable, "The object store's listing of uploads did not end; the upload was not aborted.")
}

// maxAbortConditionPages bounds the listing an abort's
// x-amz-if-match-initiated-time reads (100,000 uploads of one key).
const maxAbortConditionPages = 100
