package s3api

import (
	"github.com/s3seal/s3seal/backend"

	"strings"
	"testing"

	"github.com/s3seal/s3seal/s3api/s3err"
)

func TestParseDeleteRequest(t *testing.T) {
	ok := `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Quiet>true</Quiet>` +
		`<Object><Key>a&amp;b</Key></Object><Object><Key>c d</Key><VersionId>null</VersionId></Object></Delete>`
	dr, err := parseDeleteRequest([]byte(ok))
	if err != nil || !dr.Quiet || len(dr.Objects) != 2 || dr.Objects[0].Key != "a&b" || dr.Objects[1].Key != "c d" {
		t.Fatalf("%+v %v", dr, err)
	}
	bad := []string{
		"",
		"<Delete></Delete>",
		"<Delete><Object><Key></Key></Object></Delete>",
		"<Delete><Object><Key>a</Key></Object>",
		"<NotDelete><Object><Key>a</Key></Object></NotDelete>",
		"<Delete><Object><Key>a</Key></Object></Delete><Delete><Object><Key>b</Key></Object></Delete>",
		"<Delete><Object><Key>a</Key></Object></Delete>trailing",
		"<Delete>" + strings.Repeat("<Object><Key>k</Key></Object>", maxDeleteObjects+1) + "</Delete>",
	}
	for _, b := range bad {
		if _, err := parseDeleteRequest([]byte(b)); toAPIError(err).Code != "MalformedXML" {
			t.Errorf("%.60q: err=%v, want MalformedXML", b, err)
		}
	}
}

// FuzzParseDeleteRequest: the DeleteObjects parser never panics, and what
// it accepts is always within S3's limits.
func FuzzParseDeleteRequest(f *testing.F) {
	f.Add([]byte(`<Delete><Object><Key>a</Key></Object></Delete>`))
	f.Add([]byte(`<Delete><Quiet>true</Quiet><Object><Key>x/y</Key><VersionId>1</VersionId></Object></Delete>`))
	f.Add([]byte(`<?xml version="1.0"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>&#x41;</Key></Object></Delete>`))
	f.Add([]byte(`<Delete><Object><Key><![CDATA[<k>]]></Key></Object></Delete>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		dr, err := parseDeleteRequest(body)
		if err != nil {
			if toAPIError(err).Code != "MalformedXML" {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if len(dr.Objects) == 0 || len(dr.Objects) > maxDeleteObjects {
			t.Fatalf("accepted %d objects", len(dr.Objects))
		}
		for _, o := range dr.Objects {
			if o.Key == "" {
				t.Fatal("accepted an empty key")
			}
		}
	})
}

// FuzzParseRange: any Range header either is ignored or gives a range that
// resolves sanely against any size.
func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"bytes=0-0", "bytes=5-", "bytes=-3", "bytes=9-3", "bytes=0-1,2-3", "bytes=-", "bytes=18446744073709551615-"} {
		f.Add(s, int64(100))
	}
	f.Fuzz(func(t *testing.T, v string, size int64) {
		if size < 0 {
			size = -size
		}
		if size < 0 {
			return
		}
		r, err := parseRange(v)
		if err != nil || r == nil {
			return
		}
		off, n, err := r.Resolve(size)
		if err != nil {
			return
		}
		if off < 0 || n < 0 || n == 0 && size > 0 || off+n > size {
			t.Fatalf("%q on %d: off=%d n=%d", v, size, off, n)
		}
	})
}

// Every backend code passed through to clients has its own status and
// message in the table (none falls back to a 500).
func TestBackendCodesPassThrough(t *testing.T) {
	for _, code := range []string{"NotModified", "PreconditionFailed", "NoSuchKey", "NoSuchBucket",
		"BucketNotEmpty", "BucketAlreadyExists", "BucketAlreadyOwnedByYou", "InvalidBucketName",
		"NoSuchUpload", "SlowDown", "ServiceUnavailable", "AccessDenied", "InvalidRange",
		"EntityTooSmall", "EntityTooLarge", "ConditionalRequestConflict"} {
		want, ok := s3err.Lookup(s3err.Code(code))
		if !ok {
			t.Errorf("%s: not in the error table", code)
			continue
		}
		got := toAPIError(&backend.Error{Code: code, StatusCode: want.StatusCode})
		if string(got.Code) != code || got.StatusCode != want.StatusCode || got.Message != want.Message {
			t.Errorf("%s: got %+v", code, got)
		}
	}
}
