package s3api

import (
	"bytes"
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
