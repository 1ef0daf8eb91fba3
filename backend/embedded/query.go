package embedded

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The embedded store decides every request itself: its query must name
// one operation that this file knows, with only the parameters that
// operation takes. Anything else is refused before any layer acts on it,
// so no request reaches gofakes3 (which ignores what it does not know:
// DELETE ?foo=1 would remove a file with no version kept and no lock
// checked) in a form the version layer and the sidecar did not route.
// The list is what s3seal sends (aws-sdk-go-v2 operations and the
// sub-resources s3api forwards), plus presigned-URL parameters.

// subOps are the sub-resources, by target (object or bucket), with the
// methods each takes. "" is a request without a sub-resource.
var (
	objectSubs = map[string][]string{
		"":           {"GET", "HEAD", "PUT", "DELETE"},
		"tagging":    {"GET", "PUT", "DELETE"},
		"retention":  {"GET", "PUT"},
		"legal-hold": {"GET", "PUT"},
		"acl":        {"GET", "PUT"},
		"uploads":    {"POST"},
		"uploadId":   {"GET", "POST", "DELETE"},
		"partNumber": {"PUT"}, // with uploadId: UploadPart(Copy)
	}
	bucketSubs = map[string][]string{
		"":                  {"GET", "HEAD", "PUT", "DELETE"},
		"tagging":           {"GET", "PUT", "DELETE"},
		"policy":            {"GET", "PUT", "DELETE"},
		"cors":              {"GET", "PUT", "DELETE"},
		"lifecycle":         {"GET", "PUT", "DELETE"},
		"ownershipControls": {"GET", "PUT", "DELETE"},
		"object-lock":       {"GET", "PUT"},
		"acl":               {"GET", "PUT"},
		"versioning":        {"GET", "PUT"},
		"versions":          {"GET"},
		"uploads":           {"GET"},
		"delete":            {"POST"},
		"location":          {"GET"},
		"website":           {"GET", "PUT", "DELETE"},
	}
	// queryParams are the parameters that name no operation, by the
	// (target, sub-resource) they go with; "*" is any.
	queryParams = map[string][]string{
		"versionId":          {"object:", "object:tagging", "object:retention", "object:legal-hold", "object:acl"},
		"uploadId":           {"object:partNumber"},
		"list-type":          {"bucket:"},
		"prefix":             {"bucket:", "bucket:versions", "bucket:uploads"},
		"delimiter":          {"bucket:", "bucket:versions", "bucket:uploads"},
		"encoding-type":      {"bucket:", "bucket:versions", "bucket:uploads"},
		"max-keys":           {"bucket:", "bucket:versions"},
		"marker":             {"bucket:"},
		"continuation-token": {"bucket:"},
		"start-after":        {"bucket:"},
		"fetch-owner":        {"bucket:"},
		"key-marker":         {"bucket:versions", "bucket:uploads"},
		"version-id-marker":  {"bucket:versions"},
		"upload-id-marker":   {"bucket:uploads"},
		"max-uploads":        {"bucket:uploads"},
		"max-parts":          {"object:uploadId"},
		"part-number-marker": {"object:uploadId"},
		"x-id":               {"*"},
	}
)

// queryError returns the error r's query gets, or nil: 501 NotImplemented
// naming a parameter the store does not know or that does not go with the
// operation, 405 for a sub-resource asked with a method it lacks.
func queryError(r *http.Request) error {
	bucket, key, isObject := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	target, subs := "object", objectSubs
	if !isObject || key == "" {
		target, subs = "bucket", bucketSubs
	}
	q := r.URL.Query()
	sub := ""
	for name := range q {
		if _, ok := subs[name]; ok && name != "" && !(name == "uploadId" && q.Has("partNumber")) {
			if sub != "" {
				return errQueryParam(name)
			}
			sub = name
		}
	}
	for name := range q {
		if name == sub || strings.HasPrefix(name, "X-Amz-") && presignParam(name) {
			continue
		}
		ok := false
		for _, where := range queryParams[name] {
			ok = ok || where == "*" || where == target+":"+sub
		}
		if !ok {
			return errQueryParam(name)
		}
	}
	if target == "bucket" && sub == "" && r.Method != http.MethodGet && !bareQuery(q) {
		for name := range q {
			if name != "x-id" && !presignParam(name) {
				return errQueryParam(name)
			}
		}
	}
	if sub == "partNumber" && !q.Has("uploadId") {
		return errQueryParam("partNumber")
	}
	if bucket == "" { // ListBuckets
		if r.Method != http.MethodGet || sub != "" {
			return errMethod()
		}
		return nil
	}
	if !slices.Contains(subs[sub], r.Method) {
		if sub == "" && r.Method == http.MethodPost && target == "bucket" {
			// A browser-form upload: s3seal seals its uploads and PUTs
			// them, and this path would skip the sidecar (no default
			// retention).
			return &mpError{http.StatusNotImplemented, "NotImplemented", "The embedded store does not take POST object uploads."}
		}
		return errMethod()
	}
	return nil
}

func presignParam(name string) bool {
	switch name {
	case "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires",
		"X-Amz-SignedHeaders", "X-Amz-Signature", "X-Amz-Security-Token":
		return true
	}
	return false
}

func errQueryParam(name string) error {
	return &mpError{http.StatusNotImplemented, "NotImplemented",
		"The embedded store does not implement the query parameter " + strconv.Quote(name) + " on this request."}
}

// bareQuery reports a query that names no operation and no parameter of
// one (at most the SDK's x-id and a presigned URL's signature).
func bareQuery(q url.Values) bool {
	for name := range q {
		if name != "x-id" && !presignParam(name) {
			return false
		}
	}
	return true
}
