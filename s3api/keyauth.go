package s3api

import (
	"net/http"
	"net/url"

	"github.com/s3seal/s3seal/s3api/sigv4"
)

// Some requests act on keys besides the one they address, and each of
// those is decided by the bucket's documents as a request of its own
// would be: a copy reads its source, a DeleteObjects deletes each key it
// lists, a browser POST puts the key its form names.

// authorizeKey decides op on bucket's key (its version versionID when not
// "") for req's caller, with req's headers as its condition values. bound
// is the content it was allowed on, when an object record allowed it
// (request.boundTo).
func (s *Server) authorizeKey(req *request, op, bucket, key, versionID string) (bound string, err error) {
	r := req.r.Clone(req.r.Context())
	q := url.Values{}
	if versionID != "" {
		q.Set("versionId", versionID)
	}
	r.URL.RawQuery = q.Encode()
	k := *req
	k.r, k.bucket, k.key, k.boundTo = r, bucket, key, ""
	err = s.authorize(&k, op)
	return k.boundTo, err
}

// authorizeCopySource decides the read a copy makes of its source as S3
// does: the caller's GetObject (GetObjectVersion with a versionId) on the
// source, decided by the source bucket's documents, besides its PutObject
// on the destination that serve decided. bound is the source content the
// read was allowed on ("" for any).
func (s *Server) authorizeCopySource(req *request, bucket, key, versionID string) (bound string, err error) {
	return s.authorizeKey(req, "GetObject", bucket, key, versionID)
}

// authorizePost decides a browser POST upload as the PutObject of key it
// is, its form's fields (h, as objectHeader gives them) being the
// request's headers for the policy's conditions.
func (s *Server) authorizePost(r *http.Request, res *sigv4.Result, cred Credential, bucket, key string, h http.Header) error {
	pr := r.Clone(r.Context())
	pr.Method, pr.Header, pr.URL.RawQuery = http.MethodPut, h.Clone(), ""
	return s.authorize(&request{r: pr, bucket: bucket, key: key, auth: res, cred: cred, who: cred.principal()}, "PutObject")
}
