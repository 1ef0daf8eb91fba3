package s3api

import (
	"net/http"
	"net/url"
)

// missingKeyErr is S3's answer to a read of a key that does not exist:
// 404 NoSuchKey to a caller that may list the bucket (s3:ListBucket, with
// the key as s3:prefix), 403 AccessDenied to any other, so that reads do
// not tell a caller which keys exist where it may not list them.
func (s *Server) missingKeyErr(req *request, op string, err error) error {
	if op != "GetObject" && op != "HeadObject" || toAPIError(err).Code != "NoSuchKey" {
		return err
	}
	r := req.r.Clone(req.r.Context())
	r.Method = http.MethodGet
	r.URL.RawQuery = url.Values{"prefix": {req.key}}.Encode()
	list := *req
	list.r, list.key = r, ""
	if s.authorize(&list, "ListObjects") != nil {
		return refusedBy("the key does not exist, and the caller may not list the bucket")
	}
	return err
}
