package s3api

import (
	"errors"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// missingObject turns a store's failure (5xx) on an object's sub-resource
// into NoSuchKey when the object is not there: some stores (moto) answer
// 500 to DELETE ?tagging of a missing key where S3 answers 404 NoSuchKey,
// and the client's answer must not depend on the store. A version named by
// versionId is the store's to judge; other errors pass unchanged.
func (s *Server) missingObject(req *request, sr subresource, in backend.RawRequest, err error) error {
	var be *backend.Error
	if !sr.object || in.Query.Has("versionId") || !errors.As(err, &be) || be.StatusCode < 500 {
		return err
	}
	if _, herr := s.store.Backend().HeadObject(req.r.Context(), req.bucket, req.key); backend.IsNotFound(herr) {
		return s3err.New("NoSuchKey", "")
	}
	return err
}
