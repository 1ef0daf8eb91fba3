package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Payload modes of x-amz-content-sha256.
const (
	UnsignedPayload               = "UNSIGNED-PAYLOAD"
	StreamingSignedPayload        = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingSignedPayloadTrail   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedPayloadTrail = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
)

const (
	algorithm      = "AWS4-HMAC-SHA256"
	iso8601        = "20060102T150405Z"
	scopeTerminal  = "aws4_request"
	serviceS3      = "s3"
	maxPresignSecs = 604800
)

// Credentials looks up the secret key for an access key ID. ok is false if
// the access key is unknown. Implementations must be safe for concurrent use.
type Credentials interface {
	Secret(accessKey string) (secret string, ok bool)
}

// StaticCredentials is a fixed access key -> secret key map.
type StaticCredentials map[string]string

// Secret implements Credentials.
func (s StaticCredentials) Secret(accessKey string) (string, bool) {
	v, ok := s[accessKey]
	return v, ok
}

// Option configures a Verifier.
type Option func(*Verifier)

// WithClock sets the clock used for skew and expiry checks. Default time.Now.
func WithClock(now func() time.Time) Option { return func(v *Verifier) { v.now = now } }

// WithMaxSkew sets how far the request time may be from the server clock
// (either direction) for header-signed requests, and how far in the future
// a presigned URL's X-Amz-Date may be. Default 15 minutes.
func WithMaxSkew(d time.Duration) Option { return func(v *Verifier) { v.maxSkew = d } }

// WithKeyCacheSize bounds the number of cached signing keys (one per access
// key, date, region and service). Default 1024; 0 disables caching.
func WithKeyCacheSize(n int) Option { return func(v *Verifier) { v.keys = newKeyCache(n) } }

// Verifier checks AWS Signature Version 4 on incoming S3 requests, signed
// in the Authorization header or presigned in the query string. Signature
// Version 2 is refused with InvalidRequest, as S3 refuses it. It is safe for
// concurrent use.
type Verifier struct {
	creds   Credentials
	now     func() time.Time
	maxSkew time.Duration
	keys    *keyCache
	// minChunk is the least size of an aws-chunked data chunk but the
	// last: S3's 8 KiB (tests that frame small bodies lower it).
	minChunk int64
}

// NewVerifier returns a Verifier that looks secrets up in creds.
func NewVerifier(creds Credentials, opts ...Option) *Verifier {
	v := &Verifier{creds: creds, now: time.Now, maxSkew: 15 * time.Minute, keys: newKeyCache(defaultKeyCacheSize), minChunk: minChunkSize}
	for _, o := range opts {
		o(v)
	}
	return v
}

// Result is what a verified request carries.
type Result struct {
	// AccessKey is the access key ID that signed the request.
	AccessKey string
	// SignatureV2 is set for a browser POST whose Signature Version 2
	// signature holds: the caller refuses it with ErrPOSTSignatureV2
	// after checking the policy (VerifyPOST).
	SignatureV2 bool
	// Region is the region of the credential scope (any region is accepted).
	Region string
	// Presigned is true for a query-string (presigned URL) signature.
	Presigned bool
	// PayloadMode is the x-amz-content-sha256 mode: a hex SHA-256, or one of
	// UnsignedPayload, StreamingSignedPayload, StreamingSignedPayloadTrail,
	// StreamingUnsignedPayloadTrail.
	PayloadMode string
	// Body replaces r.Body: the decoded payload (aws-chunked framing
	// removed), verified as it streams. A read returns a non-nil error, never
	// a clean io.EOF, if any check fails: SHA-256 mismatch, bad chunk
	// signature, bad framing, a body shorter or longer than
	// x-amz-decoded-content-length or Content-Length, bad trailer signature.
	// io.EOF means everything verified. Data read before an error is not
	// yet authenticated; callers must not commit it until io.EOF. Close
	// closes the original body.
	Body io.ReadCloser
	// DecodedLength is the plaintext payload length if known
	// (x-amz-decoded-content-length for aws-chunked, else Content-Length),
	// else -1.
	DecodedLength int64
	// Trailer returns the trailing headers (for example
	// X-Amz-Checksum-Crc32) once Body has returned io.EOF; nil before that
	// or when the request had none. x-amz-trailer-signature is not included.
	Trailer func() http.Header
}

// Verify authenticates r. It does not read the body: the payload is checked
// as Result.Body is read. Verify must see the request as the client sent it
// (path, query, Host), before any rewriting. The error is always an *Error.
func (v *Verifier) Verify(r *http.Request) (*Result, error) {
	if Anonymous(r) {
		return nil, errAccessDenied("Access Denied.")
	}
	auth := r.Header.Get("Authorization")
	q := r.URL.Query()
	presign := q.Has("X-Amz-Algorithm") || q.Has("X-Amz-Signature") || q.Has("X-Amz-Credential")
	switch {
	case auth != "" && presign:
		return nil, newErr(CodeInvalidArgument, http.StatusBadRequest, "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified.")
	case auth != "":
		return v.verifyAuthorization(r, auth)
	case presign:
		return v.verifyPresigned(r, q)
	}
	return nil, errV2Request()
}

// Anonymous reports whether r carries no signature of any kind: no
// Authorization header, no SigV4 presigned fields, no SigV2 query fields.
func Anonymous(r *http.Request) bool {
	if r.Header.Get("Authorization") != "" {
		return false
	}
	q := r.URL.Query()
	for _, k := range []string{"X-Amz-Algorithm", "X-Amz-Signature", "X-Amz-Credential", "AWSAccessKeyId", "Signature"} {
		if q.Has(k) {
			return false
		}
	}
	return true
}

// verifyAuthorization reads the Authorization header's scheme as S3 does:
// "AWS" is Signature Version 2, anything but AWS4-HMAC-SHA256 is an
// unsupported type, and a header without a space is no scheme at all.
func (v *Verifier) verifyAuthorization(r *http.Request, auth string) (*Result, error) {
	scheme, _, ok := strings.Cut(auth, " ")
	switch {
	case !ok:
		return nil, errInvalidArg("Authorization header is invalid -- one and only one ' ' (space) required.", "Authorization", truncate(auth))
	case scheme == "AWS":
		return nil, errV2Request()
	case scheme != algorithm:
		return nil, errInvalidArg("Unsupported Authorization Type", "Authorization", truncate(scheme))
	}
	return v.verifyHeader(r, auth)
}

// signed is the parsed authentication data common to both forms.
type signed struct {
	accessKey, date, region string
	amzDate                 string // ISO 8601 basic timestamp
	signedHeaders           []string
	signature               string
}

func (v *Verifier) verifyHeader(r *http.Request, auth string) (*Result, error) {
	s, err := parseAuthHeader(auth)
	if err != nil {
		return nil, err
	}
	t, amzDate, err := requestTime(r)
	if err != nil {
		return nil, err
	}
	s.amzDate = amzDate
	if d := v.now().Sub(t); d > v.maxSkew || d < -v.maxSkew {
		return nil, newErr(CodeRequestTimeTooSkewed, http.StatusForbidden, "The difference between the request time and the server's time is too large.")
	}
	if s.date != amzDate[:8] {
		return nil, errMalformed("Invalid credential date %q. Date is not the same as X-Amz-Date: %q.", s.date, amzDate[:8])
	}
	mode := r.Header.Get("X-Amz-Content-Sha256")
	if mode == "" {
		return nil, newErr(CodeInvalidRequest, http.StatusBadRequest, "Missing required header for this request: x-amz-content-sha256")
	}
	if err := checkMode(mode, false); err != nil {
		return nil, err
	}
	key, err := v.check(r, s, mode, "")
	if err != nil {
		return nil, err
	}
	return v.result(r, s, key, mode, false)
}

func (v *Verifier) verifyPresigned(r *http.Request, q map[string][]string) (*Result, error) {
	get := func(k string) string {
		if vs := q[k]; len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	s, expires, err := parsePresign(get)
	if err != nil {
		return nil, err
	}
	t, err := time.Parse(iso8601, s.amzDate)
	if err != nil {
		return nil, errQueryMalformed("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
	}
	now := v.now()
	if t.Sub(now) > v.maxSkew {
		return nil, errAccessDenied("Request is not valid yet")
	}
	if now.After(t.Add(expires)) || expires == 0 {
		return nil, errAccessDenied("Request has expired.").with(
			"X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10),
			"Expires", t.Add(expires).UTC().Format(time.RFC3339),
			"ServerTime", now.UTC().Format(time.RFC3339))
	}
	if s.date != s.amzDate[:8] {
		return nil, errQueryMalformed("Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", s.date, s.amzDate[:8])
	}
	// The payload hash may ride in the query or, signed, in the
	// x-amz-content-sha256 header (the Go SDK's presigner leaves it there);
	// checkSignedHeaders refuses the header unsigned.
	mode := get("X-Amz-Content-Sha256")
	if mode == "" {
		mode = r.Header.Get("X-Amz-Content-Sha256")
	}
	if mode == "" {
		mode = UnsignedPayload
	}
	if err := checkMode(mode, true); err != nil {
		return nil, err
	}
	key, err := v.check(r, s, mode, "X-Amz-Signature")
	if err != nil {
		return nil, err
	}
	return v.result(r, s, key, mode, true)
}

// check looks up the secret, rebuilds the signature and compares it. It
// returns the signing key for the payload checks.
func (v *Verifier) check(r *http.Request, s *signed, mode, skipQuery string) ([]byte, error) {
	if err := checkSignedHeaders(r, s.signedHeaders); err != nil {
		return nil, err
	}
	secret, ok := v.creds.Secret(s.accessKey)
	if !ok {
		return nil, newErr(CodeInvalidAccessKeyID, http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records.")
	}
	creq, err := canonicalRequest(r, s.signedHeaders, mode, skipQuery)
	if err != nil {
		return nil, err
	}
	key := v.keys.get(secret, keyCacheID{s.accessKey, s.date, s.region, serviceS3})
	sts := algorithm + "\n" + s.amzDate + "\n" + scope(s) + "\n" + hexSHA256([]byte(creq))
	want := hex.EncodeToString(hmacSHA256(key, sts))
	if !hmac.Equal([]byte(want), []byte(s.signature)) {
		return nil, errSignature()
	}
	return key, nil
}

func scope(s *signed) string {
	return s.date + "/" + s.region + "/" + serviceS3 + "/" + scopeTerminal
}

// checkSignedHeaders requires host to be signed and every x-amz-* header
// present in the request to be signed, as S3 does.
func checkSignedHeaders(r *http.Request, names []string) error {
	set := make(map[string]bool, len(names))
	for _, n := range names {
		set[n] = true
	}
	if !set["host"] {
		return errAccessDenied("The host header must be signed.")
	}
	var unsigned []string
	for k := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-amz-") && !set[lk] {
			unsigned = append(unsigned, lk)
		}
	}
	if len(unsigned) > 0 {
		slices.Sort(unsigned)
		return errAccessDenied("There were headers present in the request which were not signed").with(
			"HeadersNotSigned", strings.Join(unsigned, ", "))
	}
	return nil
}

// checkMode validates an x-amz-content-sha256 value.
func checkMode(mode string, presigned bool) error {
	switch mode {
	case UnsignedPayload:
		return nil
	case StreamingSignedPayload, StreamingSignedPayloadTrail, StreamingUnsignedPayloadTrail:
		if presigned {
			return newErr(CodeInvalidRequest, http.StatusBadRequest, "Streaming payloads are not supported with presigned URLs.")
		}
		return nil
	}
	if len(mode) == 64 && isLowerHex(mode) {
		return nil
	}
	return errInvalidArg("x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-UNSIGNED-PAYLOAD-TRAILER, "+
		"STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD, "+
		"STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER or a valid sha256 value.", "x-amz-content-sha256", truncate(mode))
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// requestTime returns the request time from X-Amz-Date, else Date, and its
// ISO 8601 basic form used in the string to sign.
func requestTime(r *http.Request) (time.Time, string, error) {
	if d := r.Header.Get("X-Amz-Date"); d != "" {
		t, err := time.Parse(iso8601, d)
		if err != nil {
			return time.Time{}, "", errAccessDenied("AWS authentication requires a valid Date or x-amz-date header.")
		}
		return t, d, nil
	}
	if d := r.Header.Get("Date"); d != "" {
		t, err := http.ParseTime(d)
		if err == nil {
			return t, t.UTC().Format(iso8601), nil
		}
	}
	return time.Time{}, "", errAccessDenied("AWS authentication requires a valid Date or x-amz-date header.")
}
