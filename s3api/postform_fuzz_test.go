package s3api

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/s3seal/s3seal/s3api/postpolicy"
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

// FuzzPostPolicyCheck: a form, as s3api's reader keeps it, checked against
// any policy never panics; the check refuses with AccessDenied only, and
// an accepted form gets a size range with min >= 0 and max either -1 (no
// limit) or >= 0. fields is one name=value a line, a name sent twice
// joined as the reader joins it.
func FuzzPostPolicyCheck(f *testing.F) {
	for _, p := range []string{
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[{"bucket":"b"},["starts-with","$key","up/"],["content-length-range",1,"10"]]}`,
		`{"expiration":"2030-01-01T00:00:00.000Z","conditions":[["eq","$Content-Type","text/plain"],{"acl":"private"}]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["content-length-range",0,5]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[["STARTS-WITH","key",""]]}`,
		`{"expiration":"2030-01-01T00:00:00Z","conditions":[]}`,
	} {
		f.Add(p, "key=up/a.txt\nContent-Type=text/plain\nx-ignore-x=1\nbucket=b\nKey=twice", "b")
	}
	f.Fuzz(func(t *testing.T, policy, fields, bucket string) {
		p, err := postpolicy.Parse(base64.StdEncoding.EncodeToString([]byte(policy)))
		if err != nil {
			return // the parser's refusals: postpolicy's FuzzPostPolicy
		}
		fm := &postForm{fields: map[string]string{}, names: map[string]string{}}
		for line := range strings.SplitSeq(fields, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && k != "" {
				fm.add(k, v)
			}
		}
		rng, err := p.Check(fm, bucket)
		if err != nil {
			if ae := toAPIError(err); ae.Code != "AccessDenied" || ae.StatusCode != 403 {
				t.Fatalf("%.80q: unexpected check error %v", policy, err)
			}
			return
		}
		if rng.Min < 0 || rng.Max < -1 {
			t.Fatalf("%.80q: size range %+v", policy, rng)
		}
	})
}
