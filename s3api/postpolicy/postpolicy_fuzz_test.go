package postpolicy

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// asError is err as the S3 error it carries (an InternalError if none).
func asError(err error) *s3err.Error {
	var e *s3err.Error
	if errors.As(err, &e) {
		return e
	}
	return s3err.New(s3err.InternalError, "")
}

// FuzzPostPolicy: a POST policy never panics its parser, which refuses
// with InvalidPolicyDocument only; an accepted policy has known operators
// on lower-case field names and non-negative length bounds. raw sends
// policy as the field's text as is, else base64 encoded. The check of a
// form against a policy is fuzzed with s3api's own form (s3api's
// FuzzPostPolicyCheck).
func FuzzPostPolicy(f *testing.F) {
	for _, p := range []string{
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key","up/"],["content-length-range",1,"10"]]}`,
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[["eq","$Content-Type","text/plain"],{"acl":"private"}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",-1,5]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",1.5,5]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range","9223372036854775808",5]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["STARTS-WITH","key",""]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[[]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[1]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":null}`,
		`{"expiration":"x","conditions":[]}`, `{"Expiration":"2030-01-01T00:00:00Z","conditions":[]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[]} {}`, `null`, ``, `[`,
	} {
		f.Add([]byte(p), false, "key=up/a.txt\nContent-Type=text/plain\nx-ignore-x=1\nbucket=b", "b")
	}
	f.Add([]byte("not base64!"), true, "", "b")
	f.Fuzz(func(t *testing.T, policy []byte, raw bool, _, _ string) {
		b64 := base64.StdEncoding.EncodeToString(policy)
		if raw {
			b64 = string(policy)
		}
		p, err := Parse(b64)
		if err != nil {
			if ae := asError(err); ae.Code != "InvalidPolicyDocument" || ae.StatusCode != 400 {
				t.Fatalf("%.80q: unexpected error %v", policy, err)
			}
			return
		}
		for _, c := range p.conds {
			switch c.op {
			case "eq", "starts-with":
				if c.field != strings.ToLower(c.field) {
					t.Fatalf("%.80q: field %q", policy, c.field)
				}
			case "content-length-range":
				if c.min < 0 || c.max < 0 {
					t.Fatalf("%.80q: bounds %d, %d", policy, c.min, c.max)
				}
			default:
				t.Fatalf("%.80q: operator %q", policy, c.op)
			}
		}
	})
}
