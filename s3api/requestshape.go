package s3api

import (
	"net/http"
	"strings"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/s3api/sigv4"
)

// maxHeaderSection is S3's limit on a request's header section.
const maxHeaderSection = 8192

// shapeError returns S3's answer to a request whose shape alone is wrong
// (a header section over 8 KiB, a method the resource does not take, a
// parameter or header the operation cannot have), with the name it is
// counted under; nil if the shape is sound. S3 answers these before it
// looks at the signature, so they come before authentication: they
// reveal nothing and read no body.
func (s *Server) shapeError(r *http.Request) (string, *s3err.Error) {
	if n := headerSection(r); n > maxHeaderSection {
		e := s3err.New(s3err.RequestHeaderSectionTooLarge, "Your request header section exceeds the maximum allowed size.")
		e.Fields = []sigv4.Field{{Name: "MaxSizeAllowed", Value: "8192"}}
		return "RequestHeaderSectionTooLarge", e
	}
	bucket, key := s.target(r)
	if bucket != "" && !nameableBucket(bucket) {
		// "." and ".." would name the store's directory of buckets on a
		// store that keeps them as directories (the embedded one): a
		// bucket without s3seal's documents, decided by the lists alone,
		// whose keys are every bucket's, s3seal's documents included.
		return "InvalidBucketName", s3err.New(s3err.InvalidBucketName, "")
	}
	q := r.URL.Query()
	if src := r.Header.Get("X-Amz-Copy-Source"); src != "" && bucket != "" {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodDelete:
			return "InvalidArgument", copySourceRefusal(src)
		case http.MethodPost:
			if q.Has("uploadId") {
				return "InvalidArgument", copySourceRefusal(src)
			}
		}
	}
	notAllowed := func(resourceType string) (string, *s3err.Error) {
		e := s3err.New(s3err.MethodNotAllowed, "")
		e.Fields = []sigv4.Field{{Name: "Method", Value: r.Method}, {Name: "ResourceType", Value: resourceType}}
		return "MethodNotAllowed", e
	}
	switch {
	case bucket == "" && r.Method == http.MethodPost:
		return notAllowed("SERVICE")
	case key == "":
		return "", nil
	case r.Method == http.MethodPost && onlyPlainParams(q):
		return notAllowed("SERVICE")
	case r.Method == http.MethodPut && q.Has("uploadId") && !q.Has("partNumber"):
		return notAllowed("UPLOAD")
	case r.Method == http.MethodPut && q.Has("partNumber") && !q.Has("uploadId"):
		e := s3err.New(s3err.InvalidArgument, "This operation does not accept partNumber without uploadId")
		e.Fields = []sigv4.Field{{Name: "ArgumentName", Value: "partNumber"}, {Name: "ArgumentValue", Value: "partNumber"}}
		return "InvalidArgument", e
	case r.Method == http.MethodGet && q.Has("uploads"):
		return "InvalidRequest", s3err.New(s3err.InvalidRequest, "Key is not expected for the GET method ?uploads subresource")
	case r.Method == http.MethodGet && q.Has("versions"):
		return "InvalidRequest", s3err.New(s3err.InvalidRequest, "There is no such thing as the ?versions sub-resource for a key")
	}
	return "", nil
}

func copySourceRefusal(src string) *s3err.Error {
	e := s3err.New(s3err.InvalidArgument, "You can only specify a copy source header for copy requests.")
	e.Fields = []sigv4.Field{{Name: "ArgumentName", Value: "x-amz-copy-source"}, {Name: "ArgumentValue", Value: truncateValue(src)}}
	return e
}

// nameableBucket reports whether name can be a bucket's at all, under
// S3's rules or its legacy ones (us-east-1's old buckets: 3 to 255
// letters, digits, dots, hyphens and underscores). CreateBucket holds a
// new name to the current rules (checkBucketName).
func nameableBucket(name string) bool {
	return len(name) >= 3 && len(name) <= 255 && validCopyBucket(name)
}

// headerSection is the size of r's header section as sent: each
// "Name: value\r\n", Host included.
func headerSection(r *http.Request) int {
	n := len("Host: \r\n") + len(r.Host)
	for k, vs := range r.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return n
}

// onlyPlainParams reports whether q names no sub-resource.
func onlyPlainParams(q map[string][]string) bool {
	for k := range q {
		if !plainParams[strings.ToLower(k)] {
			return false
		}
	}
	return true
}

// truncateValue bounds client text echoed in an error.
func truncateValue(s string) string {
	if len(s) > 256 {
		return s[:256] + "..."
	}
	return s
}
