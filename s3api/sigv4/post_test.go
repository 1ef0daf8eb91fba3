package sigv4

import (
	"errors"
	"strings"
	"testing"
)

// awsPostPolicy is the base64 policy of AWS's SigV4 POST example
// (sigv4-post-example), signed with the documentation's example key.
const awsPostPolicy = "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9"

func awsPostFields() PostFields {
	return PostFields{Algorithm: "AWS4-HMAC-SHA256", Credential: "AKIAIOSFODNN7EXAMPLE/20151229/us-east-1/s3/aws4_request",
		Date: "20151229T000000Z", Policy: awsPostPolicy,
		Signature: "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"}
}

func TestVerifyPOSTAWSExample(t *testing.T) {
	v := NewVerifier(StaticCredentials{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"})
	res, err := v.VerifyPOST(awsPostFields())
	if err != nil {
		t.Fatal(err)
	}
	if res.AccessKey != "AKIAIOSFODNN7EXAMPLE" || res.Region != "us-east-1" {
		t.Fatalf("%+v", res)
	}
	for _, tc := range []struct {
		name string
		edit func(*PostFields)
		code string
		msg  string
	}{
		{"tampered policy", func(f *PostFields) { f.Policy = f.Policy[:len(f.Policy)-4] + "fQ==" }, CodeSignatureDoesNotMatch, ""},
		{"other region", func(f *PostFields) { f.Credential = strings.Replace(f.Credential, "us-east-1", "eu-west-1", 1) }, CodeSignatureDoesNotMatch, ""},
		{"unknown key", func(f *PostFields) { f.Credential = "NOBODY" + f.Credential[20:] }, CodeInvalidAccessKeyID, ""},
		{"missing date", func(f *PostFields) { f.Date = "" }, CodeInvalidArgument, "'X-Amz-Date'"},
		{"missing policy", func(f *PostFields) { f.Policy = "" }, CodeInvalidArgument, "'Policy'"},
		{"bad date", func(f *PostFields) { f.Date = "2015-12-29" }, CodeInvalidArgument, "ISO8601"},
		{"date not the credential's", func(f *PostFields) { f.Date = "20151230T000000Z" }, CodeInvalidArgument, "not the same as X-Amz-Date"},
		{"algorithm", func(f *PostFields) { f.Algorithm = "AWS4-HMAC-SHA1" }, CodeInvalidArgument, "AWS4-HMAC-SHA256"},
		{"v2", func(f *PostFields) {
			*f = PostFields{AWSAccessKeyID: "AKIAIOSFODNN7EXAMPLE", SignatureV2: "x", Policy: "e30="}
		}, CodeSignatureVersionNotSupported, "Signature Version 4"},
		{"anonymous", func(f *PostFields) { *f = PostFields{} }, CodeAccessDenied, "Anonymous"},
	} {
		f := awsPostFields()
		tc.edit(&f)
		_, err := v.VerifyPOST(f)
		var se *Error
		if !errors.As(err, &se) || se.Code != tc.code || !strings.Contains(se.Message, tc.msg) {
			t.Errorf("%s: got %v", tc.name, err)
		}
	}
}
