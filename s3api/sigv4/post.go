package sigv4

import (
	"crypto/hmac"
	"encoding/hex"
	"net/http"
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
}

// VerifyPOST authenticates a browser POST upload: the signature must be
// the hex HMAC-SHA256 of the base64 policy under the SigV4 signing key of
// the credential's date, region and service. It checks neither the policy
// nor the body; the caller evaluates the policy. Signature Version 2
// (AWSAccessKeyId and signature fields) is refused with
// SignatureVersionNotSupported, and a form without any signature with
// AccessDenied. The error is always an *Error.
func (v *Verifier) VerifyPOST(f PostFields) (*Result, error) {
	v4 := f.Algorithm != "" || f.Credential != "" || f.Date != "" || f.Signature != ""
	switch {
	case !v4 && (f.AWSAccessKeyID != "" || f.SignatureV2 != ""):
		return nil, errV2()
	case !v4:
		return nil, errAccessDenied("Anonymous access is not allowed; sign browser POST uploads with a SigV4 POST policy.")
	}
	for _, m := range []struct{ name, val string }{
		{"X-Amz-Algorithm", f.Algorithm}, {"X-Amz-Credential", f.Credential},
		{"X-Amz-Date", f.Date}, {"X-Amz-Signature", f.Signature}, {"Policy", f.Policy},
	} {
		if m.val == "" {
			return nil, errMissingPostField(m.name)
		}
	}
	if f.Algorithm != algorithm {
		return nil, newErr(CodeInvalidArgument, http.StatusBadRequest, "X-Amz-Algorithm only supports \"AWS4-HMAC-SHA256\"")
	}
	s, err := parseCredential(f.Credential, errPostArg, queryCredPrefix)
	if err != nil {
		return nil, err
	}
	if _, err := time.Parse(iso8601, f.Date); err != nil {
		return nil, errPostArg("X-Amz-Date must be formated via ISO8601 Long format")
	}
	if s.date != f.Date[:8] {
		return nil, errPostArg("Invalid credential date %q. This date is not the same as X-Amz-Date: %q.", s.date, f.Date[:8])
	}
	secret, ok := v.creds.Secret(s.accessKey)
	if !ok {
		return nil, newErr(CodeInvalidAccessKeyID, http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records.")
	}
	key := v.keys.get(secret, keyCacheID{s.accessKey, s.date, s.region, serviceS3})
	want := hex.EncodeToString(hmacSHA256(key, f.Policy))
	if !hmac.Equal([]byte(want), []byte(f.Signature)) {
		return nil, errSignature()
	}
	return &Result{AccessKey: s.accessKey, Region: s.region, PayloadMode: UnsignedPayload, DecodedLength: -1}, nil
}

// errMissingPostField is S3's answer to a form without a required field
// (or with it after the file, where S3 ignores it).
func errMissingPostField(name string) *Error {
	return newErr(CodeInvalidArgument, http.StatusBadRequest,
		"Bucket POST must contain a field named '%s'.  If it is specified, please check the order of the fields.", name)
}

func errPostArg(format string, args ...any) *Error {
	return newErr(CodeInvalidArgument, http.StatusBadRequest, format, args...)
}
