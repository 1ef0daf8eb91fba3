package s3api

import (
	"crypto/md5"
	"encoding/base64"
	"net/http"
	"strings"
)

// checkSSEHeaders refuses server-side encryption headers that S3 itself
// refuses as bad input, with S3's 400 InvalidArgument: a method it does
// not know, a KMS key without aws:kms, SSE-C together with another method,
// and SSE-C without its algorithm, without a 256-bit key or with a key MD5
// that does not match. Well-formed SSE-KMS and SSE-C pass here and are
// refused by the header policies (501): s3seal does not implement them.
func checkSSEHeaders(h http.Header) *APIError {
	method := strings.TrimSpace(h.Get("X-Amz-Server-Side-Encryption"))
	kms := strings.EqualFold(method, "aws:kms") || strings.EqualFold(method, "aws:kms:dsse")
	if method != "" && !kms && !strings.EqualFold(method, "AES256") {
		return apiErr("InvalidArgument", "The encryption method specified is not supported.")
	}
	if !kms && (h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "" || h.Get("X-Amz-Server-Side-Encryption-Context") != "") {
		return apiErr("InvalidArgument", "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms.")
	}
	alg := h.Get("X-Amz-Server-Side-Encryption-Customer-Algorithm")
	key := h.Get("X-Amz-Server-Side-Encryption-Customer-Key")
	sum := h.Get("X-Amz-Server-Side-Encryption-Customer-Key-Md5")
	if alg == "" && key == "" && sum == "" {
		return nil
	}
	if method != "" {
		return apiErr("InvalidArgument", "Server Side Encryption with Customer provided key is incompatible with the encryption method specified.")
	}
	if alg == "" {
		return apiErr("InvalidArgument", "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != 32 {
		return apiErr("InvalidArgument", "The secret key was invalid for the specified algorithm.")
	}
	if d := md5.Sum(raw); sum != "" && sum != base64.StdEncoding.EncodeToString(d[:]) {
		return apiErr("InvalidArgument", "The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	return nil
}
