package s3api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"unicode/utf8"

	"github.com/s3seal/s3seal/backend"
	"github.com/s3seal/s3seal/s3api/s3err"
)

// Bounds on the SSE-KMS values a write passes to the store. A KMS key id
// (key id, ARN, alias or alias ARN) is at most 2048 characters (KMS's
// KeyId); the encryption context is base64 of a UTF-8 JSON object of
// string values, and s3seal takes at most 8 KiB of it (the header as
// sent), S3's whole request header section being 8 KiB. Anything else is
// the client's bad input: 400 InvalidArgument, never sent on.
const (
	maxKMSKeyID      = 2048
	maxKMSContextB64 = 8 << 10
)

// checkKMSValues refuses an SSE-KMS key id or encryption context S3 would
// refuse.
func checkKMSValues(h http.Header) *s3err.Error {
	if id := h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id"); len(id) > maxKMSKeyID {
		return s3err.New("InvalidArgument", "The x-amz-server-side-encryption-aws-kms-key-id header is longer than a KMS key id may be (2048 characters).")
	}
	ctx := h.Get("X-Amz-Server-Side-Encryption-Context")
	if ctx == "" {
		return nil
	}
	bad := s3err.New("InvalidArgument", "The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
	if len(ctx) > maxKMSContextB64 {
		return s3err.New("InvalidArgument", "The x-amz-server-side-encryption-context header is larger than 8 KiB.")
	}
	raw, err := base64.StdEncoding.DecodeString(ctx)
	if err != nil || !utf8.Valid(raw) {
		return bad
	}
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return bad
	}
	return nil
}

// sizeRefusal turns a store's refusal of a request too large for it (its
// metadata, its headers, its body) into the client's 4xx: the request
// can never succeed as it is, so it must not read as a server error (a
// 5xx that SDKs retry). nil for any other error.
func sizeRefusal(be *backend.Error) *s3err.Error {
	switch {
	case be.Code == "MetadataTooLarge":
		return &s3err.Error{Code: "MetadataTooLarge", StatusCode: 400,
			Message: "Your metadata headers exceed the maximum allowed metadata size (the object store refused them)."}
	case be.Code == "RequestHeaderSectionTooLarge" || be.Code == "RequestHeaderFieldsTooLarge" ||
		be.StatusCode == http.StatusRequestHeaderFieldsTooLarge:
		return &s3err.Error{Code: "RequestHeaderSectionTooLarge", StatusCode: 400,
			Message: "Your request header section exceeds the maximum allowed size (the object store refused it)."}
	case be.Code == "EntityTooLarge" || be.Code == "RequestEntityTooLarge" || be.StatusCode == http.StatusRequestEntityTooLarge:
		return s3err.New("EntityTooLarge", "")
	case be.Code == "MaxMessageLengthExceeded":
		return s3err.New("MaxMessageLengthExceeded", "")
	}
	return nil
}
