package s3api

import (
	"encoding/base64"
	"encoding/hex"
	"net/http"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// digestFields adds to an error document what S3 says of a Content-MD5 it
// refused: the header's value on InvalidDigest, and on a BadDigest for
// Content-MD5 the digest calculated (base64) and the one expected (the
// header's, in hex).
func digestFields(body *errorBody, ae *s3err.Error, h http.Header) {
	v := h.Get("Content-Md5")
	switch {
	case ae.Code == "InvalidDigest":
		body.ContentMD5 = v
	case ae.Code == "BadDigest" && ae.CalculatedDigest != "":
		body.CalculatedDigest = ae.CalculatedDigest
		if b, err := base64.StdEncoding.DecodeString(v); err == nil {
			body.ExpectedDigest = hex.EncodeToString(b)
		}
	}
}
