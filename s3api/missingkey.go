package s3api

import (
	"net/http"
	"net/url"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// S3 answers a read of a key that does not exist with 404 NoSuchKey to a
// caller that may list the bucket (s3:ListBucket, with the key as
// s3:prefix), whether or not it may read the object, and with 403
// AccessDenied to any other, so that reads do not tell a caller which
// keys exist where it may not list them.

// missingKeyErr is the answer to a GetObject or HeadObject that failed
// with err: NoSuchKey stays only for a caller that may list the key.
func (s *Server) missingKeyErr(req *request, op string, err error) error {
	if !keyRead(op) || toAPIError(err).Code != s3err.NoSuchKey {
		return err
	}
	if !s.mayListKey(req) {
		return refusedBy("the key does not exist, and the caller may not list the bucket")
	}
	return err
}

// refusedReadErr is the answer to a GetObject or HeadObject that
// authorize refused with err: NoSuchKey when the key (its current
// version) does not exist and the caller may list it.
func (s *Server) refusedReadErr(req *request, op string, err error) error {
	if !keyRead(op) || req.key == "" || req.r.URL.Query().Has("versionId") || !s.mayListKey(req) {
		return err
	}
	_, herr := s.store.Head(req.r.Context(), req.bucket, req.key)
	if herr == nil {
		return err
	}
	if c := toAPIError(objectErr(herr)).Code; c == s3err.NoSuchKey {
		return objectErr(herr)
	}
	return err
}

func keyRead(op string) bool { return op == "GetObject" || op == "HeadObject" }

// mayListKey reports whether the bucket's documents let the caller list
// the bucket with req's key as the prefix.
func (s *Server) mayListKey(req *request) bool {
	r := req.r.Clone(req.r.Context())
	r.Method = http.MethodGet
	r.URL.RawQuery = url.Values{"prefix": {req.key}}.Encode()
	list := *req
	list.r, list.key = r, ""
	return s.authorize(&list, "ListObjects") == nil
}
