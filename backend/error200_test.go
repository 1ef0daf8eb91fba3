package backend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"
)

const timeoutBody = `<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>InternalError</Code><Message>The server did not respond in time.</Message><RequestId>r1</RequestId></Error>`

// withoutSDK200Handling removes the SDK's own 200-error customisation, as
// an SDK version without it would be: s3seal must not depend on it.
func withoutSDK200Handling(o *s3.Options) {
	o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
		s.Deserialize.Remove("S3:ProcessResponseFor200Error")
		return nil
	})
}

// serve200 starts a server answering every request 200 with body.
func serve200(t *testing.T, body string, sdkHandling bool) *S3 {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.Header().Set("ETag", `"0123456789abcdef0123456789abcdef"`)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	var extra []func(*s3.Options)
	if !sdkHandling {
		extra = append(extra, withoutSDK200Handling)
	}
	st, err := newS3(S3Config{Endpoint: srv.URL, AccessKey: "AK", SecretKey: "SK", PathStyle: true, MaxAttempts: 1}, extra...)
	must(t, err)
	return st
}

// error200Calls runs each operation that may get a 200 with an <Error>.
var error200Calls = map[string]func(context.Context, *S3) error{
	"PutObject": func(ctx context.Context, st *S3) error {
		_, err := st.PutObject(ctx, PutInput{Bucket: "b", Key: "k", Body: bytes.NewReader([]byte("x")), Size: 1})
		return err
	},
	"UploadPart": func(ctx context.Context, st *S3) error {
		_, err := st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: 1, Body: bytes.NewReader([]byte("x")), Size: 1})
		return err
	},
	"CompleteMultipartUpload": func(ctx context.Context, st *S3) error {
		_, err := st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: "b", Key: "k", UploadID: "u",
			Parts: []CompletedPart{{PartNumber: 1, ETag: "0123456789abcdef0123456789abcdef"}}})
		return err
	},
	"CopyObject": func(ctx context.Context, st *S3) error {
		_, err := st.api.CopyObject(ctx, &s3.CopyObjectInput{Bucket: ptr("b"), Key: ptr("k"), CopySource: ptr("b/src")})
		return wrapErr("CopyObject", err)
	},
	"UploadPartCopy": func(ctx context.Context, st *S3) error {
		_, err := st.api.UploadPartCopy(ctx, &s3.UploadPartCopyInput{Bucket: ptr("b"), Key: ptr("k"), CopySource: ptr("b/src"),
			UploadId: ptr("u"), PartNumber: ptr(int32(1))})
		return wrapErr("UploadPartCopy", err)
	},
}

func ptr[T any](v T) *T { return &v }

func TestError200Detected(t *testing.T) {
	for _, sdk := range []bool{false, true} {
		for _, prefix := range []string{"", "\n", "  \n \n\t  \n"} {
			st := serve200(t, prefix+timeoutBody, sdk)
			for op, call := range error200Calls {
				err := call(context.Background(), st)
				var e *Error
				if !asError(err, &e) || e.Code != "InternalError" || e.StatusCode != 500 ||
					e.Message != "The server did not respond in time." {
					t.Errorf("%s (sdk handling %v, prefix %q): err = %v, want InternalError 500 with the body's message", op, sdk, prefix, err)
				}
			}
		}
	}
}

// An <Error> element without a Code still fails the operation.
func TestError200WithoutCode(t *testing.T) {
	st := serve200(t, "<Error><Message>late</Message></Error>", false)
	err := error200Calls["UploadPart"](context.Background(), st)
	wantCode(t, err, "InternalError", 500)
}

// Proper results, with or without AWS's keep-alive whitespace, pass
// unchanged; a GetObject body is the object even when it looks like an
// error document.
func TestError200LeavesResultsAlone(t *testing.T) {
	ctx := context.Background()
	result := "  \n  \n" + `<?xml version="1.0" encoding="UTF-8"?>
<CompleteMultipartUploadResult><Bucket>b</Bucket><Key>k</Key><ETag>"abc-2"</ETag></CompleteMultipartUploadResult>`
	st := serve200(t, result, false)
	out, err := st.CompleteMultipartUpload(ctx, CompleteMultipartInput{Bucket: "b", Key: "k", UploadID: "u",
		Parts: []CompletedPart{{PartNumber: 1, ETag: "x"}}})
	must(t, err)
	if out.ETag != "abc-2" {
		t.Errorf("ETag = %q, want abc-2", out.ETag)
	}
	st = serve200(t, "", false)
	etag, err := st.UploadPart(ctx, UploadPartInput{Bucket: "b", Key: "k", UploadID: "u", PartNumber: 1, Body: strings.NewReader("x"), Size: 1})
	must(t, err)
	if etag != "0123456789abcdef0123456789abcdef" {
		t.Errorf("UploadPart ETag = %q", etag)
	}
	st = serve200(t, timeoutBody, false)
	obj, err := st.GetObject(ctx, GetInput{Bucket: "b", Key: "k"})
	must(t, err)
	if got := readAll(t, obj.Body); string(got) != timeoutBody {
		t.Errorf("GetObject body = %q, want the stored XML verbatim", got)
	}
}

func asError(err error, e **Error) bool { return errors.As(err, e) }

// TestForwardError200 (I10e-2): a forwarded sub-resource request, and
// PutObjectLock that goes as one, answered 200 with an <Error> body is that
// error as a 500, never a success; other 2xx bodies are passed on.
func TestForwardError200(t *testing.T) {
	ctx := context.Background()
	st := serve200(t, timeoutBody, false)
	check := func(what string, err error) {
		t.Helper()
		var be *Error
		if !errors.As(err, &be) || be.Code != "InternalError" || be.StatusCode != http.StatusInternalServerError ||
			!strings.Contains(be.Message, "did not respond in time") {
			t.Errorf("%s: got %v, want InternalError (500) with the body's message", what, err)
		}
	}
	for _, sub := range []string{"retention", "legal-hold", "tagging", "acl"} {
		_, err := st.Forward(ctx, RawRequest{Method: http.MethodPut, Bucket: "b", Key: "k", Query: url.Values{sub: {""}},
			Body: []byte("<X/>")})
		check("PUT ?"+sub, err)
	}
	_, err := st.Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "b", Key: "k", Query: url.Values{"acl": {""}}})
	check("GET ?acl", err)
	check("PutObjectLock retention", st.PutObjectLock(ctx, ObjectLockInput{Bucket: "b", Key: "k", Retention: true}))
	check("PutObjectLock legal hold", st.PutObjectLock(ctx, ObjectLockInput{Bucket: "b", Key: "k", LegalHold: true}))

	for _, body := range []string{"", `<?xml version="1.0"?><Tagging><TagSet/></Tagging>`, `{"Version":"2012-10-17"}`} {
		out, err := serve200(t, body, false).Forward(ctx, RawRequest{Method: http.MethodGet, Bucket: "b", Query: url.Values{"tagging": {""}}})
		if err != nil || string(out.Body) != body {
			t.Errorf("200 %q: got %v, %v; want the body passed on", body, out, err)
		}
	}
}
