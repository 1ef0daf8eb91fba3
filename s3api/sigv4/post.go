package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"net/http"
	"strings"
	"time"
)

// PostFields are the authentication fields of a browser POST upload
// (multipart/form-data), as the form carried them; "" for an absent field.
type PostFields struct {
	Algorithm, Credential, Date, Signature string
	// Policy is the base64 POST policy exactly as sent: it is what the
	// signature covers.
	Policy string
	// AWSAccessKeyID and SignatureV2 are Signature Version 2's fields.
	AWSAccessKeyID, SignatureV2 string
	// Sent tells whether the form had a field (by lower-case name), so
	// that a field sent empty is not taken for a missing one. Nil: a
	// field is sent when it is not empty.
	Sent func(name string) bool
}

// maxPostDateAge is how old X-Amz-Date may be: a form signed longer ago is
// refused as an expired policy, whatever its expiration says (as S3 does).
const maxPostDateAge = time.Hour

// VerifyPOST authenticates a browser POST upload: the signature must be
// the hex HMAC-SHA256 of the base64 policy under the SigV4 signing key of
// the credential's date, region and service. It checks neither the policy
// nor the body; the caller evaluates the policy. Signature Version 2
// (AWSAccessKeyId and signature fields) is checked so that a wrong one gets
// S3's answer, and a right one a Result with SignatureV2 set, which the
// caller refuses (verifyPOSTV2); a form without any signature is
// AccessDenied. The error is always an *Error; those about a field name it
// in ArgumentName, as S3 does.
func (v *Verifier) VerifyPOST(f PostFields) (*Result, error) {
	sent := f.Sent
	if sent == nil {
		vals := map[string]string{"policy": f.Policy, "x-amz-algorithm": f.Algorithm, "x-amz-credential": f.Credential,
			"x-amz-date": f.Date, "x-amz-signature": f.Signature}
		sent = func(name string) bool { return vals[name] != "" }
	}
	names := []string{"policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature"}
	v4 := false
	for _, n := range names[1:] {
		v4 = v4 || sent(n)
	}
	switch {
	case !v4 && (f.AWSAccessKeyID != "" || f.SignatureV2 != ""):
		return v.verifyPOSTV2(f, sent)
	case !v4 && !sent("policy"):
		return nil, errAccessDenied("Access Denied.")
	}
	for _, n := range names {
		if !sent(n) {
			return nil, errMissingPostField(n)
		}
	}
	if f.Algorithm != algorithm {
		return nil, errPostField("X-Amz-Algorithm", f.Algorithm, "Only AWS4-HMAC-SHA256 is supported")
	}
	date, err := time.Parse(iso8601, f.Date)
	if err != nil {
		return nil, errPostField("X-Amz-Date", f.Date, "X-Amz-Date must be formated via ISO8601 Long format")
	}
	if v.now().Sub(date) > maxPostDateAge {
		return nil, errAccessDenied("Invalid according to Policy: Policy expired.")
	}
	s, err := parseCredential(f.Credential, func(format string, args ...any) *Error {
		return errPostField("x-amz-credential", f.Credential, format, args...)
	}, "")
	if err != nil {
		return nil, err
	}
	if s.date != f.Date[:8] {
		return nil, errPostField("x-amz-credential", f.Credential, "Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", s.date, f.Date[:8])
	}
	secret, ok := v.creds.Secret(s.accessKey)
	if !ok {
		return nil, newErr(CodeInvalidAccessKeyID, http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records.").
			with("AWSAccessKeyId", s.accessKey)
	}
	key := v.keys.get(secret, keyCacheID{s.accessKey, s.date, s.region, serviceS3})
	want := hex.EncodeToString(hmacSHA256(key, f.Policy))
	if !hmac.Equal([]byte(want), []byte(f.Signature)) {
		// What was signed is the policy as sent: S3 shows it, and its
		// bytes, as the string to sign (there is no canonical request).
		return nil, errSignature().with("AWSAccessKeyId", s.accessKey, "StringToSign", f.Policy,
			"SignatureProvided", f.Signature, "StringToSignBytes", spacedHex(f.Policy))
	}
	return &Result{AccessKey: s.accessKey, Region: s.region, PayloadMode: UnsignedPayload, DecodedLength: -1}, nil
}

// errMissingPostField is S3's answer to a form without a required field
// (or with it after the file, where S3 ignores it).
func errMissingPostField(name string) *Error {
	return errPostField(name, "", "Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", name)
}

// errPostField is an InvalidArgument about the form field name, sent as
// value.
func errPostField(name, value, format string, args ...any) *Error {
	return newErr(CodeInvalidArgument, http.StatusBadRequest, format, args...).with("ArgumentName", name, "ArgumentValue", value)
}

// spacedHex is s's bytes in hex, separated by spaces, as S3 shows a
// string to sign.
func spacedHex(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(hex.EncodeToString([]byte{s[i]}))
	}
	return b.String()
}
