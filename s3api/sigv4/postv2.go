package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
)

// verifyPOSTV2 checks a browser POST signed with Signature Version 2
// (AWSAccessKeyId and signature fields: the base64 HMAC-SHA1 of the base64
// policy under the secret key): a missing field is InvalidArgument naming
// it, an unknown access key InvalidAccessKeyId and a wrong signature
// SignatureDoesNotMatch (403). A form that passes is served like a SigV4
// form, its policy checked the same way (its Result has SignatureV2 set):
// in a form the signature covers the policy and nothing else in either
// version, so V2 allows no more than V4 there, unlike V2 in a header or a
// query, which stays refused (docs/DESIGN.md, Browser POST uploads).
func (v *Verifier) verifyPOSTV2(f PostFields, sent func(string) bool) (*Result, error) {
	if f.AWSAccessKeyID == "" {
		return nil, errMissingPostField("AWSAccessKeyId")
	}
	if !sent("policy") {
		return nil, errMissingPostField("policy")
	}
	if f.SignatureV2 == "" {
		return nil, errMissingPostField("signature")
	}
	secret, ok := v.creds.Secret(f.AWSAccessKeyID)
	if !ok {
		return nil, newErr(CodeInvalidAccessKeyID, http.StatusForbidden, "The AWS Access Key Id you provided does not exist in our records.").
			with("AWSAccessKeyId", f.AWSAccessKeyID)
	}
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(f.Policy))
	want := base64.StdEncoding.EncodeToString(m.Sum(nil))
	if !hmac.Equal([]byte(want), []byte(f.SignatureV2)) {
		return nil, errSignature().with("AWSAccessKeyId", f.AWSAccessKeyID, "StringToSign", f.Policy,
			"SignatureProvided", f.SignatureV2, "StringToSignBytes", spacedHex(f.Policy))
	}
	return &Result{AccessKey: f.AWSAccessKeyID, PayloadMode: UnsignedPayload, DecodedLength: -1, SignatureV2: true}, nil
}
