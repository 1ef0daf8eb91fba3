package faultproxy

import (
	"net/http"
	"strconv"
	"strings"
)

// Op is an S3 operation as the proxy classifies a request.
type Op string

// The operations the proxy tells apart.
const (
	ListBuckets             Op = "ListBuckets"
	CreateBucket            Op = "CreateBucket"
	HeadBucket              Op = "HeadBucket"
	DeleteBucket            Op = "DeleteBucket"
	GetBucketLocation       Op = "GetBucketLocation"
	ListObjects             Op = "ListObjects"
	ListMultipartUploads    Op = "ListMultipartUploads"
	DeleteObjects           Op = "DeleteObjects"
	PutObject               Op = "PutObject"
	CopyObject              Op = "CopyObject"
	GetObject               Op = "GetObject"
	HeadObject              Op = "HeadObject"
	DeleteObject            Op = "DeleteObject"
	CreateMultipartUpload   Op = "CreateMultipartUpload"
	UploadPart              Op = "UploadPart"
	UploadPartCopy          Op = "UploadPartCopy"
	CompleteMultipartUpload Op = "CompleteMultipartUpload"
	AbortMultipartUpload    Op = "AbortMultipartUpload"
	ListParts               Op = "ListParts"
	Other                   Op = "Other"
)

// Classify names the S3 operation of a path-style request from its method,
// query and headers, with the part number of UploadPart and UploadPartCopy
// (0 otherwise). Virtual-hosted-style requests are not recognised.
func Classify(r *http.Request) (Op, int32) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	q := r.URL.Query()
	bucket, key, _ := strings.Cut(path, "/")
	copySource := r.Header.Get("X-Amz-Copy-Source") != ""
	switch {
	case bucket == "":
		if r.Method == http.MethodGet {
			return ListBuckets, 0
		}
		return Other, 0
	case key == "":
		return bucketOp(r.Method, q.Has("uploads"), q.Has("location"), q.Has("delete")), 0
	}
	switch r.Method {
	case http.MethodPut:
		if q.Has("uploadId") && q.Has("partNumber") {
			n, _ := strconv.ParseInt(q.Get("partNumber"), 10, 32)
			if copySource {
				return UploadPartCopy, int32(n)
			}
			return UploadPart, int32(n)
		}
		if copySource {
			return CopyObject, 0
		}
		return PutObject, 0
	case http.MethodPost:
		switch {
		case q.Has("uploads"):
			return CreateMultipartUpload, 0
		case q.Has("uploadId"):
			return CompleteMultipartUpload, 0
		}
	case http.MethodDelete:
		if q.Has("uploadId") {
			return AbortMultipartUpload, 0
		}
		return DeleteObject, 0
	case http.MethodGet:
		if q.Has("uploadId") {
			return ListParts, 0
		}
		return GetObject, 0
	case http.MethodHead:
		return HeadObject, 0
	}
	return Other, 0
}

func bucketOp(method string, uploads, location, del bool) Op {
	switch method {
	case http.MethodGet:
		switch {
		case uploads:
			return ListMultipartUploads
		case location:
			return GetBucketLocation
		}
		return ListObjects
	case http.MethodPut:
		return CreateBucket
	case http.MethodHead:
		return HeadBucket
	case http.MethodDelete:
		return DeleteBucket
	case http.MethodPost:
		if del {
			return DeleteObjects
		}
	}
	return Other
}
