package postpolicy

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/s3api/s3err"
)

// testForm is a form's fields as s3api's form keeps them: by lower-case
// name, a name sent twice with its values joined with ",".
type testForm struct {
	fields map[string]string
	names  map[string]string
	order  []string
}

func (f *testForm) add(name, value string) {
	ln := strings.ToLower(name)
	if old, ok := f.fields[ln]; ok {
		f.fields[ln] = old + "," + value
		return
	}
	f.fields[ln] = value
	f.names[ln] = name
	f.order = append(f.order, ln)
}

func (f *testForm) Value(name string) (string, bool) {
	v, ok := f.fields[name]
	return v, ok
}

func (f *testForm) Names() []string { return f.order }

func (f *testForm) Spelled(name string) string { return f.names[name] }

// asError is err as the S3 error it carries (an InternalError if none).
func asError(err error) *s3err.Error {
	var e *s3err.Error
	if errors.As(err, &e) {
		return e
	}
	return s3err.New("InternalError", "")
}

// FuzzPostPolicy: a POST policy never panics its parser or its check; the
// parser refuses with InvalidPolicyDocument only, and the check with
// AccessDenied only; an accepted policy has known operators on
// lower-case field names and non-negative length bounds, and its check
// gives a size range with min >= 0 and max either -1 (no limit) or >= 0.
// raw sends policy as the field's text as is, else base64 encoded.
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
	f.Fuzz(func(t *testing.T, policy []byte, raw bool, fields, bucket string) {
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
		fm := &testForm{fields: map[string]string{}, names: map[string]string{}}
		for line := range strings.SplitSeq(fields, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != "" {
				fm.add(k, v)
			}
		}
		rng, err := p.Check(fm, bucket)
		if err != nil {
			if ae := asError(err); ae.Code != "AccessDenied" || ae.StatusCode != 403 {
				t.Fatalf("%.80q: unexpected check error %v", policy, err)
			}
			return
		}
		if rng.Min < 0 || rng.Max < -1 {
			t.Fatalf("%.80q: size range %+v", policy, rng)
		}
	})
}
