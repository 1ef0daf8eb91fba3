package embedded

import (
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/johannesboyne/gofakes3"
)

// servePartCopy answers UploadPartCopy: the byte range
// x-amz-copy-source-range (the whole object without it) of the object
// x-amz-copy-source becomes part n, read from disk and stored like an
// uploaded part (of the version the source names, if any).
// x-amz-copy-source-if-match is decided against the object as read. The answer is a CopyPartResult with the part's ETag.
func (m *mpStore) servePartCopy(w http.ResponseWriter, r *http.Request, bucket, key, id string, n int) error {
	srcBucket, srcKey, ok := parseCopySource(r.Header.Get("X-Amz-Copy-Source"))
	if !ok {
		return &mpError{http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source must name a bucket and a key separated by '/'"}
	}
	if _, err := m.load(bucket, key, id); err != nil {
		return err
	}
	vid := copySourceVersion(r.Header.Get("X-Amz-Copy-Source"))
	var rng *gofakes3.ObjectRangeRequest
	if h := r.Header.Get("X-Amz-Copy-Source-Range"); h != "" {
		first, last, ok := parseCopyRange(h)
		if !ok {
			return &mpError{http.StatusBadRequest, "InvalidArgument",
				"The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy"}
		}
		rng = &gofakes3.ObjectRangeRequest{Start: first, End: last}
		head, err := m.fb.getVersion(srcBucket, srcKey, vid, nil)
		if err != nil {
			return partCopySourceErr(err)
		}
		head.Contents.Close()
		if last >= head.Size {
			return &mpError{http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "The requested range is not satisfiable"}
		}
	}
	src, err := m.fb.getVersion(srcBucket, srcKey, vid, rng)
	if err != nil {
		return partCopySourceErr(err)
	}
	defer src.Contents.Close()
	etag := src.Metadata[etagMetaKey]
	if etag == "" {
		etag = hex.EncodeToString(src.Hash)
	}
	if im := r.Header.Get("X-Amz-Copy-Source-If-Match"); im != "" && !etagMatches(im, etag) {
		return &mpError{http.StatusPreconditionFailed, "PreconditionFailed", "At least one of the pre-conditions you specified did not hold"}
	}
	size := src.Size
	if src.Range != nil {
		size = src.Range.Length
	}
	partETag, err := m.uploadPart(bucket, key, id, int32(n), src.Contents, size, "")
	if err != nil {
		return err
	}
	return writeXML(w, struct {
		XMLName      struct{} `xml:"CopyPartResult"`
		NS           string   `xml:"xmlns,attr"`
		LastModified gofakes3.ContentTime
		ETag         string
	}{NS: s3XMLNS, LastModified: gofakes3.NewContentTime(time.Now()), ETag: `"` + partETag + `"`})
}

// parseCopySource splits x-amz-copy-source ("[/]bucket/key", the key
// escaped) into bucket and key.
func parseCopySource(v string) (bucket, key string, ok bool) {
	v, _, _ = strings.Cut(strings.TrimPrefix(v, "/"), "?")
	b, k, ok := strings.Cut(v, "/")
	if !ok || b == "" || k == "" {
		return "", "", false
	}
	k, err := url.PathUnescape(k)
	if err != nil {
		return "", "", false
	}
	return b, k, true
}

// parseCopyRange parses "bytes=first-last".
func parseCopyRange(v string) (first, last int64, ok bool) {
	spec, ok := strings.CutPrefix(v, "bytes=")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(spec, "-")
	if !ok {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first {
		return 0, 0, false
	}
	return first, last, true
}

// copySourceVersion is the versionId of an x-amz-copy-source, or "".
func copySourceVersion(v string) string {
	_, q, ok := strings.Cut(v, "?")
	if !ok {
		return ""
	}
	vals, _ := url.ParseQuery(q)
	return vals.Get("versionId")
}

// partCopySourceErr is the answer for a copy source that getVersion
// refused: a delete marker by id is InvalidRequest, as on S3.
func partCopySourceErr(err error) error {
	if errors.As(err, new(*errMarker)) {
		return &mpError{http.StatusBadRequest, "InvalidRequest", "The source of a copy request may not specifically refer to a delete marker by version id."}
	}
	return err
}
