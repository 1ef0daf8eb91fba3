package s3api

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"
)

// FuzzReadPostForm: a browser POST body, under any Content-Type, never
// panics the form reader; a refusal is MalformedPOSTRequest,
// MaxPostPreDataLengthExceeded or InvalidArgument (no file); an accepted
// form has its file part (named "file", in any case), fields by lower-case
// name each sent once in order, no more field bytes than S3 takes before
// the file, and object headers free of the authentication fields.
func FuzzReadPostForm(f *testing.F) {
	form := func(parts ...string) []byte {
		var b strings.Builder
		for i := 0; i+1 < len(parts); i += 2 {
			b.WriteString("--XyZ\r\nContent-Disposition: form-data; name=\"" + parts[i] + "\"")
			if parts[i] == "file" {
				b.WriteString("; filename=\"dir/a.txt\"")
			}
			b.WriteString("\r\n\r\n" + parts[i+1] + "\r\n")
		}
		b.WriteString("--XyZ--\r\n")
		return []byte(b.String())
	}
	const ct = "multipart/form-data; boundary=XyZ"
	f.Add(ct, form("key", "up/${filename}", "acl", "private", "x-amz-acl", "public-read", "file", "data"))
	f.Add(ct, form("Key", "a", "KEY", "b", "x-amz-meta-m", "v", "x-amz-signature", "s", "File", "data"))
	f.Add(ct, form("key", "a"))
	f.Add(ct, form("key", strings.Repeat("x", maxPostPreData+1), "file", "d"))
	f.Add(ct, []byte("--XyZ\r\nContent-Disposition: form-data; name=\"key\"\r\n"))
	f.Add("multipart/form-data", form("file", "d"))
	f.Add("text/plain", []byte("x"))
	f.Add("multipart/form-data; boundary=\"a b\"", []byte("--a b\r\nContent-Disposition: form-data; name=file\r\n\r\nx\r\n--a b--"))
	f.Fuzz(func(t *testing.T, contentType string, body []byte) {
		r, err := http.NewRequest(http.MethodPost, "http://b.s3.test/", bytes.NewReader(body))
		if err != nil {
			t.Skip()
		}
		r.Header.Set("Content-Type", contentType)
		fm, file, err := readPostForm(r)
		if err != nil {
			switch ae := toAPIError(err); ae.Code {
			case "MalformedPOSTRequest", "MaxPostPreDataLengthExceeded", "InvalidArgument":
				if ae.StatusCode != 400 {
					t.Fatalf("%v with status %d", ae, ae.StatusCode)
				}
			default:
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if file == nil || !strings.EqualFold(file.FormName(), "file") {
			t.Fatalf("the file part is %v", file)
		}
		if len(fm.order) != len(fm.fields) || len(fm.names) != len(fm.fields) {
			t.Fatalf("fields %d, order %d, names %d", len(fm.fields), len(fm.order), len(fm.names))
		}
		size := 0
		for _, name := range fm.order {
			v, ok := fm.fields[name]
			if !ok || name != strings.ToLower(name) || strings.ToLower(fm.names[name]) != name || name == "" {
				t.Fatalf("field %q (sent as %q)", name, fm.names[name])
			}
			size += len(name) + len(v)
		}
		if size > maxPostPreData+4<<10 {
			t.Fatalf("%d bytes of fields taken", size)
		}
		fm.expandFilename(file)
		for name := range fm.objectHeader() {
			if postAuthFields[strings.ToLower(name)] {
				t.Fatalf("object header %q", name)
			}
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(file, 1<<20))
	})
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
		p, err := parsePostPolicy(b64)
		if err != nil {
			if ae := toAPIError(err); ae.Code != "InvalidPolicyDocument" || ae.StatusCode != 400 {
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
		fm := &postForm{fields: map[string]string{}, names: map[string]string{}}
		for line := range strings.SplitSeq(fields, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != "" {
				fm.add(k, v)
			}
		}
		rng, err := p.check(fm, bucket)
		if err != nil {
			if ae := toAPIError(err); ae.Code != "AccessDenied" || ae.StatusCode != 403 {
				t.Fatalf("%.80q: unexpected check error %v", policy, err)
			}
			return
		}
		if rng.min < 0 || rng.max < -1 {
			t.Fatalf("%.80q: size range %+v", policy, rng)
		}
	})
}
