package sigv4

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
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
	signedAt := time.Date(2015, 12, 29, 0, 0, 0, 0, time.UTC)
	now := signedAt.Add(30 * time.Minute)
	v := NewVerifier(StaticCredentials{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		WithClock(func() time.Time { return now }))
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
		{"missing date", func(f *PostFields) { f.Date = "" }, CodeInvalidArgument, "'x-amz-date'"},
		{"missing policy", func(f *PostFields) { f.Policy = "" }, CodeInvalidArgument, "'policy'"},
		{"bad date", func(f *PostFields) { f.Date = "2015-12-29" }, CodeInvalidArgument, "ISO8601"},
		{"date not the credential's", func(f *PostFields) { f.Date = "20151230T000000Z" }, CodeInvalidArgument, "not the same as X-Amz-Date"},
		{"algorithm", func(f *PostFields) { f.Algorithm = "AWS4-HMAC-SHA1" }, CodeInvalidArgument, "AWS4-HMAC-SHA256"},
		{"v2, wrong signature", func(f *PostFields) {
			*f = PostFields{AWSAccessKeyID: "AKIAIOSFODNN7EXAMPLE", SignatureV2: "x", Policy: "e30="}
		}, CodeSignatureDoesNotMatch, ""},
		{"anonymous", func(f *PostFields) { *f = PostFields{} }, CodeAccessDenied, "Access Denied."},
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

// TestVerifyPOSTAnswers: S3's words and the fields naming what was wrong,
// and an X-Amz-Date more than an hour old is an expired policy.
func TestVerifyPOSTAnswers(t *testing.T) {
	signedAt := time.Date(2015, 12, 29, 0, 0, 0, 0, time.UTC)
	now := signedAt.Add(59 * time.Minute)
	v := NewVerifier(StaticCredentials{"AKIAIOSFODNN7EXAMPLE": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		WithClock(func() time.Time { return now }))
	present := func(names ...string) func(string) bool {
		return func(n string) bool { return slices.Contains(names, n) }
	}
	all := present("policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature")
	for _, tc := range []struct {
		name   string
		edit   func(*PostFields)
		later  time.Duration
		code   string
		msg    string
		fields []Field
	}{
		{"empty policy is sent", func(f *PostFields) { f.Policy, f.Sent = "", all }, 0, CodeSignatureDoesNotMatch, "", nil},
		{"no policy", func(f *PostFields) {
			f.Sent = present("x-amz-algorithm", "x-amz-credential", "x-amz-date", "x-amz-signature")
		}, 0,
			CodeInvalidArgument, "Bucket POST must contain a field named 'policy'.  If it is specified, please check the order of the fields.",
			[]Field{{"ArgumentName", "policy"}, {"ArgumentValue", ""}}},
		{"no signature", func(f *PostFields) { f.Sent = present("policy", "x-amz-algorithm", "x-amz-credential", "x-amz-date") }, 0,
			CodeInvalidArgument, "'x-amz-signature'", []Field{{"ArgumentName", "x-amz-signature"}, {"ArgumentValue", ""}}},
		{"anonymous", func(f *PostFields) { f.Sent = present() }, 0, CodeAccessDenied, "Access Denied.", nil},
		{"algorithm", func(f *PostFields) { f.Algorithm = "invalid" }, 0, CodeInvalidArgument, "Only AWS4-HMAC-SHA256 is supported",
			[]Field{{"ArgumentName", "X-Amz-Algorithm"}, {"ArgumentValue", "invalid"}}},
		{"date", func(f *PostFields) { f.Date = "invalid_date" }, 0, CodeInvalidArgument, "X-Amz-Date must be formated via ISO8601 Long format",
			[]Field{{"ArgumentName", "X-Amz-Date"}, {"ArgumentValue", "invalid_date"}}},
		{"credential", func(f *PostFields) { f.Credential = "malformed-no-slashes" }, 0, CodeInvalidArgument,
			`the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
			[]Field{{"ArgumentName", "x-amz-credential"}, {"ArgumentValue", "malformed-no-slashes"}}},
		{"date over an hour old", func(*PostFields) {}, 2 * time.Minute, CodeAccessDenied, "Invalid according to Policy: Policy expired.", nil},
		{"signature", func(f *PostFields) { f.Signature = "incorrect" }, 0, CodeSignatureDoesNotMatch, "",
			[]Field{{"AWSAccessKeyId", "AKIAIOSFODNN7EXAMPLE"}, {"StringToSign", awsPostPolicy}, {"SignatureProvided", "incorrect"},
				{"StringToSignBytes", "65 79 41 69 5a 58 "}}},
	} {
		now = signedAt.Add(59*time.Minute + tc.later)
		f := awsPostFields()
		tc.edit(&f)
		_, err := v.VerifyPOST(f)
		var se *Error
		if !errors.As(err, &se) || se.Code != tc.code || !strings.HasPrefix(se.Message, tc.msg) && !strings.Contains(se.Message, tc.msg) {
			t.Errorf("%s: got %v", tc.name, err)
			continue
		}
		for i, want := range tc.fields {
			if i >= len(se.Fields) || se.Fields[i].Name != want.Name || !strings.HasPrefix(se.Fields[i].Value, want.Value) {
				t.Errorf("%s: fields %q, want %q", tc.name, se.Fields, tc.fields)
			}
		}
	}
}
