package s3api

import (
	"crypto/md5"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/s3seal/s3seal/s3api/s3err"
	"github.com/s3seal/s3seal/sealstore"
)

const (
	ssecPrefix     = "X-Amz-Server-Side-Encryption-Customer-"
	copySSECPrefix = "X-Amz-Copy-Source-Server-Side-Encryption-Customer-"
)

// checkSSEHeaders refuses server-side encryption headers that S3 itself
// refuses as bad input, with S3's 400 InvalidArgument: a method it does
// not know, a KMS key without aws:kms, SSE-C together with another method,
// and SSE-C (of the object or of a copy source) without its algorithm
// AES256, without a 256-bit key, or without the key's MD5 or with one
// that does not match.
func checkSSEHeaders(h http.Header) *s3err.Error {
	method := strings.TrimSpace(h.Get("X-Amz-Server-Side-Encryption"))
	kms := strings.EqualFold(method, "aws:kms") || strings.EqualFold(method, "aws:kms:dsse")
	if method != "" && !kms && !strings.EqualFold(method, "AES256") {
		return s3err.New(s3err.InvalidArgument, "The encryption method specified is not supported.")
	}
	if !kms && (h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "" || h.Get("X-Amz-Server-Side-Encryption-Context") != "" ||
		h.Get("X-Amz-Server-Side-Encryption-Bucket-Key-Enabled") != "") {
		return s3err.New(s3err.InvalidArgument, "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms.")
	}
	if e := checkKMSValues(h); e != nil {
		return e
	}
	ck, err := customerKeyFrom(h, ssecPrefix)
	if err != nil {
		return err
	}
	if ck != nil && method != "" {
		return s3err.New(s3err.InvalidArgument, "Server Side Encryption with Customer provided key is incompatible with the encryption method specified.")
	}
	_, err = customerKeyFrom(h, copySSECPrefix)
	return err
}

// customerKeyFrom reads the SSE-C headers under prefix (the object's or
// the copy source's): nil when there are none.
func customerKeyFrom(h http.Header, prefix string) (*sealstore.CustomerKey, *s3err.Error) {
	alg, key, sum := h.Get(prefix+"Algorithm"), h.Get(prefix+"Key"), h.Get(prefix+"Key-Md5")
	if alg == "" && key == "" && sum == "" {
		return nil, nil
	}
	if !strings.EqualFold(strings.TrimSpace(alg), "AES256") {
		return nil, s3err.New(s3err.InvalidArgument, "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.")
	}
	if key == "" {
		return nil, s3err.New(s3err.InvalidArgument, "Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.")
	}
	raw, err := base64.StdEncoding.DecodeString(key)
	if err != nil || len(raw) != sealstore.CustomerKeySize {
		return nil, s3err.New(s3err.InvalidArgument, "The secret key was invalid for the specified algorithm.")
	}
	if sum == "" {
		return nil, s3err.New(s3err.InvalidArgument, "Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.")
	}
	if d := md5.Sum(raw); subtle.ConstantTimeCompare([]byte(sum), []byte(base64.StdEncoding.EncodeToString(d[:]))) != 1 {
		return nil, s3err.New(s3err.InvalidArgument, "The calculated MD5 hash of the key did not match the hash that was provided.")
	}
	ck, cerr := sealstore.NewCustomerKey(raw)
	clear(raw)
	if cerr != nil {
		return nil, s3err.New(s3err.InvalidArgument, "The secret key was invalid for the specified algorithm.")
	}
	return ck, nil
}

// customerKey returns the request's SSE-C key (nil without one); the
// headers passed checkSSEHeaders.
func customerKey(r *http.Request) (*sealstore.CustomerKey, error) {
	ck, err := customerKeyFrom(r.Header, ssecPrefix)
	if err != nil {
		return nil, err
	}
	return ck, nil
}

// copySourceKey returns the SSE-C key of the request's copy source.
func copySourceKey(r *http.Request) (*sealstore.CustomerKey, error) {
	ck, err := customerKeyFrom(r.Header, copySSECPrefix)
	if err != nil {
		return nil, err
	}
	return ck, nil
}

// setCustomerKeyHeaders echoes the SSE-C algorithm and key MD5, as S3
// answers every request on an object sealed with a customer key.
func setCustomerKeyHeaders(h http.Header, ck *sealstore.CustomerKey) {
	if ck != nil {
		h.Set("X-Amz-Server-Side-Encryption-Customer-Algorithm", "AES256")
		h.Set("X-Amz-Server-Side-Encryption-Customer-Key-Md5", ck.MD5())
	}
}

// backendSSE reads the backend encryption (SSE-S3 or SSE-KMS) a write
// asks for into headers: it is passed to the backend, which applies it to
// the sealed bytes.
func backendSSE(h http.Header, headers *sealstore.Headers) {
	m := strings.TrimSpace(h.Get("X-Amz-Server-Side-Encryption"))
	if m == "" {
		return
	}
	if strings.EqualFold(m, "AES256") {
		m = "AES256"
	} else {
		m = strings.ToLower(m)
	}
	headers.SSE = m
	headers.SSEKMSKeyID = h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id")
	headers.SSEContext = h.Get("X-Amz-Server-Side-Encryption-Context")
	headers.SSEBucketKey = strings.EqualFold(strings.TrimSpace(h.Get("X-Amz-Server-Side-Encryption-Bucket-Key-Enabled")), "true")
}

// setSSEHeaders reports an object's encryption: the backend's (SSE-S3 or
// SSE-KMS) and, for an object sealed with a customer key, the SSE-C
// algorithm and the key's MD5.
func setSSEHeaders(h http.Header, info sealstore.ObjectInfo, ck *sealstore.CustomerKey) {
	if info.CustomerKeyed {
		setCustomerKeyHeaders(h, ck)
		return
	}
	if hd := info.Headers; hd.SSE != "" {
		h.Set("X-Amz-Server-Side-Encryption", hd.SSE)
		if hd.SSEKMSKeyID != "" {
			h.Set("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id", hd.SSEKMSKeyID)
		}
		if hd.SSEBucketKey {
			h.Set("X-Amz-Server-Side-Encryption-Bucket-Key-Enabled", "true")
		}
		if hd.SSEContext != "" && strings.HasPrefix(hd.SSE, "aws:kms") {
			h.Set("X-Amz-Server-Side-Encryption-Context", hd.SSEContext)
		}
	}
}

// refuseReadSSE refuses x-amz-server-side-encryption on a GET or HEAD, as
// S3 does: an object's SSE-S3 or SSE-KMS is never named to read it.
func refuseReadSSE(h http.Header) error {
	if h.Get("X-Amz-Server-Side-Encryption") != "" || h.Get("X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id") != "" {
		return s3err.New(s3err.InvalidArgument, "x-amz-server-side-encryption header is not supported for this operation.")
	}
	return nil
}

// addSSEHeaders is setSSEHeaders for an answer that may follow keep-alive
// whitespace: the headers go out with the status line if it has not gone
// out yet.
func addSSEHeaders(ka *keepAlive, info sealstore.ObjectInfo, ck *sealstore.CustomerKey) {
	h := http.Header{}
	setSSEHeaders(h, info, ck)
	if len(h) == 0 {
		return
	}
	if ka.extra == nil {
		ka.extra = map[string]string{}
	}
	for name := range h {
		ka.extra[name] = h.Get(name)
	}
}

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
		return s3err.New(s3err.InvalidArgument, "The x-amz-server-side-encryption-aws-kms-key-id header is longer than a KMS key id may be (2048 characters).")
	}
	ctx := h.Get("X-Amz-Server-Side-Encryption-Context")
	if ctx == "" {
		return nil
	}
	bad := s3err.New(s3err.InvalidArgument, "The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map")
	if len(ctx) > maxKMSContextB64 {
		return s3err.New(s3err.InvalidArgument, "The x-amz-server-side-encryption-context header is larger than 8 KiB.")
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
func sizeRefusal(be *sealstore.StoreError) *s3err.Error {
	switch {
	case be.Code == "MetadataTooLarge":
		return s3err.New(s3err.MetadataTooLarge, "Your metadata headers exceed the maximum allowed metadata size (the object store refused them).")
	case be.Code == "RequestHeaderSectionTooLarge" || be.Code == "RequestHeaderFieldsTooLarge" ||
		be.StatusCode == http.StatusRequestHeaderFieldsTooLarge:
		return s3err.New(s3err.RequestHeaderSectionTooLarge,
			"Your request header section exceeds the maximum allowed size (the object store refused it).")
	case be.Code == "EntityTooLarge" || be.Code == "RequestEntityTooLarge" || be.StatusCode == http.StatusRequestEntityTooLarge:
		return s3err.New(s3err.EntityTooLarge, "")
	case be.Code == "MaxMessageLengthExceeded":
		return s3err.New(s3err.MaxMessageLengthExceeded, "")
	}
	return nil
}
