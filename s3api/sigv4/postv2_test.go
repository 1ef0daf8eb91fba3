package sigv4

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
)

// TestVerifyPOSTV2: a Signature Version 2 form is checked so that a wrong
// one gets S3's answer (403 SignatureDoesNotMatch naming the key and what
// was signed, 403 InvalidAccessKeyId, 400 InvalidArgument for a missing
// field), and a right one is a Result marked SignatureV2.
func TestVerifyPOSTV2(t *testing.T) {
	const ak, sk, policy = "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "eyJjb25kaXRpb25zIjogW119"
	v := NewVerifier(StaticCredentials{ak: sk})
	m := hmac.New(sha1.New, []byte(sk))
	m.Write([]byte(policy))
	sig := base64.StdEncoding.EncodeToString(m.Sum(nil))

	res, err := v.VerifyPOST(PostFields{AWSAccessKeyID: ak, SignatureV2: sig, Policy: policy})
	if err != nil || res.AccessKey != ak || !res.SignatureV2 {
		t.Fatalf("right signature: %+v, %v", res, err)
	}
	for _, tc := range []struct {
		name   string
		f      PostFields
		code   string
		status int
		fields []Field
	}{
		{"wrong signature", PostFields{AWSAccessKeyID: ak, SignatureV2: sig[1:] + "A", Policy: policy}, CodeSignatureDoesNotMatch, 403,
			[]Field{{"AWSAccessKeyId", ak}, {"StringToSign", policy}, {"SignatureProvided", sig[1:] + "A"}, {"StringToSignBytes", spacedHex(policy)}}},
		{"signature of another policy", PostFields{AWSAccessKeyID: ak, SignatureV2: sig, Policy: "e30="}, CodeSignatureDoesNotMatch, 403, nil},
		{"unknown key", PostFields{AWSAccessKeyID: "NOBODY", SignatureV2: sig, Policy: policy}, CodeInvalidAccessKeyID, 403,
			[]Field{{"AWSAccessKeyId", "NOBODY"}}},
		{"no signature", PostFields{AWSAccessKeyID: ak, Policy: policy}, CodeInvalidArgument, 400,
			[]Field{{"ArgumentName", "signature"}, {"ArgumentValue", ""}}},
		{"no access key", PostFields{SignatureV2: sig, Policy: policy}, CodeInvalidArgument, 400,
			[]Field{{"ArgumentName", "AWSAccessKeyId"}, {"ArgumentValue", ""}}},
		{"no policy", PostFields{AWSAccessKeyID: ak, SignatureV2: sig}, CodeInvalidArgument, 400,
			[]Field{{"ArgumentName", "policy"}, {"ArgumentValue", ""}}},
	} {
		_, err := v.VerifyPOST(tc.f)
		var se *Error
		if !errors.As(err, &se) || se.Code != tc.code || se.StatusCode != tc.status {
			t.Errorf("%s: got %v", tc.name, err)
			continue
		}
		if tc.fields != nil && !equalFields(se.Fields, tc.fields) {
			t.Errorf("%s: fields %v, want %v", tc.name, se.Fields, tc.fields)
		}
		if strings.Contains(se.Message, sk) {
			t.Errorf("%s: the message names the secret", tc.name)
		}
	}
}
