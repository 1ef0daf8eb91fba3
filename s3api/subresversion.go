package s3api

import (
	"errors"
	"net/http"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

// The version answers of object sub-resources (tagging, retention, legal
// hold, ACL) that s3seal gives itself, whatever the backend says.

// subresourceMarkerErr is a sub-resource request by version id that the
// backend refused: when that version is a delete marker the answer is
// S3's 405 MethodNotAllowed with x-amz-delete-marker, as for GET and HEAD
// (moto answers NoSuchVersion or 503 there). One HEAD more, on refusals
// only; any other answer stays the backend's.
func (s *Server) subresourceMarkerErr(req *request, vid string, err error) error {
	if vid == "" || vid == "null" {
		return err
	}
	var be *sealstore.StoreError
	if !errors.As(err, &be) || (be.Code != "NoSuchVersion" && be.Code != "NoSuchKey" && be.Code != "NotFound" && be.StatusCode < 500) {
		return err
	}
	_, herr := s.store.ObjectLock(req.r.Context(), req.bucket, req.key, vid)
	if isDeleteMarker(herr) {
		return readErr(req.w.Header(), herr, vid)
	}
	switch sealstore.StoreCode(herr) {
	case "NotFound", "NoSuchKey", "NoSuchVersion", "BadRequest":
		return s3err.New(s3err.NoSuchVersion, "")
	}
	return err
}

// isDeleteMarker reports a backend answer about a delete marker.
func isDeleteMarker(err error) bool {
	var be *sealstore.StoreError
	return errors.As(err, &be) && (be.DeleteMarker || be.Code == "MethodNotAllowed")
}

// echoVersion names the version read by id in x-amz-version-id when the
// store named none (moto, for ?versionId=null: the only id a store may
// leave unnamed, sealstore's checkVersion).
func echoVersion(h http.Header, vid string) {
	if vid != "" && h.Get("x-amz-version-id") == "" {
		h.Set("x-amz-version-id", vid)
	}
}

// subresourceVersion names the version a sub-resource request acted on in
// x-amz-version-id, as S3 does: the backend's answer, else the id asked
// for (moto names none).
func subresourceVersion(h http.Header, answered, asked string) {
	switch {
	case answered != "":
		h.Set("x-amz-version-id", answered)
	case asked != "":
		h.Set("x-amz-version-id", asked)
	}
}
