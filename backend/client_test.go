package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is an httptest server that keeps every request with its body
// and answers from a script (last entry repeats).
type recorder struct {
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
	srv  *httptest.Server
}

type reply struct {
	status int
	header map[string]string
	body   string
}

func newRecorder(t *testing.T, script ...reply) (*recorder, *S3) {
	t.Helper()
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.body = append(r.body, b)
		rep := script[min(len(r.reqs), len(script))-1]
		r.mu.Unlock()
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		io.WriteString(w, rep.body)
	}))
	t.Cleanup(r.srv.Close)
	st, err := NewS3(S3Config{Endpoint: r.srv.URL, AccessKey: "AKIDTEST", SecretKey: "secret-never-shown", PathStyle: true})
	must(t, err)
	return r, st
}

func TestPutObjectWire(t *testing.T) {
	// AWS_CA_BUNDLE pointing nowhere must not matter: the config is built by
	// hand and never reads it.
	t.Setenv("AWS_CA_BUNDLE", "/nonexistent/ca.pem")
	r, st := newRecorder(t, reply{status: 200, header: map[string]string{"ETag": `"abc"`}})
	data := []byte("hello, backend")
	body := bytes.NewReader(data)
	body.Seek(5, io.SeekStart) // PutObject must rewind
	out, err := st.PutObject(context.Background(), PutInput{
		Bucket: "b", Key: "dir/k", Body: body, Size: int64(len(data)), ContentMD5: md5b64(data),
		Meta:    map[string]string{"s3seal": "v1"},
		Headers: Headers{ContentType: "text/plain", Expires: "not a date"},
	})
	must(t, err)
	if out.ETag != "abc" {
		t.Errorf("ETag = %q", out.ETag)
	}
	req := r.reqs[0]
	checks := map[string]string{
		"X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD",
		"Content-Md5":          md5b64(data),
		"X-Amz-Meta-S3seal":    "v1",
		"Content-Type":         "text/plain",
		"Expires":              "not a date",
	}
	for h, want := range checks {
		if got := req.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	if req.Method != http.MethodPut || req.URL.Path != "/b/dir/k" || req.ContentLength != int64(len(data)) {
		t.Errorf("request %s %s length %d", req.Method, req.URL.Path, req.ContentLength)
	}
	if !bytes.Equal(r.body[0], data) {
		t.Errorf("body sent = %q, want %q", r.body[0], data)
	}
	for h := range req.Header {
		if strings.HasPrefix(strings.ToLower(h), "x-amz-checksum") || strings.Contains(req.Header.Get("Content-Encoding"), "aws-chunked") {
			t.Errorf("unexpected checksum header %s: %v", h, req.Header[h])
		}
	}
	if !strings.Contains(req.Header.Get("Authorization"), "Credential=AKIDTEST/") {
		t.Errorf("Authorization = %q, want static credentials", req.Header.Get("Authorization"))
	}
}

func TestPutObjectReplaysBodyOnRetry(t *testing.T) {
	r, st := newRecorder(t,
		reply{status: 503, body: "<Error><Code>SlowDown</Code><Message>reduce rate</Message></Error>"},
		reply{status: 200, header: map[string]string{"ETag": `"e"`}})
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	_, err := st.PutObject(context.Background(), PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader(data), Size: int64(len(data))})
	must(t, err)
	if len(r.reqs) != 2 {
		t.Fatalf("%d requests, want 2 (one retry)", len(r.reqs))
	}
	for i, b := range r.body {
		if !bytes.Equal(b, data) {
			t.Errorf("attempt %d sent %d bytes, want the whole body", i+1, len(b))
		}
	}
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		rep    reply
		call   func(*S3) error
		code   string
		status int
	}{
		{"coded", reply{status: 403, body: "<Error><Code>AccessDenied</Code><Message>no</Message></Error>"},
			func(s *S3) error { return s.DeleteObject(ctx, "b", "k") }, "AccessDenied", 403},
		{"bodiless 404 HEAD", reply{status: 404},
			func(s *S3) error { _, err := s.HeadObject(ctx, "b", "k"); return err }, "NotFound", 404},
		{"bodiless 412", reply{status: 412},
			func(s *S3) error { _, err := s.HeadObject(ctx, "b", "k"); return err }, "PreconditionFailed", 412},
		{"304", reply{status: 304},
			func(s *S3) error { _, err := s.HeadObject(ctx, "b", "k"); return err }, "NotModified", 304},
		{"bodiless 400", reply{status: 400},
			func(s *S3) error { _, err := s.HeadObject(ctx, "b", "k"); return err }, "BadRequest", 400},
		{"HeadBucket 404", reply{status: 404},
			func(s *S3) error { return s.HeadBucket(ctx, "b") }, "NoSuchBucket", 404},
		{"200 with Error body", reply{status: 200, body: `<?xml version="1.0"?><Error><Code>InternalError</Code><Message>x</Message></Error>`},
			func(s *S3) error { _, err := s.DeleteObjects(ctx, "b", []string{"k"}); return err }, "InternalError", 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, st := newRecorder(t, c.rep)
			err := c.call(st)
			wantCode(t, err, c.code, c.status)
			var e *Error
			if errors.As(err, &e) && e.Op == "" {
				t.Errorf("error without Op: %v", err)
			}
			if err != nil && strings.Contains(err.Error(), "secret-never-shown") {
				t.Errorf("error leaks the secret key: %v", err)
			}
		})
	}

	// Transport failure: no code, no status, cause kept.
	st, err := NewS3(S3Config{Endpoint: "http://127.0.0.1:1", AccessKey: "a", SecretKey: "s", MaxAttempts: 1})
	must(t, err)
	err = st.HeadBucket(ctx, "b")
	var e *Error
	if !errors.As(err, &e) || e.Code != "" || e.StatusCode != 0 || e.Err == nil {
		t.Errorf("transport failure = %#v", err)
	}
}

// A V1 listing is asked as V2 (marker as start-after, owner fetched) and
// its url-encoded answer decoded; NextMarker is left to the caller (the
// last key or prefix).
func TestListObjectsDecodesURLEncoding(t *testing.T) {
	r, st := newRecorder(t, reply{status: 200, header: map[string]string{"Content-Type": "application/xml"}, body: `<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><StartAfter>m+k</StartAfter>
<NextContinuationToken>tok</NextContinuationToken><KeyCount>2</KeyCount><MaxKeys>1</MaxKeys><Delimiter>%2F</Delimiter><IsTruncated>true</IsTruncated><EncodingType>url</EncodingType>
<Contents><Key>sp+ace%26%C3%A9</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>"e"</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass><Owner><ID>o1</ID><DisplayName>me</DisplayName></Owner></Contents>
<CommonPrefixes><Prefix>p%2F</Prefix></CommonPrefixes></ListBucketResult>`})
	out, err := st.ListObjects(context.Background(), ListInput{Bucket: "b", Delimiter: "/", MaxKeys: 1, Marker: "m k"})
	must(t, err)
	q := r.reqs[0].URL.Query()
	if q.Get("list-type") != "2" || q.Get("encoding-type") != "url" || q.Get("start-after") != "m k" || q.Get("max-keys") != "1" ||
		q.Get("delimiter") != "/" || q.Get("fetch-owner") != "true" || q.Has("marker") {
		t.Errorf("query = %v", q)
	}
	if len(out.Entries) != 1 || out.Entries[0].Key != "sp ace&é" || out.Entries[0].OwnerID != "o1" || out.Entries[0].ETag != "e" {
		t.Errorf("entries = %+v", out.Entries)
	}
	if len(out.CommonPrefixes) != 1 || out.CommonPrefixes[0] != "p/" || out.NextMarker != "" || !out.IsTruncated {
		t.Errorf("out = %+v", out)
	}
}

func TestNewS3Validates(t *testing.T) {
	for _, cfg := range []S3Config{
		{Endpoint: "", AccessKey: "a", SecretKey: "sekrit"},
		{Endpoint: "ftp://x", AccessKey: "a", SecretKey: "sekrit"},
		{Endpoint: "http://x", AccessKey: "a"},
		{Endpoint: "http://x", AccessKey: "a", SecretKey: "sekrit", MaxAttempts: -1},
		{Endpoint: "http://user:sekrit@", AccessKey: "a", SecretKey: "b"},
	} {
		if _, err := NewS3(cfg); err == nil {
			t.Errorf("NewS3(%+v) succeeded", cfg)
		} else if strings.Contains(err.Error(), "sekrit") {
			t.Errorf("error leaks secret: %v", err)
		}
	}
}
