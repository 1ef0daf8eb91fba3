package s3api

import "net/url"

// authorizeCopySource decides the read a copy makes of its source as S3
// does: the copy is the caller's GetObject (GetObjectVersion with a
// versionId) on the source, decided by the source bucket's documents as
// a GetObject of it would be, besides its PutObject on the destination
// that serve decided.
func (s *Server) authorizeCopySource(req *request, bucket, key, versionID string) error {
	r := req.r.Clone(req.r.Context())
	q := url.Values{}
	if versionID != "" {
		q.Set("versionId", versionID)
	}
	r.URL.RawQuery = q.Encode()
	src := *req
	src.r, src.bucket, src.key = r, bucket, key
	return s.authorize(&src, "GetObject")
}
